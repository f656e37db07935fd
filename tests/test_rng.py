"""Tests for botorch_unknown_hypers.rng (seeded randomness without global state)."""

from __future__ import annotations

import pytest
import torch

from botorch_unknown_hypers.rng import SEED_BOUND, draw_seed, forked_rng


def test_draw_seed_is_the_generators_next_randint():
    generator = torch.Generator().manual_seed(11)
    reference = torch.Generator().manual_seed(11)
    seeds = [draw_seed(generator) for _ in range(5)]
    expected = [int(torch.randint(0, SEED_BOUND, (1,), generator=reference)) for _ in range(5)]
    assert seeds == expected
    assert all(type(s) is int and 0 <= s < SEED_BOUND for s in seeds)
    assert len(set(seeds)) == 5  # consecutive draws differ (31-bit seeds)
    # the generator has advanced exactly as far as the reference
    assert torch.equal(generator.get_state(), reference.get_state())


def test_draw_seed_same_seed_same_sequence_other_seed_other_sequence():
    a = [draw_seed(torch.Generator().manual_seed(3)) for _ in range(2)]
    assert a[0] == a[1]
    assert draw_seed(torch.Generator().manual_seed(3)) != draw_seed(torch.Generator().manual_seed(4))


def test_draw_seed_does_not_touch_the_global_rng():
    torch.manual_seed(0)
    before = torch.get_rng_state()
    draw_seed(torch.Generator().manual_seed(1))
    assert torch.equal(torch.get_rng_state(), before)


def test_forked_rng_seeds_the_block_and_restores_the_callers_stream():
    torch.manual_seed(123)
    before = torch.get_rng_state()
    with forked_rng(7):
        inside = torch.rand(4, dtype=torch.float64)
    assert torch.equal(torch.get_rng_state(), before)  # the caller's stream is untouched
    # the block is seeded by the seed alone: torch.manual_seed(7) gives the same draws
    torch.manual_seed(7)
    assert torch.equal(inside, torch.rand(4, dtype=torch.float64))
    # whatever the caller did with the global RNG before
    torch.manual_seed(999)
    torch.rand(10)
    with forked_rng(7):
        again = torch.rand(4, dtype=torch.float64)
    assert torch.equal(again, inside)
    with forked_rng(8):
        other = torch.rand(4, dtype=torch.float64)
    assert not torch.equal(other, inside)


def test_forked_rng_restores_the_stream_after_an_exception():
    torch.manual_seed(5)
    before = torch.get_rng_state()
    with pytest.raises(RuntimeError, match="boom"):
        with forked_rng(1, device="cpu"):
            torch.rand(3)
            raise RuntimeError("boom")
    assert torch.equal(torch.get_rng_state(), before)


def test_forked_rng_accepts_a_device_object_and_nests():
    torch.manual_seed(2)
    before = torch.get_rng_state()
    with forked_rng(1, torch.device("cpu")):
        first = torch.rand(2)
        with forked_rng(2):
            torch.rand(5)
        # the inner block restores the outer block's stream
        second = torch.rand(2)
    assert torch.equal(torch.get_rng_state(), before)
    torch.manual_seed(1)
    assert torch.equal(torch.cat([first, second]), torch.rand(4))


def test_seeds_drawn_together_are_those_drawn_one_by_one_in_one_host_copy(monkeypatch):
    from botorch_unknown_hypers.rng import draw_seed, draw_seeds
    from tests.host_reads import record_reads

    one_by_one = torch.Generator().manual_seed(11)
    expected = [draw_seed(one_by_one) for _ in range(3)]
    together = torch.Generator().manual_seed(11)
    reads = record_reads(monkeypatch)
    seeds = draw_seeds(together, 3)
    monkeypatch.undo()
    assert seeds == expected and all(isinstance(s, int) for s in seeds) and reads == ["tolist"]
    assert draw_seed(together) == draw_seed(one_by_one)  # the streams stay in step
