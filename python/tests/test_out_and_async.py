"""out= (FlexGen's path: decode into a preallocated tensor) and async futures."""

import gc
import threading
from concurrent.futures import Future, wait

import numpy as np
import pytest
import torch

import gotensor


def test_out_fills_preallocated_tensor(store):
    t = torch.randn(4, 5).to(torch.bfloat16)
    store.write_tensor("w", t)
    out = torch.empty(4, 5, dtype=torch.bfloat16)
    ptr = out.data_ptr()
    r = store.read_tensor("w", out=out)
    assert r is out and out.data_ptr() == ptr and torch.equal(out, t)


def test_out_non_contiguous(store):
    t = torch.randn(3, 4)
    store.write_tensor("w", t)
    buf = torch.zeros(4, 3)
    out = buf.t()  # (3, 4) view, not contiguous
    store.read_tensor("w", out=out)
    assert torch.equal(out, t) and torch.equal(buf, t.t())


def test_out_numpy(store):
    a = np.arange(6, dtype=np.int16).reshape(2, 3)
    store.write_tensor("a", a)
    out = np.zeros((2, 3), dtype=np.int16)
    store.read_tensor("a", out=out)
    assert (out == a).all()


@pytest.mark.parametrize("bad", [torch.empty(4, 5, dtype=torch.float16), torch.empty(5, 4, dtype=torch.bfloat16),
                                 torch.empty(20, dtype=torch.bfloat16)])
def test_out_mismatch_is_invalid_argument(store, bad):
    store.write_tensor("w", torch.zeros(4, 5, dtype=torch.bfloat16))
    before = bad.clone()
    with pytest.raises(gotensor.InvalidArgument, match="holds bfloat16"):
        store.read_tensor("w", out=bad)
    assert torch.equal(bad, before) or bad.dtype.is_floating_point  # untouched on refusal
    assert torch.equal(store.read_tensor("w"), torch.zeros(4, 5, dtype=torch.bfloat16))


def test_async_round_trip_many(store):
    tensors = {f"k{i}": torch.randn(64, i + 1) for i in range(50)}
    futs = [store.write_tensor_async(k, v) for k, v in tensors.items()]
    assert all(isinstance(f, Future) for f in futs)
    done, _ = wait(futs, timeout=60)
    assert len(done) == 50 and all(f.result() is None for f in futs)
    reads = {k: store.read_tensor_async(k) for k in tensors}
    for k, f in reads.items():
        assert torch.equal(f.result(timeout=60), tensors[k])


def test_async_keeps_tensor_alive(store):
    futs = []
    for i in range(20):
        t = torch.full((1 << 16,), float(i))
        futs.append(store.write_tensor_async(f"alive{i}", t))
        del t
        gc.collect()
    for f in futs:
        f.result(timeout=60)
    for i in range(20):
        assert torch.equal(store.read_tensor(f"alive{i}"), torch.full((1 << 16,), float(i)))


def test_async_read_into_out(store):
    t = torch.randn(8, 8)
    store.write_tensor("x", t)
    out = torch.empty(8, 8)
    assert store.read_tensor_async("x", out=out).result(timeout=30) is out
    assert torch.equal(out, t)


def test_async_errors_arrive_typed(store):
    with pytest.raises(gotensor.KeyNotFound):
        store.read_tensor_async("missing").result(timeout=30)
    with pytest.raises(gotensor.InvalidArgument):
        store.write_tensor_async("k", torch.zeros(3), codec="no-such-codec").result(timeout=30)
    store.write_tensor("k2", torch.zeros(3))
    with pytest.raises(gotensor.InvalidArgument):
        store.read_tensor_async("k2", out=torch.empty(2)).result(timeout=30)


def test_async_does_not_hold_the_gil(store):
    """While Go encodes a large tensor, Python threads keep running."""
    big = torch.randn(1 << 24)  # 64 MiB
    ticks = 0
    stop = threading.Event()

    def spin():
        nonlocal ticks
        while not stop.is_set():
            ticks += 1

    th = threading.Thread(target=spin)
    th.start()
    try:
        before = ticks
        for i in range(3):
            store.write_tensor(f"big{i}", big)
        assert ticks > before
    finally:
        stop.set()
        th.join()


def test_threads_mixed_operations_on_one_store(store):
    """8 threads x 1000 mixed operations; afterwards every key holds a value some thread wrote."""
    errors = []
    values = {i: torch.full((16,), float(i)) for i in range(64)}

    def worker(seed):
        rng = np.random.default_rng(seed)
        try:
            for n in range(1000):
                k = int(rng.integers(0, 32))
                v = int(rng.integers(0, 64))
                op = n % 5
                key = f"t/{k}"
                if op in (0, 1):
                    store.write_tensor(key, values[v])
                elif op == 2:
                    try:
                        r = store.read_tensor(key)
                        assert r.shape == (16,) and int(r[0]) in values and torch.equal(r, values[int(r[0])])
                    except gotensor.KeyNotFound:
                        pass
                elif op == 3:
                    try:
                        store.delete(key)
                    except gotensor.KeyNotFound:
                        pass
                else:
                    store.exists(key)
                    store.keys("t/")
        except Exception as e:  # surfaced below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors[:3]
    for key in store.keys("t/"):
        r = store.read_tensor(key)
        assert torch.equal(r, values[int(r[0])])
    assert store.usage()["keys"] == len(store.keys())


def test_two_reads_into_one_out_never_blame_the_store(store):
    # The caller's race: both reads copy into the same memory at once. A copy
    # that fails its checksum is InvalidArgument, never CorruptData, and the
    # stored tensors stay intact (whether a round hits the race is up to the
    # scheduler; what may be raised is not).
    a, b = torch.randn(2048, 2048).to(torch.bfloat16), torch.randn(2048, 2048).to(torch.bfloat16)
    store.write_tensors({"a": a, "b": b})
    out = torch.empty_like(a)
    for _ in range(10):
        for f in [store.read_tensor_async(k, out=out) for k in ("a", "b")]:
            try:
                f.result()
            except gotensor.InvalidArgument as e:
                assert "destination memory changed" in str(e)
    assert torch.equal(store.read_tensor("a"), a) and torch.equal(store.read_tensor("b"), b)


def test_waiting_thread_completes_its_own_operations(store):
    """completer.wait: the waiting thread takes its operations' results from Go
    itself, chained ones (a read of a new tensor: fetch, then decode) and
    failed ones included, whether they finished before it waited or after."""
    from gotensor._completer import completer
    values = {f"w{i}": torch.full((1000 * (i + 1),), float(i)) for i in range(20)}
    writes = [store.write_tensor_async(k, v) for k, v in values.items()]
    completer.wait(writes)
    assert all(f.done() and f.exception() is None for f in writes)
    for _ in range(3):
        reads = {k: store.read_tensor_async(k) for k in values}
        missing = store.read_tensor_async("never written")
        completer.wait([*reads.values(), missing])
        assert all(torch.equal(f.result(), values[k]) for k, f in reads.items())
        assert isinstance(missing.exception(), gotensor.KeyNotFound) and missing.exception().key == "never written"
