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
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, Iterable, overload

from . import errors
from .errors import (CorruptData, GotensorError, InternalError, InvalidArgument, KeyNotFound,
                     StoreClosed, StoreFull, Timeout, Unauthorized, Unavailable, Unsupported)

if TYPE_CHECKING:
    import torch

    from ._types import Array, Device, Items, OutT, TensorLike
    from .store import Store

# `import gotensor` stays light: the Go core, torch and numpy load on first
# use (PEP 562), so `gotensor --help`, `--version` and `serve` never import torch.
_LAZY = {"Store": ("store", "Store")}


def __getattr__(name: str) -> Any:
    if name == "__version__":
        return _core().version()
    if name in _LAZY:
        import importlib
        mod, attr = _LAZY[name]
        return getattr(importlib.import_module("." + mod, __name__), attr)
    raise AttributeError(f"module 'gotensor' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | {"__version__"})


def _core() -> Any:
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


def info(hardware: bool = True) -> dict[str, Any]:
    """What this build of gotensor offers, as a dict: version, Go version,
    codecs, store kinds and dtypes ("dtype_codes").

    Args:
        hardware: also describe the machine under "hardware": GPUs (NVML:
            name, UUID, memory, PCI bus id, NUMA node, CPU affinity), NUMA
            nodes, RDMA devices, UCX and DOCA. Without a GPU or driver,
            "gpu_status" says why.

    Raises:
        InternalError: the core could not describe itself (a bug).
    """
    described: dict[str, Any] = json.loads(errors.call(_core().info, bool(hardware)))
    return described


def set_gpu_affinity(enabled: bool) -> bool:
    """Run the coding of a CUDA tensor on the CPUs local to its GPU (on by
    default when NVML reports them; GOTENSOR_GPU_AFFINITY=0 turns it off).

    Returns:
        Whether it is on now (it stays off where NVML reports no affinity).
    """
    return bool(errors.call(_core().set_gpu_affinity, bool(enabled)))


def set_workers(n: int = 0) -> int:
    """Bound the cores that code one tensor's chunks.

    Args:
        n: the most cores one tensor's coding uses; 0: all of them.

    Returns:
        The bound now in force.

    Raises:
        InvalidArgument: n is not a non-negative int.
    """
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise InvalidArgument(f"workers must be a non-negative int, got {n!r}")
    return int(errors.call(_core().set_workers, n))


def open(url: str = "mem://", *, token: str | None = None) -> Store:  # noqa: A001 - mirrors the built-in
    """Open a store.

    Args:
        url: mem://[name][?capacity=1GiB] (an embedded store; the same name
            is the same store within a process), file:///dir[?capacity=...],
            or a `gotensor serve` node: tcp://host:port[?timeout=30s&tls=1]
            or ucx://host:port[?transports=tcp&rma=1MiB]. List several nodes
            (tcp://a:7707,b:7707,c:7707) to shard keys over them (no
            replication). A Redis or Valkey server or cluster:
            redis://[user:password@]host:port[,host:port...][?replicas=1]
            (rediss:// with TLS; docs/REDIS.md).
        token: the nodes' shared secret (default: $GOTENSOR_TOKEN); it never
            appears in messages or in Store.url.

    Returns:
        The open Store (a context manager: `with gotensor.open(...) as s:`).

    Raises:
        InvalidArgument: a malformed URL, an unknown option, a bad port.
        Unavailable: the directory is locked by another process, or no node
            answers.
        Unauthorized: a node refused the token.
    """
    if token is not None:
        from urllib.parse import quote
        url += ("&" if "?" in url else "?") + "token=" + quote(token, safe="")
    from .store import Store
    return Store(url)


_default: Store | None = None
_default_lock = threading.Lock()


def default_store() -> Store:
    """The process-wide embedded store (mem://default) that the module-level
    functions (write_tensor, read_tensor, ...) use; opened on first use."""
    global _default
    with _default_lock:
        if _default is None:
            from .store import Store
            _default = Store("mem://default")
        return _default


def write_tensor(key: str, tensor: TensorLike, *, codec: str = "none", rows: slice | None = None,
                 timeout: float | None = None) -> None:
    """Store.write_tensor on the default store: encode tensor with codec and
    store it under key (or as its rows=slice(a, b)). Raises what
    Store.write_tensor raises (InvalidArgument, StoreFull, Timeout, ...)."""
    default_store().write_tensor(key, tensor, codec=codec, rows=rows, timeout=timeout)


def write_tensor_async(key: str, tensor: TensorLike, *, codec: str = "none",
                       timeout: float | None = None) -> Future[None]:
    """Store.write_tensor_async on the default store. Returns a future that
    completes with None, or with the typed exception the write raised."""
    return default_store().write_tensor_async(key, tensor, codec=codec, timeout=timeout)


@overload
def read_tensor(key: str, *, out: None = None, device: Device | None = None, rows: slice | None = None,
                view: bool = False, timeout: float | None = None) -> torch.Tensor: ...
@overload
def read_tensor(key: str, *, out: OutT, device: Device | None = None, rows: slice | None = None,
                view: bool = False, timeout: float | None = None) -> OutT: ...


def read_tensor(key: str, *, out: TensorLike | None = None, device: Device | None = None,
                rows: slice | None = None, view: bool = False, timeout: float | None = None) -> TensorLike:
    """Store.read_tensor on the default store: the tensor under key (or its
    rows=slice(a, b)), new or decoded into out=, or with view=True a tensor
    viewing the stored bytes in place. Raises KeyNotFound when key holds
    nothing, InvalidArgument when out= does not match."""
    return default_store().read_tensor(key, out=out, device=device, rows=rows, view=view,  # type: ignore[arg-type]
                                       timeout=timeout)


@overload
def read_tensor_async(key: str, *, out: None = None, device: Device | None = None,
                      view: bool = False, timeout: float | None = None) -> Future[torch.Tensor]: ...
@overload
def read_tensor_async(key: str, *, out: OutT, device: Device | None = None,
                      view: bool = False, timeout: float | None = None) -> Future[OutT]: ...


def read_tensor_async(key: str, *, out: TensorLike | None = None, device: Device | None = None,
                      view: bool = False, timeout: float | None = None) -> Future[Any]:
    """Store.read_tensor_async on the default store: a future whose result is
    the tensor (out= when given; a view with view=True), or the typed
    exception the read raised."""
    return default_store().read_tensor_async(key, out=out, device=device, view=view,  # type: ignore[arg-type]
                                             timeout=timeout)


def write_tensors(items: Items, *, codec: str = "none") -> None:
    """Store.write_tensors on the default store: many (key, tensor) pairs, or
    a {key: tensor} mapping, concurrently; the first error is raised after
    every write ran."""
    default_store().write_tensors(items, codec=codec)


def read_tensors(keys: Iterable[str], *, device: Device | None = None,
                 view: bool = False) -> dict[str, torch.Tensor]:
    """Store.read_tensors on the default store: {key: tensor} in the order
    given (views with view=True); the first error (e.g. KeyNotFound) is raised
    after every read ran."""
    return default_store().read_tensors(keys, device=device, view=view)


def read_array(key: str, *, timeout: float | None = None) -> Array:
    """Store.read_array on the default store: the tensor under key as a numpy
    array. Raises KeyNotFound when key holds nothing."""
    return default_store().read_array(key, timeout=timeout)


def delete(key: str, *, timeout: float | None = None) -> None:
    """Store.delete on the default store: remove key. Raises KeyNotFound
    when key holds nothing."""
    default_store().delete(key, timeout=timeout)


def exists(key: str, *, timeout: float | None = None) -> bool:
    """Store.exists on the default store: whether key holds a tensor."""
    return default_store().exists(key, timeout=timeout)


def keys(prefix: str = "", *, timeout: float | None = None) -> list[str]:
    """Store.keys on the default store: the keys starting with prefix."""
    return default_store().keys(prefix, timeout=timeout)


def stat(key: str, *, timeout: float | None = None) -> dict[str, Any]:
    """Store.stat on the default store: dtype, shape, raw_bytes,
    stored_bytes, codec and chunks of key, from its header alone. Raises
    KeyNotFound when key holds nothing."""
    return default_store().stat(key, timeout=timeout)
