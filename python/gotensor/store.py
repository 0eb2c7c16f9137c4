"""Store: write_tensor / read_tensor over any gotensor store URL.

Operations on one key, sync or async, take effect in the order one thread
submitted them (Go queues them per key); different keys run concurrently.
"""

from __future__ import annotations

import ctypes
import json
import re
import threading
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, overload

from . import errors
from ._completer import OpFuture, completer
from ._native_lib import native, raw
from ._view import CODES, HostView, dims, name_of, new_meta, read_meta, shape_ptr

try:
    from . import torch as _torch
except ImportError:  # torch is optional
    _torch = None
try:
    from . import numpy as _numpy
except ImportError:
    _numpy = None

if TYPE_CHECKING:
    import os

    import torch

    from ._types import Array, Device, Items, OutT, TensorLike

_plain_args = _torch.plain_args if _torch is not None else (lambda _t: None)
_new_empty = _torch.NEW_EMPTY.get if _torch is not None else (lambda _c: None)
# the hot paths call the extension's functions, not gopy's Python wrappers of them
_native_write, _native_read_into, _native_read = raw.pybind_Write, raw.pybind_ReadInto, raw.pybind_Read
_memmove = ctypes.memmove
# A tensor up to this size is decoded by Go into the calling thread's
# scratch buffer in the read call itself; a larger one is fetched, then
# decoded straight into the new tensor (two calls).
SCRATCH_BYTES = 64 << 10


class _Scratch(threading.local):
    def __init__(self) -> None:
        self.buf = ctypes.create_string_buffer(SCRATCH_BYTES)
        self.ptr = ctypes.addressof(self.buf)
        self.meta = new_meta()
        self.meta_ptr = self.meta.buffer_info()[0]
        self.args = (self.ptr, self.meta, self.meta_ptr)  # what a read takes, in one attribute read


_scratch = _Scratch()


def _timeout_ns(timeout: float | None) -> int:
    """A timeout in seconds as binding's nanoseconds (0: the store's default)."""
    if timeout is None:
        return 0
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
        raise errors.InvalidArgument(f"timeout must be a positive number of seconds or None, got {timeout!r}")
    return max(1, int(timeout * 1e9))


def _staged(t: Any) -> bool:
    """Whether a tensor moves through the pinned two-buffer pipeline."""
    return (_torch is not None and _torch.is_tensor(t) and t.is_cuda
            and t.numel() * t.element_size() >= _staging().STAGED_MIN)


def _cuda(device: Any) -> bool:
    """Whether device= is a CUDA device (raises if CUDA is not available)."""
    return device is not None and _torch is not None and _torch.device_of(device).type == "cuda"


def _staging() -> Any:
    from . import _staging as st
    return st


def _host_view(obj: Any) -> HostView:
    if _torch is not None and _torch.is_tensor(obj):
        return _torch.host_view(obj)
    if _numpy is not None and _numpy.is_array(obj):
        return _numpy.host_view(obj)
    raise errors.InvalidArgument(f"expected a torch.Tensor or numpy.ndarray, got {type(obj).__name__}")


def _out_view(out: Any) -> tuple[HostView, Callable[[], Any] | None]:
    if _torch is not None and _torch.is_tensor(out):
        return _torch.out_view(out)
    if _numpy is not None and _numpy.is_array(out):
        return _numpy.out_view(out)
    raise errors.InvalidArgument(f"out= must be a torch.Tensor or numpy.ndarray, got {type(out).__name__}")


def _new(code: int, shape: Any, device: Any, as_numpy: bool) -> tuple[HostView, Callable[[], Any]]:
    if as_numpy or _torch is None:
        if device is not None:
            raise errors.InvalidArgument("device= needs torch")
        if _numpy is None:
            raise errors.Unsupported("reading needs torch or numpy installed")
        return _numpy.new_array(code, shape)
    return _torch.new_tensor(code, shape, device)


def _key(key: Any) -> str:
    if type(key) is not str and not isinstance(key, str):
        raise errors.InvalidArgument(f"key must be a str, got {type(key).__name__}")
    if "\x00" in key:
        raise errors.InvalidArgument(f"key {key!r} contains NUL")
    try:
        key.encode("utf-8")
    except UnicodeEncodeError:
        raise errors.InvalidArgument(f"key {key!r} is not valid UTF-8") from None
    return key


