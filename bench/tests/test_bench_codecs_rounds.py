"""bench_codecs' cells: interleaved in rounds, each timed at least reps times and MIN_SECONDS long."""

import pytest

import bench_codecs


@pytest.mark.parametrize("rounds", [5, 40])  # the default, and --rounds 40
def test_cells_take_turns_and_each_gets_its_calls(monkeypatch, rounds):
    monkeypatch.setattr(bench_codecs, "MIN_SECONDS", 0.0)
    monkeypatch.setattr(bench_codecs, "ROUNDS", rounds)
    log = []
    cells = [bench_codecs.Cell(lambda _, i=i: log.append(i)) for i in range(4)]
    bench_codecs.run_cells(cells, reps=7)
    for c in cells:
        assert len(c.times) >= 7  # the warm-up calls are not timed
    # a batch is a run of one cell's calls: each cell has a batch in every round, and no cell always
    # follows the same one
    batches = [i for j, i in enumerate(log) if j == 0 or log[j - 1] != i]
    assert len(batches) >= bench_codecs.ROUNDS * len(cells) - bench_codecs.ROUNDS
    before = {i: {batches[j - 1] for j in range(1, len(batches)) if batches[j] == i} for i in range(4)}
    assert all(len(b) >= 2 for b in before.values()), before


def test_fresh_input_is_a_copy_made_for_every_call(monkeypatch):
    monkeypatch.setattr(bench_codecs, "MIN_SECONDS", 0.0)
    raw = bytearray(b"abc")
    seen = []

    def reorder(b):  # as ZipNN 0.5.4 does to its input
        seen.append(bytes(b))
        b.reverse()

    bench_codecs.run_cells([bench_codecs.Cell(reorder, fresh=raw)], reps=3)
    assert raw == b"abc" and all(s == b"abc" for s in seen) and len(seen) >= 3


def test_rounds_passed_for_a_small_tensor_override_the_default(monkeypatch):
    monkeypatch.setattr(bench_codecs, "MIN_SECONDS", 0.0)
    monkeypatch.setattr(bench_codecs, "ROUNDS", 5)
    log = []
    cells = [bench_codecs.Cell(lambda _, i=i: log.append(i)) for i in range(2)]
    bench_codecs.run_cells(cells, reps=7, rounds=30)  # a small tensor's SMALL_ROUNDS
    batches = [i for j, i in enumerate(log) if j == 0 or log[j - 1] != i]
    assert len(batches) >= 30  # each of the 30 rounds gives each cell a batch (adjacent ones may join)
