"""tcp:// and ucx:// stores against a real `gotensor serve` process on loopback.

UCX runs here over its TCP transport and over shared memory (UCX_TLS=sm,tcp:
tcp only sets the connection up); on InfiniBand/RoCE the same code runs RDMA.
"""

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


UCX = "ucx" in gotensor.info()["transports"]
needs_ucx = pytest.mark.skipif(not UCX, reason="built without UCX (libucx-dev absent)")
# transport name -> (gotensor serve --transport, UCX_TLS)
TRANSPORTS = {"tcp": ("tcp", None), "ucx-tcp": ("ucx", "tcp"), "ucx-sm": ("ucx", "sm,tcp")}
ALL = [pytest.param(t, marks=needs_ucx if t != "tcp" else ()) for t in TRANSPORTS]


class Node:
    def __init__(self, *args, transport="tcp", port=None):
        self.transport = transport
        kind, tls = TRANSPORTS[transport]
        self.port = port or free_port()
        env = dict(os.environ, UCX_TLS=tls) if tls else None
        self.p = subprocess.Popen([sys.executable, "-m", "gotensor", "serve", "--listen", f"127.0.0.1:{self.port}",
                                   "--transport", kind, *args],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        line = self.p.stdout.readline()
        assert "listening" in line, (line, self.p.stderr.read() if self.p.poll() is not None else "")
        self.url = self.url_with()

    def url_with(self, **query) -> str:
        kind, tls = TRANSPORTS[self.transport]
        if tls:
            query["transports"] = tls
        q = "&".join(f"{k}={v}" for k, v in query.items())
        return f"{kind}://127.0.0.1:{self.port}" + ("?" + q if q else "")

    def stop(self):
        self.p.terminate()
        self.p.wait(timeout=20)


@pytest.fixture(params=ALL)
def node(request):
    n = Node("--capacity", "64MiB", transport=request.param)
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
        assert len(s) == 36
        s.delete("a/0", timeout=30)
        assert not s.exists("a/0", timeout=30) and len(s) == 35
        with pytest.raises(gotensor.KeyNotFound):
            s.read_tensor("a/0")


def test_capacity_is_store_full(node):
    with gotensor.open(node.url) as s:
        s.write_tensor("small", torch.zeros(1000))
        with pytest.raises(gotensor.StoreFull):
            s.write_tensor("huge", torch.zeros(20 << 20))  # 80 MB > 64 MiB
        assert s.keys() == ["small"]


@pytest.mark.parametrize("transport", ALL)
def test_token(tmp_path, transport):
    tok = tmp_path / "token"
    tok.write_text("s3cret\n")
    n = Node("--token-file", str(tok), transport=transport)
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


# shared memory has no peer failure detection in UCX: a dead node is a Timeout there, tested in Go
@pytest.mark.parametrize("transport", ALL[:2])
def test_dead_server_then_restart_with_dir(tmp_path, transport):
    n = Node("--dir", str(tmp_path / "node"), transport=transport)
    s = gotensor.open(n.url_with(timeout="5s"))
    s.write_tensor("kept", torch.arange(10))
    n.p.kill()
    n.p.wait()
    with pytest.raises(gotensor.Unavailable):
        s.read_tensor("kept")
    # a new node on the same port serves what the old one persisted; the client reconnects
    n2 = Node("--dir", str(tmp_path / "node"), transport=transport, port=n.port)
    try:
        assert torch.equal(s.read_tensor("kept"), torch.arange(10))
    finally:
        s.close()
        n2.stop()


@pytest.mark.parametrize("scheme", [pytest.param("tcp"), pytest.param("ucx", marks=needs_ucx)])
def test_unreachable_server_is_unavailable(scheme):
    with pytest.raises(gotensor.Unavailable, match="cannot reach"):
        gotensor.open(f"{scheme}://127.0.0.1:{free_port()}")
    with pytest.raises(gotensor.InvalidArgument):
        gotensor.open("tcp://127.0.0.1:1?timeout=soon")


def test_ucx_one_sided_path_moves_large_tensors():
    if not UCX:
        pytest.skip("built without UCX")
    n = Node(transport="ucx-sm")
    try:
        t = torch.randn(1 << 20)  # 4 MiB: written and read with put/get on registered memory
        with gotensor.open(n.url_with(rma="1MiB")) as s:
            s.write_tensor("big", t, codec="none")
            s.write_tensor("small", torch.ones(5))
            assert torch.equal(s.read_tensor("big"), t)
            out = torch.empty_like(t)
            s.read_tensor("big", out=out)
            assert torch.equal(out, t) and torch.equal(s.read_tensor("small"), torch.ones(5))
        with gotensor.open(n.url) as s:  # the same frames through active messages
            assert torch.equal(s.read_tensor("big"), t)
    finally:
        n.stop()


def test_built_without_ucx_says_how_to_get_it():
    if UCX:
        pytest.skip("this build has UCX")
    with pytest.raises(gotensor.Unsupported, match="libucx"):
        gotensor.open("ucx://127.0.0.1:7707")


def test_sharded_nodes_fan_out_many_readers():
    """The MoE case: one writer publishes expert weights over three nodes,
    several readers fetch them concurrently."""
    import threading
    nodes = [Node() for _ in range(3)]
    try:
        url = "tcp://" + ",".join(f"127.0.0.1:{n.port}" for n in nodes)
        experts = {f"layer.3/expert.{i}": (torch.randn(64, 128) * 0.02).to(torch.bfloat16) for i in range(24)}
        with gotensor.open(url) as w:
            w.write_tensors(experts, codec="planes")
            assert sorted(w.keys("layer.3/")) == sorted(experts) and len(w) == 24  # summed over the nodes
        per_node = [len(gotensor.open(n.url).keys()) for n in nodes]
        assert sum(per_node) == 24 and all(c > 0 for c in per_node), per_node
        results, errs = [], []

        def reader():
            try:
                with gotensor.open("tcp://" + ",".join(reversed(url[6:].split(",")))) as r:  # any node order
                    results.append(r.read_tensors(list(experts)))
            except Exception as e:  # noqa: BLE001
                errs.append(e)
        ts = [threading.Thread(target=reader) for _ in range(4)]
        [t.start() for t in ts]
        [t.join(120) for t in ts]
        assert not errs and len(results) == 4
        for got in results:
            assert list(got) == list(experts)
            for k, t in experts.items():
                assert torch.equal(got[k].view(torch.int16), t.view(torch.int16))
        # a dead node fails only the keys it holds, with a typed error
        nodes[0].stop()
        alive = set(gotensor.open(nodes[1].url).keys()) | set(gotensor.open(nodes[2].url).keys())
        with gotensor.open(url + "?timeout=5s") as r:
            kept = [k for k in experts if k in alive]
            got = r.read_tensors(kept)
            assert all(torch.equal(got[k].view(torch.int16), experts[k].view(torch.int16)) for k in kept)
            with pytest.raises(gotensor.Unavailable):
                r.read_tensors(list(experts))
    finally:
        for n in nodes:
            if n.p.poll() is None:
                n.stop()


def test_tls_node(tmp_path):
    import shutil
    if not shutil.which("openssl"):
        pytest.skip("no openssl to make a certificate")
    cert, key = tmp_path / "node.pem", tmp_path / "node.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=gotensor",
                    "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
    n = Node("--tls-cert", str(cert), "--tls-key", str(key))
    try:
        with gotensor.open(n.url_with(ca=str(cert))) as s:
            s.write_tensor("k", torch.arange(5))
            assert torch.equal(s.read_tensor("k"), torch.arange(5))
        with pytest.raises(gotensor.Unauthorized, match="TLS"):
            gotensor.open(n.url_with(tls=1))  # not signed by a trusted authority
    finally:
        n.stop()
