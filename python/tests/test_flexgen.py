"""FlexGen's OptLM on CPU, offloading through FlexGen's TorchDisk and through
gotensor's GoTensorDevice: the tokens must be identical and the store empty
afterwards."""

import threading
import time

import numpy as np
import pytest
import torch

pytest.importorskip("flexgen")

from flexgen.compression import CompressionConfig  # noqa: E402
from flexgen.flex_opt import OptLM, Policy  # noqa: E402
from flexgen import pytorch_backend as pb  # noqa: E402
from flexgen.utils import ExecutionEnv  # noqa: E402

import gotensor  # noqa: E402
import gotensor.flexgen as gtf  # noqa: E402
from gotensor.flexgen.cpu import cpu_shim, tiny_opt  # noqa: E402

POLICIES = {
    #                      w: gpu cpu   cache: gpu cpu   compress cache
    "weights-on-store": ((0, 0), (100, 0), False),
    "cache-on-store": ((100, 0), (0, 0), False),
    "mixed": ((30, 30), (30, 30), False),
    "compressed-cache": ((100, 0), (0, 0), True),
}


def policy(w, c, compress_cache):
    comp = CompressionConfig(num_bits=4, group_size=16, group_dim=2, symmetric=False)
    wcomp = CompressionConfig(num_bits=4, group_size=16, group_dim=0, symmetric=False)
    return Policy(gpu_batch_size=2, num_gpu_batches=1, w_gpu_percent=w[0], w_cpu_percent=w[1],
                  cache_gpu_percent=c[0], cache_cpu_percent=c[1], act_gpu_percent=100, act_cpu_percent=0,
                  overlap=True, sep_layer=True, pin_weight=False, cpu_cache_compute=False, attn_sparsity=1.0,
                  compress_weight=False, comp_weight_config=wcomp, compress_cache=compress_cache,
                  comp_cache_config=comp)


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("opt")
    return str(d), tiny_opt(str(d))


def run(env, model_dir, pol):
    path, cfg = model_dir
    prompts = np.array([[2, 15, 27, 33, 101, 7], [2, 99, 14, 250, 3, 44]], dtype=np.int64)
    model = OptLM(cfg, env, path, pol)
    try:
        out = model.generate(prompts, max_new_tokens=8, do_sample=False)
    finally:
        model.delete_all_weights()
        env.disk.synchronize()
    return out


def torch_disk_env(tmp_path):
    gpu = cpu = pb.TorchDevice("cpu")
    disk = pb.TorchDisk(str(tmp_path / "flexgen-disk"))
    return ExecutionEnv(gpu=gpu, cpu=cpu, disk=disk, mixed=pb.TorchMixedDevice([gpu, cpu, disk]))


@pytest.fixture(scope="module")
def tcp_node():
    from test_remote import Node
    n = Node()
    yield n
    n.stop()


@pytest.fixture(scope="module")
def ucx_node():
    from test_remote import UCX, Node
    if not UCX:
        pytest.skip("built without UCX")
    n = Node(transport="ucx-sm")
    yield n
    n.stop()


@pytest.mark.parametrize("name", list(POLICIES))
@pytest.mark.parametrize("url", ["mem://", "file", "tcp", "ucx"])
def test_tokens_match_torch_disk_and_nothing_is_left(tmp_path, model_dir, name, url, request):
    pol = policy(*POLICIES[name])
    with cpu_shim():
        ref_env = torch_disk_env(tmp_path)
        try:
            ref = run(ref_env, model_dir, pol)
        finally:
            ref_env.close_copy_threads()
        gtf.install()
        if url in ("tcp", "ucx"):
            url = request.getfixturevalue(f"{url}_node").url
        elif url == "file":
            url = f"file://{tmp_path}/store"
        env = gtf.execution_env(url)
        try:
            out = run(env, model_dir, pol)
            assert env.disk.stats["writes"] > 0, "nothing went through gotensor"
            left = env.disk.keys()
        finally:
            env.disk.close()
    assert np.array_equal(out, ref), (out, ref)
    assert left == [], f"{len(left)} keys left behind: {left[:5]}"


