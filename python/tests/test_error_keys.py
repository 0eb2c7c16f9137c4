"""Exceptions about a key carry .key; mem:// names are one store per process."""

import pytest
import torch

import gotensor
from gotensor import errors


@pytest.mark.parametrize("key", ["plain", "a\x1eb\x1fc", 'quote"and\\slash', "é日本\u2028", "tab\there\n"])
def test_key_crosses_from_go_as_a_field(key):
    """.key is the key itself, however Go would quote it in a message, for
    sync and async calls alike (a key with a newline is refused, naming it)."""
    with gotensor.open("mem://") as s:
        for fail in (lambda: s.read_tensor(key), lambda: s.delete(key),
                     lambda: s.read_tensor_async(key).result(timeout=30)):
            with pytest.raises(gotensor.GotensorError) as e:
                fail()
            assert e.value.key == key
            assert isinstance(e.value, gotensor.InvalidArgument if "\n" in key else gotensor.KeyNotFound)


def test_errors_without_key():
    assert errors.from_message("StoreFull: mem:// is full").key is None
    assert gotensor.GotensorError("x").key is None
    with gotensor.open("mem://?capacity=4KiB") as s:
        with pytest.raises(gotensor.StoreFull) as e:
            s.write_tensor("big", torch.zeros(4096))
        assert e.value.key is None and str(e.value).startswith("mem://")


def test_real_errors_carry_key():
    with gotensor.open("mem://") as s:
        with pytest.raises(gotensor.KeyNotFound) as e:
            s.read_tensor("no such \x1e key")
        assert e.value.key == "no such \x1e key"
        with pytest.raises(gotensor.KeyNotFound) as e:
            s.delete("gone")
        assert e.value.key == "gone"


def test_named_mem_store_is_shared():
    a = gotensor.open("mem://py-shared")
    b = gotensor.open("mem://py-shared")
    try:
        a.write_tensor("t", torch.arange(4))
        assert torch.equal(b.read_tensor("t"), torch.arange(4))
        a.close()
        assert torch.equal(b.read_tensor("t"), torch.arange(4))
    finally:
        a.close()
        b.close()
    with gotensor.open("mem://py-shared") as c:
        assert "t" not in c


def test_default_store_is_mem_default():
    gotensor.write_tensor("via-default", torch.ones(2))
    with gotensor.open("mem://default") as s:
        assert torch.equal(s.read_tensor("via-default"), torch.ones(2))


def test_misspelt_option_refused():
    with pytest.raises(gotensor.InvalidArgument, match="capacity"):
        gotensor.open("mem://x?capcity=1MiB")
    with pytest.raises(gotensor.InvalidArgument) as e:
        gotensor.open("mem://x?capcity=1MiB", token="SEKRIT")
    assert "SEKRIT" not in str(e.value)
