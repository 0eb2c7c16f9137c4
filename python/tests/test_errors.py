"""Every error class, raised by real failures; the process and stored data survive."""

import os
import subprocess
import sys

import pytest
import torch

import gotensor
from gotensor import errors
from gotensor._native_lib import native
from gotensor._view import CODES


def test_hierarchy():
    for cls in (gotensor.InvalidArgument, gotensor.KeyNotFound, gotensor.CorruptData, gotensor.StoreFull,
                gotensor.StoreClosed, gotensor.Unavailable, gotensor.Unauthorized, gotensor.Timeout,
                gotensor.Unsupported, gotensor.InternalError):
        assert issubclass(cls, gotensor.GotensorError)
    assert issubclass(gotensor.KeyNotFound, KeyError)
    assert issubclass(gotensor.InvalidArgument, ValueError)
    assert issubclass(gotensor.Timeout, TimeoutError)
    assert issubclass(gotensor.Unavailable, ConnectionError)
    assert issubclass(gotensor.Unauthorized, PermissionError)


def test_every_go_error_kind_maps_to_its_class():
    kinds = gotensor.info()["error_kinds"]
    for kind in kinds:
        e = errors.from_message(f"{kind}: something")
        assert isinstance(e, gotensor.GotensorError)
        assert e.kind == kind or (kind == "Internal" and isinstance(e, gotensor.InternalError))
    assert isinstance(errors.from_message("no prefix at all"), gotensor.InternalError)


def test_key_not_found(store):
    with pytest.raises(gotensor.KeyNotFound, match='key "nope" not found'):
        store.read_tensor("nope")
    with pytest.raises(gotensor.KeyNotFound):
        store.delete("nope")
    with pytest.raises(gotensor.KeyNotFound):
        store.stat("nope")
    with pytest.raises(KeyError):  # usable as a plain KeyError too
        store.read_tensor("nope", out=torch.empty(1))


@pytest.mark.parametrize("key", ["", "a\nb", "nul\x00", "x" * 1025, 42, None, b"bytes"])
def test_bad_keys(store, key):
    with pytest.raises(gotensor.InvalidArgument):
        store.write_tensor(key, torch.zeros(1))


def test_bad_arguments(store):
    with pytest.raises(gotensor.InvalidArgument, match="unknown codec"):
        store.write_tensor("k", torch.zeros(2), codec="zip")
    with pytest.raises(gotensor.InvalidArgument):
        store.write_tensor("k", [1.0, 2.0])
    with pytest.raises(gotensor.InvalidArgument, match="layout"):
        store.write_tensor("k", torch.zeros(3, 3).to_sparse())
    with pytest.raises(gotensor.InvalidArgument, match="meta"):
        store.write_tensor("k", torch.empty(3, device="meta"))
    with pytest.raises(gotensor.InvalidArgument):
        store.read_tensor("k", out="not a tensor")
    for url in ["", "nowhere", "s3://bucket/x", "mem://?capacity=lots", "file://host/dir"]:
        with pytest.raises(gotensor.InvalidArgument):
            gotensor.open(url)
    assert store.keys() == []  # nothing half-written


def test_store_full_keeps_existing_data():
    with gotensor.open("mem://?capacity=4KiB") as s:
        small = torch.arange(100, dtype=torch.int32)
        s.write_tensor("small", small)
        with pytest.raises(gotensor.StoreFull, match="full"):
            s.write_tensor("big", torch.zeros(4096))
        with pytest.raises(gotensor.StoreFull):
            s.write_tensor_async("big", torch.zeros(4096)).result(timeout=30)
        assert s.keys() == ["small"] and torch.equal(s.read_tensor("small"), small)


def test_file_store_full(tmp_path):
    with gotensor.open(f"file://{tmp_path}/s?capacity=2KiB") as s:
        s.write_tensor("a", torch.zeros(100))
        with pytest.raises(gotensor.StoreFull):
            s.write_tensor("b", torch.zeros(1000))
        assert s.keys() == ["a"]


