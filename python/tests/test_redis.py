"""redis:// stores through the Python API, against a real redis-server and a 3-master/3-replica cluster on
loopback (started and stopped here): tensors, async calls, read_tensors/write_tensors, rows=, stats; the
FlexGen device and examples/moe_experts.py on the cluster; a wrong password, a full server, a misspelt option."""

import os
import sys

import numpy as np
import pytest
import torch

import gotensor

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
from redis_local import CLI, REDIS, redis_cluster, redis_server  # noqa: E402

if (REDIS is None or CLI is None) and os.environ.get("GOTENSOR_REDIS_REQUIRED") == "1":
    raise RuntimeError("redis-server is not installed, and GOTENSOR_REDIS_REQUIRED=1 (apt-get install redis-server)")
pytestmark = pytest.mark.skipif(REDIS is None or CLI is None,
                                reason="redis-server is not installed (apt-get install redis-server)")


@pytest.fixture(scope="module")
def server():
    with redis_server() as s:
        yield s


@pytest.fixture(scope="module")
def cluster():
    with redis_cluster(3, 1) as c:
        yield c


@pytest.fixture(params=["server", "cluster"])
def url(request):
    return request.getfixturevalue(request.param).url


def test_round_trip_codecs_async_batches_and_stats(url):
    with gotensor.open(url) as s:
        for k in s.keys():
            s.delete(k)
        t = (torch.randn(300, 500) * 0.02).to(torch.bfloat16)
        big = torch.randn(3000, 2048)  # 24 MiB: streamed, in pieces over the masters
        for codec in ("none", "planes", "lz4", "zstd", "q4", "auto"):
            s.write_tensor(f"t/{codec}", t, codec=codec)
            r = s.read_tensor(f"t/{codec}")
            assert r.dtype == t.dtype and r.shape == t.shape
            if codec != "q4":
                assert torch.equal(r.view(torch.int16), t.view(torch.int16))
            s.write_tensor(f"big/{codec}", big, codec=codec)
            out = torch.empty_like(big)
            assert s.read_tensor(f"big/{codec}", out=out) is out
            if codec != "q4":
                assert torch.equal(out, big)
        futs = [s.write_tensor_async(f"a/{i}", torch.full((1000,), float(i))) for i in range(32)]
        [f.result(timeout=60) for f in futs]
        out = torch.empty(1000)
        s.read_tensor_async("a/7", out=out).result(timeout=60)
        assert torch.equal(out, torch.full((1000,), 7.0))
        s.write_tensors({f"b/{i}": torch.arange(i + 1) for i in range(10)})
        got = s.read_tensors([f"b/{i}" for i in range(10)])
        assert all(torch.equal(got[f"b/{i}"], torch.arange(i + 1)) for i in range(10))
        assert len(s.keys("a/")) == 32 and s.stat("t/planes")["codec"] == "planes"
        assert s.usage()["keys"] == len(s.keys()) and "unanswered" not in s.usage()
        st = s.stats()
        assert st["wire_bytes_out"] > 24 << 20 and st["wire_bytes_in"] > 24 << 20
        s.delete("a/0")
        assert "a/0" not in s
        with pytest.raises(gotensor.KeyNotFound) as e:
            s.read_tensor("a/0")
        assert e.value.key == "a/0"
        for k in s.keys():
            s.delete(k)
        assert s.keys() == []


def test_rows_match_torch(url):
    from test_rows import test_row_ops_match_torch
    with gotensor.open(url + "?piece=64KiB") as s:  # small pieces: row edits cross them
        test_row_ops_match_torch(s)
        kv = torch.zeros(512, 8, 64, dtype=torch.float16)  # a KV cache filled a row at a time
        s.write_tensor("kv", kv, chunk_rows=1)
        for i in range(0, 512, 37):
            row = torch.full((1, 8, 64), float(i), dtype=torch.float16)
            s.write_tensor("kv", row, rows=slice(i, i + 1))
            kv[i] = row[0]
        assert torch.equal(s.read_tensor("kv"), kv)
        assert torch.equal(s.read_tensor("kv", rows=slice(37, 75)), kv[37:75])


