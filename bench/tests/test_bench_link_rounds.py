"""bench_link's rounds: warm-ups discarded, each pass from an empty store and a collected heap, more rounds
where cheap, and auto compared with the fixed codecs round by round."""

import gc

import pytest

import bench_link

torch = pytest.importorskip("torch")


class FakeStore:
    """A store in a dict that notes, for each write, how many keys it already held."""

    def __init__(self):
        self.kept, self.held_at_write, self.codecs = {}, [], []

    def write_tensor(self, k, t, codec):
        self.held_at_write.append(len(self.kept))
        self.codecs.append(codec)
        self.kept[k] = (t.clone(), codec)

    def write_tensors(self, ts, codec):
        for k, t in ts.items():
            self.write_tensor(k, t, codec)

    def read_tensor(self, k, out):
        out.copy_(self.kept[k][0])

    def read_tensors(self, keys):
        return {k: self.kept[k][0].clone() for k in keys}

    def stat(self, k):
        t, codec = self.kept[k]
        return {"stored_bytes": t.numel() * t.element_size(), "codec": "none" if codec == "auto" else codec}

    def delete(self, k):
        del self.kept[k]


def test_rounds_warm_up_start_empty_and_collect(monkeypatch):
    collected = []
    monkeypatch.setattr(gc, "collect", lambda *a: collected.append(1))
    st = FakeStore()
    ts = {"a": torch.ones(8, dtype=torch.bfloat16), "b": torch.zeros(4, dtype=torch.bfloat16)}
    codecs = ["none", "planes", "auto"]
    recs = bench_link._run(st, ts, codecs, reps=3, warmup=2, max_reps=3)
    passes = (2 + 3 * 2) * len(codecs)  # each timed one after an untimed one with its codec
    assert len(collected) == passes  # before every pass, warm-ups included
    assert st.held_at_write == [0, 1] * passes  # every pass starts from an empty store
    assert not st.kept
    by_pass = st.codecs[::2]
    timed = by_pass[2 * len(codecs):]
    assert timed[::2] == timed[1::2]  # a timed pass follows one with its own codec
    assert sorted(timed[::2]) == sorted(codecs * 3)
    for r in recs:
        assert r["reps"] == 3 and len(r["round_write_seconds"]) == 3 == len(r["round_read_seconds"])
    auto = next(r for r in recs if r["codec"] == "auto")
    assert {"auto_vs_best_by_round", "auto_vs_round_best", "auto_vs_none_by_round", "auto_vs_best_fastest"} <= auto.keys()


def test_cheap_rows_get_more_rounds():
    recs = bench_link._run(FakeStore(), {"a": torch.ones(8, dtype=torch.bfloat16)}, ["none", "auto"], reps=2,
                           min_seconds=1e9)
    assert all(r["reps"] == 6 for r in recs)  # up to 3 x reps
    recs = bench_link._run(FakeStore(), {"a": torch.ones(8, dtype=torch.bfloat16)}, ["none", "auto"], reps=2,
                           min_seconds=1e9, max_reps=4)
    assert all(r["reps"] == 4 for r in recs)