def _row_start(rows: Any, n: int | None, have: int | None) -> tuple[int, int]:
    """(start, stop) of rows=slice(a, b) over a leading dimension of n rows
    (None: not known here); have is the row count of the tensor given."""
    if not isinstance(rows, slice) or rows.step not in (None, 1):
        raise errors.InvalidArgument(f"rows must be a slice with step 1, got {rows!r}")
    if n is not None:
        start, stop, _ = rows.indices(n)
        stop = max(start, stop)
    else:
        start = 0 if rows.start is None else rows.start
        stop = rows.stop if rows.stop is not None else start + (have or 0)
    if not isinstance(start, int) or not isinstance(stop, int) or start < 0 or stop < start:
        raise errors.InvalidArgument(f"rows {rows!r} is not a range of rows")
    if have is not None and stop - start != have:
        raise errors.InvalidArgument(f"rows {rows!r} span {stop - start} rows, the tensor has {have}")
    return start, stop


def _codec(codec: Any) -> str:
    if not isinstance(codec, str):
        raise errors.InvalidArgument(f"codec must be a str, got {type(codec).__name__}")
    return codec


_executor: Any = None


def _no_value(_value: Any, fut: Future[Any]) -> None:
    fut.set_result(None)


def _gather(keys: list[str], futs: list[Future[Any]], did: str) -> list[Any]:
    """Wait for every future. Where some failed, raise the first failure's
    class, saying which keys failed and why; the exception carries
    ``failed`` ({key: exception}) and ``results`` ({key: result} of the
    calls that succeeded), so a caller keeps what was done."""
    failed: dict[str, BaseException] = {}
    results: dict[str, Any] = {}
    for k, f in zip(keys, futs):
        try:
            results[k] = f.result()
        except BaseException as e:  # noqa: BLE001 - reported below, after the rest finish
            failed[k] = e
    if not failed:
        return [results[k] for k in keys]
    first = next(iter(failed.values()))
    if not isinstance(first, errors.GotensorError):
        raise first
    shown = "; ".join(f"{k!r}: {e}" for k, e in list(failed.items())[:3])
    more = f" and {len(failed) - 3} more" if len(failed) > 3 else ""
    err = type(first)(f"{len(failed)} of {len(keys)} keys failed ({shown}{more}); the other {len(results)} were {did}")
    err.key = next(iter(failed))
    err.failed, err.results = failed, results  # type: ignore[attr-defined]
    raise err from first


def _check_view(out: Any, rows: Any) -> None:
    if out is not None or rows is not None:
        raise errors.InvalidArgument("view=True returns a new tensor of the whole stored one: not with out= or rows=")
    if _torch is None:
        raise errors.Unsupported("view=True needs torch")


def _viewed(addr: int, code: int, shape: tuple[int, ...], device: Any) -> Any:
    """The tensor of a view, on device where one is given."""
    t = _torch.view_tensor(addr, code, shape)
    return t if device is None else t.to(_torch.device_of(device))


def _staging_executor() -> Any:
    """Threads that drive the CUDA staging pipelines of async calls."""
    global _executor
    if _executor is None:
        from concurrent.futures import ThreadPoolExecutor
        _executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="gotensor-staging")
    return _executor


