"""Readers for real checkpoints used by the demo, tests and benchmarks."""

from __future__ import annotations

import os
import struct

from typing import Any

import numpy as np
import numpy.typing as npt


def load_llama2c(path: str) -> dict[str, npt.NDArray[Any]]:
    """The fp32 weights of a llama2.c checkpoint (e.g. stories260K.bin),
    by name, in file order."""
    with open(path, "rb") as f:
        header = f.read(28)
        data = np.frombuffer(f.read(), dtype="<f4")
    dim, hidden, layers, heads, kv_heads, vocab, seq_len = struct.unpack("<7i", header)
    shared = vocab > 0
    vocab = abs(vocab)
    head = dim // heads
    kv_dim = head * kv_heads
    shapes = [
        ("tok_embeddings", (vocab, dim)),
        ("rms_att", (layers, dim)),
        ("wq", (layers, dim, dim)),
        ("wk", (layers, kv_dim, dim)),
        ("wv", (layers, kv_dim, dim)),
        ("wo", (layers, dim, dim)),
        ("rms_ffn", (layers, dim)),
        ("w1", (layers, hidden, dim)),
        ("w2", (layers, dim, hidden)),
        ("w3", (layers, hidden, dim)),
        ("rms_final", (dim,)),
        ("freq_cis_real", (seq_len, head // 2)),
        ("freq_cis_imag", (seq_len, head // 2)),
    ]
    if not shared:
        shapes.append(("wcls", (vocab, dim)))
    out, off = {}, 0
    for name, shape in shapes:
        n = int(np.prod(shape))
        if off + n > data.size:
            raise ValueError(f"{path}: truncated at {name}")
        out[name] = data[off:off + n].reshape(shape)
        off += n
    if off != data.size:
        raise ValueError(f"{path}: {data.size - off} trailing floats; not a llama2.c checkpoint")
    return out


def load_safetensors(path: str) -> dict[str, tuple[str, npt.NDArray[Any]]]:
    """The tensors of a .safetensors file as {name: (safetensors dtype,
    array)}, read with the safetensors library. BF16 and F8 arrays hold the
    raw bits (uint16 / uint8): numpy has no such dtypes."""
    import torch
    from safetensors import safe_open
    out = {}
    with safe_open(path, framework="pt") as f:
        for name in f.keys():
            dt = f.get_slice(name).get_dtype()
            t = f.get_tensor(name)
            if dt == "BF16":
                t = t.view(torch.int16)
            elif dt.startswith("F8"):
                t = t.view(torch.uint8)
            out[name] = (dt, t.numpy().view(np.uint16) if dt == "BF16" else t.numpy())
    return out


def find_testdata(name: str) -> str:
    """Locate a shared test file: $GOTENSOR_TESTDATA, then ../shared/testdata
    beside the checkout."""
    here = os.path.dirname(os.path.abspath(__file__))
    candidates = [os.environ.get("GOTENSOR_TESTDATA", ""), os.path.join(os.getcwd(), "..", "shared", "testdata")]
    # a source checkout: python/gotensor -> repo -> ../shared
    candidates.append(os.path.join(here, "..", "..", "..", "shared", "testdata"))
    for d in candidates:
        p = os.path.join(d, name)
        if d and os.path.exists(p):
            return os.path.abspath(p)
    raise FileNotFoundError(f"{name} not found; set GOTENSOR_TESTDATA to the folder holding it")
