"""Row-range writes and reads: write_tensor(key, t, rows=slice(a, b)) and
read_tensor(key, rows=slice(a, b)) against the same operations on a torch tensor."""

import random

import pytest
import torch

import gotensor

from test_remote import Node

CODECS = ["none", "planes", "lz4", "zstd", "auto"]
DTYPES = [torch.float32, torch.bfloat16, torch.float16, torch.int32]


@pytest.fixture(params=["mem", "file", "tcp"])
def any_store(request, tmp_path):
    node = None
    if request.param == "mem":
        url = "mem://"
    elif request.param == "file":
        url = f"file://{tmp_path}/store"
    else:
        node = Node("--capacity", "256MiB")
        url = node.url
    with gotensor.open(url) as s:
        yield s
    if node is not None:
        node.stop()


def _values(rng: random.Random, shape, dtype):
    kind = rng.randrange(3)
    if kind == 0:
        t = torch.randn(shape) * 100
    elif kind == 1:
        t = torch.arange(torch.Size(shape).numel(), dtype=torch.float64).reshape(shape) % 17
    else:
        t = torch.randint(0, 4, shape).to(torch.float64)
    return t.to(dtype)


def test_row_ops_match_torch(any_store):
    rng = random.Random(7)
    torch.manual_seed(7)
    for round_ in range(10):
        dtype = rng.choice(DTYPES)
        codec = rng.choice(CODECS if dtype.is_floating_point else ["none", "lz4", "zstd", "auto"])
        shape = [rng.randint(1, 400)] + [rng.randint(1, 20) for _ in range(rng.randrange(3))]
        model = _values(rng, shape, dtype)
        key = f"r{round_}"
        chunk_rows = [None, 1, 3][round_ % 3] if len(shape) > 1 else None  # the store's chunks, or rows'
        any_store.write_tensor(key, model, codec=codec, chunk_rows=chunk_rows)
        for _ in range(30):
            n = shape[0]
            a = rng.randint(0, n)
            b = rng.randint(a, n)
            if rng.random() < 0.5:
                part = _values(rng, [b - a] + shape[1:], dtype)
                any_store.write_tensor(key, part, rows=slice(a, b))
                model[a:b] = part
            elif rng.random() < 0.5:
                got = any_store.read_tensor(key, rows=slice(a, b))
                assert got.dtype == dtype and torch.equal(got, model[a:b]), (codec, shape, a, b)
            else:
                out = torch.empty([b - a] + shape[1:], dtype=dtype)
                assert any_store.read_tensor(key, rows=slice(a, b), out=out) is out
                assert torch.equal(out, model[a:b]), (codec, shape, a, b)
        assert torch.equal(any_store.read_tensor(key), model)
        assert any_store.stat(key)["codec"] in (codec, "planes", "lz4", "none")


def test_open_ended_and_negative_slices(store):
    t = torch.arange(60, dtype=torch.float32).reshape(20, 3)
    store.write_tensor("t", t)
    assert torch.equal(store.read_tensor("t", rows=slice(15, None)), t[15:])
    assert torch.equal(store.read_tensor("t", rows=slice(-3, None)), t[-3:])
    assert torch.equal(store.read_tensor("t", rows=slice(None, 4)), t[:4])
    store.write_tensor("t", torch.ones(2, 3), rows=slice(18, None))
    t[18:] = 1
    assert torch.equal(store.read_tensor("t"), t)


def test_row_errors(store):
    store.write_tensor("t", torch.zeros(10, 3))
    with pytest.raises(gotensor.InvalidArgument):
        store.write_tensor("t", torch.zeros(2, 3), rows=slice(9, 11))  # past the end
    with pytest.raises(gotensor.InvalidArgument):
        store.write_tensor("t", torch.zeros(2, 3), rows=slice(0, 3))  # slice and tensor disagree
    with pytest.raises(gotensor.InvalidArgument):
        store.write_tensor("t", torch.zeros(2, 4), rows=slice(0, 2))  # trailing shape
    with pytest.raises(gotensor.InvalidArgument):
        store.write_tensor("t", torch.zeros(2, 3, dtype=torch.float16), rows=slice(0, 2))  # dtype
    with pytest.raises(gotensor.InvalidArgument):
        store.read_tensor("t", rows=slice(0, 10, 2))  # a step
    with pytest.raises(gotensor.InvalidArgument):
        store.read_tensor("t", rows=slice(8, 12), out=torch.empty(4, 3))
    with pytest.raises(gotensor.KeyNotFound):
        store.write_tensor("missing", torch.zeros(1, 3), rows=slice(0, 1))
    assert torch.equal(store.read_tensor("t"), torch.zeros(10, 3))


def test_chunk_rows_lays_out_rows(any_store):
    t = torch.randn(300, 8, 160)  # 5120-byte rows
    any_store.write_tensor("kv", t, chunk_rows=1)
    assert any_store.stat("kv")["chunks"] == 300
    any_store.write_tensor("kv", t, chunk_rows=4)
    assert any_store.stat("kv")["chunks"] == 75
    any_store.write_tensor("small", torch.zeros(64, 4), chunk_rows=1)  # 16-byte rows: chunks of at least 4 KiB
    assert any_store.stat("small")["chunks"] == 1
    any_store.write_tensor("kv", torch.ones(1, 8, 160), rows=slice(7, 8))
    t[7] = 1
    assert torch.equal(any_store.read_tensor("kv", rows=slice(2, 290)), t[2:290])
    for bad in (0, -1, 1.5, True):
        with pytest.raises(gotensor.InvalidArgument):
            any_store.write_tensor("kv", t, chunk_rows=bad)
    with pytest.raises(gotensor.InvalidArgument):
        any_store.write_tensor("kv", t[:2], rows=slice(0, 2), chunk_rows=1)
