"""KV append benchmark: a FlexGen-shaped one-token append (one row written
with store.write_tensor(key, row, rows=slice(pos, pos + 1))) into a cache
laid out a row per chunk (chunk_rows=1), of 256 and of 4096 rows, on the
embedded and directory stores, codec none and planes. A row write costs the
chunks it touches, so the 4096-row cache's append should cost about what
the 256-row one's does (goal: within 1.5x). Results: JSON + a RESULTS.md
section with the 4096/256 ratio.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time

import torch

import gotensor
from _report import update_markdown, write_json

ROW = (1, 48, 64)  # one token's row of a plain FlexGen KV cache: 12 KiB of float32
GOAL = 1.5


def append_us(store, key: str, rows: int, codec: str, appends: int, batches: int) -> float:
    cache = torch.randn(rows, *ROW[1:])
    store.write_tensor(key, cache, codec=codec, chunk_rows=1)
    row = torch.randn(*ROW)
    pos = rows - 1  # the cache's end, where a decode step appends
    times = []
    for _ in range(batches):
        t0 = time.perf_counter()
        for _ in range(appends):
            store.write_tensor(key, row, rows=slice(pos, pos + 1))
        times.append((time.perf_counter() - t0) / appends * 1e6)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--appends", type=int, default=200, help="appends per timed batch")
    ap.add_argument("--batches", type=int, default=9, help="batches; the median is reported")
    ap.add_argument("--json", default="bench/results/append.json")
    ap.add_argument("--md", default="bench/RESULTS.md")
    args = ap.parse_args()
    records = []
    with tempfile.TemporaryDirectory() as d:
        for url in ["mem://", f"file://{d}?fsync=false"]:
            store = gotensor.open(url)
            for codec in ["none", "planes"]:
                us = {}
                # alternate the two lengths so that noise hits both alike
                for rep in range(3):
                    for rows in (256, 4096):
                        t = append_us(store, f"kv-{codec}-{rows}", rows, codec, args.appends, args.batches)
                        us.setdefault(rows, []).append(t)
                small, big = statistics.median(us[256]), statistics.median(us[4096])
                rec = {"store": url.split("://")[0] + "://", "codec": codec, "us_256": round(small, 2),
                       "us_4096": round(big, 2), "ratio": round(big / small, 3)}
                records.append(rec)
                print(rec, flush=True)
            store.close()
    write_json(args.json, records, row_shape=list(ROW), goal_ratio=GOAL)
    lines = ["## KV append (one row at the end of a chunk_rows=1 cache)", "",
             f"`make bench-flexgen` (bench/bench_append.py): a {ROW} float32 row written with "
             "`write_tensor(key, row, rows=slice(pos, pos+1))` at the cache's last row; median us per append "
             f"({args.batches} batches of {args.appends}, the two lengths alternated 3 times); "
             f"goal: the 4096-row cache within {GOAL}x of the 256-row one. file:// runs with fsync=false.", "",
             "| store | codec | 256 rows (us) | 4096 rows (us) | 4096/256 | goal |", "|---|---|---|---|---|---|"]
    for r in records:
        verdict = "met" if r["ratio"] <= GOAL else "missed"
        lines.append(f"| {r['store']} | {r['codec']} | {r['us_256']} | {r['us_4096']} | {r['ratio']} | {verdict} |")
    update_markdown(args.md, "append", "\n".join(lines))


if __name__ == "__main__":
    main()