def test_device_reraises_worker_errors_from_synchronize():
    dev = gtf.GoTensorDevice("mem://")
    try:
        w = dev.allocate((4,), np.float32)  # 8 elements into a 4-element tensor
        dev.submit_copy(w, None, pb.TorchTensor((8,), torch.float32, torch.zeros(8), pb.TorchDevice("cpu")), None)
        with pytest.raises(gotensor.InvalidArgument, match=r"8 elements for a tensor of shape \(4,\)"):
            dev.synchronize()
        t = dev.allocate((4,), np.float32)
        dev.submit_copy(pb.TorchTensor((8,), torch.float32, torch.zeros(8), pb.TorchDevice("cpu")), None, t, None)
        with pytest.raises(gotensor.InvalidArgument, match=r"a \(4,\) slice into a \(8,\) destination"):
            dev.synchronize()
        dev.synchronize()  # the error was reported once
    finally:
        dev.close()


def test_write_reads_the_source_when_it_runs_and_codes_floats_with_planes():
    cpu = pb.TorchDevice("cpu")
    dev = gtf.GoTensorDevice("mem://")
    try:
        src = torch.arange(6, dtype=torch.float32)
        dst = dev.allocate((6,), np.float32)
        dev.submit_copy(dst, None, pb.TorchTensor((6,), torch.float32, src, cpu), None)
        dev.synchronize()
        assert torch.equal(dev.store.read_tensor(dst.data), torch.arange(6, dtype=torch.float32))
        assert dev.store.stat(dst.data)["codec"] == "planes"
    finally:
        dev.close()


def test_device_to_device_copy_takes_its_turn_on_both_keys():
    """A copy a -> b submitted after a write of a and before another write of a sees the first value."""
    cpu = pb.TorchDevice("cpu")
    dev = gtf.GoTensorDevice("mem://", num_copy_threads=4)
    try:
        for trial in range(20):
            a, b = dev.allocate((256,), np.float32), dev.allocate((256,), np.float32)
            first = torch.full((256,), float(trial + 1))
            dev.submit_copy(a, None, pb.TorchTensor((256,), torch.float32, first, cpu), None)
            dev.submit_copy(b, None, a, None)
            dev.submit_copy(a, None, pb.TorchTensor((256,), torch.float32, torch.full((256,), -1.0), cpu), None)
            dev.synchronize()
            assert torch.equal(dev.store.read_tensor(b.data), first), trial
            assert torch.equal(dev.store.read_tensor(a.data), torch.full((256,), -1.0))
    finally:
        dev.close()


def test_mem_stats_are_current_and_peak_bytes():
    cpu = pb.TorchDevice("cpu")
    dev = gtf.GoTensorDevice("mem://")
    try:
        ts = [dev.allocate((1000,), np.float32) for _ in range(3)]
        for t in ts:
            dev.submit_copy(t, None, pb.TorchTensor((1000,), torch.float32, torch.ones(1000), cpu), None)
        dev.synchronize()
        assert dev.mem_stats() == (12000, 12000)
        ts[0].delete()
        dev.synchronize()
        assert dev.mem_stats() == (8000, 12000)
    finally:
        dev.close()


def test_keys_are_run_scoped_and_finished_runs_can_be_cleared():
    import os
    import socket
    store = gotensor.open("mem://")
    try:
        dev = gtf.GoTensorDevice(store=store)
        host = socket.gethostname()
        assert dev.prefix.startswith(f"flexgen/{host}-{os.getpid()}-")
        t = dev.allocate((4,), np.float32)
        dev.submit_copy(t, None, pb.TorchTensor((4,), torch.float32, torch.ones(4), pb.TorchDevice("cpu")), None)
        dev.synchronize()
        dead = f"flexgen/{host}-{2**22 + 7}-18c/"  # above Linux's largest pid: never alive
        other = "flexgen/another-host-12-18c/"
        for k in (dead + "a", dead + "b", other + "c"):
            store.write_tensor(k, torch.ones(2))
        assert gtf.clear_runs(store) == 2
        assert sorted(store.keys("flexgen/")) == sorted([t.data, other + "c"])
        assert gtf.clear_runs(store, all_runs=True) == 2
        assert store.keys("flexgen/") == []
        dev.close()
    finally:
        store.close()


