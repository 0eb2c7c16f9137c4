"""gotensor demo: offload a real checkpoint's weights to the embedded store and back.

Pushes every weight of stories260K (a llama2.c model trained on TinyStories)
through gotensor as bfloat16 and float32 tensors, reads them back, checks
they are bit-exact and prints sizes and throughput.
"""

import time

import torch

import gotensor
from gotensor.checkpoints import find_testdata, load_llama2c


def main() -> None:
    path = find_testdata("stories260K.bin")
    weights = {k: torch.from_numpy(v.copy()) for k, v in load_llama2c(path).items()}
    params = sum(t.numel() for t in weights.values())
    print(f"gotensor {gotensor.__version__}: {len(weights)} tensors, {params:,} parameters from {path}")

    store = gotensor.default_store()
    for dtype in (torch.bfloat16, torch.float32):
        tensors = {f"{dtype}/{k}": v.to(dtype) for k, v in weights.items()}
        nbytes = sum(t.numel() * t.element_size() for t in tensors.values())
        rounds = 20
        t0 = time.perf_counter()
        for _ in range(rounds):
            for k, t in tensors.items():
                store.write_tensor(k, t)
        t1 = time.perf_counter()
        for _ in range(rounds):
            back = {k: store.read_tensor(k) for k in tensors}
        t2 = time.perf_counter()
        for k, t in tensors.items():
            r = back[k]
            assert r.dtype == t.dtype and r.shape == t.shape
            assert torch.equal(r.reshape(-1).view(torch.uint8), t.reshape(-1).view(torch.uint8)), k
        stored = sum(store.stat(k)["stored_bytes"] for k in tensors)
        gb = nbytes * rounds / 1e9
        print(f"  {str(dtype):15s} {nbytes:>10,} bytes -> {stored:>10,} stored  "
              f"write {gb / (t1 - t0):6.2f} GB/s  read {gb / (t2 - t1):6.2f} GB/s  bit-exact: yes")
    print(f"store: {store.usage()}")


if __name__ == "__main__":
    main()
