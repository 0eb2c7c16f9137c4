"""KV append benchmark: a FlexGen decode step's one-token appends (one row
written with store.write_tensor(key, row, rows=slice(pos, pos + 1))) into
a cache laid out a row per chunk (chunk_rows=1, as GoTensorDevice lays out
its KV caches), of 256 and of 4096 rows, on the embedded and directory
stores. Layouts: the plain cache (a 48x64 float32 row) and the two tensors
of FlexGen's compressed cache as its TorchCompressedDevice allocates them
on GoTensorDevice (4-bit, group 64 on the head dimension, opt-125m dims at
batch 4: data uint8 [rows, 48, 32], scales float16 [rows, 48, 1, 2]), with
the codecs GoTensorDevice picks (codec none, or planes: planes for the
floats, auto for the packed bytes) and none. The appends walk the cache's
last 64 positions in order, as a generation does (a chunk holds several
small rows, so one fixed position would sit at a different place in its
chunk in each cache). A row write costs the chunks it touches, so the
4096-row cache's append should cost about what the 256-row one's does
(goal: within 1.5x). Results: JSON + a RESULTS.md section with the
4096/256 ratio.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time

import torch

import gotensor
from _report import update_markdown, write_json

GOAL = 1.5
WINDOW = 64  # the positions appended at: the cache's last WINDOW
# name: (row shape, dtype, codecs); the codecs as GoTensorDevice's _codec_for picks them, and none
LAYOUTS = {
    "plain": ((1, 48, 64), torch.float32, ["none", "planes"]),
    "q4-data": ((1, 48, 32), torch.uint8, ["none", "auto"]),
    "q4-scales": ((1, 48, 1, 2), torch.float16, ["none", "planes"]),
}


def _random(shape, dtype) -> torch.Tensor:
    if dtype == torch.uint8:
        return torch.randint(0, 256, shape, dtype=dtype)
    return torch.randn(shape).to(dtype)


def append_us(store, key: str, rows: int, layout: str, codec: str, appends: int, batches: int) -> float:
    shape, dtype, _ = LAYOUTS[layout]
    store.write_tensor(key, _random((rows, *shape[1:]), dtype), codec=codec, chunk_rows=1)
    row = _random(shape, dtype)
    times, i = [], 0
    for _ in range(batches):
        t0 = time.perf_counter()
        for _ in range(appends):
            pos = rows - WINDOW + i % WINDOW
            i += 1
            store.write_tensor(key, row, rows=slice(pos, pos + 1))
        times.append((time.perf_counter() - t0) / appends * 1e6)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--appends", type=int, default=3 * WINDOW, help="appends per timed batch")
    ap.add_argument("--batches", type=int, default=9, help="batches; the median is reported")
    ap.add_argument("--reps", type=int, default=3, help="times the two lengths are alternated")
    ap.add_argument("--json", default="bench/results/append.json")
    ap.add_argument("--md", default="bench/RESULTS.md")
    args = ap.parse_args()
    records = []
    with tempfile.TemporaryDirectory() as d:
        for url in ["mem://", f"file://{d}?fsync=false"]:
            store = gotensor.open(url)
            for layout, (shape, dtype, codecs) in LAYOUTS.items():
                for codec in codecs:
                    us = {}
                    # alternate the two lengths so that noise hits both alike
                    for rep in range(args.reps):
                        for rows in (256, 4096):
                            t = append_us(store, f"kv-{layout}-{codec}-{rows}", rows, layout, codec,
                                          args.appends, args.batches)
                            us.setdefault(rows, []).append(t)
                    small, big = statistics.median(us[256]), statistics.median(us[4096])
                    row_bytes = torch.Size(shape).numel() * dtype.itemsize
                    rec = {"store": url.split("://")[0] + "://", "layout": layout, "dtype": str(dtype)[6:],
                           "row_shape": list(shape), "row_bytes": row_bytes, "codec": codec,
                           "us_256": round(small, 2), "us_4096": round(big, 2), "ratio": round(big / small, 3)}
                    records.append(rec)
                    print(rec, flush=True)
            store.close()
    write_json(args.json, records, window=WINDOW, goal_ratio=GOAL)
    lines = ["## KV append (a decode step's one-row appends into a chunk_rows=1 cache)", "",
             "`make bench-flexgen` (bench/bench_append.py): one row written with "
             "`write_tensor(key, row, rows=slice(pos, pos+1))`, pos walking the cache's last "
             f"{WINDOW} positions in order; median us per append ({args.batches} batches of {args.appends}, "
             f"the two lengths alternated {args.reps} times); goal: the 4096-row cache within {GOAL}x of the "
             "256-row one. Layouts: `plain` a float32 (1, 48, 64) row; `q4-data` and `q4-scales` the two "
             "tensors of FlexGen's compressed cache (4-bit, opt-125m dims, batch 4) as GoTensorDevice stores "
             "them, with the codecs it picks and none. file:// runs with fsync=false.", "",
             "| store | layout | row | codec | 256 rows (us) | 4096 rows (us) | 4096/256 | goal |",
             "|---|---|---|---|---|---|---|---|"]
    for r in records:
        verdict = "met" if r["ratio"] <= GOAL else "missed"
        row = f"{r['dtype']} {tuple(r['row_shape'])}, {r['row_bytes']} B"
        lines.append(f"| {r['store']} | {r['layout']} | {row} | {r['codec']} | {r['us_256']} | "
                     f"{r['us_4096']} | {r['ratio']} | {verdict} |")
    update_markdown(args.md, "append", "\n".join(lines))


if __name__ == "__main__":
    main()
