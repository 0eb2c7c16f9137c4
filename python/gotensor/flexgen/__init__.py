"""FlexGen integration: offload weights and KV cache through gotensor.

    import gotensor.flexgen as gtf
    env = gtf.execution_env("file:///nvme/offload")  # instead of ExecutionEnv.create(path); mem://, tcp://...
    model = OptLM(config, env, weights_path, policy) # policy's disk percentages now go to gotensor

or, for FlexGen's own command line: `python -m gotensor.flexgen --offload-url URL <flex_opt's arguments>`.

GoTensorDevice is a flexgen TorchDisk (device type DISK), so every FlexGen
dispatch path (general_copy, TorchMixedDevice, TorchCompressedDevice) reaches
it unchanged. A tensor on it is a key in a gotensor store; its TorchTensor's
.data holds the key. Uncompressed tensors are stored with the lossless
`planes` codec (floats) or `auto`; with policy.compress_weight /
compress_cache, FlexGen's TorchCompressedDevice hands the device exactly the
data and scale tensors of gotensor's q4 format, which are stored as they
are. Copies never touch CUDA unless a side of them is on a GPU.
"""

from __future__ import annotations

import itertools
import math
import os
import queue
import socket
import threading
import time
from typing import Any

import numpy as np
import torch

import gotensor
from flexgen import pytorch_backend as pb
from flexgen import compression
from flexgen.compression import TorchCompressedDevice, get_compressed_indices
from flexgen.pytorch_backend import DeviceType, TorchDisk, TorchTensor
from flexgen.utils import ExecutionEnv, np_dtype_to_torch_dtype

__all__ = ["GoTensorDevice", "install", "uninstall", "execution_env", "read_weights_from", "clear_runs"]

_FLOATS = {torch.float16, torch.bfloat16, torch.float32, torch.float64}
# A host write of at most this many bytes (a KV cache's token append) to a key
# with nothing pending runs on the caller's thread: handing it to a copy
# thread and waking that thread costs more than the write (FlexGen waits
# for a layer's appends right after submitting them).
INLINE_BYTES = 256 << 10
RUNS = "flexgen/"  # every device's keys live under RUNS + <host>-<pid>-<start>.<n>/
_devices = itertools.count()  # n: devices made in the same millisecond on one store get prefixes of their own


def _run_prefix() -> str:
    return f"{RUNS}{socket.gethostname()}-{os.getpid()}-{time.time_ns() // 1_000_000:x}.{next(_devices)}/"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def clear_runs(url_or_store, *, all_runs: bool = False) -> int:
    """Delete the keys that GoTensorDevices of finished runs left in a store
    (a run that crashed never reached close()). A run is finished when it was
    on this host and its process is gone; all_runs=True clears every run,
    live ones and other hosts' too. Returns how many keys were deleted."""
    store = url_or_store if isinstance(url_or_store, gotensor.Store) else gotensor.open(url_or_store)
    host, n = socket.gethostname(), 0
    try:
        for key in store.keys(RUNS):
            run = key[len(RUNS):].split("/", 1)[0]
            h, _, rest = run.rpartition("-")[0].rpartition("-")
            pid = rest
            if not all_runs and (h != host or not pid.isdigit() or _alive(int(pid))):
                continue
            try:
                store.delete(key)
                n += 1
            except gotensor.KeyNotFound:
                pass
    finally:
        if store is not url_or_store:
            store.close()
    return n


