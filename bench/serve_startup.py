"""Time to "listening" and idle RSS of `gotensor serve` (medians of a few starts).

    python bench/serve_startup.py [--runs 5] [--python PYTHON]
"""

from __future__ import annotations

import argparse
import socket
import statistics
import subprocess
import sys
import time


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def one(python: str, idle: float) -> tuple[float, float]:
    t0 = time.perf_counter()
    p = subprocess.Popen([python, "-m", "gotensor", "serve", "--listen", f"127.0.0.1:{free_port()}"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = p.stdout.readline()
        ready = time.perf_counter() - t0
        if "listening" not in line:
            raise RuntimeError(f"no listening line: {line!r} {p.stderr.read()}")
        time.sleep(idle)
        return ready, rss_mb(p.pid)
    finally:
        p.terminate()
        p.wait(timeout=20)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--idle", type=float, default=1.0, help="seconds idle before sampling RSS")
    a = ap.parse_args()
    res = [one(a.python, a.idle) for _ in range(a.runs)]
    print(f"{a.python}: ready {statistics.median(r for r, _ in res) * 1e3:.0f} ms, "
          f"idle RSS {statistics.median(m for _, m in res):.1f} MB (median of {a.runs})")


if __name__ == "__main__":
    main()
