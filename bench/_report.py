"""Shared helpers for benchmarks: timing, machine facts, JSON and RESULTS.md sections."""

from __future__ import annotations

import json
import os
import platform
import re
import statistics
import time


def median_time(fn, repeat: int = 7, number: int = 1) -> float:
    """Median seconds per call of fn over `repeat` batches of `number` calls."""
    fn()  # warm up
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - t0) / number)
    return statistics.median(times)


def machine() -> dict:
    import gotensor
    info = gotensor.info()
    return {"cpus": os.cpu_count(), "python": platform.python_version(), "go": info["go_version"],
            "gotensor": info["version"], "platform": platform.platform()}


def write_json(path: str, records: list[dict], **extra) -> None:
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w") as f:
        json.dump({"machine": machine(), **extra, "records": records}, f, indent=1)
        f.write("\n")


def update_markdown(path: str, section: str, body: str) -> None:
    """Replace (or append) the section between <!-- section:start/end --> markers."""
    start, end = f"<!-- {section}:start -->", f"<!-- {section}:end -->"
    text = open(path).read() if os.path.exists(path) else "# gotensor benchmark results\n"
    block = f"{start}\n{body.rstrip()}\n{end}"
    if start in text:
        text = re.sub(re.escape(start) + ".*?" + re.escape(end), lambda _: block, text, flags=re.S)
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    with open(path, "w") as f:
        f.write(text)
