import math

import pytest
import torch
from botorch.models.transforms import Normalize, Standardize
from linear_operator import to_dense

from botorch_unknown_hypers.candidates import KernelCandidates
from botorch_unknown_hypers.models.candidate_gp import CandidateGP
from botorch_unknown_hypers.models.factor_cache import FactorCache, jittered_cholesky

D = torch.float64


def _spec(noise=1e-6, kernel="matern52"):
    ls = torch.tensor([[0.5, 0.3, 0.8], [0.2, 0.2, 0.2], [0.05, 0.1, 0.07]], dtype=D)
    return KernelCandidates(lengthscale=ls, outputscale=torch.tensor([1.0, 2.0, 0.5], dtype=D), noise=noise, kernel=kernel)


def _fresh_chol(spec, X, noise=None):
    _, covar, _ = spec.build(dim=X.shape[-1])
    s = spec.noise_variances() if noise is None else torch.full((len(spec),), noise, dtype=D)
    A = to_dense(covar(X)) + torch.diag_embed(s[:, None].expand(-1, X.shape[0]))
    return torch.linalg.cholesky(A)


def _rel(a, b):
    return float((a - b).abs().max() / b.abs().max())


def _points(n, seed=0, repeats=True):
    g = torch.Generator().manual_seed(seed)
    X = torch.rand(n, 3, generator=g, dtype=D)
    if repeats:  # every 7th point repeats an earlier one exactly
        X[7::7] = X[torch.arange(7, n, 7) // 2]
    return X


def test_block_updates_match_a_fresh_factorisation_over_200_points():
    # noise 1e-6 and repeated points: the hardest case the updates must survive without jitter
    spec, X = _spec(), _points(230)
    Y = torch.sin(6 * X).sum(-1, keepdim=True)
    cache = FactorCache()
    cache.factor(spec, X[:30])
    sizes = [31, 32, 35, 36, 40, 48, 49, 60, 80, 81, 100, 130, 131, 170, 200, 229, 230]
    for m in sizes:  # 200 points appended in updates of 1 to 40
        f = cache.factor(spec, X[:m])
        assert f.X.shape[0] == m
    # built row by row, with a fresh factorisation at every 64th row (rows 64, 128, 192); an
    # update that passes one skips the rows before it (60-62, 100-126 and 170-190)
    assert cache.stats.rows == 3 * (230 - 3 - (3 + 27 + 21)) and cache.stats.full == 9
    assert cache.stats.refactor_reasons == {"new candidates": 3, "refactor_every": 9}
    assert float(f.jitter.abs().max()) == 0.0
    fresh = _fresh_chol(spec, X)
    assert _rel(f.L, fresh) < 1e-8
    # the posterior mean and variance from the updated factor against those from the fresh one
    g = torch.Generator().manual_seed(0)
    _, covar, _ = spec.build(dim=3)
    Z = torch.rand(64, 3, generator=g, dtype=D)
    kXZ, kZ = to_dense(covar(X, Z)), to_dense(covar(Z, diag=True))
    r = (Y.squeeze(-1) - Y.mean()).expand(3, -1).unsqueeze(-1)
    moments = []
    for L in (f.L, fresh):
        V = torch.linalg.solve_triangular(L, kXZ, upper=False)
        moments.append(((kXZ.mT @ torch.cholesky_solve(r, L)).squeeze(-1), kZ - (V * V).sum(-2)))
    for a, b in zip(*moments):
        assert _rel(a, b) < 1e-8
    # a model on the updated factor against a model that factorises itself (GPyTorch's path):
    # at noise 1e-6 with repeated points, either variance is about 2.4e-8 (relative to its
    # largest value) from a long-double computation of the same formula, so 5e-8 here
    bounds = torch.tensor([[0.0] * 3, [1.0] * 3], dtype=D)
    Xt = Normalize(3, bounds=bounds)(X)
    torch.testing.assert_close(Xt, X)  # unit box: the cache saw the transformed inputs
    kwargs = dict(input_transform=Normalize(3, bounds=bounds), outcome_transform=Standardize(m=1))
    cached = CandidateGP(X, Y, spec, factor=f, **kwargs)
    plain = CandidateGP(X, Y, spec, **kwargs)
    (ma, va), (mb, vb) = (m.marginal_mean_variance(Z.reshape(64, 1, 1, 3)) for m in (cached, plain))
    assert _rel(ma, mb) < 1e-8 and _rel(va, vb) < 5e-8
    pa, pb = cached.posterior(torch.rand(5, 4, 3, generator=g, dtype=D)), plain.posterior(torch.rand(5, 4, 3, generator=g, dtype=D))
    assert pa.mean.shape == pb.mean.shape == (5, 3, 4, 1)
    Zq = torch.rand(5, 4, 3, generator=g, dtype=D)
    pa, pb = cached.posterior(Zq), plain.posterior(Zq)
    assert _rel(pa.mean, pb.mean) < 1e-8
    assert _rel(pa.distribution.covariance_matrix, pb.distribution.covariance_matrix) < 5e-8
    assert _rel(cached.log_marginal_likelihood(), plain.log_marginal_likelihood()) < 1e-8


def test_the_factor_path_matches_on_a_box_with_gradients_and_views():
    spec = _spec(noise=1e-3, kernel="rbf")
    bounds = torch.tensor([[-2.0, 0.0, 10.0], [3.0, 1.0, 30.0]], dtype=D)
    X = bounds[0] + (bounds[1] - bounds[0]) * _points(40, seed=3, repeats=False)
    Y = X.sum(-1, keepdim=True) ** 2
    nt = Normalize(3, bounds=bounds)
    f = FactorCache().factor(spec, nt(X))
    cached = CandidateGP(X, Y, spec, input_transform=Normalize(3, bounds=bounds), outcome_transform=Standardize(m=1), factor=f)
    plain = CandidateGP(X, Y, spec, input_transform=Normalize(3, bounds=bounds), outcome_transform=Standardize(m=1))
    Z = (bounds[0] + (bounds[1] - bounds[0]) * torch.rand(6, 1, 1, 3, dtype=D)).requires_grad_(True)
    grads = []
    for model in (cached, plain):
        mean, var = model.marginal_mean_variance(Z)
        (mean.sum() + var.sqrt().sum()).backward()
        grads.append(Z.grad.clone())
        Z.grad = None
    assert _rel(grads[0], grads[1]) < 1e-8
    for a, b in ((cached.select(2), plain.select(2)), (cached.subset([2, 0]), plain.subset([2, 0]))):
        assert a.factor is not None
        W = Z.detach()[:, 0]
        assert _rel(a.posterior(W).mean, b.posterior(W).mean) < 1e-8
        assert _rel(a.posterior(W, observation_noise=True).variance, b.posterior(W, observation_noise=True).variance) < 1e-8


def test_the_factor_does_not_depend_on_the_history_of_calls():
    # a resumed rule rebuilds its factors in one call: bit for bit what the campaign extended
    spec, X = _spec(noise=1e-4), _points(150, repeats=False)
    campaign = FactorCache()
    for m in (10, 11, 12, 20, 63, 64, 65, 100, 129, 150):
        f = campaign.factor(spec, X[:m])
        fresh = FactorCache().factor(spec, X[:m])
        assert torch.equal(f.L, fresh.L) and torch.equal(f.jitter, fresh.jitter)
    single = FactorCache().factor(spec.subset([1]), X)  # and not on the other candidates
    assert torch.equal(single.L[0], f.L[1])
    assert torch.equal(FactorCache(noise=0.3).factor(spec.subset([2, 0]), X).L, FactorCache(noise=0.3).factor(spec, X).L[[2, 0]])


def test_new_candidates_are_factorised_once_and_dropped_ones_leave_the_others_untouched():
    spec, X = _spec(noise=1e-4), _points(140, repeats=False)
    cache = FactorCache()
    first = cache.factor(spec.subset([0, 1]), X[:70])
    assert cache.stats.full == 2  # at row 64
    grown = cache.factor(spec, X[:75])  # a new candidate, then five rows for all three
    assert cache.stats.full == 3 and cache.stats.refactor_reasons["new candidates"] == 3
    torch.testing.assert_close(grown.L[:2, :70, :70], first.L, rtol=0, atol=0)
    assert torch.equal(grown.L[2], FactorCache().factor(spec.subset([2]), X[:75]).L[0])
    assert _rel(grown.L[2], _fresh_chol(spec.subset([2]), X[:75])[0]) < 1e-10
    reordered = cache.factor(spec.subset([2, 0]), X[:75])  # candidate 1 eliminated
    assert cache.stats.full == 3
    torch.testing.assert_close(reordered.L, grown.L[[2, 0]], rtol=0, atol=0)
    again = cache.factor(spec.subset([2, 0]), X[:140])
    assert _rel(again.L, _fresh_chol(spec.subset([2, 0]), X[:140])) < 1e-10 and cache.stats.full == 5  # row 128


def test_kept_candidates_wait_and_catch_up_to_the_same_bits():
    # a rule that plays one candidate per round keeps the others without advancing them
    spec, X = _spec(noise=1e-4), _points(150, repeats=True)
    lazy, eager = FactorCache(), FactorCache()
    for m, played in ((20, 0), (40, 1), (63, 1), (70, 2), (100, 0), (129, 2), (150, 1)):
        f = lazy.factor(spec.subset([played]), X[:m], keep=spec)
        full = eager.factor(spec, X[:m])
        assert torch.equal(f.L[0], full.L[played]) and float(f.jitter[0]) == float(full.jitter[played])
    # eager: all three at rows 64 and 128; lazy: 0 at 64 (not past 128), 1 once at 128 (its
    # catch-up from 63 to 150 passes both), 2 at 64 and 128
    assert eager.stats.full == 6 and lazy.stats.full == 4
    assert lazy.stats.refactor_reasons["new candidates"] == 3
    # once no longer kept, a candidate is dropped; asked for again, it is factorised anew
    lazy.factor(spec.subset([1]), X, keep=spec.subset([1, 2]))
    assert torch.equal(lazy.factor(spec.subset([0]), X, keep=spec).L[0], eager.factor(spec, X).L[0])
    assert lazy.stats.refactor_reasons["new candidates"] == 4
    lazy.factor(spec.subset([2]), X, keep=spec)  # kept all along: no new factorisation
    assert lazy.stats.refactor_reasons["new candidates"] == 4
    # a kept candidate that is never asked for is never factorised
    first = FactorCache()
    first.factor(spec.subset([1]), X[:30], keep=spec)
    first.factor(spec.subset([1]), X[:31], keep=spec)
    assert first.stats.refactor_reasons["new candidates"] == 1


def test_refactorisation_policy():
    spec, X = _spec(noise=1e-4), _points(40, repeats=False)
    cache = FactorCache(refactor_every=10)
    cache.factor(spec, X[:20])  # factorised at 20 rows
    cache.factor(spec, X[:26])
    assert cache.stats.full == 3 and cache.stats.rows == 3 * 6
    cache.factor(spec, X[:31])  # row 30 is a multiple of 10
    assert cache.stats.full == 6 and cache.stats.refactor_reasons["refactor_every"] == 3
    other = X.flip(0)
    cache.factor(spec, other)  # not an extension of the cached inputs
    assert cache.stats.refactor_reasons["data not an extension"] == 3
    assert _rel(cache.factor(spec, other).L, _fresh_chol(spec, other)) < 1e-10
    for bad in (0, 2.5, True):
        with pytest.raises(ValueError, match="refactor_every must be an integer >= 1"):
            FactorCache(refactor_every=bad)
    with pytest.raises(ValueError, match="noise must be > 0"):
        FactorCache(noise=0.0)


def test_jitter_is_kept_and_grown_only_when_the_update_needs_it():
    # a smooth kernel on many points with (almost) no noise: singular to working precision
    spec = KernelCandidates(lengthscale=torch.tensor([[5.0], [0.01]], dtype=D), outputscale=1.0, noise=1e-4, kernel="rbf")
    X = torch.linspace(0, 1, 40, dtype=D).unsqueeze(-1)
    cov = to_dense(spec.build(1)[1](X))
    L, jitter = jittered_cholesky(cov[0] - 1e-9 * torch.eye(40, dtype=D))  # indefinite by construction
    assert jitter >= 1e-9  # escalated until it works
    torch.testing.assert_close(L @ L.T, cov[0] + (jitter - 1e-9) * torch.eye(40, dtype=D))
    L1, jitter1 = jittered_cholesky(cov[1] + 1e-4 * torch.eye(40, dtype=D))
    assert jitter1 == 0.0  # none unless needed
    cache = FactorCache(noise=1e-300)
    f = cache.factor(spec, X[:30])
    assert float(f.jitter[0]) > 0 and float(f.jitter[1]) == 0
    grown_before = cache.stats.refactor_reasons["jitter would grow"]  # while its rows were added
    f2 = cache.factor(spec, X)
    A = cov[0] + f2.jitter[0] * torch.eye(40, dtype=D)
    assert _rel(f2.L[0] @ f2.L[0].T, A) < 1e-8
    assert float(f2.jitter[0]) >= float(f.jitter[0]) and float(f2.jitter[1]) == 0
    assert cache.stats.refactor_reasons["jitter would grow"] == grown_before  # the new rows kept the jitter
    # a point appended twice makes the Schur complement singular: whatever the rounding, the
    # result is the factor of the matrix plus the jitter it reports, and no jitter shrinks
    Xd = torch.cat([X, torch.tensor([[0.123], [0.123]], dtype=D)])
    f3 = cache.factor(spec, Xd)
    cov_d = to_dense(spec.build(1)[1](Xd))
    for u in range(2):
        A = cov_d[u] + f3.jitter[u] * torch.eye(42, dtype=D)
        assert _rel(f3.L[u] @ f3.L[u].T, A) < 1e-8
        assert float(f3.jitter[u]) >= float(f2.jitter[u])


def test_information_gain_and_noise_override_match_brute_force():
    spec, X = _spec(noise=1e-2), _points(30, repeats=False)
    cache, override = FactorCache(), FactorCache(noise=0.25)
    f, g = cache.factor(spec, X), override.factor(spec, X)
    _, covar, _ = spec.build(dim=3)
    Kxx = to_dense(covar(X))
    for factor, s in ((f, spec.noise_variances()), (g, torch.full((3,), 0.25, dtype=D))):
        brute = torch.stack([0.5 * torch.logdet(torch.eye(30, dtype=D) + Kxx[u] / s[u]) for u in range(3)])
        torch.testing.assert_close(factor.information_gain(), brute, rtol=1e-10, atol=1e-10)
    assert math.isclose(float(f.logdet()[0]), float(torch.logdet(Kxx[0] + 1e-2 * torch.eye(30, dtype=D))), rel_tol=1e-10)


def test_a_factor_for_other_data_is_refused():
    spec, X = _spec(), _points(20, repeats=False)
    f = FactorCache().factor(spec, X[:19])
    with pytest.raises(ValueError, match="factor must hold 3 candidates"):
        CandidateGP(X, X.sum(-1, keepdim=True), spec, factor=f)


def test_fixed_point_solves_match_brute_force_over_200_points():
    # noise 1e-6 and repeated points; appended in updates of 1 to 40 rows across refactorisations
    spec, X = _spec(), _points(230)
    Y = torch.sin(6 * X).sum(-1, keepdim=True)
    R = torch.rand(50, 3, generator=torch.Generator().manual_seed(5), dtype=D)
    cache = FactorCache()
    cache.set_points(R)
    _, covar, _ = spec.build(dim=3)
    bounds = torch.tensor([[0.0] * 3, [1.0] * 3], dtype=D)
    for m in [30, 31, 32, 35, 40, 48, 49, 60, 64, 65, 80, 100, 130, 131, 170, 200, 229, 230]:
        f = cache.factor(spec, X[:m])
        V = torch.linalg.solve_triangular(_fresh_chol(spec, X[:m]), to_dense(covar(X[:m], R)), upper=False)  # K x m x 50
        rhs = torch.randn(3, m, dtype=D)
        w = torch.linalg.solve_triangular(_fresh_chol(spec, X[:m]), rhs.unsqueeze(-1), upper=False)
        vw, sq = f.point_products(rhs)
        assert _rel(sq, (V * V).sum(-2)) < 1e-8
        assert _rel(vw, (V.mT @ w).squeeze(-1)) < 1e-8
        # the model's moments at R from the solves equal its moments computed at R
        model = CandidateGP(X[:m], Y[:m], spec, factor=f, input_transform=Normalize(3, bounds=bounds), outcome_transform=Standardize(m=1))
        mean, var = model.fixed_point_moments(R)
        ref_mean, ref_var = model.marginal_mean_variance(R.expand(1, 1, -1, -1))
        assert _rel(mean, ref_mean[0]) < 1e-8 and _rel(var, ref_var[0]) < 1e-8
    # a function of the candidate, the data and the points alone: the same bits built at once
    again = FactorCache()
    again.set_points(R)
    g = again.factor(spec, X)
    for a, b in zip(f.solves, g.solves):
        assert torch.equal(a.base, b.base) and torch.equal(a.rows, b.rows)


def test_fixed_points_are_kept_per_candidate_and_dropped_when_the_points_change():
    spec, X = _spec(noise=1e-4), _points(90, repeats=False)
    R = torch.rand(20, 3, generator=torch.Generator().manual_seed(1), dtype=D)
    cache = FactorCache()
    assert cache.factor(spec, X[:40]).solves is None  # no points: none carried
    cache.set_points(R)
    f40 = cache.factor(spec, X[:40])
    rows40 = [s.rows.shape[0] for s in f40.solves]
    f41 = cache.factor(spec, X[:41])
    assert [s.rows.shape[0] for s in f41.solves] == [r + 1 for r in rows40]
    assert [s.rows.shape[0] for s in f40.solves] == rows40  # a factor handed out earlier keeps its rows
    assert all(a.base is b.base for a, b in zip(f40.solves, f41.solves))  # the base part is not recomputed
    sub = f41.subset([2, 0])
    assert sub.solves[0] is f41.solves[2] and torch.equal(sub.points, R)
    cache.set_points(R.clone())  # the same points: nothing dropped
    assert all(a is b for a, b in zip(cache.factor(spec, X[:41]).solves, f41.solves))
    cache.set_points(R[:10])  # other points: new solves, same factors
    f = cache.factor(spec, X[:41])
    assert f.points.shape[0] == 10 and all(s.base.shape[-1] == 10 for s in f.solves)
    assert all(a is b for a, b in zip(f.parts, f41.parts))
    with pytest.raises(ValueError, match="points must be m x d"):
        cache.set_points(R[:0])
    with pytest.raises(ValueError, match="points must be finite"):
        cache.set_points(torch.full((2, 3), float("nan"), dtype=D))
    with pytest.raises(ValueError, match="points must be m x 3 like the cached inputs"):
        cache.set_points(torch.rand(5, 2, dtype=D))
    assert cache.factor(spec, X[:41]).points.shape == (10, 3)  # unchanged by the refused call
    fresh = FactorCache()
    fresh.set_points(R.float())
    with pytest.raises(ValueError, match="the fixed points are"):
        fresh.factor(spec, X[:41])
    with pytest.raises(ValueError, match="carries no fixed points"):
        FactorCache().factor(spec, X[:41]).point_products(torch.zeros(3, 41, dtype=D))


def test_solves_run_on_the_blocks_match_the_dense_factors_and_a_subset_shares_parts_and_last_solve():
    spec, X = _spec(noise=1e-4), _points(150, repeats=False)  # 150 rows: a base of 128 and 22 appended
    f = FactorCache().factor(spec, X)
    rhs = torch.randn(3, 150, 4, generator=torch.Generator().manual_seed(2), dtype=D)
    full = f.solve(rhs)
    assert f._stacked is None  # solved on the blocks: no stacked copy of the factors was made
    assert f.solve(rhs.clone()) is full  # the same right-hand sides again: kept
    dense = f.L
    two_solves = torch.linalg.solve_triangular(dense.mT, torch.linalg.solve_triangular(dense, rhs, upper=False), upper=True)
    torch.testing.assert_close(full, two_solves, rtol=1e-10, atol=0)
    torch.testing.assert_close(full, torch.cholesky_solve(rhs, dense), rtol=1e-10, atol=0)  # LAPACK potrs
    torch.testing.assert_close(f.solve_lower(rhs), torch.linalg.solve_triangular(dense, rhs, upper=False), rtol=1e-10, atol=0)
    torch.testing.assert_close(f.solve_lower(rhs[:1]), f.solve_lower(rhs[:1].expand(3, -1, -1)), rtol=0, atol=0)  # broadcast
    sub = f.subset([2, 0])
    assert sub.parts[0] is f.parts[2] and sub.solve(rhs[[2, 0]]) is not None
    assert torch.equal(sub.solve(rhs[[2, 0]]), full[[2, 0]])  # the parent's last solve, its rows
    fresh = FactorCache().factor(spec, X).subset([2, 0])  # nothing assembled or solved yet
    assert torch.equal(sub.L, fresh.L) and torch.equal(fresh.solve(rhs[[2, 0]]), full[[2, 0]])  # each candidate alone


def test_a_factor_names_its_blocks_and_keeps_their_earlier_names():
    spec, X = _spec(noise=1e-4), _points(70, repeats=False)
    part = FactorCache().factor(spec, X).parts[0]  # a base of 64 rows and 6 rows appended
    assert part.base.shape == (64, 64) and part.lower_left.shape == (6, 64) and part.lower_right.shape == (6, 6)
    assert part.B is part.lower_left and part.C is part.lower_right
    dense = part.dense()
    assert torch.equal(dense[64:, :64], part.lower_left) and torch.equal(dense[64:, 64:], part.lower_right)


def test_the_cache_frees_the_stack_it_handed_out_last_and_it_is_rebuilt_with_the_same_bits():
    spec, X = _spec(noise=1e-4), _points(90, repeats=False)
    cache = FactorCache()
    first = cache.factor(spec, X[:80])
    stack = first.L.clone()
    sub = first.subset([2, 0])
    rhs = torch.randn(2, 80, 1, generator=torch.Generator().manual_seed(3), dtype=D)
    before = sub.solve(rhs)
    second = cache.factor(spec, X)  # the next round: the previous stack is released
    assert first._stacked is None and second.L.shape == (3, 90, 90)
    assert torch.equal(first.L, stack)  # assembled again on demand, from the same parts
    sub._last_solve = None
    assert torch.equal(sub.solve(rhs), before)  # the same parts, the same bits


def test_a_candidate_whose_hyperparameters_change_is_factorised_afresh_and_the_others_extended():
    # a refitted candidate (the auto presets' standing one) is a new key: its factor is rebuilt
    # from scratch on all rows, never its old factor with rows appended; the others are extended
    base, X = _spec(noise=1e-4), _points(80, repeats=False)
    cache = FactorCache()
    others = FactorCache()  # the other two alone, extended round by round
    cache.factor(base, X[:60])
    others.factor(base.subset([1, 2]), X[:60])
    for step, m in enumerate((61, 62, 70, 80), start=1):
        ls = base.lengthscale.clone()
        ls[0] = ls[0] * (1 + 0.1 * step)  # candidate 0 refitted on the data of this round
        spec = KernelCandidates(lengthscale=ls, outputscale=base.outputscale, noise=base.noise, kernel=base.kernel)
        f = cache.factor(spec, X[:m])
        assert cache.stats.refactor_reasons["new candidates"] == 3 + step
        assert torch.equal(f.L[0], FactorCache().factor(spec.subset([0]), X[:m]).L[0])
        assert _rel(f.L[0], _fresh_chol(spec.subset([0]), X[:m])[0]) < 1e-10
        assert torch.equal(f.L[1:], others.factor(base.subset([1, 2]), X[:m]).L)  # extended as if alone
        assert _rel(f.L[1:], _fresh_chol(spec.subset([1, 2]), X[:m])) < 1e-10
    # candidate 0's earlier hyperparameters were dropped: asked for again, they are factorised anew
    cache.factor(base, X)
    assert cache.stats.refactor_reasons["new candidates"] == 3 + 4 + 1


def test_rows_caught_up_together_test_their_pivots_in_one_read_and_match_row_by_row(monkeypatch):
    r"""Candidates brought up over several rows at once (a balancing rule's kept candidate) test
    all their pivots with one host read, and still builds the factor that one row per call
    builds, bit for bit, with a pivot that is not positive among them (an exact repeat of a
    point under a length scale so short that the kernel matrix is the identity in float64)."""
    from torch.profiler import ProfilerActivity, profile

    spec = KernelCandidates(lengthscale=torch.tensor([[1e-3], [0.3]], dtype=D), outputscale=1.0, noise=1e-4, kernel="rbf")
    extra = torch.tensor([0.0051, 0.0072, 10 / 63, 0.51, 30 / 63, 0.93, 0.2001], dtype=D)
    X = torch.cat([torch.linspace(0, 1, 64, dtype=D), extra]).unsqueeze(-1)
    X[66], X[68] = X[10], X[30]  # pivot 1 + 1e-300 - 1 = 0 under the short length scale
    row_by_row = FactorCache(noise=1e-300)
    for k in range(64, X.shape[0] + 1):
        f_rows = row_by_row.factor(spec, X[:k])
    together = FactorCache(noise=1e-300)
    together.factor(spec, X[:64])
    f_together = together.factor(spec, X)
    assert row_by_row.stats.refactor_reasons["jitter would grow"] == 1
    assert together.stats.refactor_reasons == row_by_row.stats.refactor_reasons
    assert together.stats.rows == row_by_row.stats.rows == 2 * 7 - 1
    assert torch.equal(f_together.L, f_rows.L) and torch.equal(f_together.jitter, f_rows.jitter)

    def reads(rows: int) -> int:  # host reads (scalars and tolist copies) of one call that appends ``rows`` rows
        cache, copies, to_list = FactorCache(), [], torch.Tensor.tolist
        cache.factor(spec, X[:64])
        monkeypatch.setattr(torch.Tensor, "tolist", lambda t: copies.append(1) or to_list(t))
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            cache.factor(spec, torch.cat([X[:64], 0.5 + extra[:rows].unsqueeze(-1) / 3]))
        monkeypatch.undo()
        return len(copies) + sum(event.name == "aten::_local_scalar_dense" for event in prof.events())

    assert reads(7) == reads(1) <= 4  # the keys' one copy of the set (three tensors), the pivots' one read


def test_keys_handed_in_give_the_same_factor_as_keys_computed():
    spec, X = _spec(), _points(40)
    a, b = FactorCache(), FactorCache()
    fa = a.factor(spec, X[:30])
    fb = b.factor(spec, X[:30], keys=FactorCache.keys(spec))
    assert torch.equal(fa.L, fb.L)
    fa, fb = a.factor(spec, X), b.factor(spec, X, keys=FactorCache.keys(spec))
    assert torch.equal(fa.L, fb.L) and (a.stats.full, a.stats.rows) == (b.stats.full, b.stats.rows)


def test_the_points_already_set_are_recognised_without_a_host_read():
    from torch.profiler import ProfilerActivity, profile

    spec, X = _spec(noise=1e-4), _points(30, repeats=False)
    R = torch.rand(12, 3, generator=torch.Generator().manual_seed(2), dtype=D)
    cache = FactorCache()
    cache.set_points(R)
    f = cache.factor(spec, X)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        cache.set_points(R)
    assert sum(e.name == "aten::_local_scalar_dense" for e in prof.events()) == 0
    assert all(a is b for a, b in zip(cache.factor(spec, X).solves, f.solves))  # nothing dropped
    cache.set_points(R.clone())  # equal points in another tensor: still kept, after the comparison
    assert all(a is b for a, b in zip(cache.factor(spec, X).solves, f.solves))


def test_a_build_handed_in_makes_the_kernels_of_new_candidates_only_with_the_same_factor():
    spec, X = _spec(), _points(40)
    calls = []

    def build(one, keys):
        calls.append((len(one), keys))
        return one.build(dim=X.shape[-1])

    a, b = FactorCache(), FactorCache()
    fa, fb = a.factor(spec, X[:30]), b.factor(spec, X[:30], build=build)
    keys = FactorCache.keys(spec)
    assert calls == [(1, [key]) for key in keys] and torch.equal(fa.L, fb.L)
    fa, fb = a.factor(spec, X), b.factor(spec, X, build=build)  # the same candidates: none is built
    assert len(calls) == 3 and torch.equal(fa.L, fb.L)
    b.factor(spec.subset([2, 0]), X, build=build)
    assert len(calls) == 3


def test_a_caller_that_checked_its_data_has_only_the_factors_shape_compared(monkeypatch):
    spec, X = _spec(), _points(20, repeats=False)
    Y = X.sum(-1, keepdim=True)
    f = FactorCache().factor(spec, X)
    with pytest.raises(ValueError, match="factor must hold 3 candidates"):  # other values, checked
        CandidateGP(X + 0.01, Y, spec, factor=f)
    with pytest.raises(ValueError, match="factor must hold 3 candidates"):  # other shape, always refused
        CandidateGP(X[:19], Y[:19], spec, factor=f, check_data=False)
    compared = []
    monkeypatch.setattr(torch, "equal", lambda a, b, _e=torch.equal: compared.append(a.shape) or _e(a, b))
    trusted = CandidateGP(X, Y, spec, factor=f, check_data=False)
    assert X.shape not in compared  # the inputs are not compared value by value
    monkeypatch.undo()
    checked = CandidateGP(X, Y, spec, factor=f)
    Z = torch.rand(4, 1, 3, dtype=D)
    torch.testing.assert_close(trusted.posterior(Z).mean, checked.posterior(Z).mean, rtol=0, atol=0)


def test_candidates_to_keep_given_by_their_keys_are_kept_as_the_set_would_be():
    spec, X = _spec(), _points(40)
    by_set, by_keys = FactorCache(), FactorCache()
    for cache in (by_set, by_keys):
        cache.factor(spec, X[:20])
    by_set.factor(spec.subset([0]), X[:30], keep=spec)
    by_keys.factor(spec.subset([0]), X[:30], keep=FactorCache.keys(spec))
    assert by_set.stats.full == by_keys.stats.full and by_set.stats.rows == by_keys.stats.rows
    a, b = by_set.factor(spec, X), by_keys.factor(spec, X)  # the kept two catch up, none refactorised
    assert torch.equal(a.L, b.L) and by_set.stats.rows == by_keys.stats.rows
    assert by_set.stats.refactor_reasons == by_keys.stats.refactor_reasons == {"new candidates": 3}  # none dropped


def test_a_new_candidates_noise_is_read_from_the_host_values_of_its_set(monkeypatch):
    r"""A set that keeps its values on the host (``KernelCandidates.from_values``) factorises a new
    candidate with the same factor and one device read fewer (its noise variance) than the same
    set known only on the device; an override noise needs no read either."""
    from tests.host_reads import record_reads

    X = _points(30, repeats=False)
    on_host = KernelCandidates.from_values([0.2, 0.5], kernel="rbf", noise=[1e-4, 1e-3])
    def on_device():  # the same values, not yet copied to the host
        return KernelCandidates(on_host.lengthscale.clone(), 1.0, on_host.noise.clone(), "rbf")

    keys = FactorCache.keys(on_host)
    assert keys == FactorCache.keys(on_device())
    counts, factors = [], []
    for spec in (on_host, on_device(), on_host):
        cache = FactorCache(noise=None if len(counts) < 2 else 1e-2)
        reads = record_reads(monkeypatch)
        factors.append(cache.factor(spec, X, keys=keys))
        counts.append(len(reads))
        monkeypatch.undo()
    assert counts[1] == counts[0] + 1 and counts[2] == counts[0]
    assert torch.equal(factors[0].L, factors[1].L) and torch.equal(factors[0].noise, factors[1].noise)
    torch.testing.assert_close(factors[2].noise, torch.full((2,), 1e-2, dtype=D))


def test_a_new_candidates_base_and_rows_are_tested_in_one_read_and_a_failed_base_gets_its_jitter(monkeypatch):
    r"""A new candidate over a multiple of ``refactor_every`` (a LAPACK base and appended rows)
    costs one host read, its base's flag read with its pivots; a base that is not positive
    definite at jitter 0 (a repeated point, no noise) is factorised again with
    :func:`jittered_cholesky` and gets the factor and jitter of the checked path."""
    from tests.host_reads import record_reads

    spec = KernelCandidates.from_values([0.2, 0.3], kernel="rbf", noise=1e-4)
    X = torch.rand(40, 1, dtype=D, generator=torch.Generator().manual_seed(3))
    cache = FactorCache(refactor_every=16)
    cache.factor(spec.subset([0]), X)
    reads = record_reads(monkeypatch)
    f = cache.factor(spec, X)  # candidate 1 is new: a base of 32 rows and 8 rows appended
    monkeypatch.undo()
    assert [r for r in reads if r != "__bool__"] == ["tolist"]  # the __bool__: its constraints' host bounds
    assert cache.stats.full == 2 and cache.stats.rows == 2 * (40 - 32)
    A = to_dense(spec.build(1)[1](X)) + 1e-4 * torch.eye(40, dtype=D)
    torch.testing.assert_close(f.L, torch.linalg.cholesky(A))
    Xd = X.clone()
    Xd[5] = Xd[4]  # singular without noise
    failing = FactorCache(refactor_every=16, noise=1e-300)
    f = failing.factor(spec.subset([0]), Xd)
    A = to_dense(spec.subset([0]).build(1)[1](Xd))[0] + 1e-300 * torch.eye(40, dtype=D)
    L32, jitter32 = jittered_cholesky(A[:32, :32])
    assert jitter32 > 0 and failing.stats.full == 1
    if float(f.jitter[0]) == jitter32:  # no row after the base needed more
        torch.testing.assert_close(f.L[0, :32, :32], L32)
    assert float(f.jitter[0]) >= jitter32 and _rel(f.L[0] @ f.L[0].T, A + float(f.jitter[0]) * torch.eye(40, dtype=D)) < 1e-8


def test_new_candidates_are_factorised_with_one_read_for_all_of_them(monkeypatch):
    r"""Three new candidates over a multiple of ``refactor_every`` test their bases and pivots in one
    host read (one each before), with the factors that each factorised alone gets."""
    from tests.host_reads import record_reads

    spec = KernelCandidates.from_values([0.1, 0.2, 0.4], kernel="rbf", noise=1e-4)
    X = torch.rand(40, 2, dtype=D, generator=torch.Generator().manual_seed(5))
    cache = FactorCache(refactor_every=16)
    reads = record_reads(monkeypatch)
    together = cache.factor(spec, X)
    monkeypatch.undo()
    assert reads.count("tolist") == 1 and cache.stats.refactor_reasons == {"new candidates": 3}
    for u in range(3):
        alone = FactorCache(refactor_every=16).factor(spec.subset([u]), X)
        assert torch.equal(together.parts[u].base, alone.parts[0].base) and torch.equal(together.L[u], alone.L[0])
