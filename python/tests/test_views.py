"""read_tensor(view=True): tensors that view the stored bytes in place (mem://
and file://), their lifetime, writes into them, and the copies they fall back
to. The pinned (page-locked) views of mem://?pinned=true run here against a
fake of the CUDA runtime's cudaHostRegister / cudaHostUnregister."""

import ctypes
import gc
import json
import threading
import time

import pytest
import torch

import gotensor
from gotensor import _pinning
from gotensor._native_lib import native

MIB = 1 << 20


def expert(seed=0, rows=1024, cols=2048, dtype=torch.bfloat16):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(rows, cols, generator=g).to(dtype)


def counts():
    return json.loads(native.view_counts())


def settle():
    """Wait until the mappings views released are clean again."""
    gc.collect()
    for _ in range(2000):
        if counts()["recycle_pending"] == 0:
            return
        time.sleep(0.001)
    raise AssertionError("released mappings were not cleaned")


def same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and torch.equal(a.view(torch.uint8), b.view(torch.uint8))


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32, torch.float64, torch.int64,
                                   torch.int8, torch.bool, torch.complex64, torch.complex128])
def test_a_view_is_the_stored_tensor(store, dtype):
    t = (torch.randn(512, 1024) * 100).to(dtype) if dtype != torch.complex128 else torch.randn(256, 1024, dtype=dtype)
    store.write_tensor("k", t)
    v = store.read_tensor("k", view=True)
    assert same(v, t)
    st = store.stats()
    assert st["ops"]["view"] == 1 and st["views"] + st["view_copies"] == 1
    if store.url.startswith("mem://"):  # every payload on a page: every dtype is viewed
        assert st["views"] == 1 and v.data_ptr() % 4096 == 0
    if st["views"]:
        assert st["view_bytes"] == t.numel() * t.element_size()


def test_writes_into_a_view_never_reach_the_store(store):
    t = expert(1)
    store.write_tensor("k", t)
    v = store.read_tensor("k", view=True)
    w = store.read_tensor("k", view=True)  # another view at once: pages of its own
    v.add_(1)
    v[7].zero_()
    v.view(torch.uint8)[-1] = 0x7F  # the last byte, in the file's last page
    assert same(w, t)
    assert same(store.read_tensor("k"), t)
    del v, w
    settle()
    for _ in range(3):  # the mapping comes back with the writes undone
        u = store.read_tensor("k", view=True)
        assert same(u, t)
        u.fill_(3)
        del u
        settle()
    assert same(store.read_tensor("k", view=True), t)


def test_the_released_mapping_is_reused(store):
    t = expert(2)
    store.write_tensor("k", t)
    v = store.read_tensor("k", view=True)
    ptr = v.data_ptr()
    v.mul_(2)
    del v
    settle()
    before = counts()["maps"]
    v = store.read_tensor("k", view=True)
    assert v.data_ptr() == ptr and counts()["maps"] == before  # no new mapping: no page faults again
    assert same(v, t)


def test_a_view_outlives_delete_replace_and_close(tmp_path):
    for url in ("mem://", f"file://{tmp_path}/s"):
        s = gotensor.open(url)
        t, u = expert(3), expert(4)
        s.write_tensor("deleted", t)
        s.write_tensor("replaced", t)
        d, r = s.read_tensor("deleted", view=True), s.read_tensor("replaced", view=True)
        s.delete("deleted")
        s.write_tensor("replaced", u)
        for i in range(4):  # frames dropped since are reused: never the ones viewed
            s.write_tensor(f"churn{i % 2}", u)
        assert same(d, t) and same(r, t)
        assert same(s.read_tensor("replaced", view=True), u)
        c = s.read_tensor("churn0", view=True)
        s.close()
        assert same(d, t) and same(r, t) and same(c, u)
        c.add_(1)  # still writable after the store is gone
        del s
        gc.collect()
        assert same(d, t)
        del d, r, c
    settle()
    assert counts()["open"] == 0


