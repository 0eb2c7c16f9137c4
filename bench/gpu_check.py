"""GPU check for the device machine: CUDA bfloat16 tensors written to gotensor
and read back bit-exact, GB/s beside torch's own .cpu() / .cuda() in the same
run. `make gpu-check`; writes bench/results/gpu.json. Exits 0 with a message
where there is no CUDA."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import torch

import gotensor


def timed(fn, reps=5):
    fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", default="bench/results/gpu.json")
    ap.add_argument("--sizes-mib", default="64,1024")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("gpu_check: no CUDA device here; nothing run")
        return 0
    info = gotensor.info()
    print("hardware:", json.dumps(info["hardware"]["gpus"], indent=1))
    records = []
    for mib in (int(s) for s in args.sizes_mib.split(",")):
        n = (mib << 20) // 2
        t = (torch.randn(n, device="cuda") * 0.02).to(torch.bfloat16)
        gb = n * 2 / 1e9
        pinned = torch.empty(n, dtype=torch.bfloat16, pin_memory=True)
        rec = {"size_mib": mib,
               "torch_cpu_gbps": gb / timed(lambda: t.cpu()),
               "torch_cpu_pinned_gbps": gb / timed(lambda: pinned.copy_(t)),
               "torch_cuda_gbps": gb / timed(lambda: pinned.cuda()),
               "torch_cuda_pinned_gbps": gb / timed(lambda: t.copy_(pinned, non_blocking=True))}
        for codec in ("none", "planes"):
            with gotensor.open("mem://") as s:
                w = timed(lambda: s.write_tensor("t", t, codec=codec))
                r = timed(lambda: s.read_tensor("t", device="cuda"))
                out = torch.empty_like(t)
                ro = timed(lambda: s.read_tensor("t", out=out))
                back = s.read_tensor("t", device="cuda")
                assert back.is_cuda and torch.equal(back.view(torch.int16), t.view(torch.int16)), codec
                assert torch.equal(out.view(torch.int16), t.view(torch.int16)), codec
                rec[f"gotensor_{codec}_write_gbps"] = gb / w
                rec[f"gotensor_{codec}_read_gbps"] = gb / r
                rec[f"gotensor_{codec}_read_out_gbps"] = gb / ro
                rec[f"gotensor_{codec}_ratio"] = n * 2 / s.stat("t")["stored_bytes"]
        records.append(rec)
        print(json.dumps(rec), flush=True)
    os.makedirs(os.path.dirname(args.json), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump({"gpus": info["hardware"]["gpus"], "records": records, "bit_exact": True}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
