"""The redis:// store beside gotensor's own tcp node and the peers a user would pick, in the same passes
(`make bench-remote`; `bench_remote.py --redis-only` runs this part alone).

Each pass runs bench/remote (Go: the Go echo, gotensor's tcp node, the redis:// store on one Redis server and on a
3-master/3-replica cluster, all through store.Put / store.Get of raw bytes), then redis-py SET/GET of the same
bytes on the same server, then Mooncake Store over TCP (put/get, and its zero-copy put_from/get_into on registered
buffers). Every figure is the median over the passes of each pass's median.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

from _report import update_markdown, write_json
from redis_local import REDIS, free_port, redis_cluster, redis_server

HERE = os.path.dirname(os.path.abspath(__file__))
FAILED: dict[str, int] = {}  # peer calls that failed and were tried again
# values up to 1 GiB in one SET (redis-py): the server's defaults stop at 512 MiB
BIG_VALUES = ("--proto-max-bulk-len", "2gb", "--client-query-buffer-limit", "2gb")


def parse_size(s: str) -> int:
    s = s.strip()
    for suf, m in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if s.endswith(suf):
            return int(s[:-len(suf)]) * m
    return int(s)


def reps_for(size: int) -> int:
    return 5 if size >= 1 << 30 else 7 if size >= 64 << 20 else 15


def rec(case, tr, metric, nbytes, value, reps):
    return {"case": case, "transport": tr, "metric": metric, "bytes": nbytes, "value": value, "reps": reps}


def go_pass(binary: str, sizes: str, server: str, cluster: str, bare: str) -> list[dict]:
    out = subprocess.run([binary, "-sizes", sizes, "-passes", "1", "-transports", "tcp,redis", "-redis-server", server,
                          "-redis-cluster", cluster, "-redis-cluster-bare", bare], check=True, capture_output=True,
                         text=True)
    sys.stderr.write(out.stderr)
    return [r for r in json.loads(out.stdout) if r["case"] != "first touch of new memory"]


def machine_busy_ms() -> float:
    """CPU time every process of the machine has spent (/proc/stat, all but idle and iowait), in ms: over a
    write and read it counts the servers' work too."""
    with open("/proc/stat") as f:
        ticks = [int(v) for v in f.readline().split()[1:9]]
    return (sum(ticks) - ticks[3] - ticks[4]) * 1000 / os.sysconf("SC_CLK_TCK")


def timed_pairs(case, tr, sizes, lat, write, read, lat_reps=2000, before=None):
    """Records of one peer: a 4 KiB read's round trip (lat), and write/read of each size (before, untimed, ahead
    of each write)."""
    lat(warm=True)
    rtts = []
    for _ in range(lat_reps):
        t0 = time.perf_counter()
        lat()
        rtts.append((time.perf_counter() - t0) * 1e6)
    recs = [rec(case, tr, "rtt_4KiB_us", 4096, statistics.median(rtts), lat_reps)]
    for size in sizes:
        w, r, wr, busy = [], [], [], 0.0
        for i in range(reps_for(size) + 1):
            if before:
                before(size)
            b0 = machine_busy_ms()
            t0 = time.perf_counter()
            write(size)
            t1 = time.perf_counter()
            read(size)
            t2 = time.perf_counter()
            if i:  # the first round warms up
                busy += machine_busy_ms() - b0
                w.append(size / (t1 - t0) / 1e9)
                r.append(size / (t2 - t1) / 1e9)
                wr.append(2 * size / (t2 - t0) / 1e9)
        recs += [rec(case, tr, "write_GBps", size, statistics.median(w), reps_for(size)),
                 rec(case, tr, "read_GBps", size, statistics.median(r), reps_for(size)),
                 rec(case, tr, "write_read_GBps", size, statistics.median(wr), reps_for(size)),
                 rec(case, tr, "machine_cpu_ms", size, busy / reps_for(size), reps_for(size))]
    return recs


def redis_py_pass(addr: str, sizes: list[int]) -> list[dict]:
    import redis
    host, port = addr.split(":")
    r = redis.Redis(host=host, port=int(port))
    small = os.urandom(4096)
    r.set("py:lat", small)
    bufs = {s: (os.urandom(1 << 20) * (s >> 20))[:s] for s in sizes}

    def lat(warm=False):
        assert r.get("py:lat") == small

    def write(size):
        r.set("py:big", bufs[size])

    def read(size):
        assert len(r.get("py:big")) == size

    try:
        parser = "hiredis" if "Hiredis" in type(r.connection_pool.get_connection("get")._parser).__name__ else "python"
    except Exception:
        parser = "?"
    recs = timed_pairs(f"redis-py {redis.__version__} ({parser}) SET/GET", "1 server", sizes, lat, write, read)
    r.delete("py:big", "py:lat")
    r.close()
    return recs


