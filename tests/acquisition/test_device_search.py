import math
import re

import pytest
import torch

from botorch_unknown_hypers.acquisition.device_search import (
    SEARCHES,
    grid_slots,
    maximize_batched,
    refine_indexed_batched,
)
from botorch_unknown_hypers.acquisition.multistart import maximize_per_candidate, refine
from botorch_unknown_hypers.acquisition.optimize import joint_ucb_restarts
from botorch_unknown_hypers.candidates import KernelCandidates
from botorch_unknown_hypers.models import CandidateGP

D64 = torch.float64


def _quadratic(centre, scale):
    r"""``K x r x d -> K x r``: :math:`-\sum_i s_{ki} (x_i - c_{ki})^2`, candidate ``k`` its own."""

    def values(X):
        return -(scale.unsqueeze(1) * (X - centre.unsqueeze(1)) ** 2).sum(-1)

    return values


def _box(d, lo=-1.0, hi=2.0):
    return torch.tensor([[lo] * d, [hi] * d], dtype=D64)


def test_separable_quadratic_reaches_the_clipped_centre_inside_and_on_the_boundary():
    gen = torch.Generator().manual_seed(0)
    bounds = _box(4)
    # candidate 0: optimum inside; 1: two coordinates beyond the box (optimum on its faces); 2: a corner
    centre = torch.tensor([[0.3, 1.2, -0.5, 0.9], [2.7, 0.1, -3.0, 1.5], [5.0, -4.0, 3.0, -2.0]], dtype=D64)
    scale = torch.rand(3, 4, generator=gen, dtype=D64) * 20 + 0.05  # ill-conditioned: 400x
    starts = bounds[0] + (bounds[1] - bounds[0]) * torch.rand(3, 6, 4, generator=gen, dtype=D64)
    values = _quadratic(centre, scale)
    X, v = maximize_batched(values, bounds, starts)
    optimum = torch.maximum(torch.minimum(centre, bounds[1]), bounds[0])  # separable: clip each coordinate
    assert torch.allclose(X, optimum.unsqueeze(1).expand_as(X), atol=1e-5)
    assert torch.allclose(v, values(optimum.unsqueeze(1)).expand_as(v), atol=1e-8, rtol=1e-8)
    on_face = X[1][:, [0, 2]]
    assert torch.equal(on_face, bounds[:, [0, 2]].flip(0).diag().expand_as(on_face))  # exactly on the bound


def test_multimodal_function_matches_a_brute_force_grid():
    # K = 2 objectives of d = 2 with several local maxima; the best of 16 restarts against a 401^2 grid
    def values(X):
        shift = torch.tensor([[0.0, 0.0], [0.7, -0.4]], dtype=D64).unsqueeze(1)
        Z = X - shift
        return torch.sin(3 * Z[..., 0]) * torch.cos(2 * Z[..., 1]) - 0.1 * (Z ** 2).sum(-1)

    bounds = _box(2, -2.0, 2.0)
    grid = torch.stack(torch.meshgrid(*[torch.linspace(-2, 2, 401, dtype=D64)] * 2, indexing="ij"), -1).reshape(-1, 2)
    reference = values(grid.expand(2, -1, -1)).amax(-1)
    starts = bounds[0] + 4 * torch.quasirandom.SobolEngine(2, scramble=True, seed=1).draw(32, dtype=D64).reshape(2, 16, 2)
    _, v = maximize_batched(values, bounds, starts)
    assert torch.all(v.amax(-1) >= reference - 1e-6)  # at least the grid's best (grid step 0.01)
    assert torch.all(v.amax(-1) <= reference + 1e-3)


