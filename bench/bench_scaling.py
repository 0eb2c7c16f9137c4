"""Coding speed against cores: planes (and any codec named) on real weights
into mem://, with coding bounded to 1, 2, 4, ... workers.

The measuring is a pure-Go binary (bench/scaling) so that it runs where Go
and this Python extension do not, such as a lent 16-core machine; both here
and there it runs from the same kit:

    make scaling-kit                        # build/scaling-kit: the binary, the data, run.sh
    build/scaling-kit/run.sh > scaling.json # on any machine (make bench-scaling does it here)
    python3 bench/bench_scaling.py --from scaling.json [--as NAME]   # render

Each machine's run is kept in bench/results/scaling.json under its own name
and the RESULTS.md section shows them all.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def write_data(path: str) -> None:
    """all-MiniLM-L6-v2's float weights as one bf16 tensor (as bench-link's "MiniLM, 1 tensor"), the kit's data
    (run.sh labels it)."""
    import torch
    sys.path.insert(0, HERE)
    from bench_link import workloads
    one = workloads(1)["MiniLM, 1 tensor"]["one"]
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    one.view(torch.int16).numpy().tofile(path)  # little endian on the machines this runs on


def markdown(runs: dict[str, dict]) -> str:
    lines = ["## Coding speed against cores (`make bench-scaling`)", "",
             "One real tensor (all-MiniLM-L6-v2's float weights as one bf16 tensor) written into mem:// and read "
             "back, coding bounded to *workers* goroutines on as many threads (`parallel.SetWorkers` and "
             "`GOMAXPROCS`). GB/s of raw bytes, median of the timed rounds; *x1* is the speed over the same "
             "codec's 1-worker speed on the same machine. Built by bench/scaling (pure Go) so it also runs on a "
             "machine with neither Go nor this extension; so zstd here is klauspost's coder, not libzstd. lz4 "
             "finds almost nothing to match in bf16 weights (ratio 1.00): its speed is mostly its match search "
             "and a copy.", ""]
    for name, run in runs.items():
        m = run["machine"]
        lines += [f"**{name}**: {m.get('cpus')} CPUs, {m.get('cpu_model') or 'unknown CPU'}, {m.get('go')}, "
                  f"revision {str(m.get('revision', '?'))[:7]}; {run['data'].get('label') or ''} "
                  f"({run['data']['bytes'] / 1e6:.1f} MB)", "",
                  "| codec | workers | ratio | write GB/s | read GB/s | write x1 | read x1 |", "|---|---|---|---|---|---|---|"]
        base = {}
        for r in run["results"]:
            if r["workers"] == 1:
                base[r["codec"]] = r
        for r in run["results"]:
            b = base.get(r["codec"])
            xw = f"{r['write_GBps'] / b['write_GBps']:.2f}x" if b else "-"
            xr = f"{r['read_GBps'] / b['read_GBps']:.2f}x" if b else "-"
            lines.append(f"| {r['codec']} | {r['workers']} | {r['raw_bytes'] / r['stored_bytes']:.2f} | "
                         f"{r['write_GBps']:.2f} | {r['read_GBps']:.2f} | {xw} | {xr} |")
        lines.append("")
    if not any(r["machine"].get("cpus", 0) >= 16 for r in runs.values()):
        lines.append("No run on a 16-core machine yet: the lent device machine has not been available to this "
                     "project's sessions (`make scaling-kit` prepares what to carry there).")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.path.join(HERE, "..", "build", "scaling-kit", "minilm-bf16.bin"))
    ap.add_argument("--write-data", action="store_true", help="only write the data file (for the kit) and stop")
    ap.add_argument("--from", dest="src", default="", help="a run's JSON, as the kit's run.sh prints it")
    ap.add_argument("--as", dest="name", default="", help="the name the run is kept under (default: its CPUs)")
    ap.add_argument("--json", default=os.path.join(HERE, "results", "scaling.json"))
    ap.add_argument("--md", default=os.path.join(HERE, "RESULTS.md"))
    a = ap.parse_args()
    if a.write_data:
        write_data(a.data)
        return
    if not a.src:
        ap.error("--from (a run's JSON) or --write-data is required")
    run = json.load(open(a.src))
    runs = json.load(open(a.json))["runs"] if os.path.exists(a.json) else {}
    m = run["machine"]
    runs[a.name or f"{m.get('cpus')}-core machine"] = run
    os.makedirs(os.path.dirname(a.json) or ".", exist_ok=True)
    with open(a.json, "w") as f:
        json.dump({"benchmark": "scaling", "runs": runs}, f, indent=1)
        f.write("\n")
    sys.path.insert(0, HERE)
    from _report import update_markdown
    update_markdown(a.md, "scaling", markdown(runs))


if __name__ == "__main__":
    main()
