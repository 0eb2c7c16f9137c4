"""read_tensors / write_tensors when some keys fail: the keys that failed are
named, the results that succeeded kept; a sharded store with a node down
says so in usage()."""

import pytest
import torch

import gotensor
from test_remote import Node


def test_a_batch_names_its_failed_keys_and_keeps_the_rest():
    with gotensor.open("mem://") as s:
        s.write_tensor("a", torch.ones(3))
        with pytest.raises(gotensor.KeyNotFound) as e:
            s.read_tensors(["a", "missing"])
        assert "1 of 2 keys failed" in str(e.value) and "'missing'" in str(e.value)
        assert set(e.value.failed) == {"missing"} and torch.equal(e.value.results["a"], torch.ones(3))


def test_a_shard_with_a_node_down_fails_only_its_keys_and_usage_says_so():
    a, b = Node(), Node()
    url = f"tcp://127.0.0.1:{a.port},127.0.0.1:{b.port}?timeout=5s"
    try:
        with gotensor.open(url) as s:
            items = {f"k{i}": torch.full((4,), float(i)) for i in range(16)}
            s.write_tensors(items)
            b.stop()
            with pytest.raises(gotensor.Unavailable) as e:
                s.read_tensors(list(items))
            failed, results = e.value.failed, e.value.results
            assert failed and results and set(failed) | set(results) == set(items)
            assert all(torch.equal(results[k], items[k]) for k in results)
            usage = s.usage()
            assert usage.get("unanswered"), usage  # the node that did not answer is named
            assert usage["keys"] == len(results)   # and its keys are not counted as if it were whole
            with pytest.raises(gotensor.Unavailable) as e:
                s.write_tensors({k: t + 1 for k, t in items.items()})
            assert set(e.value.failed) == set(failed) and set(e.value.results) == set(results)
    finally:
        a.stop()
        if b.p.poll() is None:
            b.stop()
