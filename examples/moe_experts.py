"""Move MoE expert weights to where they are needed: one writer publishes every expert to sharded memory
nodes; a reader fetches, each step, the experts its router picked, layer l+1's while layer l computes.

    python examples/moe_experts.py                       # starts 3 local nodes, publishes, runs 8 steps
    python examples/moe_experts.py --url tcp://a:7707,b:7707,c:7707 --steps 32

Each expert is two bfloat16 matrices (w_in: d_model x d_ff, w_out: d_ff x d_model) under
`moe/layer{l}/expert{e}/{w_in,w_out}`; the sharded URL spreads the experts over the nodes by key, and
read_tensor_async fetches from all of them at once. bench/bench_moe.py measures this against reading the same
experts from a safetensors file and against fetching without prefetch.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import time

import torch

import gotensor


def expert_keys(layer: int, expert: int) -> tuple[str, str]:
    return f"moe/layer{layer}/expert{expert}/w_in", f"moe/layer{layer}/expert{expert}/w_out"


def make_experts(layers: int, experts: int, d_model: int, d_ff: int, seed: int = 0) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    out = {}
    for l in range(layers):
        for e in range(experts):
            k_in, k_out = expert_keys(l, e)
            out[k_in] = (torch.randn(d_model, d_ff, generator=g) * d_model ** -0.5).to(torch.bfloat16)
            out[k_out] = (torch.randn(d_ff, d_model, generator=g) * d_ff ** -0.5).to(torch.bfloat16)
    return out


def route(x: torch.Tensor, gates: list[torch.Tensor], top_k: int) -> list[list[int]]:
    """Top-k experts per layer for this step, from a router over the step's input (decided up front, so
    the next layer's experts can be fetched while this one computes)."""
    h = x.float().mean(0)
    return [torch.topk(h @ g, top_k).indices.tolist() for g in gates]


def expert_mlp(x: torch.Tensor, w_in: torch.Tensor, w_out: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.gelu(x @ w_in) @ w_out


class Fetcher:
    """Where a step's experts come from: a store with prefetch, a store without, or a safetensors file.
    view=True reads tensors that view the stored bytes in place (mem://, file://) instead of copies."""

    def __init__(self, store=None, path=None, prefetch=True, view=False):
        self.store, self.prefetch, self.view = store, prefetch, view
        self.file = None
        if path is not None:
            from safetensors import safe_open
            self.file = safe_open(path, framework="pt")

    def start(self, keys):
        if self.store is not None and self.prefetch:
            return [(k, self.store.read_tensor_async(k, view=self.view)) for k in keys]
        return keys

    def wait(self, pending) -> dict[str, torch.Tensor]:
        if self.file is not None:
            return {k: self.file.get_tensor(k) for k in pending}
        if not self.prefetch:
            return self.store.read_tensors(pending, view=self.view)
        return {k: f.result() for k, f in pending}


def run_steps(fetch: Fetcher, gates, steps: int, layers: int, top_k: int, d_model: int, tokens: int = 16):
    """Runs the MoE layers for `steps` steps; returns per-layer wait seconds (how long compute stood still
    for its experts) and the bytes fetched."""
    g = torch.Generator().manual_seed(1)
    waits = [[] for _ in range(layers)]
    nbytes = 0
    for _ in range(steps):
        x = torch.randn(tokens, d_model, generator=g).to(torch.bfloat16)
        picks = route(x, gates, top_k)
        keys = [[k for e in picks[l] for k in expert_keys(l, e)] for l in range(layers)]
        pending = fetch.start(keys[0])
        for l in range(layers):
            t0 = time.perf_counter()
            ws = fetch.wait(pending)
            waits[l].append(time.perf_counter() - t0)
            if l + 1 < layers:
                pending = fetch.start(keys[l + 1])  # next layer's experts move while this one computes
            nbytes += sum(t.numel() * t.element_size() for t in ws.values())
            x = sum(expert_mlp(x, ws[k_in], ws[k_out]) for k_in, k_out in zip(keys[l][::2], keys[l][1::2])) / top_k
    return waits, nbytes


@contextlib.contextmanager
def local_nodes(n: int, capacity: str = "2GiB"):
    """n `gotensor serve` nodes on loopback; yields their sharded tcp:// URL."""
    procs, addrs = [], []
    try:
        for _ in range(n):
            p = subprocess.Popen([sys.executable, "-m", "gotensor", "serve", "--listen", "127.0.0.1:0",
                                  "--capacity", capacity], stdout=subprocess.PIPE, text=True)
            procs.append(p)
            line = p.stdout.readline()
            addrs.append(line.split("listening on tcp://")[1].split()[0])
        yield "tcp://" + ",".join(addrs)
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait(timeout=30)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", help="sharded memory nodes (default: start 3 local ones)")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--experts", type=int, default=8)
    ap.add_argument("--top-k", type=int, default=2)
    ap.add_argument("--d-model", type=int, default=1024)
    ap.add_argument("--d-ff", type=int, default=4096)
    ap.add_argument("--steps", type=int, default=8)
    a = ap.parse_args()
    experts = make_experts(a.layers, a.experts, a.d_model, a.d_ff)
    gates = [torch.randn(a.d_model, a.experts, generator=torch.Generator().manual_seed(100 + l)) for l in range(a.layers)]
    with (contextlib.nullcontext(a.url) if a.url else local_nodes(3)) as url:
        with gotensor.open(url) as store:
            t0 = time.perf_counter()
            store.write_tensors(experts)  # the writer publishes every expert once
            pub = time.perf_counter() - t0
            total = sum(t.numel() * t.element_size() for t in experts.values())
            print(f"published {len(experts)} matrices ({total / 2**20:.0f} MiB) to {url} in {pub:.2f} s")
            waits, nbytes = run_steps(Fetcher(store), gates, a.steps, a.layers, a.top_k, a.d_model)
            for l, w in enumerate(waits):
                w = sorted(w)
                print(f"layer {l}: wait for experts p50 {w[len(w) // 2] * 1e3:.1f} ms, max {w[-1] * 1e3:.1f} ms")
            print(f"fetched {nbytes / 2**20:.0f} MiB of experts in {a.steps} steps")
            for k in experts:
                store.delete(k)


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", str(os.cpu_count() or 1))
    main()
