"""bench_flexgen's rounds: every store of a group runs in each of its rounds, no store always runs right after
the same one, and a row's speed is the median of per-round ratios."""

from bench_flexgen import extra_rounds, growth, markdown, schedule, summarize

GROUP_32 = ["TorchDisk -", "mem none", "mem auto", "file none", "file auto", "tcp none", "tcp auto"]
GROUP_256 = ["TorchDisk -", "mem none", "file none"]


def _rounds(names, reps, tcp_reps):
    return {n: tcp_reps if n.startswith("tcp ") else reps for n in names}


def test_each_store_runs_once_in_each_of_its_rounds():
    for names, reps, tcp_reps in ((GROUP_32, 3, 1), (GROUP_32, 3, 3), (GROUP_256, 2, 2), (GROUP_256, 5, 5)):
        rounds = _rounds(names, reps, tcp_reps)
        seq = schedule(names, rounds)
        for n in names:
            assert sorted(i for i, m in seq if m == n) == list(range(rounds[n])), (n, seq)
        assert [i for i, _ in seq] == sorted(i for i, _ in seq)  # round after round, never mixed


def test_no_store_always_follows_the_same_one():
    for names, reps, tcp_reps in ((GROUP_32, 3, 1), (GROUP_32, 2, 1), (GROUP_256, 2, 2), (GROUP_256, 3, 3)):
        rounds = _rounds(names, reps, tcp_reps)
        seq = [n for _, n in schedule(names, rounds)]
        before = {n: set() for n in names if rounds[n] >= 2}
        for j, n in enumerate(seq):
            if n in before:
                before[n].add(seq[j - 1] if j else None)  # None: the first of the group, after the last group
        assert all(len(b) >= 2 for b in before.values()), (names, reps, before)


def test_torchdisk_does_not_always_run_first():
    seq = schedule(GROUP_32, _rounds(GROUP_32, 3, 1))
    firsts = {next(n for i, n in seq if i == r) for r in range(3)}
    assert len(firsts) >= 2, seq


def test_speed_is_the_median_of_per_round_ratios():
    base = {0: 1.0, 1: 4.0, 2: 2.0}
    seconds, ratio = summarize({0: 2.0, 1: 4.0, 2: 1.0}, base)  # ratios 0.5, 1.0, 2.0
    assert seconds == 2.0 and ratio == 1.0
    seconds, ratio = summarize({1: 2.0}, base)  # a row in one round only: that round's ratio
    assert seconds == 2.0 and ratio == 2.0


def test_a_cheap_group_adds_rounds_within_its_budget():
    assert extra_rounds(3, 21.0, 40.0, 7) == 2  # 7 s a round: two more fit 19 s
    assert extra_rounds(3, 9.0, 40.0, 7) == 4  # capped at 7 rounds in all
    assert extra_rounds(3, 90.0, 40.0, 7) == 0  # a 256-token group stays at its least
    assert extra_rounds(3, 21.0, 0.0, 7) == 0 and extra_rounds(0, 0.0, 40.0, 7) == 0


def _rec(policy, gen, store, codec, ratio, rounds):
    return {"policy": policy, "gen": gen, "store": store, "codec": codec, "reps": len(rounds), "seconds": 1.0,
            "vs_torchdisk": ratio, "round_ratios": rounds, "cpu_seconds": 1.0, "same_tokens": True}


def test_growth_compares_the_longest_ratio_with_the_shortest_of_the_same_run():
    recs = [_rec("cache-on-store", 32, "TorchDisk", "-", 1.0, [1.0, 1.0, 1.0]),
            _rec("cache-on-store", 32, "mem", "none", 1.10, [1.05, 1.10, 1.20]),
            _rec("cache-on-store", 32, "file", "none", 1.10, [1.08, 1.10, 1.12]),
            _rec("cache-on-store", 32, "mem", "auto", 1.10, [1.10]),  # shortest only: no verdict
            _rec("cache-on-store", 256, "TorchDisk", "-", 1.0, [1.0, 1.0]),
            _rec("cache-on-store", 256, "mem", "none", 1.07, [1.06, 1.08]),
            _rec("cache-on-store", 256, "file", "none", 1.12, [1.12, 1.12]),
            _rec("compressed-cache", 32, "mem", "none", 1.25, [1.24, 1.25, 1.26]),
            _rec("compressed-cache", 256, "mem", "none", 1.20, [1.20, 1.20])]
    got = {(g["policy"], g["store"], g["codec"]): g for g in growth(recs)}
    assert set(got) == {("cache-on-store", "mem", "none"), ("cache-on-store", "file", "none"),
                        ("compressed-cache", "mem", "none")}
    assert got[("cache-on-store", "mem", "none")]["verdict"] == "within noise"
    assert got[("cache-on-store", "file", "none")]["verdict"] == "holds"
    assert got[("compressed-cache", "mem", "none")]["verdict"] == "falls"
    assert abs(got[("cache-on-store", "file", "none")]["change"] - 1.12 / 1.10) < 1e-9

    class A:
        layers, prompt = 4, 32
    md = markdown(recs, A, False)
    assert "| cache-on-store | 256 | mem | none | - | 2 | 1.00 | 1.07x | 1.06-1.08 | 0.973 |" in md
    assert "| cache-on-store | 32 | mem | none | - | 3 | 1.00 | 1.10x | 1.05-1.20 | - |" in md
    assert "compressed-cache mem none/- 1.25x at 32 tokens, 1.20x at 256: falls" in md


def test_the_larger_configuration_has_a_table_of_its_own_and_no_growth():
    def rec(layers, prompt, gen, store, codec, cache, ratio):
        r = _rec("cache-on-store", gen, store, codec, ratio, [ratio])
        r.update(layers=layers, prompt=prompt, cache=cache)
        return r
    recs = [rec(4, 32, 32, "TorchDisk", "-", "-", 1.0), rec(4, 32, 32, "mem", "none", "none", 1.1),
            rec(4, 32, 256, "TorchDisk", "-", "-", 1.0), rec(4, 32, 256, "mem", "none", "none", 1.2),
            rec(12, 64, 32, "TorchDisk", "-", "-", 1.0), rec(12, 64, 32, "mem", "none", "none", 1.05),
            rec(12, 64, 32, "mem", "planes", "planes", 0.9)]
    assert [(g["layers"], g["short"], g["long"]) for g in growth(recs)] == [(4, 32, 256)]

    class A:
        layers, prompt, big_layers, big_prompt = 4, 32, 12, 64
    md = markdown(recs, A, False)
    head, big = md.split("### 12 layers, prompt 64, 32 new tokens")
    assert "| cache-on-store | 32 | mem | none | none | 1 | 1.00 | 1.10x |" in head and "0.90x" not in head
    assert "| cache-on-store | 32 | mem | planes | planes | 1 | 1.00 | 0.90x |" in big and "1.10x" not in big
