"""FlexGen's own command line with its disk tier on gotensor.

    python -m gotensor.flexgen --tiny [--offload-url URL]
    python -m gotensor.flexgen --offload-url file:///nvme/gt <flex_opt's arguments>
    python -m gotensor.flexgen --offload-url mem:// --cpu --model facebook/opt-125m --path _DUMMY_ ...

--tiny needs nothing downloaded: a small random OPT generates on the CPU with its weights and KV
cache on FlexGen's TorchDisk and then on gotensor, and the tokens and times of both are printed.
Otherwise it runs `flexgen.flex_opt`'s benchmark (run_flexgen) unchanged, except that the TorchDisk it
builds from --offload-dir is a GoTensorDevice on --offload-url (it fetches the model's tokenizer and
weights from the Hugging Face hub, as FlexGen does). --cpu runs it without CUDA (gotensor.flexgen.cpu,
the model in float32). The device's keys are deleted when the run ends.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys

import numpy as np


EPILOG = """examples:
  python -m gotensor.flexgen --tiny                       # offline: a tiny random OPT on the CPU, TorchDisk beside gotensor
  python -m gotensor.flexgen --tiny --offload-url file:///tmp/gt
  python -m gotensor.flexgen --offload-url file:///nvme/gt --model facebook/opt-1.3b --percent 0 100 0 100 100 0
  python -m gotensor.flexgen --offload-url mem:// --cpu --model facebook/opt-125m --percent 0 0 100 0 100 0