def test_flexgen_device_on_the_cluster(cluster, tmp_path):
    pytest.importorskip("flexgen")
    import test_flexgen as tf
    import gotensor.flexgen as gtf
    from gotensor.flexgen.cpu import cpu_shim, tiny_opt
    d = tmp_path / "opt"
    d.mkdir()
    model_dir = (str(d), tiny_opt(str(d)))
    for name in ("mixed", "compressed-cache"):
        pol = tf.policy(*tf.POLICIES[name])
        with cpu_shim():
            ref_env = tf.torch_disk_env(tmp_path)
            try:
                ref = tf.run(ref_env, model_dir, pol)
            finally:
                ref_env.close_copy_threads()
            gtf.install()
            env = gtf.execution_env(cluster.url)
            try:
                out = tf.run(env, model_dir, pol)
                assert env.disk.stats["writes"] > 0, "nothing went through gotensor"
                left = env.disk.keys()
            finally:
                env.disk.close()
        assert np.array_equal(out, ref), (name, out, ref)
        assert left == [], f"{len(left)} keys left behind: {left[:5]}"


def test_moe_example_on_the_cluster(cluster):
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
    import moe_experts
    from moe_experts import Fetcher, make_experts, run_steps
    layers, n, d, ff = 3, 4, 64, 128
    experts = make_experts(layers, n, d, ff)
    gates = [torch.randn(d, n, generator=torch.Generator().manual_seed(l)) for l in range(layers)]

    def capture(fetch):
        got = []
        real = moe_experts.expert_mlp
        moe_experts.expert_mlp = lambda x, a, b: got.append(real(x, a, b)) or got[-1]
        try:
            waits, nbytes = run_steps(fetch, gates, 3, layers, 2, d)
        finally:
            moe_experts.expert_mlp = real
        assert nbytes == 3 * layers * 2 * 2 * d * ff * 2
        return torch.stack([g.float() for g in got])

    class InMemory:
        def start(self, keys):
            return keys

        def wait(self, keys):
            return {k: experts[k] for k in keys}

    want = capture(InMemory())
    with gotensor.open(cluster.url) as store:
        store.write_tensors(experts)
        assert torch.equal(capture(Fetcher(store)), want)
        assert torch.equal(capture(Fetcher(store, prefetch=False)), want)
        for k in experts:
            store.delete(k)


def test_wrong_password_and_misspelt_options_never_show_it():
    with redis_server(password="py-s3cret") as srv:
        with gotensor.open(f"redis://:py-s3cret@{srv.addr}") as s:
            s.write_tensor("k", torch.ones(3))
            assert "s3cret" not in s.url and "s3cret" not in repr(s)
        pw = os.path.join(srv.dir, "pw")
        with open(pw, "w") as f:
            f.write("py-s3cret\n")
        with gotensor.open(f"redis://{srv.addr}?password_file={pw}") as s:
            assert torch.equal(s.read_tensor("k"), torch.ones(3))
        for bad, exc in ((f"redis://:wrong-s3cret@{srv.addr}", gotensor.Unauthorized),
                         (f"redis://{srv.addr}", gotensor.Unauthorized),
                         (f"redis://:py-s3cret@{srv.addr}?pasword=py-s3cret", gotensor.InvalidArgument),
                         (f"redis://:py-s3cret@{srv.addr}?password_flie={pw}", gotensor.InvalidArgument)):
            with pytest.raises(exc) as e:
                gotensor.open(bad)
            assert "s3cret" not in str(e.value), str(e.value)


def test_full_server_is_store_full_and_keeps_what_it_holds():
    with redis_server("--maxmemory", "24mb", "--maxmemory-policy", "noeviction") as srv:
        with gotensor.open(srv.url) as s:
            kept = {}
            with pytest.raises(gotensor.StoreFull):
                for i in range(40):
                    t = torch.randn(1 << 20)  # 4 MiB
                    s.write_tensor(f"t{i}", t)
                    kept[f"t{i}"] = t
            assert kept
            for k, t in kept.items():
                assert torch.equal(s.read_tensor(k), t)