def test_devices_made_in_the_same_millisecond_on_one_store_have_their_own_keys(monkeypatch):
    import time
    monkeypatch.setattr(time, "time_ns", lambda: 1_700_000_000_000_000_000)  # one clock reading for both
    store = gotensor.open("mem://")
    a, b = gtf.GoTensorDevice(store=store), gtf.GoTensorDevice(store=store)
    try:
        assert a.prefix != b.prefix
        cpu = pb.TorchDevice("cpu")
        ta, tb = a.allocate((4,), np.float32), b.allocate((4,), np.float32)
        a.submit_copy(ta, None, pb.TorchTensor((4,), torch.float32, torch.ones(4), cpu), None)
        b.submit_copy(tb, None, pb.TorchTensor((4,), torch.float32, torch.zeros(4), cpu), None)
        a.synchronize(), b.synchronize()
        assert torch.equal(store.read_tensor(ta.data), torch.ones(4))
        b.clear()
        assert store.keys("flexgen/") == [ta.data]
    finally:
        a.close(), b.close()
        store.close()


def test_slice_indices_raise_no_deprecation_warning():
    import warnings
    cpu = pb.TorchDevice("cpu")
    dev = gtf.GoTensorDevice("mem://")
    try:
        t = dev.allocate((4, 3), np.float32)
        dev.submit_copy(t, None, pb.TorchTensor((4, 3), torch.float32, torch.arange(12.).reshape(4, 3), cpu), None)
        out = pb.TorchTensor((2, 3), torch.float32, torch.zeros(2, 3), cpu)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            dev.submit_copy(out, None, t, [slice(1, 3), slice(0, 3)])
            dev.submit_copy(t, [slice(0, 1), slice(0, 3)], pb.TorchTensor((1, 3), torch.float32, torch.zeros(1, 3), cpu), None)
            dev.synchronize()
        assert torch.equal(out.data, torch.arange(3., 9.).reshape(2, 3))
        assert torch.equal(dev.store.read_tensor(t.data)[0], torch.zeros(3))
    finally:
        dev.close()


def test_drop_in_runs_flex_opts_own_command_line_on_cpu(tmp_path, monkeypatch, capsys, model_dir):
    """python -m gotensor.flexgen --offload-url URL --cpu <flex_opt's arguments>, with a local tokenizer
    (the real one comes from the hub) and the tiny model's config."""
    from flexgen import flex_opt
    from gotensor.flexgen.__main__ import main
    path, cfg = model_dir

    class Tokenizer:
        def __call__(self, texts, padding=None, max_length=None):
            class Out:
                input_ids = [[2] + [7 + i % 50 for i in range(max_length - 1)] for _ in texts]
            return Out()

        def batch_decode(self, ids, skip_special_tokens=True):
            return [" ".join(map(str, row)) for row in ids]

    monkeypatch.setattr(flex_opt.AutoTokenizer, "from_pretrained", lambda *a, **k: Tokenizer())
    monkeypatch.setattr(flex_opt, "get_opt_config", lambda *a, **k: cfg)
    log = tmp_path / "run.log"
    url = f"file://{tmp_path}/offload"
    rc = main(["--offload-url", url, "--cpu", "--model", "facebook/opt-125m", "--path", path,
               "--prompt-len", "8", "--gen-len", "4", "--gpu-batch-size", "2", "--percent", "100", "0", "0", "0",
               "100", "0", "--log-file", str(log), "--verbose", "0"])
    assert rc == 0
    assert flex_opt.TorchDisk is pb.TorchDisk and flex_opt.TorchDevice is pb.TorchDevice  # patches undone
    assert log.stat().st_size > 0  # flex_opt's own benchmark log
    stats = [line for line in capsys.readouterr().out.splitlines() if line.startswith("GoTensorDevice")]
    assert stats and " 0 writes" not in stats[0], stats  # the KV cache went through gotensor
    with gotensor.open(url) as s:
        assert s.keys("flexgen/") == [], "the run's keys are deleted"


