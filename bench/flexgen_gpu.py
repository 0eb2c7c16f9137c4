"""FlexGen on a GPU: OPT-shaped random weights offloaded to gotensor vs to
FlexGen's own TorchDisk, tokens/s of each in the same run. For the device
machine (`make flexgen-gpu`); writes bench/results/flexgen_gpu.json. Exits 0
with a message where there is no CUDA."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

import numpy as np
import torch


def write_weights(path, cfg):
    from gotensor.flexgen.cpu import write_opt_weights
    write_opt_weights(path, cfg, dtype=np.float16, scale=0.02)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="opt-1.3b")
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--gen", type=int, default=32)
    ap.add_argument("--json", default="bench/results/flexgen_gpu.json")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("flexgen_gpu: no CUDA device here; nothing run")
        return 0
    from flexgen import pytorch_backend as pb
    from flexgen.compression import CompressionConfig
    from flexgen.flex_opt import OptLM, Policy
    from flexgen.opt_config import get_opt_config
    from flexgen.utils import ExecutionEnv
    import gotensor.flexgen as gtf

    cfg = get_opt_config(args.model, num_hidden_layers=args.layers)
    policy = Policy(gpu_batch_size=8, num_gpu_batches=1, w_gpu_percent=0, w_cpu_percent=0,
                    cache_gpu_percent=100, cache_cpu_percent=0, act_gpu_percent=100, act_cpu_percent=0,
                    overlap=True, sep_layer=True, pin_weight=True, cpu_cache_compute=False, attn_sparsity=1.0,
                    compress_weight=False, comp_weight_config=CompressionConfig(4, 64, 0, False),
                    compress_cache=False, comp_cache_config=CompressionConfig(4, 64, 2, False))
    prompts = np.random.default_rng(1).integers(4, cfg.vocab_size, size=(8, 32))
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        write_weights(tmp, cfg)
        pb.fix_recursive_import()
        envs = {
            "torch_disk": lambda: ExecutionEnv.create(os.path.join(tmp, "flexgen-disk")),
            "gotensor_mem_none": lambda: gtf.execution_env("mem://", codec="none"),
            "gotensor_mem_planes": lambda: gtf.execution_env("mem://", codec="planes"),
            "gotensor_file_planes": lambda: gtf.execution_env(f"file://{tmp}/gt?fsync=false", codec="planes"),
        }
        tokens = {}
        for name, make in envs.items():
            env = make()
            model = OptLM(cfg, env, tmp, policy)
            model.generate(prompts, max_new_tokens=2)  # warm up
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            out = model.generate(prompts, max_new_tokens=args.gen)
            torch.cuda.synchronize()
            dt = time.perf_counter() - t0
            results[name] = {"tokens_per_s": prompts.shape[0] * args.gen / dt, "seconds": dt}
            tokens[name] = out
            model.delete_all_weights()
            env.close_copy_threads()
            print(name, results[name], flush=True)
        same = all(np.array_equal(tokens["torch_disk"], t) for t in tokens.values())
    os.makedirs(os.path.dirname(args.json), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump({"model": args.model, "layers": args.layers, "gen_len": args.gen, "same_tokens": same,
                   "results": results}, f, indent=1)
    print("same tokens:", same)
    return 0


if __name__ == "__main__":
    sys.exit(main())
