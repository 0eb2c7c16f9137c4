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