class Mooncake:
    """mooncake_master and one mooncake_client storage node over TCP on loopback, and a Python client holding
    no data (so every byte crosses the loopback as it would to a remote node)."""

    def __init__(self, segment="6 GB"):
        import mooncake
        self.bin = os.path.dirname(mooncake.__file__)
        os.environ["MC_TCP_BIND_ADDRESS"] = "127.0.0.1"
        rpc, http, metrics, node = free_port(), free_port(), free_port(), free_port()
        self.dir = tempfile.mkdtemp(prefix="gt-mooncake-")
        log = open(os.path.join(self.dir, "log"), "w")
        die = _die_with_parent
        self.procs = [subprocess.Popen([os.path.join(self.bin, "mooncake_master"), "--rpc_address=127.0.0.1",
                                        f"--rpc_port={rpc}", "--enable_http_metadata_server=true",
                                        "--http_metadata_server_host=127.0.0.1", f"--http_metadata_server_port={http}",
                                        "--metrics_host=127.0.0.1", f"--metrics_port={metrics}",
                                        "--default_kv_lease_ttl=8s"],  # outlasts a 1 GiB read here (a lease that ends mid-read fails it)
                                       stdout=log, stderr=log, preexec_fn=die)]
        time.sleep(2)
        self.procs.append(subprocess.Popen([os.path.join(self.bin, "mooncake_client"), "--host=127.0.0.1",
                                            f"--port={node}", f"--global_segment_size={segment}", "--protocol=tcp",
                                            f"--master_server_address=127.0.0.1:{rpc}",
                                            f"--metadata_server=http://127.0.0.1:{http}/metadata"],
                                           stdout=log, stderr=log, preexec_fn=die))
        time.sleep(3)
        from mooncake.store import MooncakeDistributedStore, ReplicateConfig
        self.s = MooncakeDistributedStore()
        rc = self.s.setup("127.0.0.1", f"http://127.0.0.1:{http}/metadata", 0, 1536 << 20, "tcp", "",
                          f"127.0.0.1:{rpc}")
        if rc != 0:
            self.close()
            raise RuntimeError(f"mooncake setup: {rc}")
        self.cfg = ReplicateConfig()
        self.cfg.replica_num = 1
        deadline = time.time() + 30
        while self.s.put("mc:ready", b"x", self.cfg) != 0 or self.s.get("mc:ready") != b"x":  # the node has joined
            if time.time() > deadline:
                self.close()
                raise RuntimeError("mooncake: no storage node joined")
            time.sleep(0.2)

    def close(self):
        for p in self.procs:
            p.send_signal(signal.SIGKILL)
            p.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def _die_with_parent():
    try:
        ctypes.CDLL("libc.so.6").prctl(1, signal.SIGKILL)
    except OSError:
        pass


