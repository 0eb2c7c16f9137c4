"""bench_link's rounds: no codec is always timed right after the same one."""

from bench_link import CODECS, round_order


def test_each_codec_follows_more_than_one():
    for codecs in (CODECS, ["none", "planes", "lz4", "zstd", "auto"], ["none", "planes", "auto"]):
        for reps in (3, 5):
            seq = [c for i in range(reps + 1) for c in round_order(codecs, i)]  # round 0 warms up
            before = {c: set() for c in codecs}
            for j in range(len(codecs), len(seq)):  # the timed passes, each after whatever ran just before
                before[seq[j]].add(seq[j - 1])
            assert all(len(b) >= 2 for b in before.values()), (codecs, reps, before)