class GoTensorDevice(TorchDisk):
    """A FlexGen disk device backed by a gotensor store URL."""

    def __init__(self, url: str = "mem://", *, store: gotensor.Store | None = None, codec: str = "planes",
                 prefix: str | None = None, num_copy_threads: int = 4) -> None:
        pb.fix_recursive_import()
        self.store = store if store is not None else gotensor.open(url)
        self._own_store = store is None
        self.name = self.path = url
        self.mem_capacity = None
        self.device_type = DeviceType.DISK
        self.compressed_device = _CompressedOn(self)
        self.links: dict = {}
        self.codec = codec
        self.prefix = prefix if prefix is not None else _run_prefix()
        self._meta: dict[str, tuple[tuple, torch.dtype]] = {}  # allocated, maybe not yet written
        self._meta_lock = threading.Lock()  # guards _meta, _sizes, stats and the byte counts
        self._sizes: dict[str, int] = {}  # raw bytes written per key
        self._appended: set[str] = set()  # KV caches: stored in chunks of one row, as FlexGen appends them
        self._held = self._peak = 0
        self._local = threading.local()  # per copy thread: CUDA stream and pinned relay
        self._errors: list[BaseException] = []
        # One queue per worker. A key's operations go to the queue that holds
        # its operations not yet done, so they run in the order FlexGen
        # submitted them; a key with none pending goes to the shortest queue
        # (no worker idles while another has a backlog, as with TorchDisk's
        # one shared queue).
        self._queues = [queue.Queue() for _ in range(max(1, num_copy_threads))]
        self._route_lock = threading.Lock()
        self._pending: dict[str, list] = {}  # key -> [its queue, its operations queued and not done]
        self.copy_queue = self._queues[0]  # what TorchDisk.__del__ looks at
        self.copy_threads = [threading.Thread(target=self._worker, args=(q,), daemon=True, name="gotensor-flexgen")
                             for q in self._queues]
        for t in self.copy_threads:
            t.start()
        self.stats = {"reads": 0, "writes": 0, "read_bytes": 0, "written_bytes": 0}
        pb.global_disk_device = self

    def _count(self, kind: str, nbytes: int) -> None:
        with self._meta_lock:
            self.stats[kind + "s"] += 1
            self.stats[("read" if kind == "read" else "written") + "_bytes"] += nbytes

    # -- FlexGen's device interface ---------------------------------------------
    def allocate(self, shape, dtype, pin_memory=None, name=None):
        """A TorchTensor of shape and numpy dtype on this device: a key in the
        store, written by the first copy into it (pin_memory is ignored)."""
        name = name or TorchTensor.next_name()
        key = self.prefix + name
        shape = tuple(int(d) for d in shape)
        tdtype = np_dtype_to_torch_dtype[dtype]
        with self._meta_lock:
            self._meta[key] = (shape, tdtype)
        return TorchTensor(shape, tdtype, key, self, name=name)

    def delete(self, tensor):
        """Delete tensor's key once the copies queued for it have run."""
        key = tensor.data
        # queued behind every copy already submitted for the key: FlexGen may
        # delete a tensor whose asynchronous copy has not run yet
        self._submit(key, self._delete_now, key)

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
        with self._meta_lock:
            self._appended.update(keys)

    def submit_copy(self, dst, dst_indices, src, src_indices):
        """Queue a copy; synchronize() waits for it. Like FlexGen's TorchDisk,
        the source is read when the copy runs (FlexGen does not touch it before
        synchronizing); a CUDA source is copied on the copy thread's own stream
        once the work queued before this call on the current stream is done. A
        write of at most INLINE_BYTES from host memory to a key with nothing
        pending runs at once instead, on this thread (a token's append)."""
        if src.device is self and dst.device is self:
            if src.data == dst.data:
                self._submit(dst.data, self._copy_within, src.data, src_indices, dst.data, dst_indices)
            else:  # the load waits its turn on the source's queue, the store on the destination's
                box: queue.Queue = queue.Queue(maxsize=1)
                self._submit(src.data, self._load_into_box, src.data, src_indices, box)
                self._submit(dst.data, self._store_from_box, dst.data, dst_indices, box)
        elif dst.device is self:
            src_data = pb.map_to_torch_tensor(src, src_indices)
            if _small_host(src_data) and self._run_now(dst.data, self._store_part, dst.data, dst_indices, src_data, None):
                return
            ready = _record_event(src_data)
            self._submit(dst.data, self._store_part, dst.data, dst_indices, src_data, ready)
        elif src.device is self:
            self._submit(src.data, self._load_part, src.data, src_indices, dst, dst_indices)
        else:
            raise gotensor.InvalidArgument("GoTensorDevice.submit_copy: neither side is on this device")

    def submit_compressed_copy(self, dst, dst_indices, src, src_indices) -> None:
        """FlexGen's general_copy_compressed where a side's data and scales are on
        this device: both parts of a copy between this device and host memory
        go as one job on one copy thread (the copy costs one queue hop, not
        two), or, for a write of small host parts, at once on this thread as
        submit_copy's; any other copy goes part by part through submit_copy."""
        src_data, src_scale = get_compressed_indices(src, src_indices, src.shape)
        dst_data, dst_scale = get_compressed_indices(dst, dst_indices, dst.shape)
        parts = [(dst.data[0], tuple(dst_data), src.data[0], tuple(src_data)),
                 (dst.data[1], tuple(dst_scale), src.data[1], tuple(src_scale))]
        to_me, from_me = (all(p[0].device is self and p[2].device is not self for p in parts),
                          all(p[2].device is self and p[0].device is not self for p in parts))
        if to_me:
            stores = [(d.data, di, pb.map_to_torch_tensor(s, si)) for d, di, s, si in parts]
            keys = tuple(k for k, _, _ in stores)
            if all(_small_host(t) for _, _, t in stores) and self._run_now(
                    keys, self._store_parts, [(k, di, t, None) for k, di, t in stores]):
                return
            if self._submit(keys, self._store_parts,
                            [(k, di, t, _record_event(t)) for k, di, t in stores]):
                return
        elif from_me and self._submit((parts[0][2].data, parts[1][2].data), self._load_parts, parts):
            return
        for part in parts:
            self.submit_copy(*part)

    def synchronize(self):
        """Wait for every queued copy; raise the first error one of them hit."""
        for q in self._queues:
            q.join()
        if self._errors:
            err, self._errors = self._errors[0], []
            raise err

    def close_copy_threads(self):
        """Stop the copy threads (after the copies queued so far)."""
        if not self._queues:
            return
        for q in self._queues:
            q.put(None)
        for t in self.copy_threads:
            t.join()
        self._queues, self.copy_queue = [], None

    def add_link(self, link):
        """Remember FlexGen's link to another device."""
        dst = link.b if link.a == self else link.a
        self.links[dst] = link

    def mem_stats(self):
        """(current, peak) raw bytes of the tensors this device holds, as FlexGen
        reports per device; counted as copies complete."""
        with self._meta_lock:
            return self._held, self._peak

    def print_stats(self):
        """Tensors held, then the store's counts (gotensor.Store.stats): the
        store may be shared with other devices, whose traffic it includes."""
        used, peak = self.mem_stats()
        with self._meta_lock:
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
        with self._meta_lock:
            self._meta.clear()
            self._sizes.clear()
            self._appended.clear()
            self._held = 0

    def close(self) -> None:
        """Stop the copy threads and close the store if this device opened it."""
        self.close_copy_threads()
        if self._own_store:
            self.store.close()

    def __del__(self):
        try:
            self.close_copy_threads()
        except Exception:
            pass

    def load_from_np(self, tensor: TorchTensor, array: np.ndarray) -> None:
        """Store a numpy array as tensor's value (FlexGen's weight loading)."""
        self._submit(tensor.data, self._store_part, tensor.data, None, torch.from_numpy(np.ascontiguousarray(array)), None)
        self.synchronize()

    # -- the work, on the copy threads ---------------------------------------------
    def _submit(self, key, fn, *args) -> bool:
        """Queue fn(*args) behind the operations pending on key. key may be a
        tuple of keys that one job serves (a compressed tensor's data and
        scales): it is queued where all of them are pending, or where none is;
        False, with nothing queued, when they are pending on different queues."""
        if not self._queues:
            raise gotensor.StoreClosed("GoTensorDevice copy threads are closed")
        keys = key if type(key) is tuple else (key,)
        with self._route_lock:
            routes = [self._pending.get(k) for k in keys]
            held = [r[0] for r in routes if r is not None]
            if any(q is not held[0] for q in held):
                return False
            q = held[0] if held else min(self._queues, key=lambda q: q.unfinished_tasks)
            for k, r in zip(keys, routes):
                if r is None:
                    self._pending[k] = [q, 1]
                else:
                    r[1] += 1
            q.put((keys, fn, args))
        return True

    def _run_now(self, key, fn, *args) -> bool:
        """Run fn(*args) on the calling thread if nothing is pending on key (a
        tuple: on any of them), so it keeps the key's order; an error is kept
        for synchronize() to raise, as a copy thread's is. False, with nothing
        run, when something is pending."""
        if not self._queues:
            raise gotensor.StoreClosed("GoTensorDevice copy threads are closed")
        keys = key if type(key) is tuple else (key,)
        pending = self._pending
        if any(k in pending for k in keys):
            return False
        try:
            fn(*args)
        except BaseException as e:  # re-raised by synchronize()
            self._errors.append(e)
        return True

    def _worker(self, q):
        while True:
            item = q.get()
            try:
                if item is None:
                    return
                keys, fn, args = item
                try:
                    fn(*args)
                finally:
                    with self._route_lock:
                        for key in keys:
                            route = self._pending[key]
                            route[1] -= 1
                            if route[1] == 0:
                                del self._pending[key]
            except BaseException as e:  # re-raised by synchronize()
                self._errors.append(e)
            finally:
                q.task_done()

    def _codec_for(self, dtype):
        """The device's codec for floats; for other dtypes (a compressed cache's
        packed 4-bit bytes) "none" where the device's is "none", else "auto"."""
        return self.codec if dtype in _FLOATS or self.codec == "none" else "auto"

    def _load(self, key, rows: slice | None = None) -> torch.Tensor:
        """The tensor under key, or only its rows [a, b) (read alone from the store)."""
        with self._meta_lock:
            shape, dtype = self._meta.get(key, (None, None))
        try:
            t = self.store.read_tensor(key, rows=rows)
        except gotensor.KeyNotFound:
            if shape is None:
                raise gotensor.KeyNotFound(f"key {key!r} was never allocated on this device") from None
            zeros = torch.zeros(shape, dtype=dtype)  # allocated, never written: a new file is zeros too
            return zeros if rows is None else zeros[rows]
        self._count("read", t.numel() * t.element_size())
        return t

    def _read(self, key, indices) -> torch.Tensor:
        """data[indices] of the tensor under key; slices read only the rows they span."""
        rows, rest = _row_split(indices)
        if rows is None:
            return _index(self._load(key), indices)
        return self._load(key, rows)[rest]

    def _load_part(self, key, src_indices, dst, dst_indices):
        out = pb.map_to_torch_tensor(dst, dst_indices)
        if out.device.type != "cuda" and self._read_into(key, src_indices, out):
            return
        part = self._read(key, src_indices)
        if tuple(out.shape) != tuple(part.shape):
            raise gotensor.InvalidArgument(f"copy from {key!r}: a {tuple(part.shape)} slice into a "
                                           f"{tuple(out.shape)} destination")
        if out.device.type == "cuda":
            stream, _ = self._cuda_side(out.device)
            relay = self._relay(part.numel() * part.element_size()).view(part.dtype)[:part.numel()].view(part.shape)
            relay.copy_(part)
            with torch.cuda.stream(stream):
                out.copy_(relay, non_blocking=True)
            stream.synchronize()  # the relay is reused by this thread's next copy
        else:
            out.copy_(part)

    def _read_into(self, key, src_indices, out: torch.Tensor) -> bool:
        """Decode the whole tensor, or the rows a slice spans, straight into the
        host tensor out (no temporary, no second copy); False where that does
        not apply (gathered or partial trailing indices, a tensor never
        written, a dtype or shape that does not match), for the general path."""
        if key in self._sizes and out.is_contiguous():
            span = self._row_span(key, src_indices, out)
            if span is not None:  # a cache's [0:pos]: the fewest checks
                self.store.read_tensor(key, out=out, rows=slice(*span))
                self._count("read", out.nbytes)
                return True
        meta = self._meta.get(key)
        if meta is None or out.dtype != meta[1] or not out.is_contiguous():
            return False
        shape = meta[0]
        if src_indices is None or (not torch.is_tensor(src_indices) and not src_indices):
            rows = None
            if tuple(out.shape) != shape:
                return False
        else:
            rows, rest = _row_split(src_indices)
            if rows is None or not all(_covers(r, d) for r, d in zip(rest[1:], shape[1:])):
                return False
            start, stop, _ = rows.indices(shape[0])
            if tuple(out.shape) != (stop - start,) + shape[1:]:
                return False
            rows = slice(start, stop)
        if key not in self._sizes:  # allocated, never written: zeros, as a new file is
            out.zero_()
            return True
        if rows is None and shape:  # a whole tensor as all its rows: file:// reads raw chunks into out in place
            rows = slice(0, shape[0])
        self.store.read_tensor(key, out=out, rows=rows)
        self._count("read", out.numel() * out.element_size())
        return True

    def _store_parts(self, parts):
        for key, dst_indices, data, ready in parts:
            self._store_part(key, dst_indices, data, ready)

    def _load_parts(self, parts):
        for dst, dst_indices, src, src_indices in parts:
            self._load_part(src.data, src_indices, dst, dst_indices)

    def _copy_within(self, src_key, src_indices, dst_key, dst_indices):
        self._store_part(dst_key, dst_indices, self._read(src_key, src_indices), None)

    def _load_into_box(self, key, indices, box):
        try:
            box.put((self._read(key, indices), None))
        except BaseException as e:
            box.put((None, e))
            raise

    def _store_from_box(self, key, indices, box):
        part, err = box.get()
        if err is not None:
            raise gotensor.InvalidArgument(f"copy into {key!r}: its source could not be read: {err}") from err
        self._store_part(key, indices, part, None)

    def _host(self, data: torch.Tensor, ready) -> torch.Tensor:
        """data in host memory: a CUDA tensor comes through this thread's pinned
        relay on its own stream, after the event recorded at submit."""
        if data.device.type != "cuda":
            return data
        stream, _ = self._cuda_side(data.device)
        relay = self._relay(data.numel() * data.element_size()).view(data.dtype)[:data.numel()].view(data.shape)
        with torch.cuda.stream(stream):
            if ready is not None:
                stream.wait_event(ready)
            relay.copy_(data, non_blocking=True)
        stream.synchronize()
        return relay

    def _cuda_side(self, device):
        loc = self._local
        if getattr(loc, "stream", None) is None or loc.stream.device != device:
            loc.stream = torch.cuda.Stream(device=device)
        return loc.stream, device

    def _relay(self, nbytes: int) -> torch.Tensor:
        loc = self._local
        buf = getattr(loc, "relay", None)
        if buf is None or buf.numel() < nbytes:
            loc.relay = buf = torch.empty(max(nbytes, 1 << 20), dtype=torch.uint8, pin_memory=True)
        return buf

    def _row_span(self, key, indices, t: torch.Tensor) -> tuple[int, int] | None:
        """(start, stop) where indices pick rows [start, stop) of the tensor
        allocated under key with every trailing dimension whole, and t is
        those rows in its dtype (a KV cache's append or [0:pos]); None
        otherwise. The hot path of FlexGen's cache copies: nothing but tuple
        and slice checks."""
        meta = self._meta.get(key)
        if meta is None or type(indices) is not tuple or not indices:
            return None
        shape, dtype = meta
        rows = indices[0]
        if type(rows) is not slice or rows.step not in (None, 1) or t.dtype is not dtype or len(indices) > len(shape):
            return None
        for s, d in zip(indices[1:], shape[1:]):
            if type(s) is not slice or s.indices(d) != (0, d, 1):
                return None
        start, stop, _ = rows.indices(shape[0])
        if stop <= start or t.shape != (stop - start,) + shape[1:]:
            return None
        return start, stop

    def _store_part(self, key, dst_indices, data: torch.Tensor, ready):
        data = self._host(data, ready)
        if key in self._sizes:
            span = self._row_span(key, dst_indices, data)
            if span is not None:  # a KV cache append: a row write, the stored size unchanged
                self.store.write_tensor(key, data, rows=slice(*span))
                self._count("write", data.nbytes)
                return
        with self._meta_lock:
            shape, dtype = self._meta.get(key, (tuple(data.shape), data.dtype))
            written = key in self._sizes
            fresh = not written and key in self._meta  # allocated, never written: zeros
            chunk_rows = 1 if key in self._appended and len(shape) >= 2 else None
        idx = tuple(dst_indices) if dst_indices is not None else None
        whole = idx is None or (tuple(data.shape) == shape and all(
            s.start in (0, None) and s.stop in (d, None) for s, d in zip(idx, shape)))
        rows, rest = _row_split(idx)
        if whole or not written or rows is None:
            if whole:
                if data.numel() != math.prod(shape):
                    raise gotensor.InvalidArgument(f"copy into {key!r}: {data.numel()} elements for a tensor of "
                                                   f"shape {tuple(shape)}")
                full = data.reshape(shape).to(dtype)
            else:  # the first write of a slice (onto zeros, as a new file is), or gathered indices: the whole tensor
                full = torch.zeros(shape, dtype=dtype) if fresh else self._load(key).clone()
                full[idx] = data.to(dtype)
            self.store.write_tensor(key, full, codec=self._codec_for(dtype), chunk_rows=chunk_rows)
            n = full.numel() * full.element_size()
        else:  # a slice (a KV cache append): only the rows it spans are read and written
            start, stop, _ = rows.indices(shape[0])
            if all(_covers(r, d) for r, d in zip(rest[1:], shape[1:])) and tuple(data.shape) == (stop - start,) + shape[1:]:
                part = data if data.dtype == dtype else data.to(dtype)
            else:
                part = self._load(key, rows).clone()
                part[rest] = data.to(dtype)
            self.store.write_tensor(key, part.contiguous(), rows=slice(start, stop))
            n = part.numel() * part.element_size()
        size = math.prod(shape) * dtype.itemsize
        with self._meta_lock:
            self.stats["writes"] += 1
            self.stats["written_bytes"] += n
            self._held += size - self._sizes.get(key, 0)
            self._sizes[key] = size
            self._peak = max(self._peak, self._held)

    def _delete_now(self, key):
        with self._meta_lock:
            self._meta.pop(key, None)
            self._appended.discard(key)
            self._held -= self._sizes.pop(key, 0)
        try:
            self.store.delete(key)
        except gotensor.KeyNotFound:
            pass  # allocated but never written


