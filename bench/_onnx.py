"""The float32 initializers (and Constant tensors) of an ONNX model, read
straight from its protobuf: the bench needs the weights only, not the onnx
package."""

from __future__ import annotations

import numpy as np

FLOAT = 1  # TensorProto.FLOAT


def _varint(b, i):
    r = s = 0
    while True:
        c = b[i]
        i += 1
        r |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return r, i


def _fields(b):
    i = 0
    while i < len(b):
        k, i = _varint(b, i)
        f, w = k >> 3, k & 7
        if w == 0:
            v, i = _varint(b, i)
        elif w == 1:
            v, i = b[i:i + 8], i + 8
        elif w == 5:
            v, i = b[i:i + 4], i + 4
        elif w == 2:
            n, i = _varint(b, i)
            v, i = b[i:i + n], i + n
        else:
            raise ValueError(f"protobuf wire type {w}")
        yield f, w, v


def _tensor(b):
    """(name, dtype, dims, bytes) of a TensorProto."""
    name, dt, dims, raw, floats = "", 0, [], None, []
    for f, w, v in _fields(b):
        if f == 1:
            if w == 2:
                j = 0
                while j < len(v):
                    d, j = _varint(v, j)
                    dims.append(d)
            else:
                dims.append(v)
        elif f == 2:
            dt = v
        elif f == 8:
            name = bytes(v).decode()
        elif f == 9:
            raw = bytes(v)
        elif f == 4 and w == 2:  # float_data, packed
            floats.append(bytes(v))
    return name, dt, dims, raw if raw is not None else b"".join(floats)


def float_weights(path: str) -> dict[str, np.ndarray]:
    """name -> float32 array of the model's float tensors (initializers and
    Constant nodes' values), in file order."""
    b = memoryview(open(path, "rb").read())
    out = {}
    for f, _, graph in _fields(b):
        if f != 7:  # ModelProto.graph
            continue
        for gf, _, gv in _fields(graph):
            tensors = []
            if gf == 5:  # GraphProto.initializer
                tensors.append(gv)
            elif gf == 1:  # NodeProto: a Constant's value attribute
                for nf, _, nv in _fields(gv):
                    if nf == 5:  # AttributeProto
                        for af, _, av in _fields(nv):
                            if af == 5:  # .t
                                tensors.append(av)
            for t in tensors:
                name, dt, dims, raw = _tensor(t)
                if dt == FLOAT and raw:
                    out[name or f"t{len(out)}"] = np.frombuffer(raw, "<f4").reshape(dims)
    return out