def test_gotensor_load_then_flexgen_reads_weights_from_the_store(tmp_path, model_dir):
    """`gotensor load <model>-np --to URL`, then OptLM runs with no -np directory at all."""
    import shutil
    import subprocess
    import sys
    path, cfg = model_dir
    url = f"file://{tmp_path}/weights"
    r = subprocess.run([sys.executable, "-m", "gotensor", "load", f"{path}/{cfg.name}-np", "--to", url,
                        "--prefix", "opt/"], capture_output=True, text=True, check=True)
    assert "loaded" in r.stdout  # a summary (the progress bar is drawn only on a terminal)
    pol = policy(*POLICIES["weights-on-store"])
    with cpu_shim():
        ref_env = gtf.execution_env("mem://")
        try:
            ref = run(ref_env, model_dir, pol)
        finally:
            ref_env.disk.close()
        empty = tmp_path / "no-weights-here"
        env = gtf.execution_env("mem://", weights=url, weights_prefix="opt/")
        try:
            out = run(env, (str(empty), cfg), pol)
        finally:
            env.disk.close()
            gtf.uninstall()
    assert not empty.exists()
    assert np.array_equal(out, ref)


def test_load_safetensors(tmp_path):
    import json
    import struct
    from gotensor.load import load
    tensors = {"a": torch.randn(3, 4).to(torch.bfloat16), "b": torch.arange(5, dtype=torch.int64)}
    header, blobs, off = {}, b"", 0
    for name, t in tensors.items():
        raw = t.contiguous().view(torch.uint8).numpy().tobytes()
        header[name] = {"dtype": {"bfloat16": "BF16", "int64": "I64"}[str(t.dtype)[6:]], "shape": list(t.shape),
                        "data_offsets": [off, off + len(raw)]}
        blobs += raw
        off += len(raw)
    h = json.dumps(header).encode()
    (tmp_path / "m.safetensors").write_bytes(struct.pack("<Q", len(h)) + h + blobs)
    r = load(str(tmp_path / "m.safetensors"), f"file://{tmp_path}/s", progress=False)
    assert r["tensors"] == 2
    with gotensor.open(f"file://{tmp_path}/s") as s:
        assert torch.equal(s.read_tensor("a"), tensors["a"]) and torch.equal(s.read_tensor("b"), tensors["b"])
    with pytest.raises(gotensor.InvalidArgument):
        load(str(tmp_path / "missing.safetensors"), "mem://", progress=False)


def _work():
    import json
    from gotensor._native_lib import native
    return json.loads(native.work_counters())


def _append_and_read_cost(rows):
    """Raw bytes encoded by one KV-cache append at row 100 and decoded by the
    read of [0:101) that follows, on a cache of rows rows (FlexGen's layout)."""
    cpu = pb.TorchDevice("cpu")
    dev = gtf.GoTensorDevice("mem://", codec="planes")
    try:
        shape = (rows, 48, 64)
        cache = dev.allocate(shape, np.float16)
        prompt = torch.randn(8, 48, 64).to(torch.float16)
        dev.submit_copy(cache, (slice(0, 8), slice(0, 48)), pb.TorchTensor(prompt.shape, torch.float16, prompt, cpu),
                        None)
        dev.synchronize()
        new = torch.randn(1, 48, 64).to(torch.float16)
        before = _work()
        dev.submit_copy(cache, (slice(100, 101), slice(0, 48)), pb.TorchTensor(new.shape, torch.float16, new, cpu), None)
        dev.synchronize()
        mid = _work()
        out = torch.empty(101, 48, 64, dtype=torch.float16)
        dev.submit_copy(pb.TorchTensor(out.shape, torch.float16, out, cpu), None, cache,
                        (slice(0, 101), slice(0, 48)))
        dev.synchronize()
        after = _work()
        assert torch.equal(out[:8], prompt) and torch.equal(out[100:], new) and not out[8:100].any()
        return mid["encoded"] - before["encoded"], after["decoded"] - mid["decoded"]
    finally:
        dev.close()