def test_no_evaluated_point_leaves_the_box():
    seen = []
    bounds = torch.tensor([[0.0, -1.0, 10.0], [1.0, 0.0, 10.5]], dtype=D64)
    slope = torch.tensor([5.0, -3.0, 40.0], dtype=D64)

    def values(X):  # linear: every maximiser is a corner; steps overshoot the box
        seen.append(X.detach().clone())
        return (X * slope).sum(-1) + torch.sin(X).sum(-1)

    starts = bounds[0] + (bounds[1] - bounds[0]) * torch.rand(2, 5, 3, generator=torch.Generator().manual_seed(2), dtype=D64)
    X, _ = maximize_batched(values, bounds, starts)
    points = torch.cat([s.reshape(-1, 3) for s in seen])
    assert len(seen) > 2 and bool(((points >= bounds[0]) & (points <= bounds[1])).all())
    assert torch.allclose(X, torch.tensor([1.0, -1.0, 10.5], dtype=D64).expand_as(X))


def test_batched_problems_equal_each_problem_alone():
    gen = torch.Generator().manual_seed(3)
    bounds = _box(3)
    centre = torch.randn(3, 3, generator=gen, dtype=D64) * 2
    scale = torch.rand(3, 3, generator=gen, dtype=D64) * 50 + 0.01  # very different convergence speeds

    def values(X):  # elementwise in the problems; quartic term: not a quadratic
        c, s = centre.unsqueeze(1), scale.unsqueeze(1)
        return -(s * (X - c) ** 2 + (X - c) ** 4).sum(-1)

    starts = bounds[0] + (bounds[1] - bounds[0]) * torch.rand(3, 4, 3, generator=gen, dtype=D64)
    X, v = maximize_batched(values, bounds, starts, {"check_every": 1})
    for k in range(3):
        for j in range(4):
            def alone(Z, k=k):
                c, s = centre[k], scale[k]
                return -(s * (Z - c) ** 2 + (Z - c) ** 4).sum(-1)

            X_kj, v_kj = maximize_batched(alone, bounds, starts[k : k + 1, j : j + 1], {"check_every": 1})
            assert torch.allclose(X_kj[0, 0], X[k, j], atol=1e-12, rtol=0)
            assert torch.allclose(v_kj[0, 0], v[k, j], atol=1e-12, rtol=0)


def test_stopped_problems_are_set_aside_and_written_back():
    widths = []
    centre = torch.tensor([[0.3, 0.6], [0.7, 0.2]], dtype=D64)
    scale = torch.tensor([[1.0, 1.0], [1.0, 1e3]], dtype=D64)  # candidate 1: slow, ill-conditioned

    def values(X):
        widths.append(X.shape[1])
        return -(scale.unsqueeze(1) * (X - centre.unsqueeze(1)) ** 2).sum(-1) - (X - centre.unsqueeze(1)).pow(4).sum(-1)

    # column 0 of each row starts at its optimum and stops at once; the others run on
    starts = torch.stack([centre, torch.full((2, 2), 0.95, dtype=D64), torch.full((2, 2), 0.05, dtype=D64)], dim=1)
    X, v = maximize_batched(values, _box(2, 0.0, 1.0), starts, {"check_every": 1})
    assert widths[0] == 3 and min(widths) < 3 and widths == sorted(widths, reverse=True)
    assert torch.allclose(X, centre.unsqueeze(1).expand_as(X), atol=1e-5)
    assert torch.equal(X[:, 0], centre) and torch.allclose(v, torch.zeros_like(v), atol=1e-9)


