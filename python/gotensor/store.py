"""Store: write_tensor / read_tensor over any gotensor store URL."""

from __future__ import annotations

import json
import re
from concurrent.futures import Future
from typing import Any, Iterator

from . import errors
from ._completer import completer
from ._native_lib import native
from ._view import HostView, parse_desc

try:
    from . import torch as _torch
except ImportError:  # torch is optional
    _torch = None
try:
    from . import numpy as _numpy
except ImportError:
    _numpy = None


def _staged(t) -> bool:
    """Whether a tensor moves through the pinned two-buffer pipeline."""
    return (_torch is not None and _torch.is_tensor(t) and t.device.type == "cuda"
            and t.numel() * t.element_size() >= _staging().STAGED_MIN)


def _staging():
    from . import _staging as st
    return st


def _host_view(obj) -> HostView:
    if _torch is not None and _torch.is_tensor(obj):
        return _torch.host_view(obj)
    if _numpy is not None and _numpy.is_array(obj):
        return _numpy.host_view(obj)
    raise errors.InvalidArgument(f"expected a torch.Tensor or numpy.ndarray, got {type(obj).__name__}")


def _out_view(out):
    if _torch is not None and _torch.is_tensor(out):
        return _torch.out_view(out)
    if _numpy is not None and _numpy.is_array(out):
        return _numpy.out_view(out)
    raise errors.InvalidArgument(f"out= must be a torch.Tensor or numpy.ndarray, got {type(out).__name__}")


def _new(dtype: str, shape, device, as_numpy: bool):
    if as_numpy or _torch is None:
        if device is not None:
            raise errors.InvalidArgument("device= needs torch")
        if _numpy is None:
            raise errors.Unsupported("reading needs torch or numpy installed")
        return _numpy.new_array(dtype, shape)
    return _torch.new_tensor(dtype, shape, device)


def _key(key) -> str:
    if not isinstance(key, str):
        raise errors.InvalidArgument(f"key must be a str, got {type(key).__name__}")
    if "\x00" in key:
        raise errors.InvalidArgument(f"key {key!r} contains NUL")
    try:
        key.encode("utf-8")
    except UnicodeEncodeError:
        raise errors.InvalidArgument(f"key {key!r} is not valid UTF-8") from None
    return key


def _codec(codec) -> str:
    if not isinstance(codec, str):
        raise errors.InvalidArgument(f"codec must be a str, got {type(codec).__name__}")
    return codec


_executor = None


def _gather(futs: list[Future]) -> list:
    """Wait for every future, then raise the first error, if any."""
    first = None
    out = []
    for f in futs:
        try:
            out.append(f.result())
        except BaseException as e:  # noqa: BLE001 - re-raised below, after the rest finish
            first = first or e
            out.append(None)
    if first is not None:
        raise first
    return out


def _staging_executor():
    """Threads that drive the CUDA staging pipelines of async calls."""
    global _executor
    if _executor is None:
        from concurrent.futures import ThreadPoolExecutor
        _executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="gotensor-staging")
    return _executor