def test_a_view_outlives_a_row_write(store):
    t = expert(5)
    store.write_tensor("kv", t)
    v = store.read_tensor("kv", view=True)
    rows = expert(6, rows=8)
    store.write_tensor("kv", rows, rows=slice(100, 108))  # in place, but for the view
    assert same(v, t)
    want = t.clone()
    want[100:108] = rows
    assert same(store.read_tensor("kv"), want)
    assert same(store.read_tensor("kv", view=True), want)


def test_views_while_other_threads_write_the_key(store):
    versions = [expert(10 + i) for i in range(3)]
    store.write_tensor("k", versions[0])
    stop = threading.Event()
    failures = []

    def writer():
        i = 0
        while not stop.is_set():
            try:
                src = versions[i % 3]
                if i % 4 == 3:
                    store.write_tensor("k", src[8:12], rows=slice(8, 12))
                elif i % 4 == 2:
                    store.delete("k")
                else:
                    store.write_tensor("k", src)
            except gotensor.KeyNotFound:
                pass
            except BaseException as e:  # noqa: BLE001 - reported below
                failures.append(e)
                return
            i += 1

    threads = [threading.Thread(target=writer) for _ in range(2)]
    for th in threads:
        th.start()
    held = []
    deadline = time.monotonic() + 1.5
    try:
        while time.monotonic() < deadline:
            try:
                v = store.read_tensor("k", view=True)
            except gotensor.KeyNotFound:
                continue
            snap = v.clone()
            assert any(torch.equal(snap[:8], x[:8]) and torch.equal(snap[12:], x[12:]) for x in versions)
            v[0, 0] += 1  # the views write too
            held.append((v, snap))
            if len(held) > 4:
                old, was = held.pop(0)
                assert torch.equal(old, was.index_put((torch.tensor([0]), torch.tensor([0])), was[0, 0] + 1))
    finally:
        stop.set()
        for th in threads:
            th.join()
    assert not failures, failures


def test_async_and_many_views(store):
    ts = {f"e{i}": expert(20 + i) for i in range(4)}
    store.write_tensors(ts)
    got = store.read_tensors(list(ts), view=True)
    assert all(same(got[k], t) for k, t in ts.items())
    fut = store.read_tensor_async("e1", view=True)
    assert fut.done()  # a store that maps makes the view in the calling thread: no hand-off
    assert same(fut.result(), ts["e1"])
    assert store.stats()["views"] == 5
    missing = store.read_tensor_async("missing", view=True)
    with pytest.raises(gotensor.KeyNotFound):
        missing.result()
    with pytest.raises(gotensor.KeyNotFound) as e:
        store.read_tensors(["e0", "missing"], view=True)
    assert list(e.value.failed) == ["missing"] and same(e.value.results["e0"], ts["e0"])


def test_what_cannot_be_viewed_is_read_as_a_copy(store):
    z = torch.zeros(1024, 1024, dtype=torch.bfloat16)  # planes shrinks every chunk: coded
    store.write_tensor("coded", z, codec="planes")
    store.write_tensor("small", torch.arange(10.0))
    store.write_tensor("empty", torch.empty(0, 5))
    for key, want in (("coded", z), ("small", torch.arange(10.0)), ("empty", torch.empty(0, 5))):
        v = store.read_tensor(key, view=True)
        assert same(v, want)
        assert same(store.read_tensor_async(key, view=True).result(), want)
    assert store.stats()["view_copies"] >= 4  # the small one is viewed by file://
    with pytest.raises(gotensor.KeyNotFound):
        store.read_tensor("missing", view=True)
    with pytest.raises(gotensor.InvalidArgument):
        store.read_tensor("small", view=True, out=torch.empty(10))
    with pytest.raises(gotensor.InvalidArgument):
        store.read_tensor("small", view=True, rows=slice(0, 2))


def test_a_store_across_a_link_reads_copies():
    from test_remote import Node
    node = Node("--capacity", "64MiB")
    try:
        with gotensor.open(node.url) as s:
            t = expert(7)
            s.write_tensor("k", t)
            assert same(s.read_tensor("k", view=True), t)
            assert same(s.read_tensors(["k"], view=True)["k"], t)
            st = s.stats()
            assert st["views"] == 0 and st["view_copies"] == 2
    finally:
        node.stop()


