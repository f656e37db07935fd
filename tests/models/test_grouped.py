"""Tests of GroupedCandidateModel: a grouped model must behave exactly like the
equivalent single CandidateGP (or like its groups' outputs concatenated)."""

from __future__ import annotations

import pytest
import torch
from botorch.models.transforms.input import Normalize
from botorch.models.transforms.outcome import Standardize

from botorch_unknown_hypers.acquisition import CandidateUCB, optimize_ucb_per_candidate
from botorch_unknown_hypers.candidates import KernelCandidates
from botorch_unknown_hypers.models import CandidateGP, GroupedCandidateModel

TOL = dict(rtol=1e-9, atol=1e-12)
LO = torch.tensor([-1.0, 0.5], dtype=torch.float64)
HI = torch.tensor([2.0, 3.0], dtype=torch.float64)
BOUNDS = torch.stack([LO, HI])


def data(n: int = 12, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    u = torch.rand(n, 2, dtype=torch.float64, generator=g)
    X = LO + (HI - LO) * u
    Y = torch.sin(3.0 * u[:, :1]) * torch.cos(2.0 * u[:, 1:]) + 0.3 * u[:, :1]
    return X, Y


def points(*shape: int, seed: int = 1) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return LO + (HI - LO) * torch.rand(*shape, 2, dtype=torch.float64, generator=g)


def candidates(kernel: str = "matern52") -> KernelCandidates:
    return KernelCandidates(
        lengthscale=torch.tensor([0.9, 0.5, 0.3, 0.15], dtype=torch.float64),
        outputscale=torch.tensor([1.0, 2.0, 0.5, 1.5], dtype=torch.float64),
        noise=torch.tensor([1e-4, 1e-3, 1e-2, 1e-4], dtype=torch.float64),
        kernel=kernel,
    )


def gp(X, Y, cands, transforms: bool) -> CandidateGP:
    if transforms:
        return CandidateGP(X, Y, cands, input_transform=Normalize(d=2, bounds=BOUNDS), outcome_transform=Standardize(m=1))
    return CandidateGP(X, Y, cands)


def pair(transforms: bool):
    X, Y = data()
    c = candidates()
    single = gp(X, Y, c, transforms)
    grouped = GroupedCandidateModel([gp(X, Y, c.subset([0, 1]), transforms), gp(X, Y, c.subset([2, 3]), transforms)])
    return single, grouped


def assert_same_model(a, b, K: int) -> None:
    r"""Same posterior / marginals / candidate posteriors at shared and per-candidate points."""
    Xs = points(5, 3)  # batch 5, q 3
    pa, pb = a.posterior(Xs), b.posterior(Xs)
    assert pa.mean.shape == pb.mean.shape == (5, K, 3, 1)
    torch.testing.assert_close(pb.mean, pa.mean, **TOL)
    torch.testing.assert_close(pb.variance, pa.variance, **TOL)
    torch.testing.assert_close(
        pb.distribution.covariance_matrix, pa.distribution.covariance_matrix, **TOL
    )
    for X in (points(5, 1, 3, seed=2), points(5, K, 3, seed=3)):  # shared, per-candidate
        ma, va = a.marginal_mean_variance(X)
        mb, vb = b.marginal_mean_variance(X)
        assert ma.shape == mb.shape == (5, K, 3)
        torch.testing.assert_close(mb, ma, **TOL)
        torch.testing.assert_close(vb, va, **TOL)
        ma, va = a.marginal_mean_variance(X, observation_noise=True)
        mb, vb = b.marginal_mean_variance(X, observation_noise=True)
        torch.testing.assert_close(vb, va, **TOL)
        ca, cb = a.candidate_posterior(X), b.candidate_posterior(X)
        assert cb.mean.shape == (5, K, 3, 1)
        torch.testing.assert_close(cb.mean, ca.mean, **TOL)
        torch.testing.assert_close(
            cb.distribution.covariance_matrix, ca.distribution.covariance_matrix, **TOL
        )
    assert a.labels() == b.labels()
    assert a.num_candidates == b.num_candidates == K


@pytest.mark.parametrize("transforms", [False, True])
def test_grouped_equals_single(transforms):
    single, grouped = pair(transforms)
    assert grouped.num_candidates == 4 and grouped.sizes == [2, 2]
    assert grouped.batch_shape == torch.Size([4]) and grouped.num_outputs == 1
    assert torch.equal(grouped.raw_train_X, single.raw_train_X)
    assert torch.equal(grouped.raw_train_Y, single.raw_train_Y)
    assert_same_model(single, grouped, 4)


def test_per_candidate_points_reach_the_right_group():
    single, grouped = pair(False)
    # Candidate k at its own point: the values must differ from evaluating every
    # candidate at candidate 0's point (guards against a broadcast of X[..., 0, :, :]).
    X = points(1, 4, 1, seed=5)
    m, _ = grouped.marginal_mean_variance(X)
    for k in range(4):
        mk, _ = single.subset([k]).marginal_mean_variance(X[:, k : k + 1])
        torch.testing.assert_close(m[:, k], mk[:, 0], **TOL)


def test_mixed_kernel_groups_concatenate():
    X, Y = data()
    matern = gp(X, Y, candidates("matern52").subset([0, 2, 3]), True)
    rbf = gp(X, Y, candidates("rbf").subset([1, 3]), True)
    grouped = GroupedCandidateModel([matern, rbf])
    assert grouped.num_candidates == 5
    assert grouped.labels() == matern.labels() + rbf.labels()
    Xs = points(4, 2)
    pg, pm, pr = grouped.posterior(Xs), matern.posterior(Xs), rbf.posterior(Xs)
    torch.testing.assert_close(pg.mean, torch.cat([pm.mean, pr.mean], dim=-3), **TOL)
    torch.testing.assert_close(pg.variance, torch.cat([pm.variance, pr.variance], dim=-3), **TOL)
    Xc = points(4, 5, 2, seed=7)
    mg, vg = grouped.marginal_mean_variance(Xc)
    mm, vm = matern.marginal_mean_variance(Xc[:, :3])
    mr, vr = rbf.marginal_mean_variance(Xc[:, 3:])
    torch.testing.assert_close(mg, torch.cat([mm, mr], dim=-2), **TOL)
    torch.testing.assert_close(vg, torch.cat([vm, vr], dim=-2), **TOL)
    cg = grouped.candidate_posterior(Xc)
    cm, cr = matern.candidate_posterior(Xc[:, :3]), rbf.candidate_posterior(Xc[:, 3:])
    torch.testing.assert_close(
        cg.distribution.covariance_matrix,
        torch.cat([cm.distribution.covariance_matrix, cr.distribution.covariance_matrix], dim=-3),
        **TOL,
    )
    # The two kernels really differ (otherwise the test would not see a mix-up).
    assert not torch.allclose(pm.mean[..., 2, :, :], pr.mean[..., 1, :, :])
    # select() reaches into the right group.
    for k, (model, local) in enumerate([(matern, 0), (matern, 1), (matern, 2), (rbf, 0), (rbf, 1)]):
        sel = grouped.select(k).posterior(Xs)
        exp = model.select(local).posterior(Xs)
        assert sel.mean.shape == (4, 2, 1)
        torch.testing.assert_close(sel.mean, exp.mean, **TOL)
        torch.testing.assert_close(sel.variance, exp.variance, **TOL)


@pytest.mark.parametrize(
    "indices", [[3, 0, 2], [2, 0, 3, 1], [2, 1], [1, 0], [3], [2, 2, 0], [0, 1, 2, 3], [3, 2, 1, 0]]
)
def test_subset_matches_single(indices):
    single, grouped = pair(True)
    sub_g, sub_s = grouped.subset(indices), single.subset(indices)
    assert sub_g.labels() == sub_s.labels() == [single.labels()[i] for i in indices]
    assert_same_model(sub_s, sub_g, len(indices))
    # A second subset of a reordered grouped model is still consistent.
    if len(indices) > 1:
        again = [len(indices) - 1, 0]
        assert_same_model(sub_s.subset(again), sub_g.subset(again), 2)
    for k in range(len(indices)):
        Xs = points(3, 2, seed=11)
        torch.testing.assert_close(sub_g.select(k).posterior(Xs).mean, sub_s.select(k).posterior(Xs).mean, **TOL)


@pytest.mark.parametrize("k", range(4))
def test_select_matches_single(k):
    single, grouped = pair(True)
    Xs = points(6, 2)
    a, b = single.select(k).posterior(Xs), grouped.select(k).posterior(Xs)
    assert b.mean.shape == (6, 2, 1)
    torch.testing.assert_close(b.mean, a.mean, **TOL)
    torch.testing.assert_close(b.variance, a.variance, **TOL)
    assert grouped.select(k).labels() == [single.labels()[k]]


def test_labels_concatenate():
    single, grouped = pair(False)
    assert grouped.labels() == single.labels() == ["0.9", "0.5", "0.3", "0.15"]
    # An explicit order that is not its own inverse (a 4-cycle).
    reordered = GroupedCandidateModel(list(grouped.groups), order=torch.tensor([2, 0, 3, 1]))
    assert reordered.labels() == ["0.3", "0.9", "0.15", "0.5"]
    assert_same_model(single.subset([2, 0, 3, 1]), reordered, 4)


def test_errors():
    X, Y = data()
    c = candidates()
    a = gp(X, Y, c.subset([0, 1]), False)
    X2, Y2 = data(seed=3)
    b = gp(X2, Y2, c.subset([2, 3]), False)
    with pytest.raises(ValueError, match="same training inputs"):
        GroupedCandidateModel([a, b])
    c_short = gp(X[:-1], Y[:-1], c.subset([2, 3]), False)
    with pytest.raises(ValueError, match="same training inputs"):
        GroupedCandidateModel([a, c_short])
    with pytest.raises(ValueError):
        GroupedCandidateModel([])
    ok = [a, gp(X, Y, c.subset([2, 3]), False)]
    with pytest.raises(ValueError, match="permutation"):
        GroupedCandidateModel(ok, order=torch.tensor([0, 0, 1, 2]))
    grouped = GroupedCandidateModel(ok)
    with pytest.raises(ValueError):
        grouped.subset([4])
    with pytest.raises(ValueError):
        grouped.subset([])
    with pytest.raises(ValueError):
        grouped.select(4)
    with pytest.raises(ValueError):
        grouped.marginal_mean_variance(points(2, 3, 1))  # K = 3 is neither 1 nor 4


def test_candidate_ucb_on_grouped_equals_single():
    single, grouped = pair(True)
    beta = torch.tensor([2.0, 0.5, 1.0, 3.0], dtype=torch.float64)
    Xs = points(7, 1, 1, seed=4).squeeze(-2)  # 7 x 1 x 2
    for reduction, kw in (("max", {}), ("select", {"index": 2}), ("weighted", {"weights": torch.full((4,), 0.25, dtype=torch.float64)})):
        a = CandidateUCB(single, beta, reduction=reduction, **kw)
        b = CandidateUCB(grouped, beta, reduction=reduction, **kw)
        torch.testing.assert_close(b(Xs), a(Xs), **TOL)
        torch.testing.assert_close(b.candidate_values(Xs[:, 0]), a.candidate_values(Xs[:, 0]), **TOL)
    # "max" takes the maximum over all candidates, across both groups.
    values = CandidateUCB(grouped, beta, reduction="max").candidate_values(Xs[:, 0])
    assert values.shape == (7, 4)
    assert set(values.argmax(-1).tolist()) - {0, 1}  # some maxima come from the second group


def test_optimize_ucb_per_candidate_on_grouped_equals_single():
    single, grouped = pair(True)
    beta = torch.tensor([2.0, 0.5, 1.0, 3.0], dtype=torch.float64)
    Xa, va = optimize_ucb_per_candidate(single, beta, BOUNDS, num_restarts=3, raw_samples=64, seed=0)
    Xb, vb = optimize_ucb_per_candidate(grouped, beta, BOUNDS, num_restarts=3, raw_samples=64, seed=0)
    assert Xb.shape == (4, 2) and vb.shape == (4,)
    assert ((Xb >= LO - 1e-9) & (Xb <= HI + 1e-9)).all()
    torch.testing.assert_close(vb, va, rtol=1e-6, atol=1e-8)
    torch.testing.assert_close(Xb, Xa, rtol=1e-4, atol=1e-4)
    # The returned values are each candidate's UCB at its returned point.
    mean, var = grouped.marginal_mean_variance(Xb.unsqueeze(-2).unsqueeze(0))
    torch.testing.assert_close(vb, (mean + beta.unsqueeze(-1) * var.sqrt())[0, :, 0], rtol=1e-8, atol=1e-10)