def test_corrupt_data_on_disk(tmp_path):
    url = f"file://{tmp_path}/s"
    with gotensor.open(url) as s:
        s.write_tensor("w", torch.randn(1000))
        s.write_tensor("ok", torch.ones(3))
    path = tmp_path / "s" / "w.gtf"
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x10
    path.write_bytes(bytes(data))
    with gotensor.open(url) as s:
        with pytest.raises(gotensor.CorruptData, match="checksum"):
            s.read_tensor("w")
        with pytest.raises(gotensor.CorruptData):
            s.read_tensor("w", out=torch.empty(1000))
        assert torch.equal(s.read_tensor("ok"), torch.ones(3))  # the rest is intact
    path.write_bytes(bytes(data[:40]))  # truncated
    with gotensor.open(url) as s:
        with pytest.raises(gotensor.CorruptData):
            s.read_tensor("w")
        with pytest.raises(gotensor.CorruptData):
            s.stat("w")


def test_closed_store():
    s = gotensor.open("mem://")
    s.write_tensor("a", torch.zeros(1))
    s.close()
    s.close()  # idempotent
    with pytest.raises(gotensor.StoreClosed):
        s.read_tensor("a")
    with pytest.raises(gotensor.StoreClosed):
        s.write_tensor("a", torch.zeros(1))


def test_directory_in_use_is_unavailable(tmp_path):
    with gotensor.open(f"file://{tmp_path}/d"):
        with pytest.raises(gotensor.Unavailable, match="already open in this process"):
            gotensor.open(f"file://{tmp_path}/d")


def test_file_where_directory_belongs_is_invalid(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    for url in (f"file://{blocker}", f"file://{blocker}/sub"):
        with pytest.raises(gotensor.InvalidArgument, match="a file is in the way"):
            gotensor.open(url)


def test_go_panic_becomes_internal_error():
    with pytest.raises(gotensor.InternalError, match="panic"):
        errors.call(native.panic)
    assert gotensor.info()["version"]  # the interpreter and the Go runtime live on


def test_invalid_handles_are_refused():
    with pytest.raises(gotensor.InvalidArgument, match="handle"):
        errors.call(native.stat, 987654321, "k", 0)
    with pytest.raises(gotensor.InvalidArgument):
        errors.call(native.decode, 987654321, 0, 0, -1, 0)


def test_null_pointer_is_refused():
    with gotensor.open("mem://") as s:
        with pytest.raises(gotensor.InvalidArgument, match="null"):
            errors.call(native.write, s._handle, "k", 0, 16, CODES["float32"], 0, 0, "none", -1, 0)


def test_hostile_header_cannot_force_huge_allocation(tmp_path, monkeypatch):
    """A frame whose header claims a petabyte tensor is refused before allocating."""
    import struct
    import zlib  # noqa: F401 - crc32c is computed below by hand
    url = f"file://{tmp_path}/h"
    with gotensor.open(url) as s:
        s.write_tensor("w", torch.zeros(4))
    path = tmp_path / "h" / "w.gtf"
    data = bytearray(path.read_bytes())
    struct.pack_into("<Q", data, 32, 1 << 48)   # shape[0]
    struct.pack_into("<Q", data, 16, 4 << 48)   # raw size
    hlen = 32 + 8 + 12 + 4
    struct.pack_into("<I", data, hlen - 4, _crc32c(bytes(data[:hlen - 4])))
    path.write_bytes(bytes(data))
    with gotensor.open(url) as s:
        with pytest.raises((gotensor.InvalidArgument, gotensor.CorruptData), match="limit|chunk"):
            s.read_tensor("w")


def _crc32c(b: bytes) -> int:
    crc = 0xFFFFFFFF
    for byte in b:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 & -(crc & 1))
    return crc ^ 0xFFFFFFFF


def test_cli_error_is_a_message_not_a_traceback():
    r = subprocess.run([sys.executable, "-m", "gotensor", "nope"], capture_output=True, text=True)
    assert r.returncode != 0 and "Traceback" not in r.stderr


def test_tensor_size_ceiling_is_configurable(tmp_path):
    script = (  # a tensor over the limit is refused when written, so none is stored that cannot be read
        "import torch, gotensor\n"
        "s = gotensor.open('mem://')\n"
        "try:\n"
        "    s.write_tensor('w', torch.zeros(1024))\n"
        "except gotensor.InvalidArgument as e:\n"
        "    print('refused', e)\n"
        "assert not s.exists('w')\n")
    env = dict(os.environ, GOTENSOR_MAX_TENSOR_BYTES="1KiB")
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True)
    assert "refused" in r.stdout and "limit" in r.stdout
