"""FlexGen integration: offload weights and KV cache through gotensor.

    import gotensor.flexgen as gtf
    env = gtf.execution_env("file:///nvme/offload")  # instead of ExecutionEnv.create(path); mem://, tcp://...
    model = OptLM(config, env, weights_path, policy) # policy's disk percentages now go to gotensor

or, for FlexGen's own command line: `python -m gotensor.flexgen --offload-url URL <flex_opt's arguments>`.

GoTensorDevice is a flexgen TorchDisk (device type DISK), so every FlexGen
dispatch path (general_copy, TorchMixedDevice, TorchCompressedDevice) reaches
it unchanged. Uncompressed tensors are stored with the lossless `planes`
codec (floats) or `auto`; with policy.compress_weight / compress_cache,
FlexGen's TorchCompressedDevice hands the device exactly the data and scale
tensors of gotensor's q4 format, which are stored as they are. Copies never
touch CUDA unless a side of them is on a GPU.

Modules: device (GoTensorDevice), indices (FlexGen's indices as row
reads and writes), runs (key prefixes, clear_runs), patches (install,
uninstall, read_weights_from), env (execution_env), cpu (FlexGen without
CUDA), __main__ (the drop-in command).
"""

from __future__ import annotations

from .device import INLINE_BYTES, GoTensorDevice
from .env import execution_env
from .patches import install, read_weights_from, uninstall
from .runs import RUNS, clear_runs

__all__ = ["GoTensorDevice", "install", "uninstall", "execution_env", "read_weights_from", "clear_runs"]
