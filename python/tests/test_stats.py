"""Store.stats() and reset_stats(), `gotensor stat URL`, and the FlexGen device's report."""
import json
import subprocess
import sys

import pytest
import torch

import gotensor


def test_stats_count_known_operations(tmp_path):
    with gotensor.open(f"file://{tmp_path}/s") as s:
        w = torch.randn(512, 256).to(torch.bfloat16)  # 256 KiB
        s.write_tensor("a", w)
        s.write_tensor("b", w, codec="planes")
        s.read_tensor("a")
        with pytest.raises(gotensor.KeyNotFound):
            s.read_tensor("missing")
        sa, sb = s.stat("a"), s.stat("b")
        assert s.exists("b")
        s.keys()
        s.delete("b")
        st = s.stats()
        assert st["ops"] == {"write": 2, "read": 2, "stat": 2, "exists": 1, "keys": 1, "delete": 1}
        assert st["errors"] == 1
        raw = w.numel() * 2
        assert st["raw_bytes_written"] == 2 * raw and st["raw_bytes_read"] == raw
        assert st["stored_bytes_written"] == st["wire_bytes_out"] == sa["stored_bytes"] + sb["stored_bytes"]
        assert st["stored_bytes_read"] == st["wire_bytes_in"] == sa["stored_bytes"]
        assert st["codecs"] == {"none": 1, "planes": 1}
        assert st["ratio"] == pytest.approx(2 * raw / st["stored_bytes_written"]) and st["ratio"] > 1
        assert st["write_gbps"] > 0 and st["read_gbps"] > 0 and st["move_seconds"] > 0
        assert st["link"]["seed"] == "disk" and st["link"]["samples"] > 0
        s.reset_stats()
        st = s.stats()
        assert st["ops"] == {} and st["raw_bytes_written"] == 0 and st["codecs"] == {}


def test_stats_count_async_and_many():
    with gotensor.open("mem://stats-async") as s:
        t = torch.arange(1 << 16, dtype=torch.int32)
        s.write_tensor_async("x", t).result()
        s.write_tensors({"y": t, "z": t}, codec="auto")
        s.read_tensors(["x", "y"])
        st = s.stats()
        assert st["ops"]["write"] == 3 and st["ops"]["read"] == 2
        assert "planes" not in st["codecs"], st["codecs"]  # integers never get planes


def test_stats_count_how_auto_chose():
    with gotensor.open("mem://stats-auto") as s:
        w = torch.randn(512, 256).to(torch.bfloat16)  # 256 KiB: weighed
        for i in range(5):
            s.write_tensor(f"w{i}", w, codec="auto")
        s.write_tensor("tiny", torch.ones(16), codec="auto")  # under 16 KiB: none, unweighed
        s.write_tensor("n", w)  # not auto
        a = s.stats()["auto"]
        assert a["weighed"] + a["reused"] == 5 and a["weighed"] >= 1 and a["new"] == 1
        assert a["weighed"] == a["new"] + a["expired"] + a["factor"]
        assert 0 <= a["flips"] < a["weighed"] and a["samples"] >= 0
        s.reset_stats()
        assert s.stats()["auto"] == {k: 0 for k in a}


def test_stat_command_prints_usage_and_holdings(tmp_path):
    url = f"file://{tmp_path}/cli"
    with gotensor.open(url) as s:
        s.write_tensor("w", torch.randn(256, 256).to(torch.bfloat16), codec="planes")
        s.write_tensor("i", torch.arange(1000))
    r = subprocess.run([sys.executable, "-m", "gotensor", "stat", url, "--json"], capture_output=True, text=True,
                       check=True)
    data = json.loads(r.stdout)
    assert data["usage"]["keys"] == 2
    assert data["tensors"]["codecs"] == {"planes": 1, "none": 1} and data["tensors"]["ratio"] > 1
    assert "stats" not in data  # the command's own handle did nothing worth a page of zeros
    human = subprocess.run([sys.executable, "-m", "gotensor", "stat", url], capture_output=True, text=True,
                           check=True).stdout
    assert "usage:" in human and "ratio:" in human and "encode_seconds:" not in human


def test_flexgen_device_reports_from_store_stats(capsys):
    pytest.importorskip("flexgen")
    import gotensor.flexgen as gtf
    dev = gtf.GoTensorDevice("mem://")
    try:
        dev.store.write_tensor("probe", torch.ones(1024))
        dev.print_stats()
    finally:
        dev.close()
    out = capsys.readouterr().out
    assert "1 writes" in out and "ratio" in out and "codecs: none 1" in out
