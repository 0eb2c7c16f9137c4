"""The traps a new user hit in the first hour, each as it was met: settings
that were ignored, secrets in messages, errors of the wrong class."""

import os
import subprocess
import sys

import pytest
import torch

import gotensor
from test_remote import Node


@pytest.mark.parametrize("url", ["tcp://h:1?tokn=SECRET9", "tcp://h:1?Token=SECRET9", "mem://x?tokn=SECRET9",
                                 "mem://x?token=SECRET9&token=SECRET9"])
def test_a_misspelt_option_never_shows_the_token(url):
    with pytest.raises(gotensor.InvalidArgument) as e:
        gotensor.open(url)
    assert "SECRET9" not in str(e.value) and "SECRET9" not in repr(e.value)


def test_an_option_given_twice_is_refused():
    with pytest.raises(gotensor.InvalidArgument, match="given 2 times"):
        gotensor.open("mem://twice?capacity=1MiB&capacity=2MiB")


def test_a_token_read_from_its_file_opens_the_node(tmp_path):
    path = tmp_path / "token"
    path.write_text("s3cret-token\n")
    node = Node("--token-file", str(path))
    try:
        with gotensor.open(node.url, token=open(path).read()) as s:  # the newline the node strips
            s.write_tensor("k", torch.arange(4))
        with gotensor.open(node.url + f"?token_file={path}") as s:
            assert torch.equal(s.read_tensor("k"), torch.arange(4))
        with pytest.raises(gotensor.Unauthorized):
            with gotensor.open(node.url, token="s3cret-tokeN") as s:
                s.exists("k")
    finally:
        node.stop()


def _python(code: str, **env) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, **env))


def test_the_tensor_size_limit_holds_for_writes_and_a_bad_one_is_refused():
    write_big = ("import gotensor, torch\n"
                 "try:\n    gotensor.write_tensor('big', torch.zeros(1 << 20))\n"
                 "except gotensor.InvalidArgument as e:\n    print('refused:', e)\n"
                 "print('stored' if gotensor.exists('big') else 'nothing stored')\n")
    r = _python(write_big, GOTENSOR_MAX_TENSOR_BYTES="1MiB")
    assert "refused:" in r.stdout and "GOTENSOR_MAX_TENSOR_BYTES" in r.stdout and "nothing stored" in r.stdout, r
    r = _python("import gotensor\ntry:\n    gotensor.open('mem://')\n"
                "except gotensor.InvalidArgument as e:\n    print('refused:', e)\n", GOTENSOR_MAX_TENSOR_BYTES="abc")
    assert "refused:" in r.stdout and "abc" in r.stdout, r


def test_bad_settings_are_refused():
    with pytest.raises(gotensor.InvalidArgument, match="workers"):
        gotensor.set_workers(10**6)
    with gotensor.open("mem://") as s:
        with pytest.raises(gotensor.InvalidArgument, match="2 or more dimensions"):
            s.write_tensor("v", torch.zeros(100), chunk_rows=1)
        assert not s.exists("v")


def test_a_node_named_twice_says_so():
    with pytest.raises(gotensor.InvalidArgument, match="named twice"):
        gotensor.open("tcp://127.0.0.1:7,127.0.0.1:7")


def test_a_nested_tensor_is_invalid_argument():
    nt = torch.nested.nested_tensor([torch.zeros(2), torch.zeros(3)])
    with pytest.raises(gotensor.InvalidArgument, match="nested"):
        gotensor.write_tensor("nested", nt)


def test_row_reads_and_writes_are_counted_in_stats():
    with gotensor.open("mem://") as s:
        s.write_tensor("kv", torch.zeros(16, 64), chunk_rows=1)
        s.reset_stats()
        s.write_tensor("kv", torch.ones(1, 64), rows=slice(3, 4))
        s.read_tensor("kv", rows=slice(0, 8))
        st = s.stats()
    assert st["ops"].get("write") == 1 and st["ops"].get("read") == 1, st["ops"]
    assert "stat" not in st["ops"], st["ops"]
    assert st["raw_bytes_written"] == 64 * 4 and st["raw_bytes_read"] == 8 * 64 * 4
    assert st["wire_bytes_in"] > 0 and st["read_seconds"] > 0


@pytest.mark.parametrize("url", ["mem://", "file"])
def test_a_write_that_times_out_stores_nothing(url, tmp_path):
    import time
    url = f"file://{tmp_path}/s" if url == "file" else url
    with gotensor.open(url) as s:
        s.write_tensor("k", torch.zeros(4))
        big = torch.randn(16 << 20)  # 64 MiB: zstd takes seconds here
        begun = time.perf_counter()
        with pytest.raises(gotensor.Timeout):
            s.write_tensor("k", big, codec="zstd", timeout=0.001)
        assert time.perf_counter() - begun < 2  # stopped within a chunk's work, not after the tensor
        assert torch.equal(s.read_tensor("k"), torch.zeros(4))  # the old value, untouched


def test_a_cancelled_running_future_is_cancelled_and_stored_nothing():
    from concurrent.futures import CancelledError
    with gotensor.open("mem://") as s:
        outcomes = set()
        for i in range(10):
            fut = s.write_tensor_async(f"k{i}", torch.randn(4 << 20), codec="zstd")
            if fut.cancel():
                assert fut.cancelled() and fut.done()
                with pytest.raises(CancelledError):
                    fut.result()
                assert not s.exists(f"k{i}")
                outcomes.add("cancelled")
            else:
                fut.result()
                assert s.exists(f"k{i}")
                outcomes.add("stored")
        assert "cancelled" in outcomes  # a 16 MiB zstd write is still running when cancel() comes
