"""bench_redis's table: the CPU column and the ceiling the machine's cores put on the cluster's ratios."""

import bench_redis

MIB64 = 64 << 20


def recs(case, tr, wr, cpu):
    return [{"case": case, "transport": tr, "metric": "write_read_GBps", "bytes": MIB64, "value": wr},
            {"case": case, "transport": tr, "metric": "machine_cpu_ms", "bytes": MIB64, "value": cpu}]


def test_ceiling_is_cpu_over_cores(monkeypatch):
    monkeypatch.setattr(bench_redis.os, "cpu_count", lambda: 2)
    rs = recs("gotensor", "tcp", 4.0, 40.0) + recs("gotensor redis://", "3+3 cluster", 2.0, 100.0)
    md = bench_redis.markdown(rs, (0.0, 0.0), [])
    # 100 ms of CPU on 2 cores: at least 50 ms for 128 MiB moved, so at most 2.68 GB/s = 0.67x of 4.0
    own = next(line for line in md.splitlines() if line.startswith("| vs gotensor's own tcp node"))
    assert own == "| vs gotensor's own tcp node | 0.50x | >= 0.8x | missed (-38%) | 0.67x |"
    assert "| gotensor redis:// | 3+3 cluster | - | write+read 2.00 | 100 |" in md


def test_no_cpu_figure_no_ceiling(monkeypatch):
    monkeypatch.setattr(bench_redis.os, "cpu_count", lambda: 2)
    rs = [r for r in recs("gotensor", "tcp", 4.0, 40.0) + recs("gotensor redis://", "3+3 cluster", 2.0, 100.0)
          if r["metric"] != "machine_cpu_ms"]
    md = bench_redis.markdown(rs, (0.0, 0.0), [])
    assert "| vs gotensor's own tcp node | 0.50x | >= 0.8x | missed (-38%) | - |" in md
