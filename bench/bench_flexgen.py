"""FlexGen end to end on gotensor against FlexGen's own TorchDisk (`make bench-flexgen`).

OptLM.generate on random weights at opt-125m's dimensions (fewer layers by default, so a run fits in
minutes on the CPU), through gotensor.flexgen.cpu where there is no CUDA. For each policy (KV cache on the
store, weights on the store, both, compressed cache) and store (TorchDisk, mem://, file://, a tcp:// node)
and codec: seconds per generate (median of the repetitions, after a warm-up) and whether the tokens are
identical to TorchDisk's. Output: JSON and a RESULTS.md section.

The default matrix fits about 10 minutes on 2 CPU cores: every policy, store and codec at the shortest
generation (32 new tokens); at the longest (256) only the --long-policies on the --long-stores with the
--long-codecs (the KV cache policies on mem:// and file://, codec none), which is where the ratio must
hold as the cache grows (weights cost the same per token at any length; weights-on-store at 256 adds about
5 minutes).

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


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", default=os.path.join(HERE, "results", "flexgen.json"))
    ap.add_argument("--md", default=os.path.join(HERE, "RESULTS.md"))
    ap.add_argument("--layers", type=int, default=4, help="decoder layers (opt-125m has 12)")
    ap.add_argument("--prompt", type=int, default=32)
    ap.add_argument("--gen", default="32,256", help="new tokens per generate, comma-separated")
    ap.add_argument("--policies", default=",".join(POLICIES))
    ap.add_argument("--stores", default="mem,file,tcp")
    ap.add_argument("--codecs", default="none,auto")
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--long-stores", default="mem,file",
                    help="stores run beyond the shortest generation (the others run at the shortest only)")
    ap.add_argument("--long-codecs", default="none", help="codecs run beyond the shortest generation")
    ap.add_argument("--long-policies", default="cache-on-store,compressed-cache",
                    help="policies run beyond the shortest generation")
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
    cfg = get_opt_config("opt-125m", num_hidden_layers=a.layers, dtype=np.float16 if cuda else np.float32)
    gens = [int(g) for g in a.gen.split(",")]
    prompts = np.random.default_rng(1).integers(4, cfg.vocab_size, size=(4, a.prompt))
    shim = contextlib.nullcontext() if cuda else cpu_shim()
    recs = []
    with tempfile.TemporaryDirectory() as tmp, shim:
        write_opt_weights(tmp, cfg, dtype=np.float16 if cuda else np.float32, scale=0.02)
        pb.fix_recursive_import()
        node = Node("tcp") if "tcp" in a.stores.split(",") else None
        compute = pb.TorchDevice("cuda:0" if cuda else "cpu")
        cpu = pb.TorchDevice("cpu")

        def torch_disk():
            disk = pb.TorchDisk(os.path.join(tmp, "flexgen-disk"))
            return ExecutionEnv(gpu=compute, cpu=cpu, disk=disk, mixed=pb.TorchMixedDevice([compute, cpu, disk]))

        urls = {"mem": "mem://bench-flexgen", "file": f"file://{tmp}/gt?fsync=false", "tcp": node.url if node else None}
        try:
            for pname in a.policies.split(","):
                pol = policy(*POLICIES[pname])
                for gen in gens:
                    long = gen > min(gens)
                    if long and pname not in a.long_policies.split(","):
                        continue
                    envs = [("TorchDisk", "-", torch_disk)]
                    for st in a.stores.split(","):
                        if long and st not in a.long_stores.split(","):
                            continue
                        for codec in a.codecs.split(","):
                            if long and codec not in a.long_codecs.split(","):
                                continue
                            envs.append((st, codec, lambda u=urls[st], c=codec: gtf.execution_env(u, codec=c, gpu=str(compute.dev))))
                    ref = None
                    for store, codec, make in envs:
                        env = make()
                        model = OptLM(cfg, env, tmp, pol)
                        try:
                            model.generate(prompts, max_new_tokens=2)  # warm-up
                            times, cpus = [], []
                            for _ in range(a.reps):
                                c0, t0 = _cpu_seconds(), time.perf_counter()
                                out = model.generate(prompts, max_new_tokens=gen)
                                if cuda:
                                    torch.cuda.synchronize()
                                times.append(time.perf_counter() - t0)
                                cpus.append(_cpu_seconds() - c0)
                        finally:
                            model.delete_all_weights()
                            model.delete_all_weights = lambda: None  # OptLM.__del__ would delete them again
                            env.disk.synchronize()
                            if hasattr(env.disk, "close"):
                                env.disk.close()
                            else:
                                env.close_copy_threads()
                        ref = out if ref is None else ref
                        r = {"policy": pname, "gen": gen, "store": store, "codec": codec,
                             "seconds": statistics.median(times), "cpu_seconds": statistics.median(cpus),
                             "same_tokens": bool(np.array_equal(out, ref))}
                        recs.append(r)
                        print(f"{pname:17} gen {gen:4} {store:9} {codec:6} {r['seconds']:7.2f} s "
                              f"(cpu {r['cpu_seconds']:6.2f} s) "
                              f"tokens {'same' if r['same_tokens'] else 'DIFFER'}", flush=True)
        finally:
            if node:
                node.stop()
    write_json(a.json, recs, benchmark="flexgen", layers=a.layers, prompt=a.prompt, device="cuda" if cuda else "cpu")
    lines = ["## FlexGen end to end (`make bench-flexgen`)", "",
             f"`OptLM.generate`, random weights at opt-125m's dimensions, {a.layers} layers, batch 4, prompt "
             f"{a.prompt}, on the {'GPU' if cuda else 'CPU (gotensor.flexgen.cpu, float32)'}; seconds per generate "
             "(median) and speed relative to FlexGen's TorchDisk in the same run (> 1: faster); tokens: identical "
             "to TorchDisk's or not. file:// runs with fsync=false (TorchDisk does not sync either); "
             f"OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', 'unset')} for every store.", "",
             "CPU seconds: this process's user and system time per generate (on a shared machine, what the run "
             "spent itself).", "",
             "| policy | new tokens | store | codec | seconds | vs TorchDisk | CPU seconds | tokens |",
             "|---|---|---|---|---|---|---|---|"]
    base = {(r["policy"], r["gen"]): r["seconds"] for r in recs if r["store"] == "TorchDisk"}
    for r in recs:
        lines.append(f"| {r['policy']} | {r['gen']} | {r['store']} | {r['codec']} | {r['seconds']:.2f} | "
                     f"{base[(r['policy'], r['gen'])] / r['seconds']:.2f}x | {r['cpu_seconds']:.2f} | "
                     f"{'same' if r['same_tokens'] else 'DIFFER'} |")
    update_markdown(a.md, "flexgen", "\n".join(lines))
    return 0 if all(r["same_tokens"] for r in recs) else 1


if __name__ == "__main__":
    sys.exit(main())
