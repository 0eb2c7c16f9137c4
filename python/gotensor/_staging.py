"""Staging CUDA tensors through pinned host memory: every copy between a
device and the host memory Go works on is made here.

Go only touches host memory. A small tensor is copied whole through one
page-locked host tensor (to_host, host_for). A large one is moved in
segments through two reusable pinned buffers: while Go codes segment i from
one buffer, the GPU copies segment i+1 into the other (device-to-host on a
side stream); on reads, Go decodes segment i+1 while segment i goes
host-to-device.
"""

from __future__ import annotations

import os
import threading
import warnings
from typing import Any

import torch

from . import errors
from ._completer import completer
from ._native_lib import native
from ._view import dims, shape_ptr

SEGMENT = 8 << 20          # bytes per staged segment (rounded to the frame's chunks)
STAGED_MIN = 2 * SEGMENT   # smaller tensors go through one staging copy


def _memlock_limit() -> int | None:
    try:
        import resource
        soft, _ = resource.getrlimit(resource.RLIMIT_MEMLOCK)
        return None if soft == resource.RLIM_INFINITY else soft
    except (ImportError, ValueError, OSError):
        return None


class PinnedPool:
    """Reusable page-locked host buffers, by power-of-two size class. The
    pool holds at most `capacity` bytes: GOTENSOR_PINNED_BYTES (default
    1 GiB), and no more than RLIMIT_MEMLOCK allows. Past that, buffers are
    ordinary pageable memory (slower copies) and a warning says why."""

    def __init__(self, capacity: int | None = None) -> None:
        cap = capacity if capacity is not None else int(os.environ.get("GOTENSOR_PINNED_BYTES", 1 << 30))
        limit = _memlock_limit()
        self.memlock_limited = limit is not None and limit < cap
        self.capacity = min(cap, limit) if limit is not None else cap
        self._free: dict[int, list[torch.Tensor]] = {}
        self._pinned = 0
        self._lock = threading.Lock()
        self._warned = False

    def acquire(self, nbytes: int) -> torch.Tensor:
        size = 1 << max(20, (nbytes - 1).bit_length())
        with self._lock:
            free = self._free.get(size)
            if free:
                return free.pop()
            pin = torch.cuda.is_available() and self._pinned + size <= self.capacity
            if pin:
                self._pinned += size
        if not pin and torch.cuda.is_available() and not self._warned:
            self._warned = True
            why = (f"RLIMIT_MEMLOCK ({self.capacity} bytes; raise it with `ulimit -l`)" if self.memlock_limited
                   else f"GOTENSOR_PINNED_BYTES ({self.capacity} bytes)")
            warnings.warn(f"gotensor: pinned staging memory is capped by {why}; staging through pageable memory",
                          RuntimeWarning, stacklevel=3)
        try:
            return torch.empty(size, dtype=torch.uint8, pin_memory=pin)
        except RuntimeError as e:  # the driver refused to pin
            with self._lock:
                self._pinned -= size if pin else 0
            warnings.warn(f"gotensor: cannot pin {size} bytes ({e}); check RLIMIT_MEMLOCK (`ulimit -l`)",
                          RuntimeWarning, stacklevel=3)
            return torch.empty(size, dtype=torch.uint8)

    def release(self, buf: torch.Tensor) -> None:
        with self._lock:
            self._free.setdefault(buf.numel(), []).append(buf)

    @property
    def pinned_bytes(self) -> int:
        return self._pinned


pool = PinnedPool()


def _pinnable() -> bool:
    return torch.cuda.is_available()


def to_host(t: torch.Tensor) -> torch.Tensor:
    """A contiguous host copy of t, a tensor on a device, in page-locked
    memory where CUDA is available. The copy runs on the device's current
    stream, so it follows the work queued there (the kernel producing t),
    and the caller waits for it."""
    host = torch.empty(t.shape, dtype=t.dtype, pin_memory=_pinnable())
    host.copy_(t.detach().resolve_conj().resolve_neg())
    return host


