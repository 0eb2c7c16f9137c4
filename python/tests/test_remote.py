"""tcp:// stores against a real `gotensor serve` process on loopback."""

import os
import socket
import subprocess
import sys
import time

import pytest
import torch

import gotensor


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Node:
    def __init__(self, *args):
        self.port = free_port()
        self.url = f"tcp://127.0.0.1:{self.port}"
        self.p = subprocess.Popen([sys.executable, "-m", "gotensor", "serve", "--listen", f"127.0.0.1:{self.port}", *args],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.p.stdout.readline()
        assert "listening" in line, (line, self.p.stderr.read() if self.p.poll() is not None else "")

    def stop(self):
        self.p.terminate()
        self.p.wait(timeout=20)


@pytest.fixture
def node():
    n = Node("--capacity", "64MiB")
    yield n
    n.stop()


def test_round_trip_codecs_and_async(node):
    with gotensor.open(node.url) as s:
        t = (torch.randn(300, 500) * 0.02).to(torch.bfloat16)
        for codec in ("none", "planes", "q4", "auto"):
            s.write_tensor(f"t/{codec}", t, codec=codec)
            r = s.read_tensor(f"t/{codec}")
            assert r.dtype == t.dtype and r.shape == t.shape
            if codec != "q4":
                assert torch.equal(r.view(torch.int16), t.view(torch.int16))
        futs = [s.write_tensor_async(f"a/{i}", torch.full((1000,), float(i))) for i in range(32)]
        [f.result(timeout=60) for f in futs]
        out = torch.empty(1000)
        s.read_tensor_async("a/7", out=out).result(timeout=60)
        assert torch.equal(out, torch.full((1000,), 7.0))
        assert len(s.keys("a/")) == 32 and s.stat("t/planes")["codec"] == "planes"
        s.delete("a/0")
        assert not s.exists("a/0")
        with pytest.raises(gotensor.KeyNotFound):
            s.read_tensor("a/0")


def test_capacity_is_store_full(node):
    with gotensor.open(node.url) as s:
        s.write_tensor("small", torch.zeros(1000))
        with pytest.raises(gotensor.StoreFull):
            s.write_tensor("huge", torch.zeros(20 << 20))  # 80 MB > 64 MiB
        assert s.keys() == ["small"]


def test_token(tmp_path):
    tok = tmp_path / "token"
    tok.write_text("s3cret\n")
    n = Node("--token-file", str(tok))
    try:
        with pytest.raises(gotensor.Unauthorized, match="requires a token"):
            gotensor.open(n.url)
        with pytest.raises(gotensor.Unauthorized, match="refused"):
            gotensor.open(n.url, token="wrong")
        with gotensor.open(n.url, token="s3cret") as s:
            s.write_tensor("k", torch.ones(3))
            assert "s3cret" not in repr(s)
        env = dict(os.environ, GOTENSOR_TOKEN="s3cret")
        r = subprocess.run([sys.executable, "-c", f"import gotensor; print(gotensor.open('{n.url}').keys())"],
                           capture_output=True, text=True, env=env, timeout=60)
        assert "['k']" in r.stdout, r.stderr
    finally:
        n.stop()


def test_refuses_public_address_without_token():
    r = subprocess.run([sys.executable, "-m", "gotensor", "serve", "--listen", f"0.0.0.0:{free_port()}"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and "non-loopback" in r.stderr and "Traceback" not in r.stderr


def test_dead_server_then_restart_with_dir(tmp_path):
    n = Node("--dir", str(tmp_path / "node"))
    s = gotensor.open(n.url + "?timeout=5s")
    s.write_tensor("kept", torch.arange(10))
    n.p.kill()
    n.p.wait()
    with pytest.raises(gotensor.Unavailable):
        s.read_tensor("kept")
    # a new node on the same port serves what the old one persisted; the client reconnects
    n2 = subprocess.Popen([sys.executable, "-m", "gotensor", "serve", "--listen", f"127.0.0.1:{n.port}",
                           "--dir", str(tmp_path / "node")], stdout=subprocess.PIPE, text=True)
    try:
        assert "listening" in n2.stdout.readline()
        assert torch.equal(s.read_tensor("kept"), torch.arange(10))
    finally:
        s.close()
        n2.terminate()
        n2.wait(timeout=20)


def test_unreachable_server_is_unavailable():
    with pytest.raises(gotensor.Unavailable, match="cannot reach"):
        gotensor.open(f"tcp://127.0.0.1:{free_port()}")
    with pytest.raises(gotensor.InvalidArgument):
        gotensor.open("tcp://127.0.0.1:1?timeout=soon")
