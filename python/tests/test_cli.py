import json
import os
import shutil
import subprocess
import sys

import pytest
import torch

import gotensor


def test_info_json_on_path():
    exe = shutil.which("gotensor")
    assert exe, "pip install . puts the gotensor command on PATH"
    r = subprocess.run([exe, "info", "--json"], capture_output=True, text=True, check=True)
    data = json.loads(r.stdout)
    assert data["version"] == gotensor.__version__
    assert data["go_version"].startswith("go")
    assert "none" in data["codecs"] and {"mem", "file"} <= set(data["stores"])


def test_info_human_and_module_entry_point():
    r = subprocess.run([sys.executable, "-m", "gotensor", "info"], capture_output=True, text=True, check=True)
    assert "gotensor" in r.stdout and "codecs" in r.stdout


def test_info_python_api():
    d = gotensor.info()
    assert d["cpus"] >= 1 and "bfloat16" in d["dtypes"]


def test_info_reports_hardware_and_exits_zero_without_gpu():
    r = subprocess.run([sys.executable, "-m", "gotensor", "info", "--json"], capture_output=True, text=True, check=True)
    hw = json.loads(r.stdout)["hardware"]
    assert hw["cpus"] >= 1 and isinstance(hw["gpus"], list)
    if not hw["gpus"]:
        assert hw["gpu_status"] and hw["gpu_status"] != "ok" and hw["gpu_affinity"] is False
    assert {"available"} <= set(hw["ucx"]) and {"built"} <= set(hw["doca"])
    human = subprocess.run([sys.executable, "-m", "gotensor", "info"], capture_output=True, text=True, check=True).stdout
    for word in ("GPU", "NUMA", "RDMA", "UCX", "DOCA"):
        assert word in human


def test_gpu_affinity_stays_off_without_gpu():
    if gotensor.info()["hardware"]["gpus"]:
        pytest.skip("a GPU is present")
    assert gotensor.set_gpu_affinity(True) is False


def _gotensor(*args, **kw):
    return subprocess.run([sys.executable, "-m", "gotensor", *args], capture_output=True, text=True, timeout=120, **kw)


def _imported(stderr: str) -> set[str]:
    """Top-level modules a `python -X importtime` run imported."""
    return {line.rsplit("|", 1)[-1].strip().split(".")[0] for line in stderr.splitlines() if line.startswith("import time:")}


