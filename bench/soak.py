"""Soak (`make soak`): threads x mixed operations on every store kind, every byte checked, RSS sampled.

Per store (mem://, file://, a tcp:// node and a ucx:// node): THREADS threads each run OPS operations drawn at
random: writes (sync and async) of 1 byte to 8 MiB (log-uniform) with every codec, reads back (sync, async, into
out=) checked against what that thread last wrote under the key (lossless byte for byte; q4/q8 within their
error bound), deletes, stats and reads of missing keys (errors). The client's RSS is sampled as it goes; after
warm-up it must stay within 10% of its warm-up peak, and a node's too. A last phase makes ERR failing calls
and reports the RSS they leave behind per call (each error crosses gopy as a C string).

Warm-up is a fill phase, then the first quarter of the mixed operations. The memory gotensor keeps for reuse
is bounded but fills as sizes come by: a mem:// store's idle frames (4 per power-of-two size class), the frame
writer's scratch (128 MiB) and the codecs' per-worker scratch. The fill phase has every thread write, read
back (sync, async, into out=), replace and delete a tensor of each power-of-two size up to the largest, each
codec on half the threads at once, so those pools are full before growth is measured.

glibc's malloc raises its mmap threshold to the largest block freed, after which torch's multi-MiB tensors,
freed in random sizes by 8 threads, fragment its arenas: the client's RSS then grew 1.5 -> 2.6 GiB in 24,000
operations on mem:// while the Go heap stayed under 0.5 GiB (GODEBUG=gctrace=1). The soak fixes the threshold
at --mmap-threshold (M_MMAP_THRESHOLD; 0 keeps glibc's default) so that RSS measures gotensor, not the
allocator of the test's own tensors; the table says which was used.
A node runs with its metrics and Go's profiles on loopback ports: its Go heap (in use; idle and kept, not
returned to the OS; all it mapped) is sampled beside its RSS and printed as peaks per phase, and --node-profile
DIR saves its heap profile at the end of warm-up and at the end (`go tool pprof -sample_index=alloc_space`
says where its allocations came from). A node's RSS is its Go heap: with GOGC's default the heap runs up to
twice what is live before a collection, so a node that allocated every received payload anew (ucx's did,
leaving the store's pool of replaced frames unused) had RSS following the random peaks of what was stored and
in flight; received frames now land in memory the store lends, as over tcp. A node also keeps replaced frames'
memory for the next writes up to what its capacity leaves free (gotensor_idle_bytes), by design and not
bounded by the fill phase: the node's check subtracts it as it does what the node stores.

JSON and a RESULTS.md section; exits 1 if a check fails.
"""

from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import math
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
LOSSLESS = ["none", "planes", "deflate", "shuffle-deflate", "lz4", "zstd", "shuffle-zstd", "auto"]
BYTES = ["none", "deflate", "lz4", "zstd", "auto"]  # for integers: the plane codecs take floats only
LOSSY = ["q4", "q8"]
DTYPES = [torch.bfloat16, torch.float16, torch.float32, torch.int64, torch.uint8]


