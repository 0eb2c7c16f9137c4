"""The pinned two-buffer staging pipeline for CUDA tensors. Its logic runs on
CPU tensors here (the CUDA copies become host copies); test_cuda.py runs it on
a GPU."""

import pytest
import torch

import gotensor
from gotensor import _staging, errors
from gotensor._native_lib import native
from gotensor._view import CODES


@pytest.mark.parametrize("codec", ["none", "planes", "q4", "auto"])
def test_staged_write_equals_direct_write(store, codec):
    t = (torch.randn(3000, 700) * 0.02).to(torch.bfloat16)  # 4.2 MB: several 256 KiB segments
    _staging.write_staged(store._handle, "staged", t, CODES["bfloat16"], (3000, 700), codec, -1, segment=256 << 10)
    store.write_tensor("direct", t, codec="planes" if codec == "auto" else codec)
    a, b = store.read_tensor("staged"), store.read_tensor("direct")
    assert torch.equal(a.view(torch.int16), b.view(torch.int16))
    assert store.stat("staged")["stored_bytes"] == store.stat("direct")["stored_bytes"]


def test_staged_read_fills_the_destination(store):
    t = torch.randn(1 << 20)
    store.write_tensor("k", t, codec="planes")
    fh, _code, shape = store._fetch(store._handle, "k", 0)
    out = torch.empty(shape)
    _staging.read_staged(fh, out, -1, segment=128 << 10)
    assert torch.equal(out, t)
    with pytest.raises(gotensor.InvalidArgument):  # the handle was released
        errors.call(native.fetch_chunk, fh)


def test_staged_write_failure_leaves_nothing(store):
    t = torch.zeros(1 << 20, dtype=torch.int32)
    with pytest.raises(gotensor.InvalidArgument):
        _staging.write_staged(store._handle, "bad", t, CODES["int32"], (1 << 20,), "planes", -1)  # planes takes floats
    assert not store.exists("bad")


def test_pinned_pool_reuses_buffers_and_respects_its_cap():
    pool = _staging.PinnedPool(capacity=4 << 20)
    a = pool.acquire(3 << 20)
    assert a.numel() == 4 << 20
    pool.release(a)
    b = pool.acquire(4 << 20)
    assert b.data_ptr() == a.data_ptr()  # reused
    if torch.cuda.is_available():
        assert b.is_pinned()
        with pytest.warns(RuntimeWarning, match="capped"):
            c = pool.acquire(8 << 20)  # over the cap: pageable
        assert not c.is_pinned()
