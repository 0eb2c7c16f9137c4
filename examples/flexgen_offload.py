"""Offload a FlexGen OPT model's weights and KV cache through gotensor.

    gotensor load ~/opt_weights/opt-1.3b-np --to file:///nvme/gt --prefix opt-1.3b/   # once
    python examples/flexgen_offload.py
"""
import numpy as np
from flexgen.compression import CompressionConfig
from flexgen.flex_opt import OptLM, Policy

import gotensor.flexgen as gtf

# the disk tier on a directory (as FlexGen's --offload-dir); the weights from the store `gotensor load` filled
env = gtf.execution_env("file:///nvme/offload", weights="file:///nvme/gt", weights_prefix="opt-1.3b/")
policy = Policy(gpu_batch_size=4, num_gpu_batches=1, w_gpu_percent=20, w_cpu_percent=30,  # 50% of weights on gotensor
                cache_gpu_percent=100, cache_cpu_percent=0, act_gpu_percent=100, act_cpu_percent=0,
                overlap=True, sep_layer=True, pin_weight=True, cpu_cache_compute=False, attn_sparsity=1.0,
                compress_weight=False, comp_weight_config=CompressionConfig(4, 64, 0, False),
                compress_cache=False, comp_cache_config=CompressionConfig(4, 64, 2, False))
model = OptLM("facebook/opt-1.3b", env, "~/opt_weights", policy)
print(model.generate(np.array([[2, 100, 200, 300]] * 4), max_new_tokens=16))
env.disk.print_stats()
env.close_copy_threads()