def mooncake_pass(mc: Mooncake, sizes: list[int]) -> list[dict]:
    import numpy as np
    import mooncake
    version = getattr(mooncake, "__version__", "")
    s, cfg = mc.s, mc.cfg
    small = os.urandom(4096)
    s.remove("mc:lat")
    assert s.put("mc:lat", small, cfg) == 0
    bufs = {n: (os.urandom(1 << 20) * (n >> 20))[:n] for n in sizes}

    def lat(warm=False):
        assert s.get("mc:lat") == small

    seq = [0]
    left = []

    def gone(key):
        """Remove key once its read's lease (8 s) is over."""
        deadline = time.time() + 20
        while s.remove(key) != 0 and time.time() < deadline:
            time.sleep(0.1)

    def fresh(prefix):
        """Before each put, untimed: a new key (a put of a key that exists stores nothing). The last 1 GiB one is
        removed first (waiting out its lease: the segment holds few of them); smaller ones at the end."""
        def step(size):
            if seq[0]:
                if size >= 1 << 30:
                    gone(f"{prefix}:{seq[0]}")
                else:
                    left.append(f"{prefix}:{seq[0]}")
            seq[0] += 1
        return step

    def put(size):
        assert s.put(f"mc:big:{seq[0]}", bufs[size], cfg) == 0

    def get(size):
        for _ in range(5):  # a get now and then returns nothing: tried again, within the timed read, and counted
            if len(s.get(f"mc:big:{seq[0]}")) == size:
                return
            FAILED["Mooncake get"] = FAILED.get("Mooncake get", 0) + 1
        raise RuntimeError("Mooncake get failed 5 times")

    recs = timed_pairs(f"Mooncake Store {version} put/get".replace("  ", " "), "tcp", sizes, lat, put, get, 500,
                       fresh("mc:big"))
    src = {n: np.frombuffer(bufs[n], dtype=np.uint8).copy() for n in sizes}
    dst = {n: np.empty(n, dtype=np.uint8) for n in sizes}
    for n in sizes:
        s.register_buffer(src[n].ctypes.data, n)
        s.register_buffer(dst[n].ctypes.data, n)
    sm_src, sm_dst = np.frombuffer(small, dtype=np.uint8).copy(), np.empty(4096, dtype=np.uint8)
    s.register_buffer(sm_src.ctypes.data, 4096)
    s.register_buffer(sm_dst.ctypes.data, 4096)
    s.remove("mc:zlat")
    assert s.put_from("mc:zlat", sm_src.ctypes.data, 4096, cfg) == 0

    def zlat(warm=False):
        assert s.get_into("mc:zlat", sm_dst.ctypes.data, 4096) == 4096

    def zput(size):
        rc = s.put_from(f"mc:zbig:{seq[0]}", src[size].ctypes.data, size, cfg)
        assert rc == 0, rc

    def zget(size):
        for _ in range(5):
            if s.get_into(f"mc:zbig:{seq[0]}", dst[size].ctypes.data, size) == size:
                return
            FAILED["Mooncake get_into"] = FAILED.get("Mooncake get_into", 0) + 1
        raise RuntimeError("Mooncake get_into failed 5 times")

    fresh("mc:big")(1 << 30)
    seq[0] = 0
    recs += timed_pairs(f"Mooncake Store {version} put_from/get_into (zero-copy)".replace("  ", " "), "tcp", sizes,
                        zlat, zput, zget, 500, fresh("mc:zbig"))
    for n in sizes:
        s.unregister_buffer(src[n].ctypes.data)
        s.unregister_buffer(dst[n].ctypes.data)
    fresh("mc:zbig")(1 << 30)
    for k in left + ["mc:lat", "mc:zlat"]:
        gone(k)
    return recs


def combine(passes: list[list[dict]]) -> list[dict]:
    vals, order = {}, []
    for p in passes:
        for r in p:
            k = (r["case"], r["transport"], r["metric"], r["bytes"])
            if k not in vals:
                order.append(r)
                vals[k] = []
            vals[k].append(r["value"])
    out = []
    for r in order:
        v = vals[(r["case"], r["transport"], r["metric"], r["bytes"])]
        out.append(dict(r, value=statistics.median(v), passes=len(v)))
    return out


def gib(n: int) -> str:
    return f"{n >> 30} GiB" if n >= 1 << 30 else f"{n >> 20} MiB"


