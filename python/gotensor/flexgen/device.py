"""GoTensorDevice: FlexGen's disk device on a gotensor store.

A tensor on the device is a key in the store; its TorchTensor's .data holds
the key. Each copy FlexGen submits becomes gotensor operations on that key,
started as it is submitted: Go runs one key's operations in the order they
were started and different keys' concurrently (see "Order" in the README),
so the device keeps no queues or threads of its own. synchronize() waits for
what was started and raises the first error.
"""

from __future__ import annotations

import math
import threading
from concurrent.futures import Future
from urllib.parse import parse_qsl, urlsplit, urlunsplit

import numpy as np
import torch
from flexgen import pytorch_backend as pb
from flexgen.compression import TorchCompressedDevice, get_compressed_indices
from flexgen.pytorch_backend import DeviceType, TorchDisk, TorchTensor
from flexgen.utils import np_dtype_to_torch_dtype

import gotensor

from .. import _staging
from .._completer import completer
from .indices import covers, index, row_span, row_split, rows_read
from .runs import run_prefix

_FLOATS = {torch.float16, torch.bfloat16, torch.float32, torch.float64}
# A write from host memory of at most this many bytes (a KV cache's token
# append) to a key with no operation running is made on the caller's thread:
# starting an asynchronous operation and completing its future costs more
# than the write, and FlexGen waits for a layer's appends right after
# submitting them.
INLINE_BYTES = 256 << 10
# A submission waits for the operations started when this many have piled up
# without a synchronize() (their errors are kept for it).
_COMPACT_AT = 4096


