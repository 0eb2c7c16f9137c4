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


class _FakeCudaTensor(torch.Tensor):
    """A host tensor that claims to live on a GPU, so the staging code takes
    its CUDA path against the fake torch.cuda of `fake_cuda`."""

    log: list = []

    @property
    def is_cuda(self):
        return True

    def record_stream(self, stream):
        self.log.append(("record_stream", stream.name))


class _FakeStream:
    def __init__(self, log, name):
        self.log, self.name = log, name

    def wait_stream(self, other):
        self.log.append(("wait_stream", self.name, other.name))

    def synchronize(self):
        self.log.append(("synchronize", self.name))


@pytest.fixture
def fake_cuda(monkeypatch):
    """torch.cuda's streams and events replaced by objects that log calls
    (a CPU-only machine can then check the order of the staging's CUDA work,
    as go-nvml's mock does for NVML)."""
    import contextlib
    log = _FakeCudaTensor.log = []
    current = _FakeStream(log, "current")
    sides = []

    def new_stream(device=None):
        sides.append(_FakeStream(log, f"side{len(sides)}"))
        return sides[-1]

    @contextlib.contextmanager
    def use(stream):
        log.append(("enter", stream.name))
        yield
        log.append(("exit", stream.name))

    class Event:
        def record(self, stream):
            log.append(("event", stream.name))

        def synchronize(self):
            pass

    monkeypatch.setattr(torch.cuda, "Stream", new_stream)
    monkeypatch.setattr(torch.cuda, "current_stream", lambda device=None: current)
    monkeypatch.setattr(torch.cuda, "stream", use)
    monkeypatch.setattr(torch.cuda, "Event", Event)
    return log


def _side_ready_before_copies(log):
    """The side stream waited on the current stream and holds the tensor
    before its first copy."""
    first = log.index(("enter", "side0"))
    assert ("wait_stream", "side0", "current") in log[:first], log
    assert ("record_stream", "side0") in log[:first], log


def test_staged_write_waits_for_the_producing_stream(store, fake_cuda):
    t = torch.arange(1 << 18, dtype=torch.float32).as_subclass(_FakeCudaTensor)
    _staging.write_staged(store._handle, "w", t, CODES["float32"], (1 << 18,), "none", -1, segment=256 << 10)
    _side_ready_before_copies(fake_cuda)
    assert fake_cuda.count(("enter", "side0")) == 4  # 1 MiB in 256 KiB segments
    assert torch.equal(store.read_tensor("w"), torch.arange(1 << 18, dtype=torch.float32))


def test_staged_read_waits_for_the_current_stream(store, fake_cuda):
    t = torch.arange(1 << 18, dtype=torch.float32)
    store.write_tensor("r", t)
    fh, _code, shape = store._fetch(store._handle, "r", 0)
    out = torch.empty(shape).as_subclass(_FakeCudaTensor)
    _staging.read_staged(fh, out, -1, segment=256 << 10)
    _side_ready_before_copies(fake_cuda)
    assert fake_cuda[-1] == ("synchronize", "side0")  # every copy done before it returns
    assert torch.equal(out.as_subclass(torch.Tensor), t)
