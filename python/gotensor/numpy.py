"""NumPy adapter: arrays to host views and back. bfloat16 and float8 arrays
need the ml_dtypes package (which supplies those numpy dtypes)."""

from __future__ import annotations

import numpy as np

from ._view import HostView, shape_str
from .errors import InvalidArgument

_NAMES = {
    "bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128",
    "bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu",
}


def is_array(obj) -> bool:
    return isinstance(obj, np.ndarray)


def dtype_name(dtype: np.dtype) -> str:
    name = np.dtype(dtype).name
    if name not in _NAMES:
        raise InvalidArgument(f"gotensor does not store numpy dtype {dtype}")
    return name


def np_dtype(name: str) -> np.dtype:
    try:
        return np.dtype(name)
    except TypeError:
        pass
    try:
        import ml_dtypes
        return np.dtype(getattr(ml_dtypes, name))
    except (ImportError, AttributeError):
        raise InvalidArgument(f"numpy has no dtype {name}; install ml_dtypes or read it as a torch tensor") from None


def host_view(a: np.ndarray) -> HostView:
    name = dtype_name(a.dtype)
    if not a.flags.c_contiguous:
        a = a.copy(order="C")
    return HostView(a.ctypes.data, a.nbytes, name, shape_str(a.shape), a)


def out_view(out: np.ndarray):
    name = dtype_name(out.dtype)
    if not out.flags.writeable:
        raise InvalidArgument("out= array is read-only")
    if out.flags.c_contiguous:
        return HostView(out.ctypes.data, out.nbytes, name, shape_str(out.shape), out), None
    staged = np.empty(out.shape, dtype=out.dtype)
    view = HostView(staged.ctypes.data, staged.nbytes, name, shape_str(out.shape), staged)
    return view, lambda: np.copyto(out, staged)


def new_array(dtype: str, shape):
    a = np.empty(tuple(shape), dtype=np_dtype(dtype))
    return HostView(a.ctypes.data, a.nbytes, dtype, shape_str(shape), a), lambda: a