def test_module_functions_take_view():
    t = expert(8)
    gotensor.write_tensor("views/k", t)
    try:
        assert same(gotensor.read_tensor("views/k", view=True), t)
        assert same(gotensor.read_tensor_async("views/k", view=True).result(), t)
        assert same(gotensor.read_tensors(["views/k"], view=True)["views/k"], t)
    finally:
        gotensor.delete("views/k")


# -- pinned views, against a fake CUDA runtime -------------------------------------

_REG = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_uint)
_UNREG = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)


class FakeCudart:
    """cudaHostRegister / cudaHostUnregister as C function pointers. Register
    does what the kernel does when a device pins a private mapping: it gives
    the mapping pages of its own (each page written once), so a pinned view no
    longer follows its file and must be copied back, never reverted."""

    def __init__(self):
        self.registered = {}
        self.log = []
        self.reg = _REG(self._register)
        self.unreg = _UNREG(self._unregister)

    def _register(self, p, n, flags):
        self.log.append(("register", p, n, flags))
        for off in range(0, n, 4096):
            b = ctypes.c_char.from_address(p + off)
            b.value = b.value  # the kernel's unsharing: a private copy of each page
        self.registered[p] = n
        return 0

    def _unregister(self, p):
        self.log.append(("unregister", p))
        return 0 if self.registered.pop(p, None) is not None else 712  # cudaErrorHostMemoryNotRegistered

    def addresses(self):
        return (ctypes.cast(self.reg, ctypes.c_void_p).value, ctypes.cast(self.unreg, ctypes.c_void_p).value)


@pytest.fixture
def fake_cudart():
    fake = FakeCudart()
    assert _pinning.install(fake.addresses())
    yield fake
    _pinning.uninstall()


def test_pinned_views_are_registered_and_restored(fake_cudart):
    t = expert(30)
    with gotensor.open("mem://?pinned=true") as s:
        s.write_tensor("k", t)
        before = counts()
        v = s.read_tensor("k", view=True)
        assert same(v, t)
        regs = [e for e in fake_cudart.log if e[0] == "register"]
        assert len(regs) == 1 and regs[0][3] == _pinning.REGISTER_FLAGS
        base, n = regs[0][1], regs[0][2]
        assert base <= v.data_ptr() < base + n and n >= t.numel() * 2
        ptr = v.data_ptr()
        v.add_(1)  # lands in the pinned pages themselves
        del v
        settle()
        v = s.read_tensor("k", view=True)  # the same pinned mapping, its bytes copied back
        assert v.data_ptr() == ptr and same(v, t)
        assert len([e for e in fake_cudart.log if e[0] == "register"]) == 1  # registered once
        assert counts()["restored_bytes"] > before["restored_bytes"]
        assert counts()["pinned"] == before["pinned"] + 1
        s.write_tensor("k", expert(31))  # a new version into another frame: the mapping is no longer its
        del v
        settle()
        w = s.read_tensor("k", view=True)
        assert same(w, expert(31))
        del w
        settle()
    gc.collect()
    settle()
    # every registered mapping is unregistered before it is unmapped: none is left once the store is gone
    assert fake_cudart.registered == {}, fake_cudart.log


def test_unpinned_store_and_no_cuda_pin_nothing(fake_cudart):
    with gotensor.open("mem://") as s:
        s.write_tensor("k", expert(32))
        s.read_tensor("k", view=True)
    assert not [e for e in fake_cudart.log if e[0] == "register"]


def test_pinning_needs_cuda():
    assert _pinning.wants_pinning("mem://x?capacity=1GiB&pinned=true")
    assert not _pinning.wants_pinning("mem://x?pinned=false") and not _pinning.wants_pinning("file:///d?pinned=true")
    if not torch.cuda.is_available():
        assert _pinning.find_cudart() is None
        with gotensor.open("mem://?pinned=true") as s:  # views, unpinned
            s.write_tensor("k", expert(33))
            assert same(s.read_tensor("k", view=True), expert(33))