def test_import_gotensor_loads_neither_torch_nor_the_core():
    code = "import sys, gotensor; print(sorted(m for m in ('torch', 'numpy', 'gotensor._native') if m in sys.modules))"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "[]", r.stdout


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["serve", "--help"]])
def test_help_and_version_do_not_import_torch(args):
    r = subprocess.run([sys.executable, "-X", "importtime", "-m", "gotensor", *args], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "torch" not in _imported(r.stderr)
    if args == ["--version"]:
        assert r.stdout.strip() == f"gotensor {gotensor.__version__}"


def test_serve_help_is_the_nodes_own_with_its_defaults():
    r = _gotensor("serve", "--help")
    assert r.returncode == 0, r.stderr
    out = " ".join(r.stderr.split())  # Go's flag package writes usage to stderr
    assert out.startswith("usage: gotensor serve [flags]"), out
    assert '(default "127.0.0.1:7707")' in out and '(default "tcp")' in out and '(default "0")' in out
    assert "-metrics string" in out and "-pprof string" in out  # every flag of the node is listed
    assert "serve" in _gotensor("--help").stdout  # still listed among the commands


def test_serve_execs_the_go_node_without_torch_and_it_answers(tmp_path):
    import torch
    log = tmp_path / "stderr"  # a file: -X importtime's lines must not fill a pipe nobody reads
    with open(log, "w") as err:
        p = subprocess.Popen([sys.executable, "-X", "importtime", "-m", "gotensor", "serve", "--listen", "127.0.0.1:0",
                              "--capacity", "16MiB"], stdout=subprocess.PIPE, stderr=err, text=True)
    try:
        line = p.stdout.readline()
        assert "listening on " in line, (line, log.read_text()[-2000:])
        assert "torch" not in _imported(log.read_text())
        exe = os.readlink(f"/proc/{p.pid}/exe")
        assert os.path.basename(exe) == "gotensor-serve", exe  # the Python process became the Go node
        with gotensor.open(line.split("listening on ")[1].split()[0]) as s:
            s.write_tensor("k", torch.arange(1000))
            assert torch.equal(s.read_tensor("k"), torch.arange(1000))
        with open(f"/proc/{p.pid}/status") as f:
            rss_mb = next(int(x.split()[1]) for x in f if x.startswith("VmRSS:")) / 1024
        assert rss_mb < 60, rss_mb
    finally:
        p.terminate()
        p.wait(timeout=20)
    assert p.returncode == 0  # SIGTERM: a clean shutdown


def test_gotensor_serve_node_is_on_path():
    exe = shutil.which("gotensor-serve")
    assert exe, "pip install . puts the Go node on PATH"
    r = subprocess.run([exe, "-h"], capture_output=True, text=True)
    assert "usage: gotensor-serve [flags]" in r.stderr and "-capacity" in r.stderr


def test_info_into_a_closed_pipe_exits_cleanly():
    # `gotensor info | head -1`: the reader is gone before gotensor writes
    p = subprocess.Popen([sys.executable, "-m", "gotensor", "info"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.close()
    err = p.stderr.read().decode()
    assert p.wait(timeout=60) == 0 and "Traceback" not in err and "BrokenPipe" not in err, err


def test_errors_name_their_class_once():
    with pytest.raises(gotensor.InvalidArgument) as e:
        gotensor.open("mem://x?capacity=abc")
    assert not str(e.value).startswith("InvalidArgument"), str(e.value)
    r = _gotensor("ls", "mem://x?capacity=abc")
    assert r.returncode == 2 and r.stderr.count("InvalidArgument") == 1 and "Traceback" not in r.stderr, r.stderr


def test_async_errors_name_their_class_once():
    with gotensor.open("mem://") as s:
        with pytest.raises(gotensor.KeyNotFound) as e:
            s.read_tensor_async("missing").result(timeout=30)
    assert not str(e.value).startswith("KeyNotFound"), str(e.value)


def test_serve_hands_its_arguments_to_the_node_which_parses_them():
    r = _gotensor("serve", "--lisen", "127.0.0.1:0")  # misspelt: the node's own usage, no traceback
    assert r.returncode == 2 and "flag provided but not defined: -lisen" in r.stderr, r.stderr
    assert "usage: gotensor serve [flags]" in r.stderr and "-listen string" in r.stderr
    assert "Traceback" not in r.stderr and "usage: gotensor [-h]" not in r.stderr  # not argparse's
    r = _gotensor("serve", "--capacity", "lots", "--listen", "127.0.0.1:0")
    assert r.returncode == 2 and r.stderr.startswith("gotensor-serve:") and "Traceback" not in r.stderr, r.stderr
    r = _gotensor("ls", "mem://", "--no-such-flag")
    assert r.returncode == 2 and "unrecognized arguments" in r.stderr


def _gt(*args, **kw):
    return subprocess.run([sys.executable, "-m", "gotensor", *args], capture_output=True, text=True, timeout=300, **kw)


def test_read_only_commands_create_nothing_and_read_beside_the_owner(tmp_path):
    missing = tmp_path / "missing"
    for cmd in (["ls"], ["stat"], ["get"]):
        r = _gt(*cmd, f"file://{missing}", *(["k"] if cmd == ["get"] else []))
        assert r.returncode != 0 and "Traceback" not in r.stderr
        assert not missing.exists(), cmd
    with gotensor.open(f"file://{tmp_path}/owned") as owner:  # holds the directory's lock
        owner.write_tensor("w", torch.arange(6.0).reshape(2, 3))
        before = sorted(os.listdir(tmp_path / "owned"))
        r = _gt("ls", "-l", f"file://{tmp_path}/owned")
        assert r.returncode == 0, r.stderr
        head, row = r.stdout.splitlines()
        assert head.split()[:3] == ["DTYPE", "SHAPE", "RAW"] and "24 B" in row and row.endswith("w")
        r = _gt("get", f"file://{tmp_path}/owned", "w")
        assert r.returncode == 0 and "tensor" in r.stdout, r.stderr
        r = _gt("stat", f"file://{tmp_path}/owned")
        assert r.returncode == 0 and "keys:" in r.stdout and "stats" not in r.stdout, r
        assert sorted(os.listdir(tmp_path / "owned")) == before


def test_no_traceback_and_an_exit_code_per_kind(tmp_path):
    with gotensor.open(f"file://{tmp_path}/s") as s:
        s.write_tensor("a", torch.zeros(3))
    r = _gt("export", f"file://{tmp_path}/s", "--to", "/nonexistent/x.safetensors")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.startswith("gotensor: InvalidArgument: ") and len(r.stderr.splitlines()) == 1, r.stderr
    r = _gt("get", f"file://{tmp_path}/s", "nope")
    assert r.returncode == 3 and r.stderr.startswith("gotensor: KeyNotFound: "), r.stderr


def test_put_rm_prefix_and_get_of_bfloat16(tmp_path):
    import numpy as np
    from safetensors.torch import load_file, save_file
    url = f"file://{tmp_path}/s"
    np.save(tmp_path / "a.npy", np.arange(5, dtype=np.float32))
    save_file({"x": torch.ones(2, dtype=torch.bfloat16), "y": torch.zeros(3)}, tmp_path / "two.safetensors")
    torch.save(torch.full((4,), 7.0), tmp_path / "t.pt")
    for key, f in (("a", "a.npy"), ("m", "two.safetensors"), ("t", "t.pt")):
        r = _gt("put", url, key, str(tmp_path / f))
        assert r.returncode == 0, r.stderr
    with gotensor.open(url) as s:
        assert sorted(s.keys()) == ["a", "m/x", "m/y", "t"]
        assert torch.equal(s.read_tensor("t"), torch.full((4,), 7.0))
    r = _gt("get", url, "m/x", "--out", str(tmp_path / "x.npy"))
    assert r.returncode == 2 and "bfloat16" in r.stderr and ".safetensors" in r.stderr
    r = _gt("get", url, "m/x", "--out", str(tmp_path / "x.safetensors"))
    assert r.returncode == 0, r.stderr
    back = load_file(tmp_path / "x.safetensors")["m/x"]
    assert back.dtype == torch.bfloat16 and torch.equal(back, torch.ones(2, dtype=torch.bfloat16))
    r = _gt("rm", url, "--prefix", "m/")
    assert r.returncode == 0 and "deleted 2 keys" in r.stdout, r
    with gotensor.open(url) as s:
        assert sorted(s.keys()) == ["a", "t"]


def test_info_lists_transports_libraries_and_auto():
    r = _gt("info")
    assert "transports:" in r.stdout and "libraries:" in r.stdout
    assert "auto" in gotensor.info()["codecs"]
    with pytest.raises(gotensor.InvalidArgument, match="auto"):
        gotensor.write_tensor("k", torch.zeros(3), codec="plains")


def test_load_that_fills_the_store_names_the_key_and_can_leave_nothing(tmp_path):
    from safetensors.torch import save_file
    src = tmp_path / "m.safetensors"
    save_file({f"w{i:02d}": torch.full((64, 1024), float(i)) for i in range(8)}, src)  # 256 KiB each
    url = f"file://{tmp_path}/s?capacity=1MiB"
    r = _gt("load", str(src), "--to", url, "--codec", "none", "--quiet")
    assert r.returncode == 5 and r.stderr.startswith("gotensor: StoreFull: load stopped at 'w03' (tensor 4 of 8)"), r.stderr
    assert "3 of 8 tensors were stored" in r.stderr and "--atomic" in r.stderr
    with gotensor.open(f"file://{tmp_path}/s") as s:
        assert len(s.keys()) == 3
        for k in s.keys():
            s.delete(k)
    r = _gt("load", str(src), "--to", url, "--codec", "none", "--quiet", "--atomic")
    assert r.returncode == 5 and "nothing of this run is left" in r.stderr, r.stderr
    with gotensor.open(f"file://{tmp_path}/s") as s:
        assert s.keys() == []
