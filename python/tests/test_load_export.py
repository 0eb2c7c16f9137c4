"""`gotensor load`, `export`, `ls`, `stat`, `get`, `rm` and Store.save_safetensors."""

import subprocess
import sys

import numpy as np
import pytest
import torch
from safetensors import safe_open
from safetensors.torch import save_file

import gotensor
from gotensor.load import load


def _gotensor(*args):
    return subprocess.run([sys.executable, "-m", "gotensor", *args], capture_output=True, text=True, timeout=120)


@pytest.fixture
def model(tmp_path):
    tensors = {"w": torch.randn(64, 64), "h": torch.randn(300).half(), "ids": torch.arange(100)}
    path = tmp_path / "m.safetensors"
    save_file(tensors, str(path))
    return path, tensors


@pytest.fixture
def node(tmp_path):
    (tmp_path / "token").write_text("s3cret-token\n")
    p = subprocess.Popen([sys.executable, "-m", "gotensor", "serve", "--listen", "127.0.0.1:0",
                          "--token-file", str(tmp_path / "token")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    line = p.stdout.readline()
    assert "listening on " in line, p.stderr.read()
    yield line.split("listening on ")[1].split()[0], tmp_path / "token"
    p.terminate()
    p.wait(timeout=20)


def test_load_safetensors_with_the_library_and_no_warning(tmp_path, model):
    path, tensors = model
    url = f"file://{tmp_path}/s"
    # -W error: torch's "non-writable array" warning (a memory-mapped file) would fail the load
    r = subprocess.run([sys.executable, "-W", "error", "-m", "gotensor", "load", str(path), "--to", url,
                        "--prefix", "m/"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "loaded 3 tensors" in r.stdout and "Warning" not in r.stderr
    with gotensor.open(url) as s:
        for name, t in tensors.items():
            assert torch.equal(s.read_tensor("m/" + name), t)


def test_progress_draws_nothing_into_a_log(tmp_path, model):
    # stderr is a pipe here; bytes, as text mode would turn a redraw's \r into \n
    r = subprocess.run([sys.executable, "-m", "gotensor", "load", str(model[0]), "--to", f"file://{tmp_path}/s"],
                       capture_output=True, timeout=120)
    assert r.returncode == 0 and b"\r" not in r.stderr and b"tensors" not in r.stderr, r.stderr


@pytest.mark.parametrize("make", ["empty", "not-a-model"])
def test_load_of_a_non_model_directory_fails(tmp_path, make):
    d = tmp_path / "d"
    d.mkdir()
    if make == "not-a-model":
        (d / "README.txt").write_text("hello")
    r = _gotensor("load", str(d), "--to", f"file://{tmp_path}/s")
    assert r.returncode == 2 and "InvalidArgument" in r.stderr and "-np directory" in r.stderr, r.stderr
    assert "loaded" not in r.stdout


@pytest.mark.parametrize("content", [b"\x10\x00\x00\x00\x00\x00\x00\x00{\"a\":", b"abc", b""])
def test_load_of_a_corrupt_file_is_corrupt_data(tmp_path, content):
    f = tmp_path / "bad.safetensors"
    f.write_bytes(content)
    r = _gotensor("load", str(f), "--to", f"file://{tmp_path}/s")
    assert r.returncode == 4 and "CorruptData" in r.stderr and "Traceback" not in r.stderr, r.stderr
    with pytest.raises(gotensor.CorruptData):
        load(str(f), "mem://", progress=False)


def test_load_of_a_corrupt_npy_is_corrupt_data(tmp_path):
    d = tmp_path / "m-np"
    d.mkdir()
    np.save(d / "w", np.arange(1000.0))
    (d / "w.npy").write_bytes((d / "w.npy").read_bytes()[:200])  # truncated
    r = _gotensor("load", str(d), "--to", f"file://{tmp_path}/s")
    assert r.returncode == 4 and "CorruptData" in r.stderr and "w.npy" in r.stderr, r.stderr


def test_load_codec_falls_back_per_tensor_and_says_so(tmp_path, model):
    url = f"file://{tmp_path}/s"
    r = _gotensor("load", str(model[0]), "--to", url, "--codec", "planes")
    assert r.returncode == 0, r.stderr
    assert "ids" in r.stderr and "int64" in r.stderr and "auto" in r.stderr
    with gotensor.open(url) as s:
        assert s.stat("w")["codec"] == "planes" and s.stat("h")["codec"] == "planes"
        assert s.stat("ids")["codec"] != "planes"
        assert torch.equal(s.read_tensor("ids"), model[1]["ids"])


def test_load_unknown_codec_still_fails(tmp_path, model):
    r = _gotensor("load", str(model[0]), "--to", f"file://{tmp_path}/s", "--codec", "nope")
    assert r.returncode == 2 and "unknown codec" in r.stderr


def test_load_dtype_bfloat16_converts_floats_only(tmp_path, model):
    url = f"file://{tmp_path}/s"
    r = _gotensor("load", str(model[0]), "--to", url, "--dtype", "bfloat16")
    assert r.returncode == 0, r.stderr
    with gotensor.open(url) as s:
        assert s.stat("w")["dtype"] == "bfloat16" and s.stat("h")["dtype"] == "bfloat16"
        assert s.stat("ids")["dtype"] == "int64"
        assert torch.equal(s.read_tensor("w"), model[1]["w"].to(torch.bfloat16))


def test_load_into_mem_warns(model):
    r = _gotensor("load", str(model[0]), "--to", "mem://")
    assert r.returncode == 0 and "warning" in r.stderr and "mem://" in r.stderr


def test_load_never_prints_the_token(node, model):
    url, token_file = node
    r = _gotensor("load", str(model[0]), "--to", f"{url}?token=s3cret-token")
    assert r.returncode == 0, r.stderr
    assert "s3cret" not in r.stdout + r.stderr and "loaded 3" in r.stdout
    r = _gotensor("load", str(model[0]), "--to", url, "--token-file", str(token_file), "--prefix", "b/")
    assert r.returncode == 0 and "s3cret" not in r.stdout + r.stderr, r.stderr
    with gotensor.open(url, token="s3cret-token") as s:
        assert len(s.keys("b/")) == 3
    r = _gotensor("ls", url, "b/", "--token-file", str(token_file))
    assert r.stdout.split() == ["b/h", "b/ids", "b/w"], r.stderr


def test_export_then_load_round_trips(tmp_path, model):
    path, tensors = model
    src = f"file://{tmp_path}/src"
    with gotensor.open(src) as s:
        for name, t in tensors.items():
            s.write_tensor("p/" + name, t, codec="auto")
        s.write_tensor("other", torch.zeros(3))
    out = tmp_path / "out.safetensors"
    r = _gotensor("export", src, "--to", str(out), "--prefix", "p/")
    assert r.returncode == 0 and "exported 3 tensors" in r.stdout, r.stderr
    with safe_open(str(out), framework="pt") as f:
        assert sorted(f.keys()) == sorted(tensors)
        for name, t in tensors.items():
            assert torch.equal(f.get_tensor(name), t)
    r = _gotensor("load", str(out), "--to", f"file://{tmp_path}/back", "--prefix", "p/")
    assert r.returncode == 0, r.stderr
    with gotensor.open(f"file://{tmp_path}/back") as s:
        assert sorted(s.keys()) == sorted("p/" + n for n in tensors)


def test_export_of_nothing_fails(tmp_path):
    with gotensor.open(f"file://{tmp_path}/empty"):
        pass
    r = _gotensor("export", f"file://{tmp_path}/empty", "--to", str(tmp_path / "x.safetensors"), "--prefix", "no/")
    assert r.returncode == 2 and "nothing to export" in r.stderr
    assert not (tmp_path / "x.safetensors").exists()


def test_store_save_safetensors(tmp_path):
    with gotensor.open("mem://") as s:
        s.write_tensor("a", torch.randn(4, 5).to(torch.bfloat16))
        s.write_tensor("b", torch.arange(7))
        s.write_tensor("c", torch.ones(2))
        assert s.save_safetensors(tmp_path / "all.safetensors") == {"tensors": 3, "raw_bytes": 40 + 56 + 8}
        s.save_safetensors(str(tmp_path / "ab.safetensors"), keys=["a", "b"])
        with safe_open(str(tmp_path / "ab.safetensors"), framework="pt") as f:
            assert sorted(f.keys()) == ["a", "b"]
            assert torch.equal(f.get_tensor("a"), s.read_tensor("a"))
        with pytest.raises(gotensor.KeyNotFound):
            s.save_safetensors(tmp_path / "x.safetensors", keys=["missing"])
        assert not (tmp_path / "x.safetensors").exists()


def test_ls_stat_get_rm(tmp_path):
    url = f"file://{tmp_path}/s"
    with gotensor.open(url) as s:
        s.write_tensor("x/a", torch.arange(6).reshape(2, 3))
        s.write_tensor("x/b", torch.ones(4), codec="planes")
        s.write_tensor("y", torch.zeros(1))
    assert _gotensor("ls", url).stdout.split() == ["x/a", "x/b", "y"]
    assert _gotensor("ls", url, "x/").stdout.split() == ["x/a", "x/b"]
    head, *long = _gotensor("ls", "-l", url, "x/").stdout.splitlines()
    assert head.split()[0] == "DTYPE" and "int64" in long[0] and "[2,3]" in long[0] and "planes" in long[1]
    import json
    st = json.loads(_gotensor("stat", url, "x/a", "--json").stdout)
    assert st["dtype"] == "int64" and st["shape"] == [2, 3] and st["raw_bytes"] == 48
    assert json.loads(_gotensor("stat", url, "--json").stdout)["usage"]["keys"] == 3
    assert "[3, 4, 5]" in _gotensor("get", url, "x/a").stdout
    r = _gotensor("get", url, "x/a", "--out", str(tmp_path / "a.npy"))
    assert r.returncode == 0, r.stderr
    assert np.array_equal(np.load(tmp_path / "a.npy"), np.arange(6).reshape(2, 3))
    assert _gotensor("rm", url, "x/a", "y").returncode == 0
    assert _gotensor("ls", url).stdout.split() == ["x/b"]
    r = _gotensor("get", url, "x/a")
    assert r.returncode == 3 and "KeyNotFound" in r.stderr and "Traceback" not in r.stderr


def test_errors_never_print_the_token(model, tmp_path):
    # the core's message echoes the URL it could not open; the command hides the secret in it
    r = _gotensor("load", str(model[0]), "--to", "bogus://x?token=SEKRIT")
    assert r.returncode == 2 and "unknown store scheme" in r.stderr and "SEKRIT" not in r.stderr, r.stderr
    (tmp_path / "tok").write_text("FILESECRET")
    r = _gotensor("ls", "bogus://y?token=FILESECRET", "--token-file", str(tmp_path / "tok"))
    assert r.returncode == 2 and "FILESECRET" not in r.stdout + r.stderr, r.stderr
