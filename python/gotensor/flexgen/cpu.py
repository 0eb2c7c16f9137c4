"""FlexGen without CUDA: the way to try FlexGen (and gotensor under it) on a CPU-only machine.

    from gotensor.flexgen.cpu import cpu_shim
    with cpu_shim():                      # model in float32; FlexGen's CUDA-only calls stood in for
        model = OptLM(cfg, env, path, policy)
        model.generate(prompts, max_new_tokens=8)

`python -m gotensor.flexgen --cpu ...` runs flex_opt's command line under it.
FlexGen assumes CUDA: it creates CUDA streams, its TorchDisk's copy threads
call torch.cuda.set_device, CPU allocations ask for pinned memory, CPU
attention results are sent back with .cuda().half(), and the KV cache is
float16 (slow or missing CPU kernels). The shim below patches exactly those
spots; everything else, FlexGen's TorchDisk and gotensor's device alike,
runs as shipped. This module also writes a small random OPT in FlexGen's -np
weight layout.
"""

from __future__ import annotations

import contextlib
import os

import numpy as np
import torch
from flexgen import pytorch_backend as pb
from flexgen.opt_config import get_opt_config


class _NoStream:
    def __init__(self, *a, **k):
        pass

    def synchronize(self):
        pass

    def wait_stream(self, *a):
        pass


def _cpu_copy_worker(q, cuda_id):
    while True:
        item = q.get()
        if item is None:
            q.task_done()
            return
        dst, dst_indices, src, src_indices = item
        pb.map_to_torch_tensor(dst, dst_indices).copy_(pb.map_to_torch_tensor(src, src_indices))
        q.task_done()


