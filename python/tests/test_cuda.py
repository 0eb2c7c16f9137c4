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


@cuda
@pytest.mark.parametrize("codec", ["none", "planes"])
def test_cuda_staged_pipeline_large(codec):
    t = (torch.randn(40 << 20, device="cuda") * 0.02).to(torch.bfloat16)  # 80 MB: the two-buffer pipeline
    with gotensor.open("mem://") as s:
        s.write_tensor("big", t, codec=codec)
        assert torch.equal(s.read_tensor("big", device="cuda").view(torch.int16), t.view(torch.int16))
        out = torch.empty_like(t)
        s.read_tensor_async("big", out=out).result(timeout=120)
        assert torch.equal(out.view(torch.int16), t.view(torch.int16))
        s.write_tensor_async("big2", t, codec=codec).result(timeout=120)
        assert torch.equal(s.read_tensor("big2", device="cuda"), t)
