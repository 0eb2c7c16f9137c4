import json
import shutil
import subprocess
import sys

import pytest

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