def test_kv_append_costs_the_new_rows_and_a_read_costs_pos_rows():
    """An append to a 4096-row cache encodes no more than 1.5x what one to a
    256-row cache does, and a read of [0:101) decodes about 101 rows, not the cache."""
    enc256, dec256 = _append_and_read_cost(256)
    enc4096, dec4096 = _append_and_read_cost(4096)
    assert 0 < enc4096 <= 1.5 * enc256, (enc256, enc4096)
    row = 48 * 64 * 2
    assert dec4096 <= 1.5 * dec256 and dec4096 < 101 * row + (1 << 20), (dec256, dec4096)


def test_kv_cache_is_stored_a_row_per_chunk_so_an_append_encodes_one_row():
    """init_cache_one_gpu_batch's caches are laid out in chunks of one row:
    a token's append encodes that row and nothing else."""
    from types import SimpleNamespace
    cpu = pb.TorchDevice("cpu")
    dev = gtf.GoTensorDevice("mem://", codec="none")
    try:
        cfg = SimpleNamespace(n_head=12, input_dim=768, dtype=np.float32)
        k, _ = dev.init_cache_one_gpu_batch(cfg, SimpleNamespace(prompt_len=32, gen_len=64),
                                            SimpleNamespace(gpu_batch_size=4))
        rows, heads, dim = k.shape
        prompt = torch.randn(32, heads, dim)
        dev.submit_copy(k, (slice(0, 32), slice(0, heads)), pb.TorchTensor(prompt.shape, prompt.dtype, prompt, cpu), None)
        dev.synchronize()
        assert dev.store.stat(k.data)["chunks"] == rows
        new = torch.randn(1, heads, dim)
        before = _work()
        dev.submit_copy(k, (slice(32, 33), slice(0, heads)), pb.TorchTensor(new.shape, new.dtype, new, cpu), None)
        dev.synchronize()
        assert _work()["encoded"] - before["encoded"] == heads * dim * 4
        out = torch.empty(33, heads, dim)
        dev.submit_copy(pb.TorchTensor(out.shape, out.dtype, out, cpu), None, k, (slice(0, 33), slice(0, heads)))
        dev.synchronize()
        assert torch.equal(out[:32], prompt) and torch.equal(out[32:], new)
    finally:
        dev.close()


def test_kv_cache_takes_cache_codec_and_the_rest_codec():
    """A KV cache is stored with cache_codec (default none: no decode of the
    whole cache every token), any other tensor with codec."""
    from types import SimpleNamespace
    cpu = pb.TorchDevice("cpu")
    cfg = SimpleNamespace(n_head=4, input_dim=256, dtype=np.float32)
    for cache_codec, want in ((None, "none"), ("planes", "planes")):
        dev = gtf.GoTensorDevice("mem://", codec="planes",
                                 **({} if cache_codec is None else {"cache_codec": cache_codec}))
        try:
            k, _ = dev.init_cache_one_gpu_batch(cfg, SimpleNamespace(prompt_len=8, gen_len=8),
                                                SimpleNamespace(gpu_batch_size=2))
            w = dev.allocate((64, 64), np.float32)
            for t, idx in ((k, (slice(0, 8), slice(0, k.shape[1]))), (w, None)):
                x = torch.randn(8 if idx else 64, *t.shape[1:])
                dev.submit_copy(t, idx, pb.TorchTensor(x.shape, x.dtype, x, cpu), None)
            dev.synchronize()
            assert dev.store.stat(k.data)["codec"] == want
            assert dev.store.stat(w.data)["codec"] == "planes"
        finally:
            dev.close()


def test_offload_dir_is_scratch_and_not_synced(tmp_path):
    """A file:// URL without fsync= opens with fsync=false; one that says keeps it."""
    from gotensor.flexgen.device import scratch_url
    for url, want in ((f"file://{tmp_path}/a", f"file://{tmp_path}/a?fsync=false"),
                      (f"file://{tmp_path}/b?capacity=1GiB", f"file://{tmp_path}/b?capacity=1GiB&fsync=false"),
                      (f"file://{tmp_path}/c?fsync=true", f"file://{tmp_path}/c?fsync=true"),
                      ("mem://x", "mem://x")):
        assert scratch_url(url) == want
        dev = gtf.GoTensorDevice(url)
        try:
            assert dev.store.url == want and dev.name == url
        finally:
            dev.close()


