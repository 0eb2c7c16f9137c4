"""PyTorch adapter: torch tensors to host views and back.

CUDA tensors are staged through pinned host memory: Go only ever touches
host memory.
"""

from __future__ import annotations

import torch

from ._view import HostView, shape_str
from .errors import InvalidArgument

_NAMES = (
    "bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64",
    "float16", "bfloat16", "float32", "float64", "complex64", "complex128",
    "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu",
)
DTYPES = {n: getattr(torch, n) for n in _NAMES if isinstance(getattr(torch, n, None), torch.dtype)}
_BY_DTYPE = {v: k for k, v in DTYPES.items()}


def is_tensor(obj) -> bool:
    return isinstance(obj, torch.Tensor)


def dtype_name(dtype: torch.dtype) -> str:
    try:
        return _BY_DTYPE[dtype]
    except KeyError:
        raise InvalidArgument(f"gotensor does not store torch dtype {dtype}") from None


def torch_dtype(name: str) -> torch.dtype:
    try:
        return DTYPES[name]
    except KeyError:
        raise InvalidArgument(f"this torch ({torch.__version__}) has no dtype {name}") from None


def _check_plain(t: torch.Tensor) -> None:
    if t.layout != torch.strided:
        raise InvalidArgument(f"only dense (strided) tensors can be stored, got layout {t.layout}")
    if t.is_quantized:
        raise InvalidArgument("quantized torch tensors are not supported; dequantize first")
    if t.device.type == "meta":
        raise InvalidArgument("meta tensors have no data to store")


def empty(dtype: str, shape, pin: bool = False) -> torch.Tensor:
    return torch.empty(tuple(shape), dtype=torch_dtype(dtype), pin_memory=pin)


def _pin() -> bool:
    return torch.cuda.is_available()


def gpu_index(device) -> int:
    """The CUDA device index of a torch device, or -1."""
    if device is None or device.type != "cuda":
        return -1
    return device.index if device.index is not None else torch.cuda.current_device()


def host_view(t: torch.Tensor) -> HostView:
    """A contiguous host copy of t (or t itself when it already is one)."""
    name = _BY_DTYPE.get(t.dtype)
    if (name is not None and t.is_cpu and t.layout is torch.strided and t.is_contiguous()
            and not t.is_conj() and not t.is_neg()):  # the common case, kept cheap
        return HostView(t.data_ptr(), t.nbytes, name, ",".join(map(str, t.shape)), t)
    _check_plain(t)
    name = dtype_name(t.dtype)
    gpu = gpu_index(t.device)
    if t.device.type != "cpu":
        staged = torch.empty(t.shape, dtype=t.dtype, pin_memory=_pin())
        staged.copy_(t.detach().resolve_conj().resolve_neg())
        t = staged
    else:
        t = t.detach().resolve_conj().resolve_neg().contiguous()
    return HostView(t.data_ptr(), t.nbytes, name, shape_str(t.shape), t, gpu)


def out_view(out: torch.Tensor):
    """A host view to decode into, and a function that moves it into out."""
    _check_plain(out)
    name = dtype_name(out.dtype)
    if out.device.type == "cpu" and out.is_contiguous() and not out.is_conj() and not out.is_neg():
        return HostView(out.data_ptr(), out.numel() * out.element_size(), name, shape_str(out.shape), out), None
    staged = torch.empty(out.shape, dtype=out.dtype, pin_memory=out.device.type == "cuda" and _pin())
    view = HostView(staged.data_ptr(), staged.numel() * staged.element_size(), name, shape_str(out.shape), staged,
                    gpu_index(out.device))
    return view, lambda: out.copy_(staged)


def new_tensor(dtype: str, shape, device=None):
    """A fresh tensor to decode into, and a function that finishes it."""
    dev = torch.device(device) if device is not None else None
    t = empty(dtype, shape, pin=dev is not None and dev.type == "cuda" and _pin())
    view = HostView(t.data_ptr(), t.numel() * t.element_size(), dtype, shape_str(shape), t, gpu_index(dev))
    if dev is None or dev.type == "cpu":
        return view, lambda: t
    return view, lambda: t.to(dev)