def _cache_in_model_dtype(self, config, task, policy):
    shape = (task.prompt_len + task.gen_len - 1, policy.gpu_batch_size * config.n_head, config.input_dim // config.n_head)
    kw = {} if isinstance(self, pb.TorchDisk) else {"pin_memory": False}
    if isinstance(self, pb.TorchCompressedDevice):
        kw["comp_config"] = policy.comp_cache_config
    return self.allocate(shape, config.dtype, **kw), self.allocate(shape, config.dtype, **kw)


@contextlib.contextmanager
def cpu_shim():
    pb.fix_recursive_import()
    saved = {
        (torch.cuda, "Stream"): torch.cuda.Stream, (torch.cuda, "stream"): torch.cuda.stream,
        (torch.cuda, "synchronize"): torch.cuda.synchronize,
        (torch.Tensor, "cuda"): torch.Tensor.cuda, (torch.Tensor, "half"): torch.Tensor.half,
        (pb, "copy_worker_func"): pb.copy_worker_func,
        (pb.TorchDevice, "allocate"): pb.TorchDevice.allocate,
        (pb.TorchDevice, "init_cache_one_gpu_batch"): pb.TorchDevice.init_cache_one_gpu_batch,
        (pb.TorchDisk, "init_cache_one_gpu_batch"): pb.TorchDisk.init_cache_one_gpu_batch,
        (pb.TorchCompressedDevice, "allocate"): pb.TorchCompressedDevice.allocate,
        (pb.TorchCompressedDevice, "init_cache_one_gpu_batch"): pb.TorchCompressedDevice.init_cache_one_gpu_batch,
        (pb.TorchCompressedDevice, "decompress"): pb.TorchCompressedDevice.decompress,
    }
    orig_alloc = pb.TorchDevice.allocate
    orig_comp_alloc = pb.TorchCompressedDevice.allocate
    torch.cuda.Stream = _NoStream
    torch.cuda.stream = lambda s: contextlib.nullcontext()
    torch.cuda.synchronize = lambda *a, **k: None
    # CPU attention results go back ".cuda().half()": on a CPU run in float32
    # both are identities
    torch.Tensor.cuda = lambda self, *a, **k: self
    torch.Tensor.half = lambda self, *a, **k: self
    pb.copy_worker_func = _cpu_copy_worker
    pb.TorchDevice.allocate = lambda self, shape, dtype, pin_memory=None, name=None: orig_alloc(
        self, shape, dtype, pin_memory=False, name=name)
    pb.TorchDevice.init_cache_one_gpu_batch = _cache_in_model_dtype
    pb.TorchDisk.init_cache_one_gpu_batch = _cache_in_model_dtype

    def comp_alloc(self, shape, dtype, comp_config, pin_memory=None, name=None):
        # FlexGen asserts float16 here; the quantized format does not care
        return orig_comp_alloc(self, shape, np.float16, comp_config, pin_memory=False, name=name)

    pb.TorchCompressedDevice.allocate = comp_alloc
    orig_decompress = pb.TorchCompressedDevice.decompress

    def decompress(self, tensor):
        # the CPU path decodes into a workspace that OptLM only sets up when
        # attention runs on the CPU device proper; size it from the tensor
        ws = self.data_decompress_workspace
        if self.base_device.device_type == pb.DeviceType.CPU and (ws is None or ws[0].shape[0] < tensor.shape[0]):
            gs, gd = tensor.data[2].group_size, tensor.data[2].group_dim
            shape = tuple(tensor.shape)
            ws = shape[:gd] + ((shape[gd] + gs - 1) // gs, gs) + shape[gd + 1:]
            self.data_decompress_workspace = [torch.empty(ws, dtype=torch.float32) for _ in range(2)]
        return orig_decompress(self, tensor)

    pb.TorchCompressedDevice.decompress = decompress
    pb.TorchCompressedDevice.init_cache_one_gpu_batch = _cache_in_model_dtype
    try:
        yield
    finally:
        for (obj, name), val in saved.items():
            setattr(obj, name, val)


def write_opt_weights(path: str, cfg, dtype=np.float32, scale: float = 0.2, seed: int = 0) -> None:
    """Random OPT weights for cfg in FlexGen's -np layout under path."""
    rng = np.random.default_rng(seed)
    h, v, s = cfg.input_dim, cfg.vocab_size, cfg.max_seq_len
    shapes = {"decoder.embed_tokens.weight": (v, h), "decoder.embed_positions.weight": (s + 2, h),
              "decoder.layer_norm.weight": (h,), "decoder.layer_norm.bias": (h,)}
    for i in range(cfg.num_hidden_layers):
        p = f"decoder.layers.{i}."
        for n in ("q_proj", "k_proj", "v_proj", "out_proj"):
            shapes[p + f"self_attn.{n}.weight"] = (h, h)
            shapes[p + f"self_attn.{n}.bias"] = (h,)
        shapes[p + "self_attn_layer_norm.weight"] = (h,)
        shapes[p + "self_attn_layer_norm.bias"] = (h,)
        shapes[p + "fc1.weight"], shapes[p + "fc1.bias"] = (4 * h, h), (4 * h,)
        shapes[p + "fc2.weight"], shapes[p + "fc2.bias"] = (h, 4 * h), (h,)
        shapes[p + "final_layer_norm.weight"] = (h,)
        shapes[p + "final_layer_norm.bias"] = (h,)
    d = os.path.join(path, f"{cfg.name}-np")
    os.makedirs(d, exist_ok=True)
    for name, shape in shapes.items():
        arr = (1.0 + 0.1 * rng.standard_normal(shape)) if name.endswith("norm.weight") else scale * rng.standard_normal(shape)
        with open(os.path.join(d, name), "wb") as f:
            np.save(f, arr.astype(dtype))


def tiny_opt(path: str, seed: int = 0):
    """A 2-layer random OPT (opt-125m's layout, small dims) in FlexGen's -np layout, float32."""
    cfg = get_opt_config("opt-125m", num_hidden_layers=2, hidden_size=64, input_dim=64, n_head=4,
                         ffn_embed_dim=256, vocab_size=512, max_seq_len=64, dtype=np.float32)
    write_opt_weights(path, cfg, seed=seed)
    return cfg