class GoTensorDevice(TorchDisk):
    """A FlexGen disk device backed by a gotensor store URL."""

    def __init__(self, url: str = "mem://", *, store: gotensor.Store | None = None, codec: str = "planes",
                 cache_codec: str = "none", prefix: str | None = None, num_copy_threads: int = 4) -> None:
        """A device on the store at url (or on store, which it then does not
        close). codec: for float tensors ("none" also for other dtypes, else
        "auto"); cache_codec: the same for KV caches, which are appended a row
        a token and read whole every token (see docs/FLEXGEN.md: a lossless
        codec there costs a decode of the cache per token). A file:// URL
        without fsync= opens with fsync=false: an offload directory is
        scratch space (fsync=true to sync anyway). prefix: where its keys go
        (default: one of its own under flexgen/). num_copy_threads is
        TorchDisk's argument, accepted and unused: Go runs the copies."""
        pb.fix_recursive_import()
        self.store = store if store is not None else gotensor.open(scratch_url(url))
        self._own_store = store is None
        self.name = self.path = url
        self.mem_capacity = None
        self.device_type = DeviceType.DISK
        self.compressed_device = _CompressedOn(self)
        self.links: dict = {}
        self.codec, self.cache_codec = codec, cache_codec
        self.prefix = prefix if prefix is not None else run_prefix()
        self.copy_queue, self.copy_threads = None, []  # TorchDisk's; the device has no copy threads
        self._meta: dict[str, tuple[tuple, torch.dtype]] = {}  # allocated, maybe not yet written
        self._sizes: dict[str, int] = {}  # raw bytes per key written (or with a write started)
        self._appended: set[str] = set()  # KV caches: stored in chunks of one row, as FlexGen appends them
        self._held = self._peak = 0
        # (result, the Go operation's future, errors it may end in unreported, stats kind, bytes) of each
        # operation started
        self._started: list[tuple[Future, Future, type | tuple, str | None, int]] = []
        self._last: dict[str, Future] = {}  # the last operation started on each key
        self._errors: list[BaseException] = []  # failures not yet raised by synchronize()
        self._open = True
        self._lock = threading.Lock()  # stats and byte counts, read by other threads
        self.stats = {"reads": 0, "writes": 0, "read_bytes": 0, "written_bytes": 0}
        pb.global_disk_device = self

    # -- FlexGen's device interface ---------------------------------------------
    def allocate(self, shape, dtype, pin_memory=None, name=None):
        """A TorchTensor of shape and numpy dtype on this device: a key in the
        store, written by the first copy into it (pin_memory is ignored)."""
        name = name or TorchTensor.next_name()
        key = self.prefix + name
        self._meta[key] = (tuple(int(d) for d in shape), np_dtype_to_torch_dtype[dtype])
        return TorchTensor(self._meta[key][0], self._meta[key][1], key, self, name=name)

    def delete(self, tensor):
        """Delete tensor's key, after the copies started on it."""
        key = tensor.data
        self._check_open()
        self._meta.pop(key, None)
        self._appended.discard(key)
        size = self._sizes.pop(key, None)
        if size is None:
            return  # allocated, never written: nothing is stored
        with self._lock:
            self._held -= size
        self._start(key, self.store._delete_async(key), quiet=gotensor.KeyNotFound)

    def init_cache_one_gpu_batch(self, config, task, policy):
        """The (k, v) cache tensors of one GPU batch, as FlexGen's TorchDisk makes them."""
        shape = (task.prompt_len + task.gen_len - 1, policy.gpu_batch_size * config.n_head,
                 config.input_dim // config.n_head)
        dtype = np.float16 if config.dtype == np.float16 else config.dtype
        k, v = self.allocate(shape, dtype), self.allocate(shape, dtype)
        self._mark_appended(k.data, v.data)
        return k, v

    def _mark_appended(self, *keys: str) -> None:
        """keys are KV caches: a token's append then re-encodes and rewrites its rows only."""
        self._appended.update(keys)

    def submit_copy(self, dst, dst_indices, src, src_indices):
        """dst[dst_indices] = src[src_indices], finished by synchronize().
        Like FlexGen's TorchDisk, a copy to or from the device runs after
        the copies submitted on its key before it. A source in device memory
        is copied to the host first, once the work queued on its stream is
        done. An error surfaces from synchronize()."""
        self._check_open()
        mine = (src.device is self, dst.device is self)
        if not any(mine) and src.device.device_type != DeviceType.CUDA:
            raise gotensor.InvalidArgument("GoTensorDevice.submit_copy: neither side is on this device")
        try:
            if all(mine):
                self._write(dst.data, dst_indices, self._read_now(src.data, src_indices))
            elif mine[1]:
                self._write(dst.data, dst_indices, pb.map_to_torch_tensor(src, src_indices))
            elif mine[0]:
                self._load(src.data, src_indices, pb.map_to_torch_tensor(dst, dst_indices))
            else:  # FlexGen's general_copy gives the disk device copies from CUDA into unpinned host memory
                pb.map_to_torch_tensor(dst, dst_indices).copy_(pb.map_to_torch_tensor(src, src_indices))
        except Exception as e:  # noqa: BLE001 - raised by synchronize(), as a failed operation's error is
            self._errors.append(e)

    def submit_compressed_copy(self, dst, dst_indices, src, src_indices) -> None:
        """FlexGen's general_copy_compressed where a side's data and scales are
        on this device: the data and the scales go through submit_copy."""
        src_data, src_scale = get_compressed_indices(src, src_indices, src.shape)
        dst_data, dst_scale = get_compressed_indices(dst, dst_indices, dst.shape)
        self.submit_copy(dst.data[0], tuple(dst_data), src.data[0], tuple(src_data))
        self.submit_copy(dst.data[1], tuple(dst_scale), src.data[1], tuple(src_scale))

    def synchronize(self):
        """Wait for every copy submitted; raise the first error one of them hit."""
        self._wait_started()
        if self._errors:
            err, self._errors = self._errors[0], []
            raise err

    def close_copy_threads(self):
        """Wait for the copies submitted so far; later ones raise StoreClosed."""
        if self._open:
            self._open = False
            self._wait_started()

    def add_link(self, link):
        """Remember FlexGen's link to another device."""
        dst = link.b if link.a == self else link.a
        self.links[dst] = link

    def mem_stats(self):
        """(current, peak) raw bytes of the tensors this device holds, as FlexGen
        reports per device; counted as copies are submitted."""
        with self._lock:
            return self._held, self._peak

    def print_stats(self):
        """Tensors held, then the store's counts (gotensor.Store.stats): the
        store may be shared with other devices, whose traffic it includes."""
        used, peak = self.mem_stats()
        n = len(self._sizes)
        st = self.store.stats()
        codecs = ", ".join(f"{k} {v}" for k, v in sorted(st["codecs"].items())) or "none yet"
        print(f"GoTensorDevice {self.name}: {n} tensors, {used / 2**20:.1f} MiB held (peak {peak / 2**20:.1f}); "
              f"{st['ops'].get('write', 0)} writes ({st['raw_bytes_written'] / 2**20:.1f} MiB raw, "
              f"{st['stored_bytes_written'] / 2**20:.1f} MiB stored, ratio {st['ratio']:.2f}, "
              f"{st['write_gbps']:.2f} GB/s), {st['ops'].get('read', 0)} reads "
              f"({st['raw_bytes_read'] / 2**20:.1f} MiB, {st['read_gbps']:.2f} GB/s); "
              f"{st['encode_seconds']:.2f} s encoding, {st['decode_seconds']:.2f} s decoding, "
              f"{st['move_seconds']:.2f} s moving; codecs: {codecs}")

    # -- gotensor side ------------------------------------------------------------
    def keys(self) -> list[str]:
        """The keys this device holds in the store."""
        return self.store.keys(self.prefix)

    def clear(self) -> None:
        """Delete every tensor this device wrote."""
        self.synchronize()
        for k in self.keys():
            self.store.delete(k)
        self._meta.clear()
        self._sizes.clear()
        self._appended.clear()
        with self._lock:
            self._held = 0

    def close(self) -> None:
        """Wait for the copies submitted and close the store if this device opened it."""
        self.close_copy_threads()
        if self._own_store:
            self.store.close()

    def __del__(self):
        try:
            self.close_copy_threads()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass

    def load_from_np(self, tensor: TorchTensor, array: np.ndarray) -> None:
        """Store a numpy array as tensor's value (FlexGen's weight loading)."""
        self._check_open()
        self._write(tensor.data, None, torch.from_numpy(np.ascontiguousarray(array)))
        self.synchronize()

    # -- copies as gotensor operations ---------------------------------------------
    def _check_open(self) -> None:
        if not self._open:
            raise gotensor.StoreClosed("GoTensorDevice is closed for copies (close_copy_threads)")

    def _start(self, key: str, op: Future, kind: str | None = None, nbytes: int = 0, quiet: type | tuple = (),
               then=None):
        """Track op, a Go operation started on key, for synchronize(); then()
        runs once it succeeds. A read or write is counted in stats when it
        has succeeded. op's completion is held for synchronize() (it claims
        it from Go on this thread), so no other thread is woken for it."""
        completer.hold(op)
        fut = op if then is None else _then(op, then)
        self._started.append((fut, op, quiet, kind, nbytes))
        self._last[key] = fut
        if len(self._started) >= _COMPACT_AT:
            self._wait_started()

    def _wait_started(self) -> None:
        """Wait for the operations started; count them, and keep their errors
        for synchronize()."""
        started, self._started, self._last = self._started, [], {}
        completer.wait([op for _, op, _, _, _ in started])
        for fut, _, quiet, kind, nbytes in started:
            err = fut.exception()
            if err is None:
                if kind is not None:
                    self._count(kind, nbytes)
            elif not isinstance(err, quiet):
                self._errors.append(err)

    def _count(self, kind: str, nbytes: int) -> None:
        with self._lock:
            self.stats[kind + "s"] += 1
            self.stats[("read" if kind == "read" else "written") + "_bytes"] += nbytes

    def _codec_for(self, key, dtype):
        """The device's codec (a KV cache's: cache_codec) for floats; for other
        dtypes (a compressed cache's packed 4-bit bytes) "none" where that
        codec is "none", else "auto"."""
        codec = self.cache_codec if key in self._appended else self.codec
        return codec if dtype in _FLOATS or codec == "none" else "auto"

    def _zeros(self, key) -> torch.Tensor:
        """The value of a key allocated and never written: zeros, as a new file's."""
        meta = self._meta.get(key)
        if meta is None:
            raise gotensor.KeyNotFound(f"key {key!r} was never allocated on this device")
        return torch.zeros(meta[0], dtype=meta[1])

    def _read_now(self, key, indices=None) -> torch.Tensor:
        """data[indices] of the tensor under key, read on this thread after the
        operations started on the key (slices read only the rows they span)."""
        if key not in self._sizes:
            return index(self._zeros(key), indices)
        rows, rest = row_split(indices)
        t = self.store.read_tensor(key, rows=rows)
        self._count("read", t.numel() * t.element_size())
        return index(t, indices) if rows is None else t[rest]

    def _write(self, key, indices, data: torch.Tensor) -> None:
        """Start storing data as key's [indices]: a row write where indices are
        whole rows of a tensor already written (a KV cache's append), else a
        write of the whole tensor, onto zeros at its first write."""
        if data.device.type != "cpu":
            data = _staging.to_host(data)
        shape, dtype = self._meta.get(key) or (tuple(data.shape), data.dtype)
        written = key in self._sizes
        if written:
            span = row_span(shape, dtype, indices, data)
            if span is not None:
                self._put(key, data, rows=slice(*span))
                return
        idx = tuple(indices) if indices is not None and not torch.is_tensor(indices) else indices
        whole = idx is None or (tuple(data.shape) == shape and not torch.is_tensor(idx) and all(
            s.start in (0, None) and s.stop in (d, None) for s, d in zip(idx, shape)))
        rows, rest = row_split(idx)
        if whole or not written or rows is None:
            if whole:
                if data.numel() != math.prod(shape):
                    raise gotensor.InvalidArgument(f"copy into {key!r}: {data.numel()} elements for a tensor of "
                                                   f"shape {tuple(shape)}")
                full = data.reshape(shape).to(dtype)
            else:  # a slice at the first write (onto zeros) or gathered indices: the whole tensor
                full = self._zeros(key) if not written else self._read_now(key).clone()
                full[idx] = data.to(dtype)
            chunk_rows = 1 if key in self._appended and len(shape) >= 2 else None
            self._put(key, full.contiguous(), codec=self._codec_for(key, dtype), chunk_rows=chunk_rows)
            size = math.prod(shape) * dtype.itemsize
            with self._lock:
                self._held += size - self._sizes.get(key, 0)
                self._peak = max(self._peak, self._held)
            self._sizes[key] = size
            return
        start, stop, _ = rows.indices(shape[0])  # some rows of a written tensor: only they are written
        if len(rest) <= len(shape) and all(covers(r, d) for r, d in zip(rest[1:], shape[1:])) and \
                tuple(data.shape) == (stop - start,) + shape[1:]:
            part = data.to(dtype)
        else:  # part of each row: the rows are read first
            part = self._read_now(key, (slice(start, stop),)).clone()
            part[rest] = data.to(dtype)
        self._put(key, part.contiguous(), rows=slice(start, stop))

    def _put(self, key, t: torch.Tensor, **how) -> None:
        """write_tensor(key, t, **how): on this thread when t is small and no
        operation runs on key (an error is kept for synchronize()), else
        started as an asynchronous operation."""
        nbytes = t.numel() * t.element_size()
        last = self._last.get(key)
        if nbytes <= INLINE_BYTES and (last is None or last.done()):
            self.store.write_tensor(key, t, **how)
            self._count("write", nbytes)
        else:
            self._start(key, self.store._write_async(key, t, **how), "write", nbytes)

    def _load(self, key, indices, out: torch.Tensor) -> None:
        """Start reading key's [indices] into out. Whole rows of a tensor of
        out's dtype decode straight into out where it is contiguous host
        memory (no temporary, no second copy); anything else decodes into a
        host tensor that is then indexed and copied into out."""
        if key not in self._sizes:
            part = index(self._zeros(key), indices)
            _check_fits(key, part, out)
            out.copy_(part)
            return
        meta = self._meta.get(key)
        if meta is None:  # written without allocate(): its shape is the store's
            part = self._read_now(key, indices)
            _check_fits(key, part, out)
            out.copy_(part)
            return
        shape, dtype = meta
        if out.dtype == dtype and out.device.type == "cpu" and out.is_contiguous():
            span = rows_read(shape, indices, out)
            if span is not None:
                self._start(key, self.store._read_async(key, out, rows=slice(*span)), "read", out.nbytes)
                return
        rows, rest = row_split(indices)
        if rows is None:
            tmp = _staging.host_for(shape, dtype, out.device)
            fut = self.store._read_async(key, tmp)
        else:
            start, stop, _ = rows.indices(shape[0])
            stop = max(start, stop)
            tmp = _staging.host_for((stop - start,) + shape[1:], dtype, out.device)
            fut = self.store._read_async(key, tmp, rows=slice(start, stop))

        def finish():
            part = index(tmp, indices) if rows is None else tmp[rest]
            _check_fits(key, part, out)
            out.copy_(part)
        self._start(key, fut, "read", tmp.nbytes, then=finish)


class _CompressedOn(TorchCompressedDevice):
    """FlexGen's TorchCompressedDevice over a GoTensorDevice, whose KV caches'
    data and scale tensors are laid out for appends as the device's own are."""

    def init_cache_one_gpu_batch(self, config, task, policy):
        k, v = super().init_cache_one_gpu_batch(config, task, policy)
        self.base_device._mark_appended(*(t.data[i].data for t in (k, v) for i in (0, 1)))
        return k, v


def scratch_url(url: str) -> str:
    """url, with fsync=false added to a file:// URL that does not say: the
    device's keys are scratch (deleted at close, and by clear_runs after a
    crash), so nothing in them is worth an fsync."""
    if not url.startswith("file:"):
        return url
    parts = urlsplit(url)
    if any(k == "fsync" for k, _ in parse_qsl(parts.query, keep_blank_values=True)):
        return url
    return urlunsplit(parts._replace(query=(parts.query + "&" if parts.query else "") + "fsync=false"))


def _check_fits(key, part: torch.Tensor, out: torch.Tensor) -> None:
    if tuple(out.shape) != tuple(part.shape):
        raise gotensor.InvalidArgument(f"copy from {key!r}: a {tuple(part.shape)} slice into a "
                                       f"{tuple(out.shape)} destination")


def _then(fut: Future, fn) -> Future:
    """A future that completes once fut has and fn() has then run (on the
    thread that completed fut), with fut's error or fn's."""
    out: Future = Future()

    def run(f: Future) -> None:
        try:
            f.result()
            fn()
        except BaseException as e:  # noqa: BLE001 - delivered through the future
            out.set_exception(e)
        else:
            out.set_result(None)
    fut.add_done_callback(run)
    return out
