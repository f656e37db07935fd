import torch
from gpytorch.constraints import GreaterThan, Interval, Positive
from gpytorch.kernels import RBFKernel, ScaleKernel
from gpytorch.likelihoods import GaussianLikelihood

from botorch_unknown_hypers.candidates import NOISE_LOWER_BOUND, KernelCandidates
from botorch_unknown_hypers.candidate_families import PeriodicCandidates
from botorch_unknown_hypers.shared_constraints import build_sharing, constraints_on, module_constraints

D64 = torch.float64


def _spec(scale=1.0):
    return KernelCandidates.from_lengthscales(torch.tensor([0.1, 0.3, 0.9], dtype=D64) * scale, noise=1e-3)


def test_the_constraints_of_built_modules_are_found_and_shared_by_the_next_build(monkeypatch):
    like = torch.zeros(1, dtype=D64)
    mean, covar, likelihood = _spec().build(2)
    found = module_constraints(covar, likelihood)
    assert type(found.positive) is Positive and type(found.noise) is GreaterThan
    assert abs(float(found.noise.lower_bound) / NOISE_LOWER_BOUND - 1) < 1e-6  # built in the default dtype
    built, original = [], Interval.__init__
    monkeypatch.setattr(Interval, "__init__", lambda self, *a, **k: built.append(type(self).__name__) or original(self, *a, **k))
    _, covar2, likelihood2 = build_sharing(_spec(2.0), 2, covar, likelihood, like)
    monkeypatch.undo()
    assert built == []  # GPyTorch builds each constraint with a host read of its bounds
    assert module_constraints(covar2, likelihood2) == found
    assert covar2.base_kernel.raw_lengthscale_constraint is found.positive
    fresh = _spec(2.0).build(2)
    for a, b in ((covar2.outputscale, fresh[1].outputscale), (covar2.base_kernel.lengthscale, fresh[1].base_kernel.lengthscale),
                 (likelihood2.noise, fresh[2].noise)):
        assert torch.equal(a, b)  # the same transforms: the same hyperparameters, bit for bit


def test_constraints_on_another_dtype_or_missing_are_not_shared():
    _, covar, likelihood = _spec().build(2)
    assert constraints_on(covar, likelihood, torch.zeros(1, dtype=torch.float32)) is None
    assert constraints_on(covar, likelihood, torch.zeros(1, dtype=D64)) is not None
    plain = ScaleKernel(RBFKernel(lengthscale_constraint=GreaterThan(1e-3)), outputscale_constraint=GreaterThan(1e-3))
    assert module_constraints(plain, likelihood) is None  # no Positive to share
    assert module_constraints(covar, GaussianLikelihood(noise_constraint=Interval(0.0, 1.0))) is None
    _, covar32, _ = build_sharing(_spec(), 2, covar, likelihood, torch.zeros(1, dtype=torch.float32))
    assert covar32.base_kernel.raw_lengthscale_constraint is not module_constraints(covar, likelihood).positive


def test_every_family_takes_shared_constraints():
    periodic = PeriodicCandidates(
        period=torch.tensor([0.5, 1.0], dtype=D64), lengthscale=torch.tensor([0.2, 0.4], dtype=D64),
        outputscale=torch.ones(2, dtype=D64), noise=torch.full((2,), 1e-3, dtype=D64),
    )
    _, covar, likelihood = _spec().build(2)
    shared = module_constraints(covar, likelihood)
    _, pcovar, plike = periodic.build(1, shared)
    assert module_constraints(pcovar, plike) == shared
    _, own, _ = periodic.build(1)
    torch.testing.assert_close(pcovar.base_kernel.period_length, own.base_kernel.period_length, rtol=0, atol=0)