def test_checks_fall_at_growing_gaps_and_leave_the_results_unchanged(monkeypatch):
    from tests.host_reads import record_reads

    def values(X):  # Rosenbrock's valley in 4-d: the classic start takes tens of iterations
        a, b = X[..., :-1], X[..., 1:]
        return -(100 * (b - a**2) ** 2 + (1 - a) ** 2).sum(-1)

    starts = torch.tensor([[[-1.2, 1.0, -1.2, 1.0], [0.5] * 4], [[0.0, 1.8, -1.8, 0.2], [1.0] * 4]], dtype=D64)

    def run(options):
        reads = record_reads(monkeypatch)
        out = maximize_batched(values, _box(4, -2.0, 2.0), starts, options)
        monkeypatch.undo()
        return out, reads

    (X1, v1), every = run({"check_every": 1, "check_growth": 1.0})  # one read per iteration
    T = len(every)  # the iteration at which the last problem stopped
    assert T > 60 and every == ["tolist"] * T
    assert torch.allclose(X1, torch.ones_like(X1), atol=1e-4)

    def checks(c, r):  # the iterations the docstring names, up to the first at or after T
        out = [c]
        while out[-1] < T:
            out.append(out[-1] + max(c, math.ceil((r - 1) * out[-1])))
        return out

    for options, c, r in (({}, 10, 1.5), ({"check_every": 1, "check_growth": 2.0}, 1, 2.0), ({"check_every": 3}, 3, 1.5)):
        (X, v), reads = run(options)
        assert len(reads) == len(checks(c, r)) < T
        assert torch.equal(X, X1) and torch.equal(v, v1)  # elementwise values: no rounding of the batch


class _RowObjectives:
    r"""A quadratic per row with :meth:`subset`, recording how many rows each call scores."""

    subset_is_view = True

    def __init__(self, centre, scale, calls):
        self.centre, self.scale, self.calls = centre, scale, calls

    def __call__(self, X):
        self.calls.append(X.shape[0])
        return _quadratic(self.centre, self.scale)(X)

    def subset(self, rows):
        return _RowObjectives(self.centre[rows], self.scale[rows], self.calls)


def test_rows_whose_problems_all_stopped_are_no_longer_scored(monkeypatch):
    from tests.host_reads import record_reads

    gen = torch.Generator().manual_seed(3)
    centre = torch.rand(4, 3, generator=gen, dtype=D64)
    # row 0 is an isotropic bowl (two or three iterations); the others are ill-conditioned
    scale = torch.cat([torch.ones(1, 3, dtype=D64), torch.rand(3, 3, generator=gen, dtype=D64) * 400 + 0.01])
    starts = torch.rand(4, 5, 3, generator=gen, dtype=D64)
    calls = []
    options = {"check_every": 1, "check_growth": 1.0}
    reads = record_reads(monkeypatch)
    X, v = maximize_batched(_RowObjectives(centre, scale, calls), _box(3, 0.0, 1.0), starts, options)
    monkeypatch.undo()
    plain = []
    X_p, v_p = maximize_batched(lambda Z: (plain.append(Z.shape[0]), _quadratic(centre, scale)(Z))[1], _box(3, 0.0, 1.0), starts, options)
    assert set(plain) == {4} and calls[0] == 4 and min(calls) == 1 and sorted(calls, reverse=True) == calls
    assert len(reads) == len(calls) - 1  # one read per check, as without rows set aside
    assert torch.equal(X, X_p) and torch.equal(v, v_p)  # rows are independent: the same numbers
    assert torch.allclose(X, centre.unsqueeze(1).expand_as(X), atol=1e-5)


def test_candidate_ucbs_set_rows_aside_only_on_cached_factors(monkeypatch):
    from botorch_unknown_hypers.acquisition.device_search import row_subset
    from botorch_unknown_hypers.acquisition.ucb import CandidateUCBValues, as_beta
    from botorch_unknown_hypers.models.factor_cache import FactorCache

    gen = torch.Generator().manual_seed(0)
    X = torch.rand(30, 2, generator=gen, dtype=D64)
    Y = torch.sin(6 * X).sum(-1, keepdim=True)
    cands = KernelCandidates.from_lengthscales(torch.tensor([0.05, 0.2, 0.8], dtype=D64), noise=1e-3)
    plain = CandidateGP(X, Y, cands)  # GPyTorch's predictive: a subset would factorise again
    cached = CandidateGP(X, Y, cands, factor=FactorCache().factor(cands, X))
    assert row_subset(CandidateUCBValues(plain, as_beta(2.0, 3, X))) is None
    assert row_subset(CandidateUCBValues(cached, as_beta(2.0, 3, X))) is not None
    starts = torch.rand(3, 4, 2, generator=gen, dtype=D64)
    subsets = []
    original = CandidateGP.subset
    monkeypatch.setattr(CandidateGP, "subset", lambda self, rows: subsets.append(list(rows)) or original(self, rows))
    found = {}
    for name, model in (("plain", plain), ("cached", cached)):
        subsets.clear()
        found[name] = maximize_batched(CandidateUCBValues(model, as_beta(2.0, 3, X)), _box(2, 0.0, 1.0), starts)
        assert (subsets == []) == (name == "plain")
    torch.testing.assert_close(found["cached"][1], found["plain"][1], rtol=1e-9, atol=1e-12)