def markdown(recs: list[dict], load: tuple, notes: list[str]) -> str:
    by = {}
    for r in recs:
        by.setdefault((r["case"], r["transport"]), {})[(r["metric"], r["bytes"])] = r["value"]
    sizes = sorted({r["bytes"] for r in recs if r["bytes"] > 4096})
    cores = os.cpu_count() or 1
    lines = ["## Redis store and its peers (`make bench-remote`)", "",
             f"Loopback on this {cores}-core machine, every server and client its own process; each figure is the median "
             f"of {max((r.get('passes', 1) for r in recs), default=1)} passes over all rows, each pass's the median of "
             "its repetitions (15 at 4 KiB, 7 at 64 MiB, 5 at 1 GiB). write+read: 2 x size over the time to write then "
             "read it back. CPU: what every process of the machine spent over a write+read (/proc/stat, the mean "
             "over the repetitions): the servers' work as well as the client's. gotensor rows (Go, bench/remote) "
             "move raw bytes through store.Put and store.Get; redis:// splits a value over 2 MiB into pieces of at "
             "most 2 MiB written and read in parallel (a 3+3 cluster: spread over its 3 masters, each replicating to "
             "its replica; the 3+0 cluster has no replicas, to show what replication costs). redis-py SET/GET the "
             "same bytes as one value on the one server; Mooncake Store runs one storage node (mooncake_client) and "
             "a Python client that holds no data, over TCP. "
             f"Load average when the run began and ended: {load[0]:.2f} / {load[1]:.2f}.", ""]
    head = "| case | deployment | 4 KiB read round trip (us) | " + " | ".join(
        f"{gib(s)} write / read / write+read (GB/s) | {gib(s)} CPU per write+read (ms)" for s in sizes) + " |"
    lines += [head, "|" + "---|" * (head.count("|") - 1)]
    for (case, tr), m in by.items():
        rtt = m.get(("rtt_4KiB_us", 4096))
        cells = [case, tr, "-" if rtt is None else f"{rtt:.0f}"]
        for s in sizes:
            if ("write_GBps", s) in m:
                cells.append(f"{m[('write_GBps', s)]:.2f} / {m[('read_GBps', s)]:.2f} / {m[('write_read_GBps', s)]:.2f}")
            elif ("write_read_GBps", s) in m:
                cells.append(f"write+read {m[('write_read_GBps', s)]:.2f}")
            else:
                cells.append("-")
            cpu = m.get(("machine_cpu_ms", s))
            cells.append("-" if cpu is None else f"{cpu:.0f}")
        lines.append("| " + " | ".join(cells) + " |")
    # goals: the cluster's 64 MiB write+read against the others'
    size = 64 << 20
    wr = {k: m.get(("write_read_GBps", size)) for k, m in by.items()}
    cl_key = ("gotensor redis://", "3+3 cluster")
    cl = wr.get(cl_key)
    cl_cpu = by.get(cl_key, {}).get(("machine_cpu_ms", size))
    # the most the cluster could move if its work kept every core busy: wall time >= CPU time / cores
    ceiling = 2 * size / (cl_cpu / cores) / 1e6 if cl_cpu else None
    goals = []

    def goal(name, key_match, want):
        keys = [k for k in wr if key_match(k) and wr[k]]
        if cl is None or not keys:
            goals.append(f"| {name} | - | >= {want}x | not measured | - |")
            return
        ratio = cl / wr[keys[0]]
        most = "-" if ceiling is None else f"{ceiling / wr[keys[0]]:.2f}x"
        goals.append(f"| {name} | {ratio:.2f}x | >= {want}x | {'met' if ratio >= want else 'missed'} "
                     f"({(ratio / want - 1) * 100:+.0f}%) | {most} |")

    goal("vs gotensor's own tcp node", lambda k: k == ("gotensor", "tcp"), 0.8)
    goal("vs redis-py SET/GET", lambda k: k[0].startswith("redis-py"), 1.5)
    goal("vs Mooncake Store put/get", lambda k: k[0].startswith("Mooncake") and "zero-copy" not in k[0], 1.0)
    goal("vs Mooncake Store put_from/get_into (zero-copy)", lambda k: "zero-copy" in k[0], 1.0)
    lines += ["", "Goals, the 3+3 cluster's 64 MiB write+read against the same bytes through each. "
              f"`most on {cores} cores`: the ratio the cluster would reach if its work kept every core busy all the "
              f"time (its CPU per write+read over {cores} cores is the least wall time it can take here):", "",
              f"| against | ratio | goal | | most on {cores} cores |", "|---|---|---|---|---|", *goals]
    if notes:
        lines += [""] + notes
    return "\n".join(lines)


def run(binary: str, sizes: str, passes: int, json_path: str, md_path: str) -> None:
    if REDIS is None:
        print("redis-server not installed: Redis rows skipped (apt-get install redis-server)", file=sys.stderr)
        return
    load0 = os.getloadavg()[0]
    szs = [parse_size(s) for s in sizes.split(",")]
    notes = []
    with redis_server(*BIG_VALUES) as srv, redis_cluster(3, 1, *BIG_VALUES) as cl, \
            redis_cluster(3, 0, *BIG_VALUES) as bare:
        mc = None
        try:
            mc = Mooncake()
        except Exception as e:  # not installed, or it did not start
            notes.append(f"Mooncake Store left out: {e}")
            print(notes[-1], file=sys.stderr)
        try:
            runs = []
            for p in range(passes):
                recs = go_pass(binary, sizes, srv.url, cl.url, bare.url)
                try:
                    recs += redis_py_pass(srv.addr, szs)
                except ImportError:
                    if p == 0:
                        notes.append("redis-py left out: pip install redis hiredis")
                if mc:
                    try:
                        recs += mooncake_pass(mc, szs)
                    except Exception as e:  # its rows of this pass are missing; the others stand
                        notes.append(f"Mooncake Store failed in pass {p}: {e!r}")
                        print(notes[-1], file=sys.stderr)
                for r in recs:
                    print(f"pass {p}: {r['case']:45} {r['transport']:12} {r['metric']:16} {r['bytes']:>11} "
                          f"{r['value']:8.3f}", flush=True)
                runs.append(recs)
        finally:
            if mc:
                mc.close()
    recs = combine(runs)
    if FAILED:
        notes.append("Calls that failed and were tried again inside the timed operation: " +
                     ", ".join(f"{k} {v} times" for k, v in FAILED.items()) + ".")
    load = (load0, os.getloadavg()[0])
    write_json(json_path, recs, benchmark="redis", load_average=load)
    update_markdown(md_path, "redis", markdown(recs, load, notes))