def test_copies_complete_on_the_synchronizing_thread():
    """The device holds its operations for synchronize() (Go's Hold), which
    claims them on its own thread: a held one's completion never reaches the
    completer thread (one that finished before it was held may)."""
    from gotensor._completer import completer
    cpu = pb.TorchDevice("cpu")
    dev = gtf.GoTensorDevice("mem://", codec="none")
    held, seen = set(), []
    hold, complete = completer.hold, completer._complete

    def spy_hold(fut):
        ok = hold(fut)
        if ok:
            held.add(fut._op)
        return ok

    def spy_complete(rec):
        if threading.current_thread() is not threading.main_thread():
            seen.append(rec["op"])
        complete(rec)
    completer.hold, completer._complete = spy_hold, spy_complete
    try:
        big = torch.randn(256, 1024)  # over INLINE_BYTES: an asynchronous write
        t = dev.allocate(tuple(big.shape), np.float32)
        dev.submit_copy(t, None, pb.TorchTensor(big.shape, big.dtype, big, cpu), None)
        outs = [torch.empty(64, 1024) for _ in range(8)]
        for i, o in enumerate(outs):
            dev.submit_copy(pb.TorchTensor(o.shape, o.dtype, o, cpu), None, t, (slice(i * 24, i * 24 + 64),))
        time.sleep(0.2)  # every operation finished in Go before synchronize()
        dev.synchronize()
        for i, o in enumerate(outs):
            assert torch.equal(o, big[i * 24:i * 24 + 64])
        assert dev.stats["writes"] == 1 and dev.stats["reads"] == 8
    finally:
        completer.hold, completer._complete = hold, complete
        dev.close()
    assert held and not held & set(seen), (held, seen)


def test_compressed_kv_cache_append_encodes_its_rows_not_the_cache():
    """A compressed cache's data and scale tensors (TorchCompressedDevice over
    the device) are laid out for appends too: a token's append encodes a few
    KiB whatever the cache's length, and reads back what was written; the
    append is one row write each for the data and the scales, the read one
    row read each."""
    from types import SimpleNamespace
    from flexgen.compression import CompressionConfig
    comp = CompressionConfig(num_bits=4, group_size=64, group_dim=2, symmetric=False)
    cfg = SimpleNamespace(n_head=12, input_dim=768, dtype=np.float16)
    pol = SimpleNamespace(gpu_batch_size=4, comp_cache_config=comp)
    with cpu_shim():
        cpu = pb.TorchDevice("cpu")
        gtf.install()
        dev = gtf.GoTensorDevice("mem://", codec="none")
        try:
            costs = []
            for gen in (32, 1024):
                k, _ = dev.compressed_device.init_cache_one_gpu_batch(
                    cfg, SimpleNamespace(prompt_len=32, gen_len=gen), pol)
                heads = k.shape[1]
                prompt = cpu.compressed_device.compress(torch.randn(32, heads, 64), comp)
                pb.general_copy(k, (slice(0, 32), slice(0, heads)), prompt, None)
                dev.synchronize()
                new = cpu.compressed_device.compress(torch.randn(1, heads, 64), comp)
                before, ops = _work(), (dev.stats["writes"], dev.stats["reads"])
                pb.general_copy(k, (slice(32, 33), slice(0, heads)), new, None)
                dev.synchronize()
                costs.append(_work()["encoded"] - before["encoded"])
                back = k.copy(cpu.compressed_device, (slice(0, 33), slice(0, heads)))
                dev.synchronize()
                assert (dev.stats["writes"] - ops[0], dev.stats["reads"] - ops[1]) == (2, 2)  # data and scales each
                for i in (0, 1):
                    got, dt = back.data[i].data, back.data[i].data.dtype
                    assert torch.equal(got[:32], prompt.data[i].data.to(dt))
                    assert torch.equal(got[32:], new.data[i].data.to(dt))
            row = heads * 32 + heads * 2 * 2  # packed data and scales of one token
            assert all(0 < c <= 8 * row for c in costs), costs
        finally:
            dev.close()


