"""PyTorch adapter: torch tensors to host views and back.

Go only ever touches host memory: a tensor on a device goes through a host
copy that _staging makes.
"""

from __future__ import annotations

import ctypes
from typing import Any, Callable, Sequence

import torch
from torch.utils.dlpack import from_dlpack as _from_dlpack

from . import _staging
from ._native_lib import native
from ._view import CODES, HostView, dims
from .errors import InvalidArgument, Unsupported

_NAMES = (
    "bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64",
    "float16", "bfloat16", "float32", "float64", "complex64", "complex128",
    "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu",
)
DTYPES = {n: getattr(torch, n) for n in _NAMES if isinstance(getattr(torch, n, None), torch.dtype)}
_BY_DTYPE = {v: k for k, v in DTYPES.items()}
# the hot path's caches: torch dtype <-> the core's dtype code
_CODE = {v: CODES[k] for k, v in DTYPES.items() if k in CODES}
_TORCH = {c: d for d, c in _CODE.items()}
# dtype code -> new_empty of a 0-element tensor of that dtype: a new CPU
# tensor by sizes alone (torch parses a dtype= keyword slower than it copies
# a template's dtype)
NEW_EMPTY = {c: torch.empty(0, dtype=d).new_empty for c, d in _TORCH.items()}
Tensor = torch.Tensor
_strided = torch.strided


def is_tensor(obj: object) -> bool:
    return isinstance(obj, torch.Tensor)


def dtype_name(dtype: torch.dtype) -> str:
    try:
        return _BY_DTYPE[dtype]
    except KeyError:
        raise InvalidArgument(f"gotensor does not store torch dtype {dtype}") from None


def dtype_code(dtype: torch.dtype) -> int:
    try:
        return _CODE[dtype]
    except KeyError:
        raise InvalidArgument(f"gotensor does not store torch dtype {dtype}") from None


def torch_dtype(code: int) -> torch.dtype:
    try:
        return _TORCH[code]
    except KeyError:
        raise InvalidArgument(f"this torch ({torch.__version__}) has no dtype with gotensor code {code}") from None


def _check_plain(t: torch.Tensor) -> None:
    if t.is_nested:
        raise InvalidArgument("nested tensors have no one shape to store; store each of t.unbind() instead")
    if t.layout != torch.strided:
        raise InvalidArgument(f"only dense (strided) tensors can be stored, got layout {t.layout}")
    if t.is_quantized:
        raise InvalidArgument("quantized torch tensors are not supported; dequantize first")
    if t.device.type == "meta":
        raise InvalidArgument("meta tensors have no data to store")


def device_of(device: Any) -> torch.device:
    """device= as a torch.device. Raises InvalidArgument for what is no
    device, or a CUDA index past the GPUs there are, and Unsupported for a
    CUDA device where CUDA is not available (instead of torch's driver
    error, raised later from deep inside a copy)."""
    try:
        dev = device if isinstance(device, torch.device) else torch.device(device)
    except (RuntimeError, TypeError, ValueError) as e:
        raise InvalidArgument(f"device {device!r} is not a torch device ({e})") from None
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            why = "this torch is built without CUDA" if torch.version.cuda is None else "no GPU or driver found"
            raise Unsupported(f"device {str(dev)!r} asks for CUDA, but CUDA is not available here ({why})")
        n = torch.cuda.device_count()
        if dev.index is not None and dev.index >= n:
            raise InvalidArgument(f"device {str(dev)!r}: there are {n} CUDA devices here")
    return dev


def gpu_index(device: torch.device | None) -> int:
    """The CUDA device index of a torch device, or -1."""
    if device is None or device.type != "cuda":
        return -1
    return device.index if device.index is not None else torch.cuda.current_device()


def plain_view(t: object) -> HostView | None:
    """The view of a contiguous CPU tensor in place, or None for any other
    tensor (the hot path: no copy, nothing but attribute reads)."""
    a = plain_args(t)
    if a is None:
        return None
    shape = a[3][0]
    return HostView(a[0], a[1], a[2], shape, (t, shape))


# Shapes as the int64 arrays binding calls read, by torch.Size: a small
# call need not build one. An entry is never removed (a caller may be
# passing its address to Go), and the cache stops growing at _SHAPES_MAX.
_shapes: dict[Any, tuple[Any, int, int]] = {}
_SHAPES_MAX = 4096


