"""device="cuda" where CUDA is not available raises gotensor's typed error,
not torch's driver error."""

import pytest
import torch

import gotensor

pytestmark = pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA is available here")


@pytest.mark.parametrize("device", ["cuda", "cuda:0", torch.device("cuda", 1), 0])
def test_reading_onto_a_cuda_device_says_cuda_is_not_available(store, device):
    store.write_tensor("k", torch.arange(6.0).reshape(3, 2))
    reads = [lambda: store.read_tensor("k", device=device),
             lambda: store.read_tensor("k", device=device, rows=slice(0, 2)),
             lambda: store.read_tensor_async("k", device=device).result(timeout=30),
             lambda: store.read_tensors(["k"], device=device),
             lambda: gotensor.read_tensor("k", device=device)]
    gotensor.write_tensor("k", torch.zeros(1))
    for read in reads:
        with pytest.raises(gotensor.Unsupported, match="CUDA is not available") as e:
            read()
        assert "cuda" in str(e.value)


def test_a_malformed_device_is_an_invalid_argument(store):
    store.write_tensor("k", torch.zeros(2))
    with pytest.raises(gotensor.InvalidArgument, match="not a torch device"):
        store.read_tensor("k", device="gpu:0")
    assert store.read_tensor("k", device="cpu").device.type == "cpu"