def test_copies_on_a_key_take_effect_in_submission_order():
    """Writes, loads and deletes of a few keys, interleaved and large enough to run
    asynchronously, end as they would one after another: the order is Go's, per key."""
    import random
    cpu = pb.TorchDevice("cpu")
    dev = gtf.GoTensorDevice("mem://", codec="none")
    try:
        rng, n = random.Random(3), 96 << 10  # 384 KiB of float32: above INLINE_BYTES
        keys = {name: dev.allocate((n,), np.float32) for name in "abc"}
        want, reads = {}, []
        for i in range(200):
            name = rng.choice("abc")
            t, op = keys[name], rng.random()
            if op < 0.5:
                src = torch.full((n,), float(i))
                dev.submit_copy(t, None, pb.TorchTensor((n,), torch.float32, src, cpu), None)
                want[name] = float(i)
            elif op < 0.9:
                out = torch.empty(n)
                dev.submit_copy(pb.TorchTensor((n,), torch.float32, out, cpu), None, t, None)
                reads.append((out, want.get(name, 0.0)))
            else:
                t.delete()
                keys[name] = dev.allocate((n,), np.float32)
                want.pop(name, None)
        dev.synchronize()
        for out, value in reads:
            assert torch.all(out == value), (out[:3], value)
        for name, t in keys.items():
            if name in want:
                assert torch.all(dev.store.read_tensor(t.data) == want[name])
        assert sorted(dev.keys()) == sorted(keys[name].data for name in want)
    finally:
        dev.close()


class _RecordingStore(gotensor.Store):
    """A store that records the out= of every asynchronous read and which
    writes ran on the calling thread ("sync") or as Go operations ("async")."""

    def __init__(self, url):
        super().__init__(url)
        self.outs, self.writes = [], []

    def _read_async(self, key, out, **kw):
        self.outs.append(out)
        return super()._read_async(key, out, **kw)

    def write_tensor(self, key, tensor, **kw):
        self.writes.append("sync")
        return super().write_tensor(key, tensor, **kw)

    def _write_async(self, key, tensor, **kw):
        self.writes.append("async")
        return super()._write_async(key, tensor, **kw)


def test_loads_decode_straight_into_the_destination():
    """A whole weight and a KV cache's [0:pos] are decoded into FlexGen's
    destination itself: no temporary tensor, no second copy."""
    cpu = pb.TorchDevice("cpu")
    store = _RecordingStore("mem://")
    dev = gtf.GoTensorDevice(store=store, codec="none")
    try:
        w = dev.allocate((64, 32), np.float32)
        src = torch.randn(64, 32)
        dev.load_from_np(w, src.numpy())
        dst = torch.empty(64, 32)
        dev.submit_copy(pb.TorchTensor(dst.shape, torch.float32, dst, cpu), None, w, None)
        rows = torch.empty(10, 32)
        dev.submit_copy(pb.TorchTensor(rows.shape, torch.float32, rows, cpu), None, w, (slice(0, 10), slice(0, 32)))
        dev.synchronize()
        assert torch.equal(dst, src) and torch.equal(rows, src[:10])
        assert [o.data_ptr() if o is not None else None for o in store.outs] == [dst.data_ptr(), rows.data_ptr()]
    finally:
        dev.close()
        store.close()


