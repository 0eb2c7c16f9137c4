"""FlexGen end to end on gotensor against FlexGen's own TorchDisk (`make bench-flexgen`).

OptLM.generate on random weights at opt-125m's dimensions (fewer layers by default, so a run fits in
minutes on the CPU), through gotensor.flexgen.cpu where there is no CUDA. For each policy (KV cache on the
store, weights on the store, both, compressed cache) and store (TorchDisk, mem://, file://, a tcp:// node)
and codec: seconds per generate and whether the tokens are identical to TorchDisk's. Output: JSON and a
RESULTS.md section.

Every store of a (policy, new tokens) group is built and warmed up first; then the group runs in rounds,
each generating once on every store in turn, the order rotated and reversed from round to round
so that no store always runs right after the same one and a drift of the machine
(other load, the page cache, the heap) falls on every store alike. A row reports the median seconds and CPU
seconds over its rounds and, as its speed, the median over rounds of that round's TorchDisk seconds over
its own: a ratio taken between neighbours in time. Python's garbage is collected before each generate, so
one store's is not collected in another's timing. Tokens are compared with TorchDisk's in every round.

A row's codec is the device's codec= and, after a slash, its cache_codec= (the KV cache's; none when not
given, the device's default): "auto/auto" codes everything with auto, "planes" codes weights with planes and
stores the cache raw. file:// rows open the directory as the device does by default (fsync=false: an offload
directory is scratch, docs/FLEXGEN.md); a "file-fsync" row opens it with fsync=true.

The default matrix fits about 11 minutes on 2 quiet CPU cores: every policy, store and codec at the shortest
generation (32 new tokens, at least --reps rounds; the tcp:// node in --tcp-reps of them); at the longest
(256, at least --long-reps rounds, 5) only the --long-policies on the --long-stores with the --long-codecs (the
KV cache policies on mem:// and file://, codec none), which is where the ratio must hold as the cache grows
(weights cost the same per token at any length). A cheap group runs more rounds: after its least rounds it
adds rounds while its generates so far took less than --group-seconds, up to --max-reps (the 32-token KV
cache groups: about 6 rounds; the weight policies and the 256-token groups stay at their least).

Whether the ratio holds as the generation grows is summed up per (policy, store, codec) run at both lengths:
the longest generation's ratio over the shortest's ("longest/shortest" column), and a verdict below the
table: holds (not lower), within noise (lower, but within the shortest's per-round ratios) or falls.

The larger configuration (--big-*, about 5 more minutes; --big-layers 0 leaves it out) is what the 4-layer
model hides: all 12 of opt-125m's layers, a 64-token prompt, 32 new tokens, the KV cache on the store, in 5
rounds: each store with codec none, with planes (the cache raw, the device's default) and with planes on the
cache too, and file:// with fsync=true.

OpenMP's threads wait passively by default (--omp-wait, for TorchDisk and gotensor alike): on a CPU run
the model's OpenMP threads otherwise spin between kernels on the cores the copy threads need. With active
waiting that spinning, not the copies, took most of the CPU time gotensor's runs spent beyond TorchDisk's
(user time of 8 tokens with weights on mem://: 2.0 s over TorchDisk's active, 0.6 s passive). Likely
why it hits gotensor harder: TorchDisk copies with torch, which starts OpenMP teams of its own (libgomp
then throttles its spinning), while gotensor copies in Go, outside OpenMP.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import statistics
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
POLICIES = {  # weights gpu/cpu %, cache gpu/cpu %, compress cache (the rest goes to the disk device)
    "cache-on-store": ((100, 0), (0, 0), False),
    "weights-on-store": ((0, 0), (100, 0), False),
    "both-on-store": ((0, 0), (0, 0), False),
    "compressed-cache": ((100, 0), (0, 0), True),
}


def policy(w, c, compress):
    from flexgen.compression import CompressionConfig
    from flexgen.flex_opt import Policy
    return Policy(gpu_batch_size=4, num_gpu_batches=1, w_gpu_percent=w[0], w_cpu_percent=w[1],
                  cache_gpu_percent=c[0], cache_cpu_percent=c[1], act_gpu_percent=100, act_cpu_percent=0,
                  overlap=True, sep_layer=True, pin_weight=False, cpu_cache_compute=False, attn_sparsity=1.0,
                  compress_weight=False, comp_weight_config=CompressionConfig(4, 64, 0, False),
                  compress_cache=compress, comp_cache_config=CompressionConfig(4, 64, 2, False))


def _cpu_seconds() -> float:
    """This process's user and system CPU time: on a shared machine, what a
    run spent itself, whatever the others took."""
    import resource
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def schedule(names: list[str], rounds: dict[str, int]) -> list[tuple[int, str]]:
    """(round, name) in the order a group runs them: round i takes names rotated to start i later, reversed
    in odd rounds (so each store follows both its neighbours in turn, even in a group of 2 rounds), leaving
    out those whose rounds[name] are done (a tcp:// row may run in fewer rounds than the others)."""
    def order(i: int) -> list[str]:
        k = i % len(names)
        o = names[k:] + names[:k]
        return o[::-1] if i % 2 else o
    return [(i, n) for i in range(max(rounds.values())) for n in order(i) if i < rounds[n]]


def codec_spec(spec: str) -> tuple[str, str]:
    """(codec, cache codec) of a row's codec spec: "planes" -> ("planes", "none"), "auto/auto" -> ("auto", "auto")."""
    codec, _, cache = spec.partition("/")
    return codec, cache or "none"


def store_url(store: str, codec: str, cache: str, tmp: str, node) -> str:
    """The URL a row's device opens: one file:// directory per row (a directory opens once per process)."""
    if store == "mem":
        return "mem://bench-flexgen"
    if store == "tcp":
        return node.url
    if store in ("file", "file-fsync"):
        url = f"file://{tmp}/gt-{store}-{codec}-{cache}"
        return url + "?fsync=true" if store == "file-fsync" else url
    raise ValueError(f"unknown store {store!r}")


def summarize(seconds: dict[int, float], base: dict[int, float]) -> tuple[float, float]:
    """(median seconds, median ratio): each round's ratio is that round's base (TorchDisk) seconds over the
    row's, so a ratio compares runs that were neighbours in time."""
    return statistics.median(seconds.values()), statistics.median(base[i] / s for i, s in seconds.items())


def extra_rounds(done: int, spent: float, budget: float, most: int) -> int:
    """How many rounds a group adds after its first done rounds took spent seconds: as many more as fit
    budget seconds at the same pace, so that the group runs at most most rounds."""
    if done <= 0 or spent >= budget:
        return 0
    return max(0, min(most - done, int((budget - spent) / (spent / done))))


def growth(recs: list[dict]) -> list[dict]:
    """Per (policy, store, codec) run at more than one length, the longest's ratio against the shortest's
    of the same run: {policy, store, codec, short, long, short_ratio, long_ratio, change (long over short),
    verdict}. The verdict: "holds" (the long ratio is not lower), "within noise" (lower, but not below the
    lowest of the short rows' per-round ratios), "falls" (below all of them)."""
    by: dict[tuple, list[dict]] = {}
    for r in recs:
        if r["store"] != "TorchDisk":
            by.setdefault((r.get("layers"), r.get("prompt"), r["policy"], r["store"], r["codec"], r.get("cache", "-")),
                          []).append(r)
    out = []
    for (_, _, pol, store, codec, cache), rows in by.items():
        if len(rows) < 2:
            continue
        short, long = min(rows, key=lambda r: r["gen"]), max(rows, key=lambda r: r["gen"])
        lo = min(short.get("round_ratios") or [short["vs_torchdisk"]])
        change = long["vs_torchdisk"] / short["vs_torchdisk"]
        verdict = "holds" if change >= 1 else "within noise" if long["vs_torchdisk"] >= lo else "falls"
        out.append({"policy": pol, "store": store, "codec": codec, "cache": cache, "layers": short.get("layers"),
                    "short": short["gen"], "long": long["gen"],
                    "short_ratio": short["vs_torchdisk"], "long_ratio": long["vs_torchdisk"], "change": change,
                    "verdict": verdict})
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", default=os.path.join(HERE, "results", "flexgen.json"))
    ap.add_argument("--md", default=os.path.join(HERE, "RESULTS.md"))
    ap.add_argument("--layers", type=int, default=4, help="decoder layers (opt-125m has 12)")
    ap.add_argument("--prompt", type=int, default=32)
    ap.add_argument("--gen", default="32,256", help="new tokens per generate, comma-separated")
    ap.add_argument("--policies", default=",".join(POLICIES))
    ap.add_argument("--stores", default="mem,file,tcp")
    ap.add_argument("--codecs", default="none,auto/auto", help="codec specs (codec[/cache codec]), comma-separated")
    ap.add_argument("--reps", type=int, default=3, help="least rounds at the shortest generation")
    ap.add_argument("--long-reps", type=int, default=5,  # with 3, quiet runs' 256-token ratios moved by 0.04
                    help="least rounds beyond the shortest generation")
    ap.add_argument("--group-seconds", type=float, default=40.0,
                    help="a group adds rounds while its generates so far took less (see the module docstring)")
    ap.add_argument("--max-reps", type=int, default=7, help="most rounds of a group")
    ap.add_argument("--tcp-reps", type=int, default=1, help="rounds (at most --reps) the tcp:// rows run in")
    ap.add_argument("--long-stores", default="mem,file",
                    help="stores run beyond the shortest generation (the others run at the shortest only)")
    ap.add_argument("--long-codecs", default="none", help="codecs run beyond the shortest generation")
    ap.add_argument("--long-policies", default="cache-on-store,compressed-cache",
                    help="policies run beyond the shortest generation")
    ap.add_argument("--big-layers", type=int, default=12, help="the larger configuration's layers (0: none)")
    ap.add_argument("--big-prompt", type=int, default=64)
    ap.add_argument("--big-gen", type=int, default=32)
    ap.add_argument("--big-policies", default="cache-on-store")
    ap.add_argument("--big-rows", default="mem:none,mem:planes,mem:planes/planes,file:none,file:planes,"
                    "file:planes/planes,file-fsync:none", help="store:codec spec of each row beside TorchDisk")
    ap.add_argument("--big-reps", type=int, default=5, help="least rounds of the larger configuration")
    ap.add_argument("--ops", type=int, default=0, metavar="N",
                    help="print instead what N token appends and [0:pos] reads of one KV cache cost per operation "
                         "(each with its synchronize()), TorchDisk against mem:// and file://, and exit")
    ap.add_argument("--omp-wait", default="passive", choices=["passive", "active", "default"],
                    help="OMP_WAIT_POLICY for every store (set before torch loads OpenMP); see the module docstring")
    a = ap.parse_args()
    if a.omp_wait != "default":
        os.environ["OMP_WAIT_POLICY"] = a.omp_wait.upper()
    import torch

    from flexgen import pytorch_backend as pb
    from flexgen.flex_opt import OptLM
    from flexgen.opt_config import get_opt_config
    from flexgen.utils import ExecutionEnv

    import gotensor.flexgen as gtf
    from gotensor.flexgen.cpu import cpu_shim, write_opt_weights
    sys.path.insert(0, HERE)
    from _report import update_markdown, write_json
    from bench_link import Node

    cuda = torch.cuda.is_available()
    if a.ops:
        return per_op(a, cuda, pb, gtf, cpu_shim, torch)
    dtype = np.float16 if cuda else np.float32
    cfg = get_opt_config("opt-125m", num_hidden_layers=a.layers, dtype=dtype)
    gens = [int(g) for g in a.gen.split(",")]
    prompts = np.random.default_rng(1).integers(4, cfg.vocab_size, size=(4, a.prompt))
    shim = contextlib.nullcontext() if cuda else cpu_shim()
    recs = []
    with tempfile.TemporaryDirectory() as tmp, shim:
        write_opt_weights(tmp, cfg, dtype=dtype, scale=0.02)
        pb.fix_recursive_import()
        node = Node("tcp") if "tcp" in a.stores.split(",") else None
        compute = pb.TorchDevice("cuda:0" if cuda else "cpu")
        cpu = pb.TorchDevice("cpu")

        def torch_disk():
            disk = pb.TorchDisk(os.path.join(tmp, "flexgen-disk"))
            return ExecutionEnv(gpu=compute, cpu=cpu, disk=disk, mixed=pb.TorchMixedDevice([compute, cpu, disk]))

        def row(st, spec):
            codec, cache = codec_spec(spec)
            url = store_url(st, codec, cache, tmp, node)
            return (st, codec, cache, lambda: gtf.execution_env(url, codec=codec, cache_codec=cache,
                                                                gpu=str(compute.dev)))

        # every store of a group stays open through it: each file:// row has a directory of its own
        try:
            for pname in [p for p in a.policies.split(",") if p]:  # --policies "": the larger configuration only
                pol = policy(*POLICIES[pname])
                for gen in gens:
                    long = gen > min(gens)
                    if long and pname not in a.long_policies.split(","):
                        continue
                    reps = a.long_reps if long else a.reps
                    envs = {"TorchDisk -": ("TorchDisk", "-", "-", torch_disk)}
                    for st in a.stores.split(","):
                        if long and st not in a.long_stores.split(","):
                            continue
                        for spec in a.codecs.split(","):
                            if long and spec not in a.long_codecs.split(","):
                                continue
                            envs[f"{st} {spec}"] = row(st, spec)
                    recs += _group(pname, pol, gen, envs, reps, min(a.tcp_reps, reps), cfg, tmp, prompts, cuda,
                                   OptLM, pb, torch, a.group_seconds, max(a.max_reps, reps), a.layers, a.prompt)
            if a.big_layers:
                big = get_opt_config("opt-125m", num_hidden_layers=a.big_layers, dtype=dtype)
                big_dir = os.path.join(tmp, "big")
                write_opt_weights(big_dir, big, dtype=dtype, scale=0.02)
                big_prompts = np.random.default_rng(2).integers(4, big.vocab_size, size=(4, a.big_prompt))
                for pname in a.big_policies.split(","):
                    envs = {"TorchDisk -": ("TorchDisk", "-", "-", torch_disk)}
                    for r in a.big_rows.split(","):
                        st, spec = r.split(":")
                        envs[f"{st} {spec}"] = row(st, spec)
                    recs += _group(pname, policy(*POLICIES[pname]), a.big_gen, envs, a.big_reps, a.big_reps, big,
                                   big_dir, big_prompts, cuda, OptLM, pb, torch, a.group_seconds,
                                   max(a.max_reps, a.big_reps), a.big_layers, a.big_prompt)
        finally:
            if node:
                node.stop()
    grows = growth(recs)
    for g in grows:
        print(f"{g['policy']:17} {g['store']:9} {g['codec']}/{g['cache']:6} {g['long']} tokens {g['long_ratio']:.2f}x vs "
              f"{g['short']} tokens {g['short_ratio']:.2f}x: {g['change']:.3f} ({g['verdict']})", flush=True)
    write_json(a.json, recs, benchmark="flexgen", layers=a.layers, prompt=a.prompt, big_layers=a.big_layers,
               big_prompt=a.big_prompt, device="cuda" if cuda else "cpu", growth=grows)
    update_markdown(a.md, "flexgen", markdown(recs, a, cuda))
    return 0 if all(r["same_tokens"] for r in recs) else 1


def _group(pname, pol, gen, envs, reps, tcp_reps, cfg, tmp, prompts, cuda, OptLM, pb, torch, budget=0.0,
           most=0, layers=None, prompt=None) -> list[dict]:
    """One (policy, new tokens) group: every store's model built and warmed up, then the rounds of schedule(),
    reps of them and then extra_rounds() more for every store but the tcp:// node (which keeps tcp_reps)."""
    models = {}
    try:
        for name, (_, _, _, make) in envs.items():
            env = make()
            models[name] = (env, OptLM(cfg, env, tmp, pol))
            _current(pb, env)
            models[name][1].generate(prompts, max_new_tokens=2)  # warm-up
        rounds = {n: tcp_reps if n.startswith("tcp ") else reps for n in envs}
        secs, cpus, outs = ({n: {} for n in envs} for _ in range(3))

        def run(order):
            for i, name in order:
                env, model = models[name]
                _current(pb, env)
                gc.collect()  # the garbage of the generate before, whichever store's, is not collected in this one
                c0, t0 = _cpu_seconds(), time.perf_counter()
                out = model.generate(prompts, max_new_tokens=gen)
                if cuda:
                    torch.cuda.synchronize()
                secs[name][i] = time.perf_counter() - t0
                cpus[name][i] = _cpu_seconds() - c0
                outs[name][i] = out

        run(schedule(list(envs), rounds))
        spent = sum(sum(v.values()) for v in secs.values())
        more = extra_rounds(reps, spent, budget, most)
        if more:  # the same rotation, continued: rounds reps .. reps+more-1 of the stores that ran every round
            longer = {n: (r + more if r == reps else r) for n, r in rounds.items()}
            run([(i, n) for i, n in schedule(list(envs), longer) if i >= rounds[n]])
    finally:
        for env, model in models.values():
            model.delete_all_weights()
            model.delete_all_weights = lambda: None  # OptLM.__del__ would delete them again
            env.disk.synchronize()
            if hasattr(env.disk, "close"):
                env.disk.close()
            else:
                env.close_copy_threads()
    ref = outs["TorchDisk -"][0]
    recs = []
    for name, (store, codec, cache, _) in envs.items():
        seconds, ratio = summarize(secs[name], secs["TorchDisk -"])
        r = {"policy": pname, "layers": layers, "prompt": prompt, "gen": gen, "store": store, "codec": codec,
             "cache": cache, "reps": len(secs[name]),
             "seconds": seconds, "vs_torchdisk": ratio, "cpu_seconds": statistics.median(cpus[name].values()),
             "round_seconds": [secs[name][i] for i in sorted(secs[name])],
             "round_ratios": [secs["TorchDisk -"][i] / secs[name][i] for i in sorted(secs[name])],
             "round_cpu_seconds": [cpus[name][i] for i in sorted(cpus[name])],
             "same_tokens": all(np.array_equal(o, ref) for o in outs[name].values())}
        recs.append(r)
        print(f"{pname:17} {layers} layers gen {gen:4} {store:10} {codec:6} {cache:6} {r['seconds']:7.2f} s {ratio:5.2f}x "
              f"(cpu {r['cpu_seconds']:6.2f} s, {r['reps']} rounds) "
              f"tokens {'same' if r['same_tokens'] else 'DIFFER'}", flush=True)
    return recs


def per_op(a, cuda, pb, gtf, cpu_shim, torch) -> int:
    """--ops: median microseconds of a token's append to a KV cache of the bench's shape (batch 4 x 12
    heads x 64, prompt a.prompt, 32 new tokens) and of the read of its [0:pos] into a new host tensor, as
    OptLM's store_cache and load_cache issue them (general_copy, then the device's synchronize())."""
    heads, dim, rows = 48, 64, a.prompt + 31
    dtype = np.float16 if cuda else np.float32
    shim = contextlib.nullcontext() if cuda else cpu_shim()
    with tempfile.TemporaryDirectory() as tmp, shim:
        pb.fix_recursive_import()
        cpu = pb.TorchDevice("cpu")
        makers = {"TorchDisk": lambda: pb.TorchDisk(os.path.join(tmp, "disk")),
                  "mem": lambda: gtf.GoTensorDevice("mem://bench-flexgen-ops", codec="none"),
                  "file": lambda: gtf.GoTensorDevice(f"file://{tmp}/gt", codec="none")}
        print(f"per operation, {a.ops} of each, a cache of {rows}x{heads}x{dim} {np.dtype(dtype).name}:")
        for name, make in makers.items():
            dev = make()
            k = dev.allocate((rows, heads, dim), dtype)
            if isinstance(dev, gtf.GoTensorDevice):
                dev._mark_appended(k.data)
            prompt = cpu.allocate((a.prompt, heads, dim), dtype)
            prompt.data.normal_()
            one = cpu.allocate((1, heads, dim), dtype)
            one.data.normal_()
            app, rd = [], []
            while len(app) < a.ops:
                pb.general_copy(k, (slice(0, a.prompt), slice(0, heads)), prompt, None)
                dev.synchronize()
                for pos in range(a.prompt + 1, rows + 1):
                    t0 = time.perf_counter()
                    pb.general_copy(k, (slice(pos - 1, pos), slice(0, heads)), one, None)
                    dev.synchronize()
                    t1 = time.perf_counter()
                    k.smart_copy(cpu, (slice(0, pos), slice(0, heads)))
                    dev.synchronize()
                    app.append(t1 - t0)
                    rd.append(time.perf_counter() - t1)
            print(f"  {name:9} append {statistics.median(app) * 1e6:6.1f} us   read [0:pos] "
                  f"{statistics.median(rd) * 1e6:6.1f} us", flush=True)
            if isinstance(dev, gtf.GoTensorDevice):
                dev.close()
            else:
                dev.close_copy_threads()
    return 0


def _current(pb, env) -> None:
    """Point FlexGen's module globals at env's devices: with several models alive at once, the CPU device
    compresses for the one that generates and the disk device relays its CUDA-to-host copies."""
    pb.global_cpu_device, pb.global_disk_device = env.cpu, env.disk


def _table(recs: list[dict], change: dict) -> list[str]:
    lines = ["| policy | new tokens | store | codec | cache codec | rounds | seconds | vs TorchDisk | rounds ratio | "
             "longest/shortest | CPU seconds | tokens |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in recs:
        rr = r.get("round_ratios") or [r["vs_torchdisk"]]
        ch = change.get((r["policy"], r["gen"], r["store"], r["codec"], r.get("cache", "-")))
        lines.append(f"| {r['policy']} | {r['gen']} | {r['store']} | {r['codec']} | {r.get('cache', '-')} | "
                     f"{r['reps']} | {r['seconds']:.2f} | {r['vs_torchdisk']:.2f}x | {min(rr):.2f}-{max(rr):.2f} | "
                     f"{'-' if ch is None else f'{ch:.3f}'} | {r['cpu_seconds']:.2f} | "
                     f"{'same' if r['same_tokens'] else 'DIFFER'} |")
    return lines


def markdown(recs: list[dict], a, cuda: bool) -> str:
    big_layers = getattr(a, "big_layers", 0)
    big_key = (big_layers, getattr(a, "big_prompt", None))
    is_big = [bool(big_layers) and (r.get("layers"), r.get("prompt")) == big_key for r in recs]
    small = [r for r, b in zip(recs, is_big) if not b]
    big = [r for r, b in zip(recs, is_big) if b]
    where = 'GPU' if cuda else 'CPU (gotensor.flexgen.cpu, float32)'
    lines = ["## FlexGen end to end (`make bench-flexgen`)", "",
             f"`OptLM.generate`, random weights at opt-125m's dimensions, {a.layers} layers, batch 4, prompt "
             f"{a.prompt}, on the {where}. Each (policy, new tokens) group runs in rounds, one generate per store "
             "per round, the order rotated and reversed from round to round; seconds and CPU seconds are medians "
             "over the rounds, and vs TorchDisk is the median over rounds of that round's TorchDisk seconds over "
             "the row's (> 1: faster); tokens: identical to TorchDisk's in every round or not. codec: the device's "
             "codec=; cache codec: its cache_codec= (the KV cache's, none by default). file:// opens its directory "
             "as the device does by default, fsync=false (an offload directory is scratch; TorchDisk does not sync "
             "either), file-fsync with fsync=true. "
             f"OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', 'unset')} for every store.",
             "",
             "CPU seconds: this process's user and system time per generate (on a shared machine, what the run "
             "spent itself).", "",
             "Rounds ratio: the lowest and highest of the per-round ratios. Longest/shortest: a row's ratio at the "
             "longest generation over its ratio at the shortest, for the (policy, store, codec) run at both.", ""]
    grows = growth(small)
    change = {(g["policy"], g["long"], g["store"], g["codec"], g.get("cache", "-")): g["change"] for g in grows}
    lines += _table(small, change)
    if grows:
        lines += ["", "As the generation grows (holds: not lower; within noise: lower, but within the shortest "
                  "generation's per-round ratios; falls: below all of them): " + "; ".join(
                      f"{g['policy']} {g['store']} {g['codec']}/{g.get('cache', '-')} {g['short_ratio']:.2f}x at "
                      f"{g['short']} tokens, {g['long_ratio']:.2f}x at {g['long']}: {g['verdict']}"
                      for g in grows) + "."]
    if big:
        gen = big[0]["gen"]
        lines += ["", f"### {big_layers} layers, prompt {big_key[1]}, {gen} new tokens", "",
                  f"opt-125m's {big_layers} layers at its widths, batch 4, a {big_key[1]}-token prompt, {gen} new "
                  "tokens: what the smaller model hides (the KV cache's appends and reads grow with layers and "
                  "prompt). Rounds, ratios and columns as above.", ""]
        lines += _table(big, {})
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
