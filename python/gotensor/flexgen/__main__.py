"""FlexGen's own command line with its disk tier on gotensor.

    python -m gotensor.flexgen --offload-url file:///nvme/gt <flex_opt's arguments>
    python -m gotensor.flexgen --offload-url mem:// --cpu --model facebook/opt-125m --path _DUMMY_ ...

runs `flexgen.flex_opt`'s benchmark (run_flexgen) unchanged, except that the TorchDisk it builds from
--offload-dir is a GoTensorDevice on --offload-url. --cpu runs it without CUDA (gotensor.flexgen.cpu, the
model in float32). The device's keys are deleted when the run ends.
"""

from __future__ import annotations

import argparse
import contextlib
import sys

import numpy as np


def parser() -> argparse.ArgumentParser:
    from flexgen import flex_opt
    ap = argparse.ArgumentParser(prog="python -m gotensor.flexgen",
                                 description="flexgen.flex_opt with its disk offloading on a gotensor store")
    flex_opt.add_parser_arguments(ap)
    g = ap.add_argument_group("gotensor")
    g.add_argument("--offload-url", required=True, metavar="URL",
                   help="store for FlexGen's disk tier: mem://, file:///dir, tcp://host:port, ucx://... "
                        "(replaces --offload-dir)")
    g.add_argument("--offload-codec", default="planes", help="codec for float tensors (default planes)")
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
    args = parser().parse_args(argv)
    if len(args.percent) != 6:
        print("python -m gotensor.flexgen: --percent takes six numbers", file=sys.stderr)
        return 2
    gtf.install()
    if args.weights_url:
        gtf.read_weights_from(args.weights_url, args.weights_prefix)
    devices = []

    def disk(_offload_dir, *a, **k):
        devices.append(gtf.GoTensorDevice(args.offload_url, codec=args.offload_codec))
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


def _float32(cfg):
    import dataclasses
    return dataclasses.replace(cfg, dtype=np.float32)


if __name__ == "__main__":
    sys.exit(main())