class _CompressedOn(TorchCompressedDevice):
    """FlexGen's TorchCompressedDevice over a GoTensorDevice, whose KV caches'
    data and scale tensors are laid out for appends as the device's own are."""

    def init_cache_one_gpu_batch(self, config, task, policy):
        k, v = super().init_cache_one_gpu_batch(config, task, policy)
        self.base_device._mark_appended(*(t.data[i].data for t in (k, v) for i in (0, 1)))
        return k, v


def _row_split(indices):
    """(slice of rows, the indices of the rows read) for slice indices, whose
    first picks rows of the leading dimension; (None, None) otherwise."""
    if indices is None or torch.is_tensor(indices):
        return None, None
    idx = tuple(indices)
    if not idx or not all(isinstance(s, slice) for s in idx) or idx[0].step not in (None, 1):
        return None, None
    rows = slice(idx[0].start, idx[0].stop)
    return rows, (slice(None),) + idx[1:]


def _covers(s: slice, d: int) -> bool:
    """Whether slice s takes all of a dimension of d."""
    return s.indices(d) == (0, d, 1)


def _index(data: torch.Tensor, indices):
    """data[indices] for FlexGen's index forms: None, a tensor of positions, or slices."""
    if indices is None or (not torch.is_tensor(indices) and not indices):
        return data
    if torch.is_tensor(indices):
        return pb.vector_gather(data, indices)
    return data[tuple(indices)]