def rec(codec, seconds):
    """A record whose rounds each took seconds[i] (write and read halves)."""
    raw = 1e9
    med = sorted(seconds)[len(seconds) // 2]
    return {"codec": codec, "round_write_seconds": [s / 2 for s in seconds],
            "round_read_seconds": [s / 2 for s in seconds], "write_read_GBps": 2 * raw / med / 1e9}


def test_round_ratios_pair_rounds():
    # round 1 was slow for everyone (other load): auto tracks none round by round, 1.0x paired, though its
    # median alone is off none's
    none = rec("none", [1.0, 3.0, 1.1])
    planes = rec("planes", [2.0, 6.0, 2.2])
    auto = rec("auto", [1.0, 3.0, 1.1])
    auto["round_write_seconds"][2] += 0.2  # one slow auto round
    out = bench_link.round_ratios([none, planes, auto])
    assert out["auto_vs_best_by_round"] == pytest.approx(1.0)
    assert out["auto_vs_none_by_round"] == pytest.approx(1.0)
    assert out["auto_vs_round_best"] == pytest.approx(1.0)
    assert out["auto_vs_best_fastest"] == pytest.approx(1.0)  # each one's least disturbed round
    # the round's best may be another codec each round: the stricter bar
    lz4 = rec("lz4", [0.5, 3.0, 1.1])
    out = bench_link.round_ratios([none, planes, lz4, auto])
    assert out["auto_vs_round_best"] == pytest.approx(1.1 / 1.3)  # rounds 0.5, 1.0, 1.1/1.3
    assert out["auto_vs_best_fastest"] == pytest.approx(0.5)
    assert bench_link.round_ratios([none, planes, lz4, rec("auto", [2.0, 6.0, 2.2])])["auto_vs_round_best"] == \
        pytest.approx(0.5)
    assert bench_link.round_ratios([none, planes]) == {}


def test_markdown_keeps_its_columns_and_adds_the_paired_ones():
    recs = []
    for c, s in (("none", [1.0, 1.0, 1.0]), ("planes", [2.0, 2.0, 2.0]), ("auto", [1.0, 1.0, 1.0])):
        r = rec(c, s)
        r.update(link="no link (mem://)", transport="mem", workload="w", read_GBps=1, write_GBps=1, ratio=1.0,
                 chosen=["none"], reps=3)
        recs.append(r)
    recs[-1].update(bench_link.round_ratios(recs))
    md = bench_link.markdown(recs, None)
    head = next(line for line in md.splitlines() if line.startswith("| workload | transport"))
    for col in ("best", "auto/best", "auto/none", "auto/best by round", "auto/round's best", "auto/none by round",
                "auto/best fastest", "rounds", "auto chose"):
        assert f"| {col} |" in head
    row = next(line for line in md.splitlines() if line.startswith("| w |"))
    assert row.count("| 1.00x") == 6 and "| 3 |" in row
    for col in ("auto/best by round IQR", "auto/best by round 90% CI", "auto weighs / pass"):
        assert f"| {col} |" in head
    assert row.endswith("| 1.00-1.00x | 1.00-1.00x | - |")
    assert "auto/best by round >= 0.95x in 1 of 1 rows" in md


def test_each_codec_follows_each_other_equally_often():
    for codecs in (["none", "auto"], ["none", "planes", "auto"], bench_link.CODECS, bench_link.LOSSLESS + ["auto"]):
        n = len(codecs)
        rounds = len(bench_link.williams(n))
        follows = {}
        for i in range(rounds):
            order = bench_link.round_order(codecs, i)
            assert sorted(order) == sorted(codecs)
            for a, b in zip(order, order[1:]):
                follows[a, b] = follows.get((a, b), 0) + 1
        assert len(follows) == n * (n - 1) and len(set(follows.values())) == 1, follows


def test_median_ci():
    assert bench_link.median_ci([5, 1, 4, 2, 3]) == (1, 5)  # at 5 rounds: the extremes (94%)
    assert bench_link.median_ci(list(range(15))) == (3, 11)
    assert bench_link.median_ci(list(range(31))) == (10, 20)


def test_undecided_rows_get_more_rounds(monkeypatch):
    """A row runs more rounds while auto's paired ratio's 90% interval holds 0.95, and stops once it does not."""
    import random

    auto_time = None

    def fake_pass(store, tensors, outs, codec):
        for k, t in tensors.items():
            store.write_tensor(k, t, codec)
        return (auto_time() if codec == "auto" else 1.0), 1.0, dict(tensors)

    monkeypatch.setattr(bench_link, "_pass", fake_pass)
    ts = {"a": torch.ones(8, dtype=torch.bfloat16)}

    def rounds(t):
        nonlocal auto_time
        auto_time = t
        return bench_link._run(FakeStore(), ts, ["none", "auto"], reps=5, max_reps=15)[0]["reps"]

    r = random.Random(1)
    assert rounds(lambda: 1.0) == 5  # auto ties none in every round: decided
    assert rounds(lambda: r.choice([0.8, 1.4])) == 15  # 1.11x or 0.83x by chance: undecided
    assert rounds(lambda: 1.5) == 5  # 0.67x every round: decided, below
