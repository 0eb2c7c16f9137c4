"""FlexGen's ExecutionEnv with a GoTensorDevice as its disk."""

from __future__ import annotations

import torch
from flexgen import pytorch_backend as pb
from flexgen.utils import ExecutionEnv

from .device import GoTensorDevice
from .patches import install, read_weights_from


def execution_env(url: str = "mem://", *, codec: str = "planes", gpu: str | None = None,
                  weights: str | None = None, weights_prefix: str = "", **device_args) -> ExecutionEnv:
    """FlexGen's ExecutionEnv with a GoTensorDevice as its disk, in place of
    ExecutionEnv.create(offload_dir); it calls install() (the patches every
    GoTensorDevice needs), so there is nothing else to call. gpu defaults to
    cuda:0, or to the CPU where there is no CUDA. weights: a store URL filled by
    `gotensor load` to read the model's weights from."""
    install()
    if weights is not None:
        read_weights_from(weights, weights_prefix)
    compute = pb.TorchDevice(gpu or ("cuda:0" if torch.cuda.is_available() else "cpu"))
    cpu = pb.TorchDevice("cpu")
    disk = GoTensorDevice(url, codec=codec, **device_args)
    return ExecutionEnv(gpu=compute, cpu=cpu, disk=disk, mixed=pb.TorchMixedDevice([compute, cpu, disk]))
