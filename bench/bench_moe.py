"""MoE expert distribution (`make bench-moe`): examples/moe_experts.py's steps, the experts read seven ways in
one run: from 3 sharded `gotensor serve` nodes with the next layer prefetched while this one computes, from the
same nodes without prefetch (read_tensors when the layer needs them), and, like for like with a local file, from
gotensor's in-process mem:// and a file:// directory (page cache warm), both with prefetch, as copies and as
views (read_tensor_async(view=True): tensors that view the stored bytes), and from a safetensors file
(safe_open, page cache warm). Per layer: how long compute waits for its experts (p50, p99 over steps); per way: GB/s of
expert bytes over the time spent waiting, and seconds per step. JSON and a RESULTS.md section.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "examples")]


VIEW_MEM = "gotensor, mem:// in process, views, prefetch"
VIEW_FILE = "gotensor, file:// (page cache), views, prefetch"
SAFETENSORS = "safetensors file (safe_open, page cache)"


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", default=os.path.join(HERE, "results", "moe.json"))
    ap.add_argument("--md", default=os.path.join(HERE, "RESULTS.md"))
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--experts", type=int, default=8)
    ap.add_argument("--steps", type=int, default=20, help="steps per way per round")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-redis", action="store_true", help="leave out the Redis cluster's rows")
    a = ap.parse_args()

    import gotensor
    from _report import update_markdown, write_json
    from moe_experts import Fetcher, local_nodes, make_experts, run_steps
    from redis_local import REDIS, redis_cluster
    from safetensors.torch import save_file
    import contextlib

    d_model, d_ff, top_k = 1024, 4096, 2
    experts = make_experts(a.layers, a.experts, d_model, d_ff)
    gates = [torch.randn(d_model, a.experts, generator=torch.Generator().manual_seed(100 + l)) for l in range(a.layers)]
    recs = []
    use_redis = REDIS is not None and not a.no_redis
    with (tempfile.TemporaryDirectory() as tmp, local_nodes(3) as url, gotensor.open(url) as store,
          gotensor.open("mem://") as mem, gotensor.open("file://" + os.path.join(tmp, "store")) as files,
          redis_cluster(3, 1) if use_redis else contextlib.nullcontext() as cluster,
          gotensor.open(cluster.url) if use_redis else contextlib.nullcontext() as red):
        path = os.path.join(tmp, "experts.safetensors")
        save_file(experts, path)
        t0 = time.perf_counter()
        store.write_tensors(experts)
        publish = time.perf_counter() - t0
        mem.write_tensors(experts)
        files.write_tensors(experts)
        publish_redis = None
        ways = [("gotensor, 3 nodes, prefetch", Fetcher(store)),
                ("gotensor, 3 nodes, read_tensors when needed", Fetcher(store, prefetch=False))]
        if use_redis:
            t0 = time.perf_counter()
            red.write_tensors(experts)
            publish_redis = time.perf_counter() - t0
            ways += [("gotensor, Redis 3+3 cluster, prefetch", Fetcher(red)),
                     ("gotensor, Redis 3+3 cluster, read_tensors when needed", Fetcher(red, prefetch=False))]
        ways += [("gotensor, mem:// in process, prefetch", Fetcher(mem)),
                 ("gotensor, file:// (page cache), prefetch", Fetcher(files)),
                 (VIEW_MEM, Fetcher(mem, view=True)),
                 (VIEW_FILE, Fetcher(files, view=True)),
                 (SAFETENSORS, Fetcher(path=path))]
        for name, fetch in ways:
            run_steps(fetch, gates, 1, a.layers, top_k, d_model)  # warm-up: connections, page cache
        # rounds: every way once a round, the order rotated, so no way always runs first or after another
        walls = {name: [] for name, _ in ways}
        waits = {name: [[] for _ in range(a.layers)] for name, _ in ways}
        nbytes = {name: 0 for name, _ in ways}
        for rnd in range(a.rounds):
            for name, fetch in ways[rnd % len(ways):] + ways[:rnd % len(ways)]:
                t0 = time.perf_counter()
                w, n = run_steps(fetch, gates, a.steps, a.layers, top_k, d_model)
                walls[name].append((time.perf_counter() - t0) / a.steps)
                for l in range(a.layers):
                    waits[name][l] += w[l]
                nbytes[name] += n
        views = {n: (st.stats()["views"], st.stats()["view_copies"]) for n, st in ((VIEW_MEM, mem), (VIEW_FILE, files))}
        base = statistics.median(walls[SAFETENSORS])
        for name, _ in ways:
            ws = waits[name]
            r = {"way": name, "steps": a.steps, "rounds": a.rounds, "bytes": nbytes[name],
                 "seconds_per_step": statistics.median(walls[name]), "round_seconds_per_step": walls[name],
                 "vs_safetensors": statistics.median(walls[name]) / base,
                 "wait_GBps": nbytes[name] / sum(map(sum, ws)) / 1e9, "layers": [
                     {"layer": l, "p50_ms": statistics.median(w) * 1e3, "p99_ms": pct(w, 0.99) * 1e3}
                     for l, w in enumerate(ws)]}
            if name in views:
                r["views"], r["view_copies"] = views[name]
            recs.append(r)
            print(f"{name:45} {r['seconds_per_step'] * 1e3:7.1f} ms/step ({r['vs_safetensors']:.2f}x safetensors), "
                  f"{r['wait_GBps']:6.2f} GB/s while waiting; "
                  + ", ".join(f"L{x['layer']} p50 {x['p50_ms']:.1f} p99 {x['p99_ms']:.1f} ms" for x in r["layers"]), flush=True)
        for k in experts:
            for st in (store, mem, files) + ((red,) if use_redis else ()):
                st.delete(k)
    total = sum(t.numel() * t.element_size() for t in experts.values())
    write_json(a.json, recs, benchmark="moe", publish_seconds=publish, publish_redis_seconds=publish_redis,
               total_bytes=total)
    lines = ["## MoE expert distribution (`make bench-moe`)", "",
             f"examples/moe_experts.py: {a.layers} layers x {a.experts} experts, each two bfloat16 matrices of "
             f"{d_model}x{d_ff} ({total / 2**20:.0f} MiB in all) published by one writer to 3 sharded `gotensor serve` "
             f"nodes on loopback (in {publish:.2f} s); {a.rounds} rounds of {a.steps} steps of 16 tokens per way (every way "
             f"once a round, the order rotated; ms per step: median of the rounds), the router picks the top {top_k} "
             "experts per layer, each computes its MLP on the CPU. wait: how long a layer's compute stood still for "
             "its experts (p50 / p99 over steps); GB/s: expert bytes over the time spent waiting. The nodes' rows cross "
             "loopback TCP (a socket copy each way on the same 2 cores); mem:// and file:// are the like-for-like "
             "rows for the local safetensors file, whose wait (faster than a memcpy here) copies nothing: its tensors "
             "come from a mapping of the page cache, touched only by the compute. The views rows read the same "
             "experts with read_tensor_async(view=True): tensors that view the stored bytes (mem://: a private "
             "mapping of the frame's memfd; file://: of its file) instead of copies, like safetensors'; x safetensors: "
             "ms per step over safetensors' in the same run. On these 2 cores a fetch from the "
             "nodes is CPU work (the nodes' and the client's socket copies), so prefetching it beside the compute "
             "shares the cores rather than hiding the fetch; over a NIC that moves the bytes itself it would hide." +
             (f" The Redis rows: the same experts published to a 3-master/3-replica Redis cluster on the same loopback "
              f"(redis://, each matrix 4 pieces of 2 MiB spread over the masters; in {publish_redis:.2f} s), read back "
              "the same ways; its 6 server processes share the same 2 cores." if publish_redis is not None else ""), "",
             "| way | ms per step | x safetensors | GB/s while waiting | "
             + " | ".join(f"layer {l} wait p50 / p99 (ms)" for l in range(a.layers)) + " |",
             "|---|---|---|---|" + "---|" * a.layers]
    for r in recs:
        lines.append(f"| {r['way']} | {r['seconds_per_step'] * 1e3:.1f} | {r['vs_safetensors']:.2f} | {r['wait_GBps']:.2f} | "
                     + " | ".join(f"{x['p50_ms']:.1f} / {x['p99_ms']:.1f}" for x in r["layers"]) + " |")
    update_markdown(a.md, "moe", "\n".join(lines))


if __name__ == "__main__":
    main()