def rss(pid: int | str = "self") -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def tensor_of(rng: random.Random, nbytes: int) -> torch.Tensor:
    dt = rng.choice(DTYPES)
    size = torch.tensor([], dtype=dt).element_size()
    n = max(1, nbytes // size)
    g = torch.Generator().manual_seed(rng.getrandbits(32))
    if dt.is_floating_point:
        return (torch.randn(n, generator=g) * rng.choice([0.02, 1.0, 30.0])).to(dt)
    return torch.randint(0, 1 << 7 if dt == torch.uint8 else 1 << 20, (n,), generator=g, dtype=dt)


def close_enough(got: torch.Tensor, want: torch.Tensor, codec: str) -> bool:
    if codec not in LOSSY or not want.dtype.is_floating_point:
        return got.dtype == want.dtype and got.shape == want.shape and torch.equal(
            got.reshape(-1).view(torch.uint8), want.reshape(-1).view(torch.uint8))
    levels = 15 if codec == "q4" else 255
    span = float(want.float().max() - want.float().min()) if want.numel() else 0.0
    return bool(((got.float() - want.float()).abs() <= span / levels * 0.6 + 1e-2 * want.float().abs() + 1e-6).all())


def fill(store, tid: int, threads: int, max_bytes: int) -> None:
    """The fill phase of one thread: a tensor of each power-of-two size up to max_bytes written, replaced under
    the same key (the first frame goes to the store's pool) and read back (sync, async or into out=, in turn);
    at the end every key is deleted. Each thread takes every other codec (bfloat16 for the float codecs, int64
    for the byte codecs), so each runs at every size on half the threads at once."""
    sizes = [1 << k for k in range(max_bytes.bit_length()) if 1 << k <= max_bytes]
    combos = [(torch.bfloat16, c) for c in LOSSLESS + LOSSY] + [(torch.int64, c) for c in BYTES]
    stride = 2 if threads >= 2 else 1
    combos = combos[tid % stride::stride]
    for n in sizes:
        key = f"fill/{tid}/{n}"
        for i, (dt, codec) in enumerate(combos):
            elems = max(1, n // torch.tensor([], dtype=dt).element_size())
            t = (torch.randn(elems) * 0.02).to(dt) if dt.is_floating_point else torch.randint(0, 1 << 20, (elems,))
            store.write_tensor(key, t, codec=codec)
            store.write_tensor_async(key, t, codec=codec).result()
            if i % 3 == 0:
                store.read_tensor(key)
            elif i % 3 == 1:
                store.read_tensor_async(key).result()
            else:
                store.read_tensor(key, out=torch.empty_like(t))
        store.delete(key)


def fix_mmap_threshold(nbytes: int) -> bool:
    """Fix glibc malloc's mmap threshold (M_MMAP_THRESHOLD; this also stops its dynamic adjustment)."""
    libc = ctypes.util.find_library("c")
    if not nbytes or not libc:
        return False
    return bool(ctypes.CDLL(libc).mallopt(-3, nbytes))  # -3: M_MMAP_THRESHOLD


def worker(store, tid: int, ops: int, max_bytes: int, seed: int, errors: list, counts: dict, lock) -> None:
    import gotensor
    rng = random.Random(seed * 1000 + tid)
    mine: dict[str, tuple[torch.Tensor, str]] = {}
    for i in range(ops):
        key = f"soak/{tid}/{rng.randrange(16)}"
        op = rng.random()
        try:
            if op < 0.40 or key not in mine:
                t = tensor_of(rng, int(math.exp(rng.uniform(0, math.log(max_bytes)))))
                codec = rng.choice(LOSSLESS + LOSSY if t.dtype.is_floating_point else BYTES)
                if codec in LOSSY and (t.dtype not in (torch.float16, torch.bfloat16, torch.float32)):
                    codec = "none"
                if rng.random() < 0.5:
                    store.write_tensor(key, t, codec=codec)
                else:
                    store.write_tensor_async(key, t, codec=codec).result()
                mine[key] = (t, codec)
                kind = "write"
            elif op < 0.80:
                want, codec = mine[key]
                how = rng.random()
                if how < 0.4:
                    got = store.read_tensor(key)
                elif how < 0.7:
                    got = store.read_tensor_async(key).result()
                else:
                    got = store.read_tensor(key, out=torch.empty_like(want))
                if not close_enough(got, want, codec):
                    errors.append(f"thread {tid} op {i}: {key} ({codec}, {want.dtype}, {want.numel()}) read back wrong")
                kind = "read"
            elif op < 0.90:
                store.delete(key)
                del mine[key]
                kind = "delete"
            elif op < 0.95:
                st = store.stat(key)
                if st["raw_bytes"] != mine[key][0].numel() * mine[key][0].element_size():
                    errors.append(f"thread {tid} op {i}: stat of {key} says {st['raw_bytes']} raw bytes")
                kind = "stat"
            else:
                try:
                    store.read_tensor(f"soak/{tid}/missing")
                    errors.append(f"thread {tid}: a missing key was read")
                except gotensor.KeyNotFound:
                    pass
                kind = "error"
        except Exception as e:  # noqa: BLE001 - every failure is a finding
            errors.append(f"thread {tid} op {i} ({key}): {type(e).__name__}: {e}")
            kind = "failed"
        with lock:
            counts[kind] = counts.get(kind, 0) + 1
    for key in mine:
        store.delete(key)


class Node:
    """A `gotensor serve` node of its own, with its metrics (the Go heap's figures are sampled) and Go's profiles
    (--node-profile saves heap profiles) on loopback ports of their own."""

    def __init__(self, transport: str, capacity: str):
        env = dict(os.environ, UCX_TLS="sm,tcp") if transport == "ucx" else None
        self.p = subprocess.Popen([sys.executable, "-m", "gotensor", "serve", "--listen", "127.0.0.1:0", "--transport",
                                   transport, "--capacity", capacity, "--metrics", "127.0.0.1:0", "--pprof", "127.0.0.1:0"],
                                  stdout=subprocess.PIPE, text=True, env=env)
        line = self.p.stdout.readline()
        self.url = line.split("listening on ")[1].split()[0] + ("?transports=sm,tcp" if transport == "ucx" else "")
        self.metrics = line.split("metrics ")[1].split(",")[0].split(")")[0]
        self.pprof = line.split("pprof ")[1].split(")")[0]

    def go_heap(self) -> dict:
        """The node's Go heap (runtime.MemStats through its metrics): in use, idle and not returned to the OS, sys."""
        want = {"go_memstats_heap_inuse_bytes": "inuse", "go_memstats_heap_idle_bytes": "idle",
                "go_memstats_heap_released_bytes": "released", "go_memstats_sys_bytes": "sys",
                "go_memstats_next_gc_bytes": "next_gc", "gotensor_idle_bytes": "idle_frames"}
        out = {}
        with urllib.request.urlopen(self.metrics, timeout=10) as r:
            for line in r.read().decode().splitlines():
                name, _, value = line.partition(" ")
                if name in want:
                    out[want[name]] = float(value)
        return out

    def save_profile(self, path: str) -> None:
        """The node's heap profile (pprof's format; `go tool pprof -sample_index=inuse_space`) and, beside it,
        the text form that ends in runtime.MemStats."""
        for suffix, query in ((".pb.gz", "heap?gc=1"), (".txt", "heap?debug=1&gc=1")):
            with urllib.request.urlopen(self.pprof + query, timeout=60) as r, open(path + suffix, "wb") as f:
                f.write(r.read())

    def stop(self):
        self.p.terminate()
        self.p.wait(timeout=30)


def soak(name, url, node, threads, ops, max_bytes, seed, profile_dir="") -> dict:
    import gotensor
    errors, counts, lock = [], {}, threading.Lock()
    # (fraction done, client rss, node rss, stored bytes, node's Go heap); the fill phase counts as done 0. What the store
    # holds at a sample varies with the random operations: the check is on RSS less the bytes it holds where
    # it holds them in memory (the client for mem://, the node for a node), so that it measures overhead.
    samples = []
    in_client = url.startswith("mem://")
    with gotensor.open(url) as store:
        def sample(done):
            samples.append((done, rss(), rss(node.p.pid) if node else 0, store.usage()["bytes"], node.go_heap() if node else {}))
            if node and profile_dir and done > 0.25 and not profiled:  # warm-up is over
                node.save_profile(os.path.join(profile_dir, f"{name}-warm"))
                profiled.append(done)
        profiled = []
        t0 = time.perf_counter()
        fillers = [threading.Thread(target=fill, args=(store, i, threads, max_bytes)) for i in range(threads)]
        for t in fillers:
            t.start()
        while any(t.is_alive() for t in fillers):
            time.sleep(0.25)
            sample(0.0)
        for t in fillers:
            t.join()
        fill_secs = time.perf_counter() - t0
        ts = [threading.Thread(target=worker, args=(store, i, ops, max_bytes, seed, errors, counts, lock)) for i in range(threads)]
        t0 = time.perf_counter()
        for t in ts:
            t.start()
        total = threads * ops
        while any(t.is_alive() for t in ts):
            time.sleep(0.25)
            with lock:
                done = sum(counts.values()) / total
            sample(done)
        for t in ts:
            t.join()
        secs = time.perf_counter() - t0
        left = store.keys("soak/")
        if node and profile_dir:
            node.save_profile(os.path.join(profile_dir, f"{name}-end"))
    warm = [s for s in samples if s[0] <= 0.25] or samples[:1]
    after = [s for s in samples if s[0] > 0.25] or samples[-1:]
    def peak(ss, i, held):  # the peak RSS, and the peak of RSS less what held(sample) says is held there
        return max(x[i] for x in ss), max(x[i] - held(x) for x in ss)
    in_node = (lambda x: x[3] + x[4].get("idle_frames", 0)) if node else (lambda x: 0)  # stored, and idle frames kept
    stored = (lambda x: x[3]) if in_client else (lambda x: 0)
    peak_warm, net_warm = peak(warm, 1, stored)
    peak_after, net_after = peak(after, 1, stored)
    node_warm, node_net_warm = peak(warm, 2, in_node)
    node_after, node_net_after = peak(after, 2, in_node)
    rec = {"store": name, "threads": threads, "ops": total, "seconds": secs, "fill_seconds": fill_secs, "counts": counts, "errors": errors[:20],
           "n_errors": len(errors), "keys_left": len(left), "client_rss_warm": peak_warm, "client_rss_after": peak_after,
           "client_rss_growth": peak_after / peak_warm - 1, "client_net_warm": net_warm, "client_net_after": net_after,
           "client_growth": net_after / net_warm - 1, "node_rss_warm": node_warm, "node_rss_after": node_after,
           "node_rss_growth": (node_after / node_warm - 1) if node_warm else 0.0, "node_net_warm": node_net_warm,
           "node_net_after": node_net_after, "node_growth": (node_net_after / node_net_warm - 1) if node_warm else 0.0,
           "stored_max": max(x[3] for x in samples)}
    if node:  # the node's Go heap, peaks per phase: in use; idle and kept (not returned to the OS); all it mapped
        for phase, ss in (("warm", warm), ("after", after)):
            for k, f in (("inuse", lambda h: h["inuse"]), ("kept", lambda h: h["idle"] - h["released"]), ("sys", lambda h: h["sys"])):
                rec[f"node_heap_{k}_{phase}"] = max(f(x[4]) for x in ss)
    rec["ok"] = not errors and not left and rec["client_growth"] <= 0.10 and rec["node_growth"] <= 0.10
    return rec


def error_leak(calls: int) -> dict:
    """RSS left behind per failing call (each error crosses gopy as a C string)."""
    import gotensor
    with gotensor.open("mem://soak-errors") as s:
        def fail(n):
            for _ in range(n):
                try:
                    s.read_tensor("no/such/key/" + "x" * 200)
                except gotensor.KeyNotFound:
                    pass
        fail(calls // 10)  # warm-up
        before = rss()
        fail(calls)
        after = rss()
    return {"calls": calls, "rss_before": before, "rss_after": after, "bytes_per_call": (after - before) / calls}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--ops", type=int, default=10_000, help="operations per thread")
    ap.add_argument("--max-bytes", type=int, default=8 << 20)
    ap.add_argument("--stores", default="mem,file,tcp,ucx")
    ap.add_argument("--error-calls", type=int, default=200_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--node-profile", default="", metavar="DIR",
                    help="save each node's Go heap profile at the end of warm-up and at the end into DIR")
    ap.add_argument("--json", default=os.path.join(HERE, "results", "soak.json"))
    ap.add_argument("--md", default=os.path.join(HERE, "RESULTS.md"))
    ap.add_argument("--mmap-threshold", type=int, default=128 << 10,
                    help="fix glibc malloc's mmap threshold at this many bytes (0: glibc's dynamic default)")
    a = ap.parse_args()
    fixed = fix_mmap_threshold(a.mmap_threshold)
    if a.node_profile:
        os.makedirs(a.node_profile, exist_ok=True)
    import gotensor
    sys.path.insert(0, HERE)
    from _report import update_markdown, write_json
    recs = []
    with tempfile.TemporaryDirectory() as tmp:
        for kind in a.stores.split(","):
            if kind == "ucx" and "ucx" not in gotensor.info()["transports"]:
                print("soak: built without UCX, ucx:// left out", file=sys.stderr)
                continue
            node = Node(kind, "4GiB") if kind in ("tcp", "ucx") else None
            url = node.url if node else ("mem://soak" if kind == "mem" else f"file://{tmp}/soak?fsync=false")
            try:
                r = soak(kind, url, node, a.threads, a.ops, a.max_bytes, a.seed, a.node_profile)
            finally:
                if node:
                    node.stop()
            recs.append(r)
            print(f"{kind:5} fill {r['fill_seconds']:.0f} s, {r['ops']} ops in {r['seconds']:.0f} s: {r['n_errors']} errors, {r['keys_left']} keys left, "
                  f"client RSS {r['client_rss_warm'] / 2**20:.0f} -> {r['client_rss_after'] / 2**20:.0f} MiB "
                  f"({r['client_rss_growth']:+.1%}; less stored {r['client_growth']:+.1%}), node {r['node_rss_warm'] / 2**20:.0f} -> "
                  f"{r['node_rss_after'] / 2**20:.0f} MiB ({r['node_rss_growth']:+.1%}; less stored {r['node_growth']:+.1%}), "
                  f"stored at most {r['stored_max'] / 2**20:.0f} MiB {'ok' if r['ok'] else 'FAILED'}", flush=True)
            if node:
                print("      node Go heap peaks warm-up -> after (MiB): " + ", ".join(
                    f"{k} {r[f'node_heap_{k}_warm'] / 2**20:.0f} -> {r[f'node_heap_{k}_after'] / 2**20:.0f}"
                    for k in ("inuse", "kept", "sys")), flush=True)
            for e in r["errors"][:5]:
                print("   ", e)
    leak = error_leak(a.error_calls)
    print(f"errors: {leak['calls']} failing calls leave {leak['bytes_per_call']:.1f} bytes of RSS each", flush=True)
    write_json(a.json, recs, benchmark="soak", error_leak=leak, mmap_threshold=a.mmap_threshold if fixed else 0)
    malloc = (f"glibc's mmap threshold fixed at {a.mmap_threshold >> 10} KiB (see bench/soak.py)" if fixed
              else "glibc's malloc left at its dynamic mmap threshold")
    lines = ["## Soak (`make soak`)", "",
             f"{a.threads} threads x {a.ops:,} mixed operations per store (writes sync and async of 1 B to "
             f"{a.max_bytes >> 20} MiB, log-uniform, every codec; reads sync, async and into out=, each checked; deletes; "
             "stats; reads of missing keys). RSS: the peak during warm-up and after it, as measured and less the bytes the "
             "store held at that sample where it holds them in memory (the client's for mem://, the node's for a node: "
             "what is stored varies with the random operations; a node's replaced frames' memory it keeps for the next "
             "writes, up to what its capacity leaves free, too: gotensor_idle_bytes); the check is growth <= 10% of the latter for the client "
             "and the node. Warm-up = a fill phase (every thread writes, reads back, "
             "replaces and deletes a tensor of each power-of-two size, each codec on half the threads at once, which fills the bounded pools "
             "gotensor reuses memory from: a mem:// store's idle frames, frame and codec scratch) plus the first quarter "
             f"of the operations; {malloc}.", "",
             "| store | operations | fill s | seconds | failed checks | keys left | stored at most (MiB) | client RSS warm-up / after (MiB) | less stored (growth) | node RSS warm-up / after (MiB) | less stored (growth) | result |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in recs:
        mib = lambda a, b: f"{r[a] / 2**20:.0f} / {r[b] / 2**20:.0f}"
        node = mib("node_rss_warm", "node_rss_after") if r["node_rss_warm"] else "-"
        node_net = f"{mib('node_net_warm', 'node_net_after')} ({r['node_growth']:+.1%})" if r["node_rss_warm"] else "-"
        client_net = f"{mib('client_net_warm', 'client_net_after')} ({r['client_growth']:+.1%})"
        lines.append(f"| {r['store']} | {r['ops']:,} | {r['fill_seconds']:.0f} | {r['seconds']:.0f} | {r['n_errors']} | {r['keys_left']} | "
                     f"{r['stored_max'] / 2**20:.0f} | {mib('client_rss_warm', 'client_rss_after')} | {client_net} | {node} | {node_net} | "
                     f"{'ok' if r['ok'] else 'FAILED'} |")
    lines += ["", f"Failing calls: {leak['calls']:,} reads of a missing key left {leak['bytes_per_call']:.1f} bytes of RSS "
              "per call behind (each error crosses gopy as a C string)."]
    update_markdown(a.md, "soak", "\n".join(lines))
    return 0 if all(r["ok"] for r in recs) else 1


if __name__ == "__main__":
    sys.exit(main())
