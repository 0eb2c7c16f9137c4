"""CUDA tensors are staged through pinned host memory. Runs only with a GPU."""

import pytest
import torch

import gotensor

cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


@cuda
def test_cuda_round_trip_bf16():
    t = torch.randn(1024, 1024, device="cuda").to(torch.bfloat16)
    with gotensor.open("mem://") as s:
        s.write_tensor("g", t)
        r = s.read_tensor("g", device="cuda")
        assert r.is_cuda and torch.equal(r, t)
        out = torch.empty_like(t)
        s.read_tensor("g", out=out)
        assert torch.equal(out, t)
        f = s.read_tensor_async("g", device="cuda:0").result(timeout=60)
        assert torch.equal(f, t)
