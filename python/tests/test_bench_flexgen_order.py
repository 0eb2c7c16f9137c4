"""bench_flexgen's rounds: every store of a group runs in each of its rounds, no store always runs right after
the same one, and a row's speed is the median of per-round ratios."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))

from bench_flexgen import schedule, summarize  # noqa: E402

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