def test_bad_check_options_raise_naming_the_argument():
    values = _quadratic(torch.zeros(1, 2, dtype=D64), torch.ones(1, 2, dtype=D64))
    starts = torch.full((1, 1, 2), 0.5, dtype=D64)
    for options, name in (
        ({"check_every": 0}, "check_every"), ({"check_every": 2.5}, "check_every"), ({"check_every": True}, "check_every"),
        ({"check_growth": 0.5}, "check_growth"), ({"check_growth": float("inf")}, "check_growth"),
        ({"check_growth": "2"}, "check_growth"),
    ):
        with pytest.raises(ValueError, match=rf"^{name} must be .*, got {re.escape(repr(options[name]))}\.$"):
            maximize_batched(values, _box(2), starts, options)


def test_a_non_finite_start_is_frozen_and_does_not_stop_the_others():
    def values(X):
        return -((X - 0.25) ** 2).sum(-1) + 0 * torch.sqrt(0.9 - X[..., 0])  # NaN where x_0 > 0.9

    bounds = _box(2, 0.0, 1.0)
    starts = torch.tensor([[[0.95, 0.5], [0.1, 0.8]]], dtype=D64)
    X, v = maximize_batched(values, bounds, starts)
    assert torch.equal(X[0, 0], starts[0, 0]) and torch.isneginf(v[0, 0])  # never taken by an argmax
    assert torch.allclose(X[0, 1], torch.full((2,), 0.25, dtype=D64), atol=1e-6)


def test_indexed_refinement_places_starts_on_their_candidates():
    centre = torch.tensor([[0.2, 0.2], [0.8, 0.4], [0.5, 0.9]], dtype=D64)
    values = _quadratic(centre, torch.ones(3, 2, dtype=D64))
    cand = torch.tensor([2.0, 0.0, 2.0, 2.0])  # candidate 1 holds no start
    slot, counts = grid_slots(cand.long(), 3)
    assert slot.tolist() == [0, 0, 1, 2] and counts.tolist() == [1, 0, 3]
    starts = torch.tensor([[0.0, 0.0], [1.0, 1.0], [0.3, 0.3], [1.0, 0.0]], dtype=D64)
    X, v = refine_indexed_batched(values, 3, _box(2, 0.0, 1.0), starts, cand)
    assert torch.allclose(X, centre[cand.long()], atol=1e-6) and v.shape == (4,)
    X_r, v_r = refine(values, 3, _box(2, 0.0, 1.0), starts, cand, {}, search="torch")
    assert torch.equal(X_r, X) and torch.equal(v_r, v)


