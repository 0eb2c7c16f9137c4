"""gotensor: cheap tensor offloading.

    import gotensor
    gotensor.write_tensor("layer0.w", t)            # embedded mem:// store
    t2 = gotensor.read_tensor("layer0.w")

    with gotensor.open("file:///tmp/offload") as store:
        store.write_tensor("kv.0", kv, codec="none")
        store.read_tensor("kv.0", out=kv_buffer)     # fills a preallocated tensor

The core is Go (built with gopy); tensors cross as (pointer, size) pairs.
"""

from __future__ import annotations

import json
import threading
from typing import TYPE_CHECKING

from . import errors
from .errors import (CorruptData, GotensorError, InternalError, InvalidArgument, KeyNotFound,
                     StoreClosed, StoreFull, Timeout, Unauthorized, Unavailable, Unsupported)

if TYPE_CHECKING:
    from .store import Store

# `import gotensor` stays light: the Go core, torch and numpy load on first
# use (PEP 562), so `gotensor --help`, `--version` and `serve` never import torch.
_LAZY = {"Store": ("store", "Store")}


def __getattr__(name: str):
    if name == "__version__":
        return _core().version()
    if name in _LAZY:
        import importlib
        mod, attr = _LAZY[name]
        return getattr(importlib.import_module("." + mod, __name__), attr)
    raise AttributeError(f"module 'gotensor' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | {"__version__"})


def _core():
    from ._native_lib import native
    return native


__all__ = [
    "Store", "open", "info", "set_workers", "set_gpu_affinity", "default_store",
    "write_tensor", "read_tensor", "write_tensor_async", "read_tensor_async", "read_array",
    "write_tensors", "read_tensors",
    "delete", "exists", "keys", "stat",
    "GotensorError", "InternalError", "InvalidArgument", "KeyNotFound", "CorruptData",
    "StoreFull", "StoreClosed", "Unavailable", "Unauthorized", "Timeout", "Unsupported",
]


def info(hardware: bool = True) -> dict:
    """Version, Go version, codecs, store kinds and dtypes of this build; with
    hardware, also the machine under "hardware": GPUs (NVML: name, UUID,
    memory, PCI bus id, NUMA node, CPU affinity), NUMA nodes, RDMA devices,
    UCX and DOCA. Without a GPU or driver, "gpu_status" says why."""
    return json.loads(errors.call(_core().info, bool(hardware)))


def set_gpu_affinity(enabled: bool) -> bool:
    """Run the coding of a CUDA tensor on the CPUs local to its GPU (on by
    default when NVML reports them; GOTENSOR_GPU_AFFINITY=0 turns it off).
    Returns whether it is on."""
    return bool(errors.call(_core().set_gpu_affinity, bool(enabled)))


def set_workers(n: int = 0) -> int:
    """Bound the cores that code one tensor's chunks (0: all of them);
    returns the bound now in force."""
    if not isinstance(n, int) or n < 0:
        raise InvalidArgument(f"workers must be a non-negative int, got {n!r}")
    return errors.call(_core().set_workers, n)


def open(url: str = "mem://", *, token: str | None = None) -> Store:  # noqa: A001 - mirrors the built-in
    """Open a store: mem://[name][?capacity=1GiB], file:///dir[?capacity=...],
    or a `gotensor serve` node: tcp://host:port[?timeout=30s&tls=1] or
    ucx://host:port[?transports=tcp&rma=1MiB]. List several nodes
    (tcp://a:7707,b:7707,c:7707) to shard keys over them. token, or
    GOTENSOR_TOKEN, proves the shared secret."""
    if token is not None:
        from urllib.parse import quote
        url += ("&" if "?" in url else "?") + "token=" + quote(token, safe="")
    from .store import Store
    return Store(url)


_default: Store | None = None
_default_lock = threading.Lock()


def default_store() -> Store:
    """The process-wide embedded store the module-level functions use."""
    global _default
    with _default_lock:
        if _default is None:
            from .store import Store
            _default = Store("mem://default")
        return _default


def write_tensor(key, tensor, *, codec="none", rows=None):
    """Store.write_tensor on the default store: encode tensor and store it under key (or as its rows=slice)."""
    return default_store().write_tensor(key, tensor, codec=codec, rows=rows)


def write_tensor_async(key, tensor, *, codec="none"):
    """Store.write_tensor_async on the default store; the future completes with None."""
    return default_store().write_tensor_async(key, tensor, codec=codec)


def read_tensor(key, *, out=None, device=None, rows=None):
    """Store.read_tensor on the default store: the tensor under key, or its rows=slice (into out= if given)."""
    return default_store().read_tensor(key, out=out, device=device, rows=rows)


def read_tensor_async(key, *, out=None, device=None):
    """Store.read_tensor_async on the default store; the future's result is the tensor."""
    return default_store().read_tensor_async(key, out=out, device=device)


def write_tensors(items, *, codec="none"):
    """Store.write_tensors on the default store: many (key, tensor) pairs concurrently."""
    return default_store().write_tensors(items, codec=codec)


def read_tensors(keys, *, device=None):
    """Store.read_tensors on the default store: {key: tensor} in the order given."""
    return default_store().read_tensors(keys, device=device)


def read_array(key):
    """Store.read_array on the default store: the tensor under key as a numpy array."""
    return default_store().read_array(key)


def delete(key):
    """Store.delete on the default store: remove key (KeyNotFound if absent)."""
    return default_store().delete(key)


def exists(key):
    """Store.exists on the default store: whether key holds a tensor."""
    return default_store().exists(key)


def keys(prefix=""):
    """Store.keys on the default store: the keys starting with prefix."""
    return default_store().keys(prefix)


def stat(key):
    """Store.stat on the default store: dtype, shape, sizes, codec and chunks of key."""
    return default_store().stat(key)


