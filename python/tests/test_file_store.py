"""Directory store: persistence, reopen, and atomic writes under kill -9."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import torch

import gotensor


def test_reopen_lists_what_is_there(tmp_path):
    url = f"file://{tmp_path}/s"
    keys = ["layer.0/attn.q", "layer.0/attn.k", "emb ☃", "x" * 600]
    with gotensor.open(url) as s:
        for i, k in enumerate(keys):
            s.write_tensor(k, torch.full((3,), float(i)))
    with gotensor.open(url) as s:
        assert s.keys() == sorted(keys)
        assert s.keys("layer.0/") == ["layer.0/attn.k", "layer.0/attn.q"]
        for i, k in enumerate(keys):
            assert torch.equal(s.read_tensor(k), torch.full((3,), float(i)))
        assert s.usage()["keys"] == 4


KILLER = textwrap.dedent("""
    import sys, torch, gotensor
    s = gotensor.open(sys.argv[1])
    s.write_tensor("k", torch.full((1024,), 1.0))
    print("ready", flush=True)
    big = torch.full((8 << 20,), 2.0)   # 32 MiB: slow enough to be killed mid-write
    while True:
        s.write_tensor("k", big)
        s.write_tensor("k", torch.full((1024,), 1.0))
""")


def test_kill_mid_write_never_leaves_a_torn_tensor(tmp_path):
    url = f"file://{tmp_path}/s"
    for delay in (0.05, 0.2, 0.4):
        p = subprocess.Popen([sys.executable, "-c", KILLER, url], stdout=subprocess.PIPE, text=True)
        assert p.stdout.readline().strip() == "ready"
        time.sleep(delay)
        p.send_signal(signal.SIGKILL)
        p.wait()
        with gotensor.open(url) as s:  # the lock died with the process
            assert s.keys() == ["k"]
            t = s.read_tensor("k")
            assert (t.shape == (1024,) and bool((t == 1.0).all())) or \
                   (t.shape == (8 << 20,) and bool((t == 2.0).all()))
        leftovers = [f for f in os.listdir(tmp_path / "s") if f.startswith(".tmp-")]
        assert leftovers == []


APPENDER = textwrap.dedent("""
    import sys, torch, gotensor
    s = gotensor.open(sys.argv[1])
    rows = torch.randn(64, 48, 64, generator=torch.Generator().manual_seed(0))
    s.write_tensor("kv", torch.zeros(64, 48, 64), codec="planes", chunk_rows=1)
    print("ready", flush=True)
    while True:  # a coded KV cache's appends: each row's chunk grows over the zero row it replaces
        for i in range(64):
            s.write_tensor("kv", rows[i:i + 1].contiguous(), rows=slice(i, i + 1))
        s.write_tensor("kv", torch.zeros(64, 48, 64), codec="planes", chunk_rows=1)
""")


def test_kill_mid_append_of_coded_rows_keeps_every_row(tmp_path):
    """Appends that lengthen the frame are edited in place (the tail moved along through the journal):
    killed at any point, the reopened store reads the cache whole, each row the zero row or its new one."""
    rows = torch.randn(64, 48, 64, generator=torch.Generator().manual_seed(0))
    for i, delay in enumerate((0.03, 0.11, 0.23, 0.37, 0.05, 0.19)):
        url = f"file://{tmp_path}/s" + ("?fsync=false" if i % 2 else "")
        p = subprocess.Popen([sys.executable, "-c", APPENDER, url], stdout=subprocess.PIPE, text=True)
        assert p.stdout.readline().strip() == "ready"
        time.sleep(delay)
        p.send_signal(signal.SIGKILL)
        p.wait()
        with gotensor.open(url) as s:
            t = s.read_tensor("kv")  # no CorruptData: the frame is whole
            for r in range(64):
                assert bool((t[r] == 0).all()) or torch.equal(t[r], rows[r]), f"row {r} after a kill at {delay} s"
