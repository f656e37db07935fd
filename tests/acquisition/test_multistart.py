"""Tests of the batched multi-start engine (botorch_unknown_hypers.acquisition.multistart)."""

from __future__ import annotations

from functools import partial

import pytest
import torch
from botorch.acquisition.acquisition import AcquisitionFunction
from torch import Tensor

from botorch_unknown_hypers.acquisition.multistart import IndexedCandidateValues, maximize_per_candidate, select_restarts
from tests.host_reads import profiled_reads
from botorch_unknown_hypers.acquisition.ucb import CandidateUCBValues, candidate_ucb_at
from botorch_unknown_hypers.candidates import KernelCandidates
from botorch_unknown_hypers.models.candidate_gp import CandidateGP
from tests.acquisition.test_optimize import DTYPES, make_problem, ucb_of_selected


# --------------------------------------------------------------------------- #
# IndexedCandidateValues
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("subsets", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
def test_indexed_candidate_ucb(dtype, subsets):
    model, beta, bounds = make_problem(dtype=dtype)
    # Uneven counts: 4, 0, 1, 3, 2 points for candidates 0..4.
    idx = torch.tensor([0, 0, 0, 0, 2, 3, 3, 3, 4, 4])
    generator = torch.Generator().manual_seed(5)
    perm = torch.randperm(len(idx), generator=generator)
    idx = idx[perm]
    unit = torch.rand(len(idx), 2, generator=generator, dtype=torch.float64).to(dtype)
    pts = bounds[0] + (bounds[1] - bounds[0]) * unit
    X = torch.cat([pts, idx.to(dtype).unsqueeze(-1)], dim=-1).unsqueeze(-2)  # b x 1 x (d+1)
    X.requires_grad_(True)
    objectives = CandidateUCBValues(model, beta) if subsets else partial(candidate_ucb_at, model, beta)
    acqf = IndexedCandidateValues(objectives, model.num_candidates)
    values = acqf(X)
    assert values.shape == (len(idx),)
    if subsets:  # candidate 1 holds no point: only the other four are evaluated, on one subset
        assert list(acqf.subsets) == [(0, 2, 3, 4)] and acqf.subsets[(0, 2, 3, 4)].model.num_candidates == 4
        acqf(X)
        assert len(acqf.subsets) == 1

    expected = torch.stack(
        [
            ucb_of_selected(model, int(k), float(beta[int(k)]), pts[j : j + 1]).reshape(())
            for j, k in enumerate(idx)
        ]
    )
    tol = dict(rtol=1e-9, atol=1e-12) if dtype == torch.float64 else dict(rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(values.detach(), expected, **tol)

    grad_tol = tol if dtype == torch.float64 else dict(rtol=1e-3, atol=1e-3)
    # Gradients w.r.t. the points equal each point's own UCB gradient; none leak
    # into the (fixed) index column.
    values.sum().backward()
    assert torch.equal(X.grad[..., -1], torch.zeros_like(X.grad[..., -1]))
    for j, k in enumerate(idx.tolist()):
        point = pts[j : j + 1].clone().requires_grad_(True)
        ucb_of_selected(model, k, float(beta[k]), point).sum().backward()
        torch.testing.assert_close(X.grad[j, 0, :-1], point.grad[0], **grad_tol)


def test_indexed_candidate_ucb_single_point_per_candidate():
    model, beta, bounds = make_problem()
    pts = bounds[0] + 0.5 * (bounds[1] - bounds[0]) * torch.ones(5, 2, dtype=torch.float64)
    idx = torch.tensor([4, 3, 2, 1, 0], dtype=torch.float64)
    X = torch.cat([pts, idx.unsqueeze(-1)], dim=-1).unsqueeze(-2)
    values = IndexedCandidateValues(partial(candidate_ucb_at, model, beta), model.num_candidates)(X)
    direct = candidate_ucb_at(model, beta, pts[:1].expand(5, 1, 2)).reshape(5)
    torch.testing.assert_close(values, direct.flip(0), rtol=1e-12, atol=1e-12)


# --------------------------------------------------------------------------- #
# select_restarts and small helpers
# --------------------------------------------------------------------------- #


def _brute_force_first_draw(values: Tensor, eta: float) -> Tensor:
    """Probabilities of the first Boltzmann draw, straight from the definition."""
    z = (values - values.mean()) / values.std()
    w = torch.exp(eta * z)
    return w / w.sum()


class TestSelectRestarts:
    @pytest.mark.parametrize("dtype", DTYPES)
    def test_argmax_kept_and_unique(self, dtype):
        generator = torch.Generator().manual_seed(0)
        values = torch.randn(6, 50, generator=generator).to(dtype)
        idx = select_restarts(values, 10, 2.0, 1)
        assert idx.shape == (6, 10) and idx.dtype == torch.long
        for row, best in zip(idx, values.argmax(dim=-1)):
            assert len(set(row.tolist())) == 10
            assert best in row
        assert ((idx >= 0) & (idx < 50)).all()

    def test_keeps_each_rows_argmax_without_a_mask_index_or_a_host_read(self):
        # The argmax replaces the last draw where the draws missed it: with torch.where, not a
        # boolean mask index (which sizes its output on the host: a wait on CUDA). A negative
        # eta draws the smallest values (weight ratios of e^25 between neighbours after the
        # halving that keeps the weights finite), so rows 0, 2, 4 miss their argmax 0.
        values = torch.randn(6, 30, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
        values[::2] = torch.cat([torch.tensor([50.0]), torch.arange(1.0, 30.0)])
        idx = select_restarts(values, 3, -1000.0, 5)
        assert idx[::2].tolist() == [[1, 2, 0]] * 3
        assert (idx[1::2] == values[1::2].argmax(-1, keepdim=True)).any(-1).all()
        assert profiled_reads(lambda: select_restarts(values, 3, -1000.0, 5)) == []

    def test_weights_that_overflow_halve_eta_as_boltzmann_sample_does(self):
        # float32 weights exp(eta z) overflow for eta = 1000 (z up to 5.4 here): the loop of
        # boltzmann_sample halves eta until they are finite, per row, and so does this draw.
        from botorch.optim.initializers import boltzmann_sample

        for seed, dtype in [(0, torch.float32), (1, torch.float32), (2, torch.float64)]:
            values = torch.randn(3, 30, generator=torch.Generator().manual_seed(seed)).to(dtype)
            values[0, 4] = 100.0
            idx = select_restarts(values, 5, 1000.0 if dtype == torch.float32 else 1e4, seed)
            torch.default_generator.manual_seed(seed)
            expected = torch.stack([boltzmann_sample(row, 5, 1000.0 if dtype == torch.float32 else 1e4) for row in values])
            best = values.argmax(-1)
            expected[:, -1] = torch.where((expected != best.unsqueeze(-1)).all(-1), best, expected[:, -1])
            assert torch.equal(idx, expected)

    def test_rows_with_non_finite_values_draw_uniformly(self):
        # multinomial refuses NaN weights; here such a row draws `num` distinct points uniformly
        # (the first draw's frequencies are flat) and the other rows are untouched.
        values = torch.randn(2, 5, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
        values[0, 2] = torch.nan
        counts = torch.zeros(5)
        for seed in range(2000):
            idx = select_restarts(values, 2, 2.0, seed)
            assert len(set(idx[0].tolist())) == 2
            counts[idx[0, 0]] += 1
        assert torch.allclose(counts / counts.sum(), torch.full((5,), 0.2), atol=0.03)

    def test_num_one(self):
        values = torch.tensor([[0.0, 3.0, 1.0], [5.0, -1.0, 2.0]])
        idx = select_restarts(values, 1, 2.0, None)
        assert torch.equal(idx, torch.tensor([[1], [0]]))

    def test_take_all(self):
        values = torch.randn(3, 7, generator=torch.Generator().manual_seed(2))
        idx = select_restarts(values, 7, 2.0, 0)
        assert torch.equal(idx.sort(-1).values, torch.arange(7).expand(3, 7))

    def test_constant_row(self):
        values = torch.zeros(2, 5)
        idx = select_restarts(values, 3, 2.0, 0)
        assert idx.shape == (2, 3)
        for row in idx:
            assert len(set(row.tolist())) == 3

    def test_seeded(self):
        values = torch.randn(4, 30, generator=torch.Generator().manual_seed(3))
        assert torch.equal(select_restarts(values, 5, 2.0, 9), select_restarts(values, 5, 2.0, 9))

    def test_draws_are_botorchs_boltzmann_sample_on_the_cpu_generator_alone(self):
        # Each row's draw is BoTorch's boltzmann_sample under the CPU generator seeded by `seed`
        # (so a GPU run picks the same restarts from the same values); the global stream is kept.
        from botorch.optim.initializers import boltzmann_sample

        values = torch.randn(3, 40, generator=torch.Generator().manual_seed(6), dtype=torch.float64)
        torch.manual_seed(123)
        before = torch.get_rng_state()
        idx = select_restarts(values, 6, 2.0, 17)
        assert torch.equal(torch.get_rng_state(), before)
        torch.default_generator.manual_seed(17)
        expected = torch.stack([boltzmann_sample(row, 6, 2.0, replacement=False) for row in values])
        missing = (expected != values.argmax(-1, keepdim=True)).all(-1)
        expected[missing, -1] = values.argmax(-1)[missing]
        assert torch.equal(idx, expected)

    def test_draws_are_boltzmann_samples_over_many_seeded_cases(self):
        # The draws are computed without BoTorch's reads; they must stay its draws: 200 seeded
        # cases over both dtypes, 1-5 rows, 20-3000 points, eta up to 1000 (overflowing weights).
        from botorch.optim.initializers import boltzmann_sample

        for case in range(200):
            g = torch.Generator().manual_seed(case)
            dtype = (torch.float64, torch.float32)[case % 2]
            rows, m, num, eta = 1 + case % 5, (20, 64, 512, 3000)[case % 4], (2, 6, 10)[case % 3], (2.0, 100.0, 1000.0)[case % 3]
            values = torch.randn(rows, m, generator=g, dtype=torch.float64).to(dtype)
            if case % 7 == 0:
                values[:, 0] = 1e6
            idx = select_restarts(values, num, eta, case)
            torch.default_generator.manual_seed(case)
            expected = torch.stack([boltzmann_sample(row, num, eta, replacement=False) for row in values])
            best = values.argmax(-1)
            expected[:, -1] = torch.where((expected != best.unsqueeze(-1)).all(-1), best, expected[:, -1])
            assert torch.equal(idx, expected), case

    def test_rows_are_standardised_on_their_own(self):
        # A row shifted and scaled has the same standardised weights, so under one seed it
        # gets the same draws. Standardising over the batch dim would change them.
        values = torch.randn(1, 40, generator=torch.Generator().manual_seed(5), dtype=torch.float64)
        scaled = select_restarts(torch.cat([values, 100.0 + 1e3 * values]), 6, 2.0, 3)
        same = select_restarts(torch.cat([values, values]), 6, 2.0, 3)
        assert torch.equal(scaled, same)

    def test_first_draw_frequencies_match_the_boltzmann_law(self):
        # Without the argmax replacement (num = 2 keeps the first draw unchanged), the first
        # draw's empirical law matches exp(eta z) / sum, z the row's standardised values.
        values = torch.tensor([[0.0, 0.5, 1.0, 1.5, 3.0]], dtype=torch.float64)
        p = _brute_force_first_draw(values[0], 1.0)
        counts = torch.zeros(5, dtype=torch.float64)
        for seed in range(4000):
            counts[select_restarts(values, 2, 1.0, seed)[0, 0]] += 1
        assert torch.allclose(counts / counts.sum(), p, atol=0.025)

    def test_high_eta_prefers_best(self):
        # With a large eta, the two picks are the two best values almost surely.
        values = torch.tensor([[0.0, 1.0, 10.0, 9.0, -5.0] + [0.0] * 20])
        idx = select_restarts(values, 2, 50.0, 0)
        assert sorted(idx[0].tolist()) == [2, 3]

    @pytest.mark.parametrize("dtype", DTYPES)
    def test_extreme_eta_does_not_overflow(self, dtype):
        # eta * z far beyond exp's range: BoTorch's boltzmann_sample lowers eta until the
        # weights are finite; the draw still gives num distinct indices with the argmax.
        values = torch.randn(3, 600, generator=torch.Generator().manual_seed(4)).to(dtype)
        values[:, 7] = 50.0
        idx = select_restarts(values, 12, 1000.0, 0)
        for row in idx:
            assert len(set(row.tolist())) == 12 and 7 in row.tolist()


def test_serial_fallback_matches_parallel(monkeypatch):
    """Where BoTorch's parallel L-BFGS-B is unavailable the joint fallback runs, warns, and
    reaches the same per-candidate optima on a smooth seeded problem."""
    import botorch_unknown_hypers.acquisition.optimize as opt_mod

    gen = torch.Generator().manual_seed(5)
    X = torch.rand(25, 2, generator=gen, dtype=torch.float64)
    Y = torch.sin(4 * X).sum(-1, keepdim=True)
    cands = KernelCandidates.from_lengthscales(torch.tensor([0.6, 0.4, 0.3], dtype=torch.float64))
    model = CandidateGP(X, Y, cands)
    bounds = torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64)
    X_par, v_par = opt_mod.optimize_ucb_per_candidate(model, 1.5, bounds, num_restarts=4, raw_samples=64, seed=1)
    import botorch.generation.gen as botorch_gen  # multistart imports from it when it runs

    monkeypatch.setattr(botorch_gen, "get_reasons_against_fast_path", lambda **kwargs: ["forced by test"])
    with pytest.warns(RuntimeWarning, match="forced by test"):
        X_ser, v_ser = opt_mod.optimize_ucb_per_candidate(model, 1.5, bounds, num_restarts=4, raw_samples=64, seed=1)
    assert X_ser.shape == (3, 2)
    torch.testing.assert_close(v_ser, v_par, rtol=1e-5, atol=1e-6)
    direct = candidate_ucb_at(model, torch.full((3,), 1.5, dtype=torch.float64), X_ser.unsqueeze(1)).squeeze(-1)
    torch.testing.assert_close(direct, v_ser)


def test_maximize_per_candidate_extra_starts_are_validated_and_used():
    bounds = torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64)
    peak = torch.tensor([0.731, 0.259], dtype=torch.float64)

    def values(Xk):  # K x m x d -> K x m; a needle at `peak` that raw samples miss
        return torch.exp(-((Xk - peak) ** 2).sum(-1) / 1e-6).expand(Xk.shape[:-1])

    X0, v0 = maximize_per_candidate(values, 2, bounds, num_restarts=2, raw_samples=8, seed=0)
    X1, v1 = maximize_per_candidate(values, 2, bounds, num_restarts=2, raw_samples=8, seed=0, extra_starts=peak[None] + 1e-4)
    assert (v0 < 1e-3).all() and (v1 > 0.99).all()
    with pytest.raises(ValueError, match="extra_starts"):
        maximize_per_candidate(values, 2, bounds, num_restarts=2, raw_samples=8, extra_starts=peak)


# --------------------------------------------------------------------------- #
# maximize_acquisition: one BoTorch acquisition, optimize_acqf or the device search
# --------------------------------------------------------------------------- #


class _Peaks(AcquisitionFunction):
    r"""``b x q x d -> b``: a sum over the ``q`` points of two Gaussian bumps, the higher one
    centred outside the box on the upper face of coordinate 0; each point is worth less within
    0.2 of a pending point (``X_pending``), so a greedy batch spreads out."""

    def __init__(self) -> None:
        super().__init__(model=None)
        self.X_pending = None

    def set_X_pending(self, X_pending=None) -> None:
        self.X_pending = X_pending

    def forward(self, X):
        hi = torch.tensor([1.2, 0.3], dtype=X.dtype)
        lo = torch.tensor([0.2, 0.7], dtype=X.dtype)
        v = 1.5 * torch.exp(-((X - hi) ** 2).sum(-1) / 0.1) + torch.exp(-((X - lo) ** 2).sum(-1) / 0.05)
        if self.X_pending is not None:
            dist = torch.cdist(X, self.X_pending.to(X))
            v = v - 2.0 * torch.exp(-(dist**2) / 0.01).sum(-1)
        return v.sum(-1)


def _grid_max(acqf):
    g = torch.linspace(0, 1, 401, dtype=torch.float64)
    grid = torch.stack(torch.meshgrid(g, g, indexing="ij"), -1).reshape(-1, 1, 2)
    with torch.no_grad():
        values = acqf(grid)
    return float(values.max()), grid[values.argmax(), 0]


@pytest.mark.parametrize("search", ["scipy", "torch"])
def test_maximize_acquisition_finds_the_boundary_maximum_and_returns_every_restart(search):
    from botorch_unknown_hypers.acquisition.multistart import maximize_acquisition

    bounds = torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64)
    acqf = _Peaks()
    best, at = _grid_max(acqf)
    x, value = maximize_acquisition(acqf, bounds, num_restarts=6, raw_samples=64, seed=0, search=search)
    assert x.shape == (1, 2) and value.shape == ()
    assert float(value) >= best - 1e-6 and float(x[0, 0]) == pytest.approx(1.0, abs=1e-9)  # on the face
    X, values = maximize_acquisition(
        acqf, bounds, num_restarts=6, raw_samples=64, seed=0, starts=torch.tensor([[[0.2, 0.7]]], dtype=torch.float64),
        best_only=False, search=search,
    )
    assert X.shape == (7, 1, 2) and values.shape == (7,)
    with torch.no_grad():
        torch.testing.assert_close(values, acqf(X), rtol=1e-12, atol=1e-12)
    assert ((X >= 0) & (X <= 1)).all()


def test_maximize_acquisition_device_search_agrees_with_optimize_acqf_and_fills_a_batch_greedily():
    from botorch_unknown_hypers.acquisition.multistart import maximize_acquisition

    bounds = torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64)
    acqf = _Peaks()
    X_s, v_s = maximize_acquisition(acqf, bounds, q=2, num_restarts=6, raw_samples=64, seed=1)
    X_t, v_t = maximize_acquisition(acqf, bounds, q=2, num_restarts=6, raw_samples=64, seed=1, search="torch")
    assert acqf.X_pending is None  # restored after the greedy fill
    assert X_t.shape == (2, 2) and v_t.shape == (2,)
    torch.testing.assert_close(X_t, X_s, rtol=0, atol=1e-4)
    torch.testing.assert_close(v_t, v_s, rtol=0, atol=1e-8)
    # the second point maximises the acquisition conditioned on the first
    acqf.set_X_pending(X_t[:1])
    assert float(v_t[1]) >= _grid_max(acqf)[0] - 1e-6
    acqf.set_X_pending(None)


def test_maximize_acquisition_refuses_bad_arguments():
    from botorch_unknown_hypers.acquisition.multistart import maximize_acquisition

    bounds = torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64)
    with pytest.raises(ValueError, match="search must be one of"):
        maximize_acquisition(_Peaks(), bounds, search="adam")
    with pytest.raises(ValueError, match="q: a batch of q = 2"):
        maximize_acquisition(_Peaks(), bounds, q=2, best_only=False, search="torch")
    with pytest.raises(ValueError, match="num_restarts: 0 restarts and no starts"):
        maximize_acquisition(_Peaks(), bounds, num_restarts=0, search="torch")