def test_indexed_refinement_takes_a_known_width_without_a_read(monkeypatch):
    from tests.host_reads import record_reads

    centre = torch.tensor([[0.2, 0.2], [0.8, 0.4], [0.5, 0.9]], dtype=D64)
    values = _quadratic(centre, torch.ones(3, 2, dtype=D64))
    cand = torch.tensor([2.0, 0.0, 2.0, 2.0])
    starts = torch.tensor([[0.0, 0.0], [1.0, 1.0], [0.3, 0.3], [1.0, 0.0]], dtype=D64)
    X, v = refine_indexed_batched(values, 3, _box(2, 0.0, 1.0), starts, cand)
    options = {"check_every": 200}  # the search's own checks out of the way: one at the end
    reads = record_reads(monkeypatch)
    refine_indexed_batched(values, 3, _box(2, 0.0, 1.0), starts, cand, options)
    unknown = list(reads)
    reads.clear()
    X_w, v_w = refine(values, 3, _box(2, 0.0, 1.0), starts, cand, options, search="torch", width=3)
    assert reads == unknown[1:] and len(unknown) == 2  # the grid's width was the one read less
    monkeypatch.undo()
    assert torch.allclose(X_w, X, atol=1e-6) and torch.allclose(v_w, v, atol=1e-9)
    for width in (0, 5, 2.0, True):
        with pytest.raises(ValueError, match=rf"^width must be an integer in \[1, 4\].*got {re.escape(repr(width))}\.$"):
            refine_indexed_batched(values, 3, _box(2, 0.0, 1.0), starts, cand, width=width)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_maximize_per_candidate_torch_search_is_seeded_and_stays_on_dtype(dtype):
    bounds = _box(3).to(dtype)
    centre = torch.tensor([[0.5, -0.5, 1.5], [2.5, 0.0, -1.5]], dtype=dtype)
    values = _quadratic(centre, torch.tensor([[1.0, 4.0, 0.5], [2.0, 1.0, 1.0]], dtype=dtype))
    X, v = maximize_per_candidate(values, 2, bounds, num_restarts=3, raw_samples=16, seed=5, search="torch")
    X_again, v_again = maximize_per_candidate(values, 2, bounds, num_restarts=3, raw_samples=16, seed=5, search="torch")
    assert torch.equal(X, X_again) and torch.equal(v, v_again)
    assert X.dtype == dtype and X.device == bounds.device and X.shape == (2, 3) and v.shape == (2,)
    optimum = torch.maximum(torch.minimum(centre, bounds[1]), bounds[0])
    assert torch.allclose(X, optimum, atol=1e-3 if dtype == torch.float32 else 1e-6)
    X_s, v_s = maximize_per_candidate(values, 2, bounds, num_restarts=3, raw_samples=16, seed=5)
    assert torch.allclose(v, v_s, atol=1e-4 if dtype == torch.float32 else 1e-9)


def test_bad_search_or_options_raise_naming_the_argument():
    values = _quadratic(torch.zeros(1, 2, dtype=D64), torch.ones(1, 2, dtype=D64))
    with pytest.raises(ValueError, match=r"search must be one of \('scipy', 'torch'\), got 'lbfgs'"):
        maximize_per_candidate(values, 1, _box(2), num_restarts=2, raw_samples=8, search="lbfgs")
    with pytest.raises(ValueError, match=r"options for search='torch'.*\['ftol_rel'\]"):
        maximize_per_candidate(values, 1, _box(2), num_restarts=2, raw_samples=8, options={"ftol_rel": 1e-3}, search="torch")
    assert SEARCHES == ("scipy", "torch")


def test_joint_ucb_restarts_refines_the_same_pairs_on_the_device():
    gen = torch.Generator().manual_seed(4)
    X = torch.rand(20, 2, generator=gen, dtype=D64)
    model = CandidateGP(X, torch.sin(5 * X).sum(-1, keepdim=True), KernelCandidates.from_lengthscales(torch.tensor([0.5, 0.2, 0.1], dtype=D64)))
    bounds = _box(2, 0.0, 1.0)
    scipy = joint_ucb_restarts(model, 2.0, bounds, num_restarts=4, raw_samples=64, seed=0)
    device = joint_ucb_restarts(model, 2.0, bounds, num_restarts=4, raw_samples=64, seed=0, search="torch")
    assert torch.equal(device.candidates, scipy.candidates)  # same (point, candidate) starts
    assert torch.allclose(device.values, scipy.values, rtol=1e-6, atol=1e-8)
    with pytest.raises(ValueError, match="search must be one of"):
        joint_ucb_restarts(model, 2.0, bounds, num_restarts=4, raw_samples=64, search="adam")
