"""examples/moe_experts.py end to end on 3 local nodes with small experts: every way of fetching gives the
same computation as the experts in memory."""

import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))

import gotensor  # noqa: E402
from moe_experts import Fetcher, local_nodes, make_experts, run_steps  # noqa: E402


class InMemory:
    def __init__(self, experts):
        self.experts = experts

    def start(self, keys):
        return keys

    def wait(self, keys):
        return {k: self.experts[k] for k in keys}


def test_moe_steps_through_sharded_nodes_match_memory(tmp_path, monkeypatch):
    from safetensors.torch import save_file
    layers, n, d, ff = 3, 4, 64, 128
    experts = make_experts(layers, n, d, ff)
    gates = [torch.randn(d, n, generator=torch.Generator().manual_seed(l)) for l in range(layers)]
    outs = {}

    def capture(name, fetch):
        import moe_experts
        got = []
        real = moe_experts.expert_mlp
        monkeypatch.setattr(moe_experts, "expert_mlp", lambda x, a, b: got.append(real(x, a, b)) or got[-1])
        waits, nbytes = run_steps(fetch, gates, 3, layers, 2, d)
        monkeypatch.setattr(moe_experts, "expert_mlp", real)
        assert len(waits) == layers and all(len(w) == 3 for w in waits)
        assert nbytes == 3 * layers * 2 * 2 * d * ff * 2
        outs[name] = torch.stack([g.float() for g in got])

    capture("memory", InMemory(experts))
    path = str(tmp_path / "experts.safetensors")
    save_file(experts, path)
    capture("safetensors", Fetcher(path=path))
    with local_nodes(3, capacity="64MiB") as url, gotensor.open(url) as store:
        store.write_tensors(experts)
        capture("prefetch", Fetcher(store))
        capture("no-prefetch", Fetcher(store, prefetch=False))
    with gotensor.open("mem://") as mem, gotensor.open(f"file://{tmp_path}/store") as files:
        mem.write_tensors(experts)
        files.write_tensors(experts)
        for name, st in (("mem", mem), ("file", files)):
            capture(f"{name} views, prefetch", Fetcher(st, view=True))
            capture(f"{name} views", Fetcher(st, prefetch=False, view=True))
    for name, out in outs.items():
        assert torch.equal(out, outs["memory"]), name