def shape_args(size: Sequence[int]) -> tuple[Any, int, int]:
    """(int64 array, its address, rank) of a shape; hold the tuple while
    Go reads the address."""
    s = _shapes.get(size)
    if s is None:
        a = dims(size)
        s = (a, a.buffer_info()[0] if a else 0, len(a))
        if len(_shapes) < _SHAPES_MAX:
            _shapes[size] = s
    return s


def plain_args(t: object) -> tuple[int, int, int, tuple[Any, int, int]] | None:
    """(data pointer, byte count, dtype code, shape_args) of a contiguous
    CPU tensor in place, or None for any other tensor: the hot path of
    small calls, nothing but attribute reads."""
    if type(t) is Tensor and t.is_cpu and t.layout is _strided and not t.is_nested and t.is_contiguous() \
            and not t.is_neg():
        dt = t.dtype
        code = _CODE.get(dt)
        if code is not None and (dt not in _COMPLEX or not t.is_conj()):  # only a complex tensor has the conj bit
            return t.data_ptr(), t.nbytes, code, shape_args(t.shape)
    return None


_COMPLEX = frozenset((torch.complex64, torch.complex128))


def host_view(t: torch.Tensor) -> HostView:
    """A contiguous host copy of t (or t itself when it already is one)."""
    v = plain_view(t)
    if v is not None:
        return v
    _check_plain(t)
    code = dtype_code(t.dtype)
    gpu = gpu_index(t.device)
    if t.device.type != "cpu":
        t = _staging.to_host(t)
    else:
        t = t.detach().resolve_conj().resolve_neg().contiguous()
    shape = dims(t.shape)
    return HostView(t.data_ptr(), t.nbytes, code, shape, (t, shape), gpu)


def out_view(out: torch.Tensor) -> tuple[HostView, Callable[[], Any] | None]:
    """A host view to decode into, and a function that moves it into out
    (None when out is written in place)."""
    v = plain_view(out)
    if v is not None:
        return v, None
    _check_plain(out)
    code = dtype_code(out.dtype)
    if out.device.type == "cpu" and out.is_contiguous() and not out.is_conj() and not out.is_neg():
        shape = dims(out.shape)
        return HostView(out.data_ptr(), out.numel() * out.element_size(), code, shape, (out, shape)), None
    staged = _staging.host_for(out.shape, out.dtype, out.device)
    shape = dims(out.shape)
    view = HostView(staged.data_ptr(), staged.numel() * staged.element_size(), code, shape, (staged, shape),
                    gpu_index(out.device))
    return view, lambda: out.copy_(staged)


def new_tensor(code: int, shape: Sequence[int], device: Any = None) -> tuple[HostView, Callable[[], torch.Tensor]]:
    """A fresh tensor to decode into, and a function that finishes it."""
    if device is None:  # the hot path
        t = torch.empty(shape, dtype=torch_dtype(code))
        return HostView(t.data_ptr(), t.nbytes, code, None, t), lambda: t
    dev = device_of(device)
    t = _staging.host_for(shape, torch_dtype(code), dev)
    view = HostView(t.data_ptr(), t.numel() * t.element_size(), code, None, t, gpu_index(dev))
    if dev.type == "cpu":
        return view, lambda: t
    return view, lambda: t.to(dev)


# A view crosses from Go as a DLPack managed tensor (a 1-d uint8 tensor of
# the stored bytes, whose deleter gives the view back to the store), put
# in a "dltensor" capsule for torch.from_dlpack. Own function pointers, so
# that ctypes.pythonapi's shared ones keep their signatures.
_capsule_new = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)(
    ("PyCapsule_New", ctypes.pythonapi))
_capsule_valid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_IsValid", ctypes.pythonapi))


def view_tensor(addr: int, code: int, shape: Sequence[int]) -> torch.Tensor:
    """The tensor of a view (native.view's managed tensor at addr), as the
    stored dtype and shape; freeing it releases the view."""
    cap = _capsule_new(addr, b"dltensor", None)
    try:
        t = _from_dlpack(cap)
    except BaseException:
        if _capsule_valid(cap, b"dltensor"):  # torch did not take it: its deleter will never run
            native.drop_view(addr)
        raise
    return t.view(torch_dtype(code)).view(shape)
