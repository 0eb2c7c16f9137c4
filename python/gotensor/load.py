"""`gotensor load SRC --to URL`: put a model's weights into a store.

SRC is a .safetensors file or a FlexGen weight directory (`<name>-np/`, one
np.save file per tensor). Keys are the tensor names, under --prefix.
FlexGen then reads them from the store (gotensor.flexgen.execution_env(
weights=URL_and_prefix)) instead of from the -np directory.
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np
import torch

from .checkpoints import load_safetensors

_ST_TORCH = {"F64": torch.float64, "F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16,
             "I64": torch.int64, "I32": torch.int32, "I16": torch.int16, "I8": torch.int8, "U8": torch.uint8,
             "BOOL": torch.bool}


def iter_tensors(src: str):
    """(name, tensor) pairs of a .safetensors file or a FlexGen -np directory."""
    if os.path.isdir(src):
        for name in sorted(os.listdir(src)):
            path = os.path.join(src, name)
            if os.path.isfile(path):
                try:
                    yield name, torch.from_numpy(np.load(path, allow_pickle=False))
                except ValueError:
                    continue  # not an np.save file
        return
    for name, (dt, arr) in load_safetensors(src).items():
        t = torch.from_numpy(np.ascontiguousarray(arr))
        if dt == "BF16":
            t = t.view(torch.bfloat16)
        elif dt in ("F8_E4M3", "F8_E5M2"):
            t = t.view(torch.float8_e4m3fn if dt == "F8_E4M3" else torch.float8_e5m2)
        yield name, t


def _bar(done: int, total: int, nbytes: int, t0: float, name: str, out=sys.stderr) -> None:
    width = 30
    filled = width * done // max(total, 1)
    rate = nbytes / max(time.perf_counter() - t0, 1e-9) / 1e6
    out.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} tensors, {nbytes / 1e6:.1f} MB, "
              f"{rate:.0f} MB/s  {name[:40]:40s}")
    out.flush()


def load(src: str, url: str, prefix: str = "", codec: str = "auto", progress: bool = True) -> dict:
    """Write every tensor of src into the store at url; returns a summary."""
    import gotensor
    if not os.path.exists(src):
        raise gotensor.InvalidArgument(f"{src}: no such file or directory")
    names = [n for n, _ in iter_tensors(src)] if progress else []
    total = len(names)
    raw = stored = count = 0
    t0 = time.perf_counter()
    with gotensor.open(url) as store:
        for name, t in iter_tensors(src):
            key = prefix + name
            store.write_tensor(key, t, codec=codec)
            raw += t.numel() * t.element_size()
            stored += store.stat(key)["stored_bytes"]
            count += 1
            if progress:
                _bar(count, total, raw, t0, name)
    if progress:
        sys.stderr.write("\n")
    return {"tensors": count, "raw_bytes": raw, "stored_bytes": stored, "seconds": time.perf_counter() - t0}