def _small_host(t: torch.Tensor) -> bool:
    """Whether a write of t may run on the caller's thread (see INLINE_BYTES)."""
    return t.device.type == "cpu" and t.numel() * t.element_size() <= INLINE_BYTES


def _record_event(t: torch.Tensor):
    """An event on the current CUDA stream that a copy thread waits for before
    reading t (None for host tensors)."""
    if t.device.type != "cuda":
        return None
    ev = torch.cuda.Event()
    ev.record(torch.cuda.current_stream(t.device))
    return ev


# -- patches ---------------------------------------------------------------------

_originals: dict[str, Any] = {}
_weights: list = []  # [(store, prefix)]: where FlexGen's -np weight files are read from instead


def read_weights_from(url_or_store, prefix: str = "") -> None:
    """Serve FlexGen's weight files from a store filled by `gotensor load`:
    a weight file <dir>/<name>-np/<tensor> is read from key prefix+<tensor>
    when that key exists, and FlexGen no longer downloads missing weights."""
    store = url_or_store if isinstance(url_or_store, gotensor.Store) else gotensor.open(url_or_store)
    _weights[:] = [(store, prefix)]


def _weight_from_store(filename: str):
    for store, prefix in _weights:
        key = prefix + os.path.basename(filename)
        if store.exists(key):
            return store.read_tensor(key).numpy()
    return None