def host_for(shape: Any, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """An empty contiguous host tensor to decode into before it is copied to
    device: page-locked for a CUDA device (a faster copy there)."""
    return torch.empty(tuple(shape), dtype=dtype, pin_memory=device.type == "cuda" and _pinnable())


def _flat_bytes(t: torch.Tensor) -> torch.Tensor:
    return t.reshape(-1).view(torch.uint8) if t.dim() else t.reshape(1).view(torch.uint8)


def _side_stream(t: torch.Tensor) -> torch.cuda.Stream | None:
    """A side stream for the staging copies of CUDA tensor t (None for a host
    tensor). It first waits for the work queued on t's device's current
    stream: the kernel producing t (or, for a read, the last use of the
    memory t was allocated in) may still be running there. t's memory is
    marked in use by the side stream, so the caching allocator does not hand
    it out again before the side stream's copies are done."""
    if not t.is_cuda:
        return None
    side = torch.cuda.Stream(device=t.device)
    side.wait_stream(torch.cuda.current_stream(t.device))
    t.record_stream(side)
    return side


def _wait(fut: Any) -> None:
    if fut is not None:
        fut.result()


def write_staged(h: int, key: str, t: torch.Tensor, dtype: int, shape: tuple, codec: str, gpu: int,
                 timeout_ns: int = 0, segment: int = SEGMENT) -> None:
    """Write a contiguous device tensor through two pinned buffers, coding
    one segment while the next one is copied to the host."""
    flat = _flat_bytes(t)
    n = flat.numel()
    shape_arr = dims(shape)
    wh = errors.call(native.begin_write, h, key, dtype, shape_ptr(shape_arr), len(shape_arr), codec, gpu)
    bufs: list[torch.Tensor] = []
    pending: list[Any] = [None, None]
    try:
        cs = errors.call(native.writer_chunk, wh)
        seg = max(cs, segment // cs * cs)
        bufs = [pool.acquire(min(seg, n)) for _ in range(2)]
        stream = _side_stream(t)
        for i, off in enumerate(range(0, n, seg)):
            k, length = i % 2, min(seg, n - off)
            _wait(pending[k])  # Go is done with this buffer
            buf = bufs[k][:length]
            if stream is not None:
                with torch.cuda.stream(stream):
                    buf.copy_(flat[off:off + length], non_blocking=True)
                stream.synchronize()
            else:
                buf.copy_(flat[off:off + length])
            pending[k] = completer.submit(
                lambda wh=wh, off=off, p=buf.data_ptr(), n=length: native.start_write_part(wh, off, p, n),
                buf, lambda _p, f: f.set_result(None))
        for f in pending:
            _wait(f)
        errors.call(native.commit_write, wh, timeout_ns)
    except BaseException:
        for f in pending:  # let Go finish with the buffers before they are reused
            try:
                _wait(f)
            except Exception:
                pass
        native.abort_write(wh)
        raise
    finally:
        for b in bufs:
            pool.release(b)


def read_staged(fh: int, out: torch.Tensor, gpu: int, timeout_ns: int = 0, segment: int = SEGMENT) -> None:
    """Decode a fetched frame into a contiguous device tensor through two
    pinned buffers, decoding one segment while the previous one is copied
    to the device. Releases fh."""
    flat = _flat_bytes(out)
    n = flat.numel()
    bufs: list[torch.Tensor] = []
    copied: list[Any] = [None, None]  # CUDA events: host-to-device copy out of each buffer done
    try:
        cs = errors.call(native.fetch_chunk, fh) or n
        seg = max(cs, segment // cs * cs)
        bufs = [pool.acquire(min(seg, n)) for _ in range(2)]
        stream = _side_stream(out)
        for i, off in enumerate(range(0, n, seg)):
            k, length = i % 2, min(seg, n - off)
            if copied[k] is not None:
                copied[k].synchronize()
            buf = bufs[k][:length]
            completer.submit(
                lambda off=off, p=buf.data_ptr(), n=length: native.start_decode_range(fh, off, p, n, gpu, timeout_ns),
                buf, lambda _p, f: f.set_result(None)).result()
            if stream is not None:
                with torch.cuda.stream(stream):
                    flat[off:off + length].copy_(buf, non_blocking=True)
                    copied[k] = torch.cuda.Event()
                    copied[k].record(stream)
            else:
                flat[off:off + length].copy_(buf)
        if stream is not None:
            stream.synchronize()
    finally:
        native.release(fh)
        for b in bufs:
            pool.release(b)
