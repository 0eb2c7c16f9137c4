"""Every dtype and every shape kind round-trips bit-exactly through both stores."""

import numpy as np
import pytest
import torch

import gotensor
from gotensor.torch import DTYPES


def raw_bytes(t: torch.Tensor) -> bytes:
    return t.contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()


def make(dtype: torch.dtype, shape, seed=0) -> torch.Tensor:
    """A tensor whose bytes are random: every bit pattern, NaNs included."""
    g = torch.Generator().manual_seed(seed)
    n = int(np.prod(shape, dtype=np.int64)) * torch.empty((), dtype=dtype).element_size()
    b = torch.randint(0, 256, (n,), dtype=torch.uint8, generator=g)
    if dtype == torch.bool:
        b = b & 1
    return b.view(dtype).reshape(shape)


SHAPES = [(), (0,), (0, 3), (1,), (7,), (3, 5), (2, 3, 4), (4, 1, 1, 6)]


@pytest.mark.parametrize("name", sorted(DTYPES))
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_round_trip(store, name, shape):
    t = make(DTYPES[name], shape, seed=len(shape))
    key = f"{name}/{shape}"
    store.write_tensor(key, t)
    r = store.read_tensor(key)
    assert r.dtype == t.dtype and tuple(r.shape) == tuple(shape)
    assert raw_bytes(r) == raw_bytes(t)
    st = store.stat(key)
    assert st["dtype"] == name and st["shape"] == tuple(shape)
    assert st["raw_bytes"] == t.numel() * t.element_size()


@pytest.mark.parametrize("name", ["bfloat16", "float32", "int64", "complex64", "bool"])
def test_non_contiguous_reads_back_contiguous(store, name):
    base = make(DTYPES[name], (6, 8), seed=3)
    for i, view in enumerate([base.t(), base[::2, 1::3], base[:, 2], base.expand(2, 6, 8)[1].t()]):
        assert not view.is_contiguous() or i == 2
        store.write_tensor(f"v{i}", view)
        r = store.read_tensor(f"v{i}")
        assert r.is_contiguous() and r.shape == view.shape
        assert raw_bytes(r) == raw_bytes(view)


def test_conj_and_neg_views_are_resolved(store):
    c = torch.randn(4, dtype=torch.complex64)
    store.write_tensor("conj", c.conj())
    assert torch.equal(store.read_tensor("conj"), c.conj().resolve_conj())


def test_large_multi_chunk_tensor(store):
    t = make(torch.bfloat16, (3, 1 << 20), seed=9)  # 6 MiB: several chunks
    store.write_tensor("big", t)
    assert raw_bytes(store.read_tensor("big")) == raw_bytes(t)
    assert store.stat("big")["chunks"] >= 6


NUMPY_DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64",
                "float16", "float32", "float64", "complex64", "complex128"]


@pytest.mark.parametrize("name", NUMPY_DTYPES)
def test_numpy_arrays(store, name):
    rng = np.random.default_rng(1)
    a = rng.integers(0, 256, size=60, dtype=np.uint8).view(np.uint8)
    a = np.frombuffer(rng.bytes(60 * np.dtype(name).itemsize), dtype=name).reshape(3, 4, 5)
    if name == "bool":
        a = a.view(np.uint8) & 1
        a = a.view(np.bool_)
    store.write_tensor("a", a[:, ::2])  # non-contiguous
    r = store.read_array("a")
    assert r.dtype == a.dtype and r.shape == (3, 2, 5)
    assert r.tobytes() == np.ascontiguousarray(a[:, ::2]).tobytes()
    # the same bytes as torch sees them
    t = store.read_tensor("a")
    assert raw_bytes(t) == r.tobytes()


def test_numpy_bfloat16_via_ml_dtypes(store):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    a = np.arange(12, dtype=np.float32).astype(ml_dtypes.bfloat16).reshape(3, 4)
    store.write_tensor("bf", a)
    t = store.read_tensor("bf")
    assert t.dtype == torch.bfloat16
    assert torch.equal(t, torch.arange(12, dtype=torch.float32).to(torch.bfloat16).reshape(3, 4))
    assert store.read_array("bf").tobytes() == a.tobytes()


def test_numpy_0d_array(store):
    a = np.array(3.5, dtype=np.float64)
    store.write_tensor("s", a)
    r = store.read_array("s")
    assert r.shape == () and r == 3.5


def test_torch_matches_its_own_save_load(store, tmp_path):
    """gotensor returns what torch.save/torch.load would have returned."""
    state = {f"p{i}": make(dt, (5, 3), seed=i) for i, dt in enumerate([torch.bfloat16, torch.float16, torch.float32])}
    torch.save(state, tmp_path / "ref.pt")
    ref = torch.load(tmp_path / "ref.pt")
    for k, v in state.items():
        store.write_tensor(k, v)
    for k, v in ref.items():
        r = store.read_tensor(k)
        assert r.dtype == v.dtype and raw_bytes(r) == raw_bytes(v)


def test_module_level_api_uses_embedded_store():
    t = torch.arange(10, dtype=torch.int32)
    gotensor.write_tensor("module/level", t)
    assert gotensor.exists("module/level")
    assert "module/level" in gotensor.keys("module/")
    assert torch.equal(gotensor.read_tensor("module/level"), t)
    assert gotensor.default_store().url.startswith("mem://")
    gotensor.delete("module/level")
    assert not gotensor.exists("module/level")