def install() -> None:
    """Patch flexgen so that tensors on a GoTensorDevice load from numpy
    through gotensor, a compressed tensor's copy to or from one is one job
    (GoTensorDevice.submit_compressed_copy), and compressed or mixed tensors
    free their parts (FlexGen's own TorchDisk leaks those files)."""
    if _originals:
        return
    pb.fix_recursive_import()
    _originals.update(load_from_np=TorchTensor.load_from_np, load_from_np_file=TorchTensor.load_from_np_file,
                      delete=TorchTensor.delete)

    def load_from_np(self, np_array):
        if isinstance(self.device, GoTensorDevice):
            return self.device.load_from_np(self, np_array)
        return _originals["load_from_np"](self, np_array)

    def load_from_np_file(self, filename):
        arr = _weight_from_store(filename)
        if arr is not None:
            return self.load_from_np(arr)
        if isinstance(self.device, GoTensorDevice):
            return self.device.load_from_np(self, np.load(filename))
        return _originals["load_from_np_file"](self, filename)

    def delete(self):
        dev = self.device
        if dev is not None and dev.device_type == DeviceType.COMPRESSED:
            for part in self.data[:2]:
                if part.device is not None and isinstance(part.device, GoTensorDevice):
                    part.delete()
        elif dev is not None and dev.device_type == DeviceType.MIXED:
            for part in self.data[0]:
                if part is not None and part.device is not None:
                    part.delete()
        return _originals["delete"](self)

    _originals["general_copy_compressed"] = compression.general_copy_compressed

    def general_copy_compressed(dst, dst_indices, src, src_indices):
        for side in (dst, src):
            dev = side.data[0].device if side.device.device_type == DeviceType.COMPRESSED else None
            if isinstance(dev, GoTensorDevice):
                return dev.submit_compressed_copy(dst, dst_indices, src, src_indices)
        return _originals["general_copy_compressed"](dst, dst_indices, src, src_indices)

    from flexgen import flex_opt
    _originals["download_opt_weights"] = flex_opt.download_opt_weights

    def download_opt_weights(model_name, path):
        if _weights:  # served from the store: nothing to download
            return
        return _originals["download_opt_weights"](model_name, path)

    TorchTensor.load_from_np = load_from_np
    TorchTensor.load_from_np_file = load_from_np_file
    TorchTensor.delete = delete
    flex_opt.download_opt_weights = download_opt_weights
    compression.general_copy_compressed = pb.general_copy_compressed = general_copy_compressed  # pb's is what
    # general_copy calls; fix_recursive_import() copies compression's into pb again