def _hide_password(url: str) -> str:
    """url with its userinfo's password (scheme://user:password@host) hidden."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    end = min([i for i in (rest.find(c) for c in "/?#") if i >= 0], default=len(rest))
    at = rest.rfind("@", 0, end)
    user, colon, _ = rest[:max(at, 0)].partition(":")
    if at < 0 or not colon:
        return url
    return f"{scheme}://{user}:***@{rest[at + 1:]}"


class Store:
    """A tensor store. Open one with gotensor.open(url); the module-level
    functions use an embedded mem:// store.

    Every read and write takes timeout= (seconds; None: the store's default,
    its URL's ?timeout= where it has one, else none). A call that runs out
    of time, or an async one whose future is cancelled, raises
    gotensor.Timeout."""

    def __init__(self, url: str = "mem://") -> None:
        """Open the store at url; gotensor.open(url, token=...) is the usual
        way (see it for the URL forms). Raises InvalidArgument for a bad URL,
        Unavailable when the store cannot be reached."""
        if not isinstance(url, str):
            raise errors.InvalidArgument(f"store URL must be a str, got {type(url).__name__}")
        self._h: int = errors.call(native.open, url)
        self.url: str = _hide_password(re.sub(r"([?&])token=[^&]*", r"\1token=***", url))  # never echo a secret
        # mem:// and file:// map frames: a view there is made in the calling
        # thread (microseconds), which beats a hand-off to another thread
        self._maps: bool = errors.call(native.maps, self._h)
        if "pinned=" in url:
            from . import _pinning
            if _pinning.wants_pinning(url):
                _pinning.install()  # where CUDA is available: views of this store are page-locked

    # -- lifecycle -------------------------------------------------------------
    def close(self) -> None:
        """Close the store (idempotent). Later calls raise StoreClosed; a
        mem:// store keeps its tensors while another handle has it open."""
        h, self._h = self._h, 0
        if h:
            errors.call(native.close, h)

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"gotensor.Store({self.url!r}{'' if self._h else ', closed'})"

    @property
    def _handle(self) -> int:
        if not self._h:
            raise errors.StoreClosed(f"store {self.url} is closed")
        return self._h

    # -- writing ---------------------------------------------------------------
    def write_tensor(self, key: str, tensor: TensorLike, *, codec: str = "none", rows: slice | None = None,
                     chunk_rows: int | None = None, timeout: float | None = None) -> None:
        """Encode tensor with codec and store it under key (replacing any
        previous value). Go reads the tensor's memory in place. With
        rows=slice(a, b), tensor becomes rows [a, b) of the leading dimension
        of the tensor stored under key (same dtype and trailing shape; the
        stored codec is kept): only the chunks those rows touch are encoded.

        Args:
            key: a UTF-8 str without NUL.
            tensor: a torch.Tensor (CPU or CUDA) or numpy.ndarray.
            codec: "none", "auto", "planes", "q4", ... (gotensor.info()["codecs"]).
            rows: write only these rows of the stored tensor.
            chunk_rows: lay a whole tensor (of 2 or more dimensions) out in
                chunks of this many rows (at least 4 KiB), for later writes of
                about that many rows with rows= (a KV cache appended a row per
                token: chunk_rows=1); None: the store's chunking.
            timeout: seconds; None: the store's default.

        Raises:
            InvalidArgument: a bad key, codec, dtype or rows=, or a codec that
                does not take this dtype.
            KeyNotFound: rows= on a key that holds nothing.
            StoreFull: no room for it (nothing is evicted).
            Timeout: it did not finish in time.
            StoreClosed, Unavailable: the store is closed or unreachable.
        """
        h = self._h or self._handle
        tns = _timeout_ns(timeout) if timeout is not None else 0
        if rows is not None:
            if chunk_rows is not None:
                raise errors.InvalidArgument("chunk_rows= lays out a whole tensor; a write with rows= keeps the layout")
            return self._write_rows(h, _key(key), tensor, rows, tns)
        if chunk_rows is not None:
            return self._write_for_rows(h, _key(key), tensor, codec, chunk_rows, tns)
        a = _plain_args(tensor)
        if a is not None:
            ptr, nbytes, code, (_, sp, ndim) = a
            gpu = -1
        else:
            if _staged(tensor):
                t = tensor.detach().resolve_conj().resolve_neg().contiguous()
                _staging().write_staged(h, _key(key), t, _torch.dtype_code(t.dtype), tuple(t.shape),
                                        _codec(codec), _torch.gpu_index(t.device), tns)
                return
            v = _host_view(tensor)  # held until Go is done with its memory
            ptr, nbytes, code, gpu = v.ptr, v.nbytes, v.dtype, v.gpu
            sp, ndim = shape_ptr(v.shape), len(v.shape)
        try:
            _native_write(h, key, ptr, nbytes, code, sp, ndim, codec, gpu, tns)
        except RuntimeError as e:
            raise errors.last_error(str(e)) from None
        except (TypeError, ValueError, UnicodeError):
            _key(key), _codec(codec)  # raises the precise InvalidArgument
            raise

    def _write_for_rows(self, h: int, key: str, tensor: Any, codec: str, chunk_rows: int, tns: int) -> None:
        if isinstance(chunk_rows, bool) or not isinstance(chunk_rows, int) or chunk_rows < 1:
            raise errors.InvalidArgument(f"chunk_rows must be a positive int, got {chunk_rows!r}")
        v = _host_view(tensor)
        errors.call(native.write_for_rows, h, key, v.ptr, v.nbytes, v.dtype, shape_ptr(v.shape), len(v.shape),
                    _codec(codec), chunk_rows, v.gpu, tns)

    def _write_rows(self, h: int, key: str, tensor: Any, rows: slice, tns: int) -> None:
        if getattr(tensor, "ndim", 0) == 0:
            raise errors.InvalidArgument("a row write needs a tensor of at least one dimension")
        start, _ = _row_start(rows, None, int(tensor.shape[0]))
        v = _host_view(tensor)
        errors.call(native.write_rows, h, key, start, v.ptr, v.nbytes, v.dtype, shape_ptr(v.shape), len(v.shape),
                    v.gpu, tns)

    def write_tensor_async(self, key: str, tensor: TensorLike, *, codec: str = "none",
                           timeout: float | None = None) -> Future[None]:
        """write_tensor on a Go goroutine; the tensor is kept alive until the
        returned future completes (with None). It takes effect after the
        operations this thread submitted on key before it.

        Returns:
            A future; result() returns None or raises what write_tensor
            raises; cancel() on a running write makes it raise Timeout.

        Raises:
            InvalidArgument, StoreClosed: at once, for a bad key or codec or
                a closed store.
        """
        return self._write_async(key, tensor, codec=codec, timeout=timeout)

    def _write_async(self, key: str, tensor: Any, *, codec: str = "none", rows: slice | None = None,
                     chunk_rows: int | None = None, timeout: float | None = None) -> Future[None]:
        """write_tensor_async, also with write_tensor's rows= or chunk_rows=
        (for gotensor.flexgen). A tensor on a device is copied to the host
        first, on this thread."""
        v = _host_view(tensor)
        h, k, tns = self._handle, _key(key), _timeout_ns(timeout)
        if rows is not None:
            if chunk_rows is not None:
                raise errors.InvalidArgument("chunk_rows= lays out a whole tensor; a write with rows= keeps the layout")
            if not v.shape:
                raise errors.InvalidArgument("a row write needs a tensor of at least one dimension")
            start, _ = _row_start(rows, None, v.shape[0])
            return completer.submit(
                lambda: native.start_write_rows(h, k, start, v.ptr, v.nbytes, v.dtype, shape_ptr(v.shape),
                                                len(v.shape), v.gpu, tns),
                v.keep, _no_value)
        c = _codec(codec)
        if chunk_rows is not None:
            if isinstance(chunk_rows, bool) or not isinstance(chunk_rows, int) or chunk_rows < 1:
                raise errors.InvalidArgument(f"chunk_rows must be a positive int, got {chunk_rows!r}")
            return completer.submit(
                lambda: native.start_write_for_rows(h, k, v.ptr, v.nbytes, v.dtype, shape_ptr(v.shape), len(v.shape),
                                                    c, chunk_rows, v.gpu, tns),
                v.keep, _no_value)
        return completer.submit(
            lambda: native.start_write(h, k, v.ptr, v.nbytes, v.dtype, shape_ptr(v.shape), len(v.shape), c, v.gpu,
                                       tns),
            v.keep, _no_value)

    # -- reading ---------------------------------------------------------------
    @overload
    def read_tensor(self, key: str, *, out: None = None, device: Device | None = None,
                    rows: slice | None = None, view: bool = False, timeout: float | None = None) -> torch.Tensor: ...
    @overload
    def read_tensor(self, key: str, *, out: OutT, device: Device | None = None,
                    rows: slice | None = None, view: bool = False, timeout: float | None = None) -> OutT: ...

    def read_tensor(self, key: str, *, out: TensorLike | None = None, device: Device | None = None,
                    rows: slice | None = None, view: bool = False, timeout: float | None = None) -> Any:
        """Read the tensor under key. With out=, decode into that tensor
        (its dtype and shape must match) and return it; otherwise return a
        new torch tensor (numpy array without torch), on device if given.
        With rows=slice(a, b), read only rows [a, b) of its leading dimension
        (only the chunks that cover them are fetched and decoded).

        Args:
            key: the key written.
            out: a torch.Tensor or numpy.ndarray of the stored dtype and shape
                (of the rows' shape with rows=) to decode into.
            device: where a new tensor goes ("cpu", "cuda:0", ...).
            rows: a slice with step 1 of the leading dimension.
            view: return a tensor that views the stored bytes in place, no
                copy (mem:// and file://, for a tensor stored uncoded with
                its payload aligned for its dtype; anything else is read as
                a copy, counted in stats()["view_copies"]). Writes into it
                never reach the store, and nothing done to the key later
                changes it; it holds the stored bytes until it is freed.
                With device=, the view is copied there (straight from
                page-locked memory on a mem://?pinned=true store).
            timeout: seconds; None: the store's default.

        Returns:
            out, or the new tensor.

        Raises:
            KeyNotFound: key holds nothing.
            InvalidArgument: out= of another dtype or shape, a bad rows=, or
                a CUDA device where CUDA is not available.
            CorruptData: the stored bytes fail their checksums.
            Timeout, StoreClosed, Unavailable: as for write_tensor.
        """
        h = self._h or self._handle
        if out is None and device is None and rows is None and not view and timeout is None:
            # the hot path, inline: a tensor that fits the thread's scratch
            # buffer comes back decoded in this one call; a new CPU tensor
            # is made for it and the bytes copied in
            sptr, meta, meta_ptr = _scratch.args
            try:
                fh = _native_read(h, key, sptr, SCRATCH_BYTES, meta_ptr, -1, 0)
            except RuntimeError as e:
                raise errors.last_error(str(e)) from None
            except (TypeError, ValueError, UnicodeError):
                _key(key)
                raise
            if not fh:
                new_empty, rank = _new_empty(meta[0]), meta[1]
                if new_empty is not None and rank:
                    # sizes as arguments (torch parses them faster than a
                    # tuple), read one by one for the common ranks (faster
                    # than a slice of the meta array)
                    if rank == 1:
                        t = new_empty(meta[3])
                    elif rank == 2:
                        t = new_empty(meta[3], meta[4])
                    else:
                        t = new_empty(*meta[3:3 + rank])
                    if meta[2]:
                        _memmove(t.data_ptr(), sptr, meta[2])
                    return t
            return self._finish_new(fh, None, False, 0)
        tns = _timeout_ns(timeout) if timeout is not None else 0
        if view:
            return self._read_view(h, key, out, rows, device, tns)
        if rows is not None:
            return self._read_rows(h, _key(key), rows, out, device, tns)
        if out is not None:
            a, finish = _plain_args(out), None
            if a is not None:
                ptr, nbytes, code, (_, sp, ndim) = a
                gpu = -1
            else:
                if _staged(out):
                    return self._read_staged(h, _key(key), tns, out=out)
                v, finish = _out_view(out)  # v held until Go is done with its memory
                ptr, nbytes, code, gpu = v.ptr, v.nbytes, v.dtype, v.gpu
                sp, ndim = shape_ptr(v.shape), len(v.shape)
            try:
                _native_read_into(h, key, ptr, nbytes, code, sp, ndim, gpu, tns)
            except RuntimeError as e:
                raise errors.last_error(str(e)) from None
            except (TypeError, ValueError, UnicodeError):
                _key(key)
                raise
            if finish is not None:
                finish()
            return out
        if device is not None and _cuda(device):
            return self._read_staged(h, _key(key), tns, device=device)
        return self._read_new(h, key, device, False, tns)

    def _read_view(self, h: int, key: str, out: Any, rows: Any, device: Any, tns: int) -> Any:
        """read_tensor(view=True): one call maps the tensor, or fetches a copy
        to decode where it cannot be viewed."""
        _check_view(out, rows)
        meta = _scratch.meta
        try:
            r = native.view(h, key, _scratch.meta_ptr, tns)
        except RuntimeError as e:
            raise errors.last_error(str(e)) from None
        except (TypeError, ValueError, UnicodeError):
            _key(key)
            raise
        code, shape, _ = read_meta(meta)
        if r > 0:
            return _viewed(r, code, shape, device)
        try:
            new, finish = _new(code, shape, device, False)
        except BaseException:
            native.release(-r)
            raise
        errors.call(native.decode, -r, new.ptr, new.nbytes, new.gpu, tns)
        return finish()

    def _read_view_async(self, key: str, out: Any, device: Any, timeout: float | None) -> Future[Any]:
        """read_tensor_async(view=True)."""
        _check_view(out, None)
        h, key, tns = self._handle, _key(key), _timeout_ns(timeout)
        if self._maps:
            return self._view_now(h, key, device, tns)
        meta = new_meta()

        def viewed(r: int, fut: Future[Any]) -> None:
            code, shape, _ = read_meta(meta)
            if r > 0:
                fut.set_result(_viewed(r, code, shape, device))
                return
            try:
                new, finish = _new(code, shape, device, False)
            except BaseException:
                native.release(-r)
                raise
            completer.submit(lambda: native.start_decode(-r, new.ptr, new.nbytes, new.gpu, tns), new.keep,
                             lambda _v, f: f.set_result(finish()), future=fut)
        return completer.submit(lambda: native.start_view(h, key, meta.buffer_info()[0], tns), meta, viewed)

    def _view_now(self, h: int, key: str, device: Any, tns: int) -> Future[Any]:
        """read_tensor_async(view=True) on a store that maps: the view made
        now, in this thread (its first one maps the frame and checks it),
        the future done; a tensor that cannot be viewed decodes on a
        goroutine as any async read's."""
        fut: Future[Any] = OpFuture()
        fut.set_running_or_notify_cancel()
        meta = new_meta()
        try:
            r = errors.call(native.view, h, key, meta.buffer_info()[0], tns)
            code, shape, _ = read_meta(meta)
            if r > 0:
                fut.set_result(_viewed(r, code, shape, device))
                return fut
            try:
                new, finish = _new(code, shape, device, False)
            except BaseException:
                native.release(-r)
                raise
        except Exception as e:  # noqa: BLE001 - the future carries it, as an async read's
            fut.set_exception(e)
            return fut
        return completer.submit(lambda: native.start_decode(-r, new.ptr, new.nbytes, new.gpu, tns), new.keep,
                                lambda _v, f: f.set_result(finish()))

    def _read_rows(self, h: int, key: str, rows: slice, out: Any, device: Any, tns: int) -> Any:
        if out is not None:
            if getattr(out, "ndim", 0) == 0:
                raise errors.InvalidArgument("a row read needs out= of at least one dimension")
            start, _ = _row_start(rows, None, int(out.shape[0]))
            v, finish = _out_view(out)
            errors.call(native.read_rows, h, key, start, v.ptr, v.nbytes, v.dtype, shape_ptr(v.shape), len(v.shape),
                        v.gpu, tns)
            if finish is not None:
                finish()
            return out
        st = json.loads(errors.call(native.describe, h, key, tns))  # the rows' dtype and shape; not a stat
        if not st["shape"]:
            raise errors.InvalidArgument(f"key {key!r} holds a 0-d tensor: it has no rows")
        start, stop = _row_start(rows, st["shape"][0], None)
        shape = (stop - start,) + tuple(st["shape"][1:])
        code = CODES[st["dtype"]]
        view, finish = _new(code, shape, None, False)
        d = dims(shape)
        errors.call(native.read_rows, h, key, start, view.ptr, view.nbytes, code, shape_ptr(d), len(d), -1, tns)
        t = finish()
        return t.to(_torch.device_of(device)) if device is not None else t

    def _read_new(self, h: int, key: str, device: Any, as_numpy: bool, tns: int) -> Any:
        """One call for a tensor that fits the thread's scratch buffer;
        fetch, then decode into the new tensor, for a larger one."""
        try:
            fh = _native_read(h, key, _scratch.ptr, SCRATCH_BYTES, _scratch.meta_ptr, -1, tns)
        except RuntimeError as e:
            raise errors.last_error(str(e)) from None
        except (TypeError, ValueError, UnicodeError):
            _key(key)
            raise
        return self._finish_new(fh, device, as_numpy, tns)

    def _finish_new(self, fh: int, device: Any, as_numpy: bool, tns: int) -> Any:
        """The new tensor of a read whose meta is in the thread's scratch:
        decoded from the fetch handle fh, or copied from the scratch buffer
        (fh 0)."""
        code, shape, nbytes = read_meta(_scratch.meta)
        try:
            view, finish = _new(code, shape, device, as_numpy)
        except BaseException:
            if fh:
                native.release(fh)
            raise
        if fh:
            errors.call(native.decode, fh, view.ptr, view.nbytes, view.gpu, tns)
        elif nbytes:
            _memmove(view.ptr, _scratch.ptr, nbytes)
        return finish()

    def _fetch(self, h: int, key: str, tns: int) -> tuple[int, int, tuple[int, ...]]:
        """A fetch handle for key and its (dtype code, shape)."""
        meta = new_meta()
        fh = errors.call(native.read, h, key, 0, 0, meta.buffer_info()[0], -1, tns)
        code, shape, _ = read_meta(meta)
        return fh, code, shape

    def _read_staged(self, h: int, key: str, tns: int, out: Any = None, device: Any = None) -> Any:
        fh, code, shape = self._fetch(h, key, tns)
        try:
            if out is not None:
                want = (_torch.dtype_code(out.dtype), tuple(out.shape))
                if want != (code, shape):
                    raise errors.InvalidArgument(f"key {key!r} holds {name_of(code)}{list(shape)}, destination is "
                                                 f"{name_of(want[0])}{list(want[1])}")
                dst = out if out.is_contiguous() else _torch.torch.empty_like(out, memory_format=_torch.torch.contiguous_format)
            else:
                dst = _torch.torch.empty(shape, dtype=_torch.torch_dtype(code), device=device)
            if dst.numel() * dst.element_size() < _staging().STAGED_MIN:  # small: one pinned copy
                view, finish = _torch.new_tensor(code, shape, device)
                errors.call(native.decode, fh, view.ptr, view.nbytes, view.gpu, tns)
                fh = 0
                dst.copy_(finish())
            else:
                staged_fh, fh = fh, 0  # read_staged releases it
                _staging().read_staged(staged_fh, dst, _torch.gpu_index(dst.device), tns)
        finally:
            if fh:
                native.release(fh)
        if out is not None and dst is not out:
            out.copy_(dst)
        return out if out is not None else dst

    def read_array(self, key: str, *, timeout: float | None = None) -> Array:
        """Read the tensor under key as a new numpy array (bfloat16 and float8
        need ml_dtypes). Raises KeyNotFound when key holds nothing,
        InvalidArgument when numpy has no such dtype, and what read_tensor
        raises."""
        return self._read_new(self._handle, _key(key), None, True, _timeout_ns(timeout))

    @overload
    def read_tensor_async(self, key: str, *, out: None = None, device: Device | None = None,
                          view: bool = False, timeout: float | None = None) -> Future[torch.Tensor]: ...
    @overload
    def read_tensor_async(self, key: str, *, out: OutT, device: Device | None = None,
                          view: bool = False, timeout: float | None = None) -> Future[OutT]: ...

    def read_tensor_async(self, key: str, *, out: TensorLike | None = None, device: Device | None = None,
                          view: bool = False, timeout: float | None = None) -> Future[Any]:
        """read_tensor on Go goroutines; the future's result is the tensor
        (out= when given). It sees the operations this thread submitted on
        key before it.

        Returns:
            A future; result() returns the tensor or raises what read_tensor
            raises; cancel() on a running read makes it raise Timeout.

        Raises:
            InvalidArgument, StoreClosed: at once, for a bad key or out= or a
                closed store.
        """
        if view:
            return self._read_view_async(key, out, device, timeout)
        h, key, tns = self._handle, _key(key), _timeout_ns(timeout)
        if (out is not None and _staged(out)) or (out is None and _cuda(device)):
            return _staging_executor().submit(self.read_tensor, key, out=out, device=device, timeout=timeout)
        if out is not None:
            return self._read_async(key, out, timeout=timeout)

        meta = new_meta()

        def fetched(fh, fut):
            code, shape, _ = read_meta(meta)
            try:
                view, finish = _new(code, shape, device, False)
            except BaseException:
                native.release(fh)
                raise
            completer.submit(lambda: native.start_decode(fh, view.ptr, view.nbytes, view.gpu, tns), view.keep,
                             lambda _v, f: f.set_result(finish()), future=fut)
        return completer.submit(lambda: native.start_read(h, key, 0, 0, meta.buffer_info()[0], -1, tns),
                                meta, fetched)

    def _read_async(self, key: str, out: Any, *, rows: slice | None = None,
                    timeout: float | None = None) -> Future[Any]:
        """read_tensor_async into out=, also with read_tensor's rows= (for
        gotensor.flexgen); out on a device is filled from a host copy when
        the read completes."""
        h, k, tns = self._handle, _key(key), _timeout_ns(timeout)
        view, finish = _out_view(out)

        def done(_v: Any, fut: Future[Any]) -> None:
            if finish is not None:
                finish()
            fut.set_result(out)
        if rows is not None:
            if not view.shape:
                raise errors.InvalidArgument("a row read needs out= of at least one dimension")
            start, _ = _row_start(rows, None, view.shape[0])
            return completer.submit(
                lambda: native.start_read_rows(h, k, start, view.ptr, view.nbytes, view.dtype, shape_ptr(view.shape),
                                               len(view.shape), view.gpu, tns),
                (view.keep, out), done)
        return completer.submit(
            lambda: native.start_read_into(h, k, view.ptr, view.nbytes, view.dtype, shape_ptr(view.shape),
                                           len(view.shape), view.gpu, tns),
            (view.keep, out), done)

    def _delete_async(self, key: str, *, timeout: float | None = None) -> Future[None]:
        """delete on a Go goroutine, in key's order (for gotensor.flexgen)."""
        h, k, tns = self._handle, _key(key), _timeout_ns(timeout)
        return completer.submit(lambda: native.start_delete(h, k, tns), None, _no_value)

    # -- many at once ------------------------------------------------------------
    def write_tensors(self, items: Items, *, codec: str = "none") -> None:
        """Write many tensors concurrently: items is a mapping or (key, tensor)
        pairs. On a sharded URL (tcp://a,b,c) they fan out over the nodes.
        Every write runs to its end. Where some fail, the first failure's
        class is raised, naming the keys that failed; its ``failed`` is
        {key: exception} and ``results`` holds the keys written."""
        pairs = list(items.items() if hasattr(items, "items") else items)
        _gather([k for k, _ in pairs], [self.write_tensor_async(k, t, codec=codec) for k, t in pairs], "written")

    def read_tensors(self, keys: Iterable[str], *, device: Device | None = None,
                     view: bool = False) -> dict[str, torch.Tensor]:
        """Read many tensors concurrently (fanning out over a sharded store's
        nodes); returns {key: tensor} in the order given. Every read runs to
        its end. Where some fail, the first failure's class is raised (e.g.
        Unavailable for a node that is down), naming the keys that failed;
        its ``failed`` is {key: exception} and ``results`` {key: tensor} of
        the reads that succeeded."""
        keys = list(keys)
        futs = [self.read_tensor_async(k, device=device, view=view) for k in keys]
        return dict(zip(keys, _gather(keys, futs, "read")))

    # -- keys ------------------------------------------------------------------
    def delete(self, key: str, *, timeout: float | None = None) -> None:
        """Remove key. Raises KeyNotFound when it holds nothing, Timeout when
        the store does not answer in time."""
        errors.call(native.delete, self._handle, _key(key), _timeout_ns(timeout))

    def exists(self, key: str, *, timeout: float | None = None) -> bool:
        """Whether key holds a tensor. Raises Timeout when the store does not
        answer in time."""
        return bool(errors.call(native.exists, self._handle, _key(key), _timeout_ns(timeout)))

    def keys(self, prefix: str = "", *, timeout: float | None = None) -> list[str]:
        """The keys starting with prefix (all keys by default). Raises Timeout
        when the store does not answer in time."""
        out: str = errors.call(native.keys, self._handle, _key(prefix) if prefix else "", _timeout_ns(timeout))
        return out.split("\n") if out else []

    def __contains__(self, key: str) -> bool:
        return self.exists(key)

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def __len__(self) -> int:
        """The number of keys (from usage(): no key list is fetched)."""
        return int(self.usage()["keys"])

    def stat(self, key: str, *, timeout: float | None = None) -> dict[str, Any]:
        """dtype, shape (a tuple), raw_bytes, stored_bytes, codec and chunks
        of a stored tensor, read from its header alone. Raises KeyNotFound
        when key holds nothing, Timeout when the store does not answer in
        time."""
        st: dict[str, Any] = json.loads(errors.call(native.stat, self._handle, _key(key), _timeout_ns(timeout)))
        st["shape"] = tuple(st["shape"] or ())
        return st

    def usage(self) -> dict[str, Any]:
        """{"url", "keys", "bytes", "capacity"}: keys held, bytes used and
        capacity (0 = unbounded). Raises StoreClosed on a closed store."""
        usage: dict[str, Any] = json.loads(errors.call(native.usage, self._handle))
        return usage

    def stats(self) -> dict[str, Any]:
        """What this store handle did since it was opened or reset_stats():
        calls by kind ("ops") and failed ("errors"), raw, stored and wire bytes
        written and read, seconds encoding, decoding and moving, ratio, GB/s,
        writes by the codec chosen ("codecs"), and "auto"'s view of the link."""
        stats: dict[str, Any] = json.loads(errors.call(native.stats, self._handle))
        return stats

    def reset_stats(self) -> None:
        """Zero the counts stats() reports (the link estimate is kept)."""
        errors.call(native.reset_stats, self._handle)

    def save_safetensors(self, path: str | os.PathLike[str], keys: Iterable[str] | None = None) -> dict[str, Any]:
        """Write the tensors under keys (default: every key), named by their
        keys, to the .safetensors file at path (via the safetensors library);
        returns {"tensors": n, "raw_bytes": b}. Raises KeyNotFound for a
        missing key, Unsupported for a dtype safetensors cannot hold (the
        file is then left as it was)."""
        from .export import save_safetensors
        return save_safetensors(self, path, keys)
