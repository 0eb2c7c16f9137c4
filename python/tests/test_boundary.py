"""The Go/Python boundary: per-key order, completion records, timeouts and
cancellation, the small-tensor read path, byte order."""

import time

import numpy as np
import pytest
import torch

import gotensor
from gotensor._completer import completer


def test_async_ops_on_one_key_apply_in_submission_order(store):
    for trial in range(30):
        ts = [torch.full((2048,), float(i)) for i in range(20)]
        futs = [store.write_tensor_async("o", t) for t in ts]
        got = store.read_tensor_async("o").result(timeout=30)
        assert torch.equal(got, ts[-1]), f"trial {trial}: read saw {got[0].item()}"
        for f in futs:
            assert f.result(timeout=30) is None
        store.delete("o")


def test_sync_call_waits_for_pending_async_ops_on_its_key(store):
    for trial in range(30):
        futs = [store.write_tensor_async("s", torch.full((4096,), float(i)), codec="planes") for i in range(10)]
        assert store.read_tensor("s")[0].item() == 9.0, f"trial {trial}"
        store.write_tensor_async("s", torch.zeros(1))
        store.delete("s")  # after the write, so nothing is left
        assert not store.exists("s")
        for f in futs:
            f.result(timeout=30)


def test_keys_with_record_separators_complete(store):
    key = 'k\x1e\x1f"{}[]\\'
    t = torch.arange(6, dtype=torch.int32)
    store.write_tensor_async(key, t).result(timeout=10)
    assert torch.equal(store.read_tensor_async(key).result(timeout=10), t)
    with pytest.raises(gotensor.KeyNotFound):
        store.read_tensor_async("missing\x1e\x1f").result(timeout=10)
    assert completer._thread.is_alive()
    # later futures still complete
    assert torch.equal(store.read_tensor_async(key).result(timeout=10), t)


def test_small_read_uses_one_call_and_large_read_falls_back(store):
    from gotensor import store as st
    small = torch.randn(3, 5).to(torch.bfloat16)
    large = torch.randn(st.SCRATCH_BYTES // 4 + 7)
    store.write_tensor("small", small)
    store.write_tensor("large", large)
    assert torch.equal(store.read_tensor("small").view(torch.int16), small.view(torch.int16))
    assert torch.equal(store.read_tensor("large"), large)
    assert store.read_tensor("small").shape == (3, 5)
    store.write_tensor("scalar", torch.tensor(2.5))
    assert store.read_tensor("scalar").shape == () and store.read_tensor("scalar").item() == 2.5
    store.write_tensor("empty", torch.empty(0, 4))
    assert store.read_tensor("empty").shape == (0, 4)
    np.testing.assert_array_equal(store.read_array("small").view(np.int16), small.view(torch.int16).numpy())


def test_big_endian_numpy_arrays_round_trip(store):
    a = np.arange(4, dtype=">f4")
    store.write_tensor("be", a)
    np.testing.assert_array_equal(store.read_array("be"), np.arange(4, dtype="<f4"))
    store.write_tensor("be2", np.arange(6, dtype=">i8").reshape(2, 3)[:, ::2])
    np.testing.assert_array_equal(store.read_array("be2"), np.array([[0, 2], [3, 5]]))
    out = np.empty(4, dtype=">f4")
    store.read_tensor("be", out=out)
    np.testing.assert_array_equal(out, np.arange(4))


def _slow_write(store, key):
    """An async write that keeps its key busy for a while."""
    t = torch.randn(32 << 20)  # 128 MiB of float32 through a coding codec
    return store.write_tensor_async(key, t, codec="planes")


def test_timeout_while_waiting_for_the_key(store):
    slow = _slow_write(store, "busy")
    t0 = time.monotonic()
    with pytest.raises(gotensor.Timeout):
        store.read_tensor("busy", timeout=0.001)
    with pytest.raises(gotensor.Timeout):
        store.read_tensor_async("busy", timeout=0.001).result(timeout=30)
    assert time.monotonic() - t0 < 5
    slow.result(timeout=60)
    assert store.read_tensor("busy", timeout=30).numel() == 32 << 20


def test_cancel_a_running_async_op(store):
    from concurrent.futures import CancelledError
    slow = _slow_write(store, "busy")
    queued = store.read_tensor_async("busy")  # waits its turn behind the write: running, in Go
    assert queued.cancel() and queued.cancelled()  # as concurrent.futures cancels a future
    with pytest.raises(CancelledError):
        queued.result(timeout=30)
    slow.result(timeout=60)
    assert not slow.cancel()  # finished


def test_bad_timeouts_are_refused(store):
    store.write_tensor("k", torch.zeros(2))
    for bad in (0, -1, "1s", True):
        with pytest.raises(gotensor.InvalidArgument):
            store.read_tensor("k", timeout=bad)


def test_store_default_timeout_from_url():
    with pytest.raises(gotensor.InvalidArgument, match="timeout"):
        gotensor.open("tcp://127.0.0.1:1?timeout=soon")


def test_completion_records_survive_any_text():
    """Raw separators, quotes and a malformed record in the completion stream
    neither break parsing nor stop the completer thread."""
    import json
    from gotensor._completer import OpFuture
    fut = OpFuture()
    fut.set_running_or_notify_cancel()
    with completer._lock:
        completer._pending[-7] = (fut, None, lambda v, f: f.set_result(v))
    recs = [{"op": "bad"}, {"op": -7, "kind": "KeyNotFound", "key": 'k\x1e\x1f"x', "message": 'k\x1e\x1f"x gone'}]
    for rec in json.loads(json.dumps(recs)):
        completer._complete(rec)
    with pytest.raises(gotensor.KeyNotFound, match="k\x1e\x1f") as e:
        fut.result(timeout=1)
    assert e.value.key == 'k\x1e\x1f"x' and str(e.value) == 'k\x1e\x1f"x gone'


def test_key_calls_take_a_timeout(store):
    slow = _slow_write(store, "busy")
    for call in (store.exists, store.stat, store.delete):
        with pytest.raises(gotensor.Timeout):  # queued behind the write on the key
            call("busy", timeout=0.001)
    assert store.keys("bu", timeout=30) in ([], ["busy"])
    slow.result(timeout=60)
    assert store.exists("busy", timeout=30) and store.stat("busy", timeout=30)["shape"] == (32 << 20,)
    for bad in (0, -1, "1s", True):
        with pytest.raises(gotensor.InvalidArgument):
            store.keys(timeout=bad)
    store.delete("busy", timeout=30)
    assert not gotensor.exists("busy", timeout=30)