(without --tiny the model's tokenizer and weights come from the Hugging Face hub, as in FlexGen)"""


def parser() -> argparse.ArgumentParser:
    from flexgen import flex_opt
    ap = argparse.ArgumentParser(prog="python -m gotensor.flexgen", epilog=EPILOG,
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 description="flexgen.flex_opt with its disk offloading on a gotensor store")
    flex_opt.add_parser_arguments(ap)
    g = ap.add_argument_group("gotensor")
    g.add_argument("--tiny", action="store_true",
                   help="offline: generate with a small random OPT on the CPU, weights and KV cache on "
                        "FlexGen's TorchDisk and then on --offload-url (default mem://), and print both")
    g.add_argument("--offload-url", metavar="URL",
                   help="store for FlexGen's disk tier: mem://, file:///dir, tcp://host:port, ucx://... "
                        "(replaces --offload-dir)")
    g.add_argument("--offload-codec", default="planes", help="codec for float tensors (default planes)")
    g.add_argument("--offload-cache-codec", default="none",
                   help="codec for the KV cache's float tensors (default none: see docs/FLEXGEN.md)")
    g.add_argument("--weights-url", metavar="URL", help="read the model's -np weight files from this store "
                   "(filled by `gotensor load`)")
    g.add_argument("--weights-prefix", default="", help="key prefix of the weights in --weights-url")
    g.add_argument("--cpu", action="store_true", help="no CUDA: run through gotensor.flexgen.cpu in float32")
    return ap


@contextlib.contextmanager
def _patched(obj, name, value):
    old = getattr(obj, name)
    setattr(obj, name, value)
    try:
        yield
    finally:
        setattr(obj, name, old)


def main(argv=None) -> int:
    from flexgen import flex_opt
    from flexgen import pytorch_backend as pb

    import gotensor.flexgen as gtf
    ap = parser()
    args = ap.parse_args(argv)
    if args.tiny:
        return tiny(args.offload_url or "mem://", args.offload_codec, args.offload_cache_codec)
    if not args.offload_url:
        ap.error("--offload-url is required (or --tiny)")
    if len(args.percent) != 6:
        print("python -m gotensor.flexgen: --percent takes six numbers", file=sys.stderr)
        return 2
    gtf.install()
    if args.weights_url:
        gtf.read_weights_from(args.weights_url, args.weights_prefix)
    devices = []

    def disk(_offload_dir, *a, **k):
        devices.append(gtf.GoTensorDevice(args.offload_url, codec=args.offload_codec,
                                          cache_codec=args.offload_cache_codec))
        return devices[-1]

    with contextlib.ExitStack() as stack:
        stack.enter_context(_patched(flex_opt, "TorchDisk", disk))
        if args.cpu:
            from .cpu import cpu_shim
            stack.enter_context(cpu_shim())
            device = flex_opt.TorchDevice
            stack.enter_context(_patched(flex_opt, "TorchDevice", lambda name, *a, **k: device(
                "cpu" if str(name).startswith("cuda") else name, *a, **k)))
            config = flex_opt.get_opt_config
            stack.enter_context(_patched(flex_opt, "get_opt_config", lambda *a, **k: _float32(config(*a, **k))))
        try:
            flex_opt.run_flexgen(args)
        finally:
            for d in devices:
                d.print_stats()
                d.clear()
                d.close()
            pb.global_disk_device = None
    return 0


def tiny(url: str, codec: str, cache_codec: str = "none") -> int:
    """Generates with a 2-layer random OPT, weights and KV cache on TorchDisk, then on gotensor at url;
    prints both runs' tokens and seconds."""
    import tempfile
    import time

    from flexgen import pytorch_backend as pb
    from flexgen.compression import CompressionConfig
    from flexgen.flex_opt import OptLM, Policy
    from flexgen.utils import ExecutionEnv

    import gotensor.flexgen as gtf
    from .cpu import cpu_shim, tiny_opt

    comp = CompressionConfig(num_bits=4, group_size=64, group_dim=0, symmetric=False)
    policy = Policy(gpu_batch_size=2, num_gpu_batches=1, w_gpu_percent=0, w_cpu_percent=0,
                    cache_gpu_percent=0, cache_cpu_percent=0, act_gpu_percent=100, act_cpu_percent=0,
                    overlap=True, sep_layer=True, pin_weight=False, cpu_cache_compute=False, attn_sparsity=1.0,
                    compress_weight=False, comp_weight_config=comp, compress_cache=False, comp_cache_config=comp)
    prompts = np.array([[2, 15, 27, 33, 101, 7], [2, 99, 14, 250, 3, 44]], dtype=np.int64)
    gtf.install()
    with tempfile.TemporaryDirectory(prefix="gotensor-tiny-opt-") as d, cpu_shim():
        cfg = tiny_opt(os.path.join(d, "model"))
        cpu = pb.TorchDevice("cpu")
        runs = []
        for name in ("TorchDisk", "gotensor"):
            disk = (pb.TorchDisk(os.path.join(d, "torch-disk")) if name == "TorchDisk"
                    else gtf.GoTensorDevice(url, codec=codec, cache_codec=cache_codec))
            env = ExecutionEnv(gpu=cpu, cpu=cpu, disk=disk, mixed=pb.TorchMixedDevice([cpu, cpu, disk]))
            model = OptLM(cfg, env, os.path.join(d, "model"), policy)
            try:
                model.generate(prompts, max_new_tokens=16, do_sample=False)  # warm: the first run pays torch's setup
                start = time.perf_counter()
                out = model.generate(prompts, max_new_tokens=16, do_sample=False)
                runs.append((name, time.perf_counter() - start, out))
            finally:
                model.delete_all_weights()
                model.delete_all_weights = lambda: None  # done: OptLM.__del__ would delete them again
                disk.synchronize()
            if name == "gotensor":
                disk.clear()
                disk.close()
            else:
                disk.close_copy_threads()
            pb.global_disk_device = None
    print(f"tiny random OPT ({cfg.num_hidden_layers} layers, hidden {cfg.hidden_size}), weights and KV cache "
          f"offloaded, 16 new tokens for {len(prompts)} prompts, on the CPU")
    for name, secs, out in runs:
        where = ("FlexGen's TorchDisk" if name == "TorchDisk"
                 else f"gotensor {url} (codec {codec}, cache {cache_codec})")
        print(f"  {where:40s} {secs:7.3f} s   tokens {out[0][-16:].tolist()}")
    same = all((r[2] == runs[0][2]).all() for r in runs)
    print("  tokens identical:", "yes" if same else "NO")
    return 0 if same else 1


def _float32(cfg):
    import dataclasses
    return dataclasses.replace(cfg, dtype=np.float32)


if __name__ == "__main__":
    sys.exit(main())