def uninstall() -> None:
    """Undo install()."""
    from flexgen import flex_opt
    for name, fn in _originals.items():
        if name == "general_copy_compressed":
            compression.general_copy_compressed = pb.general_copy_compressed = fn
        else:
            setattr(flex_opt if name == "download_opt_weights" else TorchTensor, name, fn)
    _originals.clear()
    _weights.clear()


def execution_env(url: str = "mem://", *, codec: str = "planes", gpu: str | None = None,
                  weights: str | None = None, weights_prefix: str = "", **device_args) -> ExecutionEnv:
    """FlexGen's ExecutionEnv with a GoTensorDevice as its disk, in place of
    ExecutionEnv.create(offload_dir); it calls install() (the patches every
    GoTensorDevice needs), so there is nothing else to call. gpu defaults to
    cuda:0, or to the CPU where there is no CUDA. weights: a store URL filled by
    `gotensor load` to read the model's weights from."""
    install()
    if weights is not None:
        read_weights_from(weights, weights_prefix)
    compute = pb.TorchDevice(gpu or ("cuda:0" if torch.cuda.is_available() else "cpu"))
    cpu = pb.TorchDevice("cpu")
    disk = GoTensorDevice(url, codec=codec, **device_args)
    return ExecutionEnv(gpu=compute, cpu=cpu, disk=disk, mixed=pb.TorchMixedDevice([compute, cpu, disk]))