class Store:
    """A tensor store. Open one with gotensor.open(url); the module-level
    functions use an embedded mem:// store."""

    def __init__(self, url: str = "mem://") -> None:
        if not isinstance(url, str):
            raise errors.InvalidArgument(f"store URL must be a str, got {type(url).__name__}")
        self._h = errors.call(native.open, url)
        self.url = re.sub(r"([?&])token=[^&]*", r"\1token=***", url)  # never echo a secret

    # -- lifecycle -------------------------------------------------------------
    def close(self) -> None:
        h, self._h = self._h, 0
        if h:
            errors.call(native.close, h)

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"gotensor.Store({self.url!r}{'' if self._h else ', closed'})"

    @property
    def _handle(self) -> int:
        if not self._h:
            raise errors.StoreClosed(f"store {self.url} is closed")
        return self._h

    # -- writing ---------------------------------------------------------------
    def write_tensor(self, key: str, tensor, *, codec: str = "none") -> None:
        """Encode tensor with codec and store it under key (replacing any
        previous value). Go reads the tensor's memory in place."""
        if _staged(tensor):
            t = tensor.detach().resolve_conj().resolve_neg().contiguous()
            _staging().write_staged(self._handle, _key(key), t, _torch.dtype_name(t.dtype),
                                    ",".join(map(str, t.shape)), _codec(codec), _torch.gpu_index(t.device))
            return
        v = _host_view(tensor)
        errors.call(native.write, self._handle, _key(key), v.ptr, v.nbytes, v.dtype, v.shape, _codec(codec), v.gpu)

    def write_tensor_async(self, key: str, tensor, *, codec: str = "none") -> Future:
        """write_tensor on a Go goroutine; the tensor is kept alive until the
        returned future completes (with None)."""
        v = _host_view(tensor)
        h, k, c = self._handle, _key(key), _codec(codec)
        return completer.submit(
            lambda: native.start_write(h, k, v.ptr, v.nbytes, v.dtype, v.shape, c, v.gpu),
            v.keep, lambda _p, fut: fut.set_result(None))

    # -- reading ---------------------------------------------------------------
    def read_tensor(self, key: str, *, out=None, device=None):
        """Read the tensor under key. With out=, decode into that tensor
        (its dtype and shape must match) and return it; otherwise return a
        new torch tensor (numpy array without torch), on device if given."""
        h, key = self._handle, _key(key)
        if out is not None and _staged(out):
            return self._read_staged(h, key, out=out)
        if out is None and device is not None and _torch is not None and _torch.torch.device(device).type == "cuda":
            return self._read_staged(h, key, device=device)
        if out is not None:
            view, finish = _out_view(out)
            errors.call(native.read_into, h, key, view.ptr, view.nbytes, view.dtype, view.shape, view.gpu)
            if finish is not None:
                finish()
            return out
        return self._fetch_decode(h, key, device, as_numpy=False)

    def _read_staged(self, h, key, out=None, device=None):
        fh, dtype, shape = parse_desc(errors.call(native.fetch, h, key))
        try:
            if out is not None:
                want = (_torch.dtype_name(out.dtype), tuple(out.shape))
                if want != (dtype, shape):
                    raise errors.InvalidArgument(f"key {key!r} holds {dtype}{list(shape)}, destination is "
                                                 f"{want[0]}{list(want[1])}")
                dst = out if out.is_contiguous() else _torch.torch.empty_like(out, memory_format=_torch.torch.contiguous_format)
            else:
                dst = _torch.torch.empty(shape, dtype=_torch.torch_dtype(dtype), device=device)
            if dst.numel() * dst.element_size() < _staging().STAGED_MIN:  # small: one pinned copy
                view, finish = _torch.new_tensor(dtype, shape, device)
                errors.call(native.decode, fh, view.ptr, view.nbytes, view.gpu)
                fh = 0
                dst.copy_(finish())
            else:
                staged_fh, fh = fh, 0  # read_staged releases it
                _staging().read_staged(staged_fh, dst, _torch.gpu_index(dst.device))
        finally:
            if fh:
                native.release(fh)
        if out is not None and dst is not out:
            out.copy_(dst)
        return out if out is not None else dst

    def read_array(self, key: str):
        """Read the tensor under key as a numpy array."""
        return self._fetch_decode(self._handle, _key(key), None, as_numpy=True)

    def _fetch_decode(self, h, key, device, as_numpy):
        fh, dtype, shape = parse_desc(errors.call(native.fetch, h, key))
        try:
            view, finish = _new(dtype, shape, device, as_numpy)
        except BaseException:
            native.release(fh)
            raise
        errors.call(native.decode, fh, view.ptr, view.nbytes, view.gpu)
        return finish()

    def read_tensor_async(self, key: str, *, out=None, device=None) -> Future:
        """read_tensor on Go goroutines; the future's result is the tensor."""
        h, key = self._handle, _key(key)
        if (out is not None and _staged(out)) or (out is None and device is not None and _torch is not None
                                                  and _torch.torch.device(device).type == "cuda"):
            return _staging_executor().submit(self.read_tensor, key, out=out, device=device)
        if out is not None:
            view, finish = _out_view(out)

            def done(_p, fut):
                if finish is not None:
                    finish()
                fut.set_result(out)
            return completer.submit(
                lambda: native.start_read_into(h, key, view.ptr, view.nbytes, view.dtype, view.shape, view.gpu),
                (view.keep, out), done)

        def fetched(payload, fut):
            fh, dtype, shape = parse_desc(payload)
            try:
                view, finish = _new(dtype, shape, device, False)
            except BaseException:
                native.release(fh)
                raise
            completer.submit(lambda: native.start_decode(fh, view.ptr, view.nbytes, view.gpu), view.keep,
                             lambda _p, f: f.set_result(finish()), future=fut)
        return completer.submit(lambda: native.start_fetch(h, key), None, fetched)

    # -- many at once ------------------------------------------------------------
    def write_tensors(self, items, *, codec: str = "none") -> None:
        """Write many tensors concurrently: items is a mapping or (key, tensor)
        pairs. On a sharded URL (tcp://a,b,c) they fan out over the nodes.
        Every write runs to its end; the first error is raised after."""
        pairs = list(items.items() if hasattr(items, "items") else items)
        _gather([self.write_tensor_async(k, t, codec=codec) for k, t in pairs])

    def read_tensors(self, keys, *, device=None) -> dict:
        """Read many tensors concurrently (fanning out over a sharded store's
        nodes); returns {key: tensor} in the order given."""
        keys = list(keys)
        futs = [self.read_tensor_async(k, device=device) for k in keys]
        return dict(zip(keys, _gather(futs)))

    # -- keys ------------------------------------------------------------------
    def delete(self, key: str) -> None:
        errors.call(native.delete, self._handle, _key(key))

    def exists(self, key: str) -> bool:
        return bool(errors.call(native.exists, self._handle, _key(key)))

    def keys(self, prefix: str = "") -> list[str]:
        out = errors.call(native.keys, self._handle, _key(prefix) if prefix else "")
        return out.split("\n") if out else []

    def __contains__(self, key: str) -> bool:
        return self.exists(key)

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def stat(self, key: str) -> dict[str, Any]:
        """dtype, shape, raw_bytes, stored_bytes, codec and chunks of a stored
        tensor, read from its header alone."""
        st = json.loads(errors.call(native.stat, self._handle, _key(key)))
        st["shape"] = tuple(st["shape"] or ())
        return st

    def usage(self) -> dict[str, Any]:
        """Keys, bytes used and capacity (0 = unbounded)."""
        return json.loads(errors.call(native.usage, self._handle))

    def save_safetensors(self, path, keys=None) -> dict[str, Any]:
        """Write the tensors under keys (default: every key), named by their
        keys, to the .safetensors file at path (via the safetensors library);
        returns {"tensors": n, "raw_bytes": b}."""
        from .export import save_safetensors
        return save_safetensors(self, path, keys)