def test_a_small_host_append_runs_on_the_callers_thread_in_the_keys_order():
    """A token's append from host memory to a key with no operation running is
    written at once on FlexGen's thread (starting a Go operation costs more
    than the write); one to a key with an operation running, and a large
    write, start Go operations; an error in an inline write is raised by
    synchronize(), as an operation's is."""
    from concurrent.futures import Future
    cpu = pb.TorchDevice("cpu")
    store = _RecordingStore("mem://")
    dev = gtf.GoTensorDevice(store=store, codec="none")
    try:
        k = dev.allocate((64, 48, 64), np.float32)
        dev._mark_appended(k.data)
        prompt = torch.randn(32, 48, 64)  # 384 KiB: above INLINE_BYTES
        dev.submit_copy(k, (slice(0, 32), slice(0, 48)), pb.TorchTensor(prompt.shape, prompt.dtype, prompt, cpu), None)
        dev.synchronize()
        row = torch.randn(1, 48, 64)
        dev.submit_copy(k, (slice(32, 33), slice(0, 48)), pb.TorchTensor(row.shape, row.dtype, row, cpu), None)
        assert store.writes == ["async", "sync"]
        assert torch.equal(store.read_tensor(k.data, rows=slice(32, 33)), row)  # done before synchronize()

        dev._last[k.data] = Future()  # an operation running on the key
        row2 = torch.randn(1, 48, 64)
        dev.submit_copy(k, (slice(33, 34), slice(0, 48)), pb.TorchTensor(row2.shape, row2.dtype, row2, cpu), None)
        assert store.writes[2:] == ["async"]
        dev.synchronize()
        assert torch.equal(store.read_tensor(k.data, rows=slice(33, 34)), row2)

        bad = torch.randn(1, 47, 64)  # does not fit the cache's rows
        dev.submit_copy(k, (slice(34, 35), slice(0, 48)), pb.TorchTensor(bad.shape, bad.dtype, bad, cpu), None)
        with pytest.raises(RuntimeError, match="size"):
            dev.synchronize()
        dev.synchronize()  # the error was raised once
    finally:
        dev.close()
        store.close()


def test_cache_row_copies_match_torch_on_every_index_form():
    """Appends and reads through the row fast path and the general path
    (partial trailing slices, gathered rows, a dtype to convert, a
    non-contiguous source) give what the same copies give on a torch tensor."""
    cpu = pb.TorchDevice("cpu")
    dev = gtf.GoTensorDevice("mem://", codec="none")
    try:
        k = dev.allocate((20, 6, 4), np.float32)
        dev._mark_appended(k.data)
        ref = torch.zeros(20, 6, 4)
        g = torch.Generator().manual_seed(5)

        def put(idx, src):
            ref[idx] = src.to(ref.dtype)
            dev.submit_copy(k, idx, pb.TorchTensor(src.shape, src.dtype, src, cpu), None)

        put((slice(0, 8), slice(0, 6)), torch.randn(8, 6, 4, generator=g))
        put((slice(8, 9), slice(0, 6)), torch.randn(1, 6, 4, generator=g))
        put((slice(9, 10),), torch.randn(1, 6, 4, generator=g))
        put((slice(10, 11), slice(0, 3)), torch.randn(1, 3, 4, generator=g))  # part of the heads
        put((slice(11, 12), slice(0, 6)), torch.randn(1, 6, 4, generator=g, dtype=torch.float64))
        put((slice(12, 14), slice(0, 6)), torch.randn(6, 2, 4, generator=g).transpose(0, 1))  # non-contiguous
        put((slice(14, 15), slice(0, 6), slice(1, 3)), torch.randn(1, 6, 2, generator=g))
        dev.synchronize()
        for idx in [(slice(0, 15), slice(0, 6)), (slice(3, 9), slice(0, 6), slice(0, 4)), (slice(0, 12), slice(2, 5)),
                    (slice(None), slice(None))]:
            want = ref[idx]
            out = torch.empty(want.shape)
            dev.submit_copy(pb.TorchTensor(out.shape, out.dtype, out, cpu), None, k, idx)
            dev.synchronize()
            assert torch.equal(out, want), idx
    finally:
        dev.close()


def test_tiny_runs_offline_beside_torch_disk(tmp_path):
    """`python -m gotensor.flexgen --tiny` needs nothing downloaded (the hub is off) and prints both
    runs' times and tokens, which agree; --help says how."""
    import os
    import subprocess
    import sys
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HF_HOME=str(tmp_path / "hf"))
    out = subprocess.run([sys.executable, "-m", "gotensor.flexgen", "--tiny", "--offload-url", f"file://{tmp_path}/s"],
                         capture_output=True, text=True, timeout=600, env=env, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "FlexGen's TorchDisk" in out.stdout and "gotensor file://" in out.stdout
    assert "tokens identical: yes" in out.stdout
    assert not os.path.exists(tmp_path / "hf")  # nothing fetched, nothing cached
    help = subprocess.run([sys.executable, "-m", "gotensor.flexgen", "--help"], capture_output=True, text=True,
                          timeout=120)
    assert help.returncode == 0 and "--tiny" in help.stdout and "offline" in help.stdout
