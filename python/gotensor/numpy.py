"""NumPy adapter: arrays to host views and back. bfloat16 and float8 arrays
need the ml_dtypes package (which supplies those numpy dtypes). Arrays in
the other byte order are byte-swapped on the way in: the store holds
little-endian (native) data."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np
import numpy.typing as npt

from ._view import CODES, HostView, dims, name_of
from .errors import InvalidArgument


def is_array(obj: object) -> bool:
    return isinstance(obj, np.ndarray)


def dtype_code(dtype: npt.DTypeLike) -> int:
    name = np.dtype(dtype).name
    code = CODES.get(name)
    if code is None:
        raise InvalidArgument(f"gotensor does not store numpy dtype {dtype}")
    return code


def np_dtype(code: int) -> np.dtype[Any]:
    name = name_of(code)
    try:
        return np.dtype(name)
    except TypeError:
        pass
    try:
        import ml_dtypes
        return np.dtype(getattr(ml_dtypes, name))
    except (ImportError, AttributeError):
        raise InvalidArgument(f"numpy has no dtype {name}; install ml_dtypes or read it as a torch tensor") from None


def host_view(a: npt.NDArray[Any]) -> HostView:
    code = dtype_code(a.dtype)
    if not a.dtype.isnative:
        a = a.astype(a.dtype.newbyteorder("="), order="C")
    elif not a.flags.c_contiguous:
        a = a.copy(order="C")
    shape = dims(a.shape)
    return HostView(a.ctypes.data, a.nbytes, code, shape, (a, shape))


def out_view(out: npt.NDArray[Any]) -> tuple[HostView, Callable[[], Any] | None]:
    code = dtype_code(out.dtype)
    if not out.flags.writeable:
        raise InvalidArgument("out= array is read-only")
    shape = dims(out.shape)
    if out.flags.c_contiguous and out.dtype.isnative:
        return HostView(out.ctypes.data, out.nbytes, code, shape, (out, shape)), None
    staged = np.empty(out.shape, dtype=out.dtype.newbyteorder("="))
    view = HostView(staged.ctypes.data, staged.nbytes, code, shape, (staged, shape))
    return view, lambda: np.copyto(out, staged)


def new_array(code: int, shape: Sequence[int]) -> tuple[HostView, Callable[[], npt.NDArray[Any]]]:
    a = np.empty(shape, dtype=np_dtype(code))
    return HostView(a.ctypes.data, a.nbytes, code, None, a), lambda: a
