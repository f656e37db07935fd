r"""The synthetic tasks of the hyperparameter elimination paper (Sec. 7), reconstructed.

Ziomek, Adachi, Osborne, "Beyond Lengthscales". The text dump lost one formula
and cites two others; each reconstruction below is documented where it is made
(implementer's note, ambiguities A12 and Sec. 2.4-2.5).

- ``period`` (task b): a piecewise sine signal on :math:`[0, 1)` repeated on
  :math:`[1, 2]` (true period 1), maximised on :math:`[0, 2]`, 5 initial points;
- ``additive3d`` (task c): a 3-d function that is additive in :math:`x_1, x_2`
  away from the optimum but has a correlated (non-separable) mode near
  :math:`(0.8, 0.8)`; :math:`x_3` is redundant;
- ``hills`` (task d): functions drawn, per seed, from a GP whose prior mean has ten
  hills, one of them taller (or none): the candidate index is the tallest hill.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from botorch_unknown_hypers.problems.base import BoxDomain, FiniteDomain, Problem

# --------------------------------------------------------------------------- period


def period_signal(X: Tensor) -> Tensor:
    r"""Eq. (14), one period on :math:`[0, 1)`, repeated with period 1.

    .. math::

        s(x) = \begin{cases}
            \sin(8\pi(x - 1/8)) & x < 1/4 \\
            1.5 \sin(\tfrac{28}{3}\pi(x - 1/4)) & 1/4 \le x < 1/2 \\
            1.2 \sin(8\pi(x - 11/28)) & 1/2 \le x < 5/7 \\
            0.8 \sin(8\pi(x - 5/7)) & 5/7 \le x
        \end{cases}

    The second piece prints as ``1.5 sin(28/3 pi)`` without an argument (A12); the
    text says every interval holds a sine wave, so we restore the argument
    :math:`x - 1/4` (a zero at the interval start, like the first piece). Its
    amplitude 1.5 makes it the global maximum, :math:`f^* = 1.5` at
    :math:`x = 1/4 + 3/56` and :math:`x = 1 + 1/4 + 3/56`.
    """
    x = torch.remainder(X[..., 0], 1.0)
    pieces = [
        torch.sin(8 * math.pi * (x - 1 / 8)),
        1.5 * torch.sin(28 / 3 * math.pi * (x - 1 / 4)),
        1.2 * torch.sin(8 * math.pi * (x - 11 / 28)),
        0.8 * torch.sin(8 * math.pi * (x - 5 / 7)),
    ]
    out = torch.where(x < 0.25, pieces[0], pieces[1])
    out = torch.where(x >= 0.5, pieces[2], out)
    return torch.where(x >= 5 / 7, pieces[3], out)


class PeriodProblem(Problem):
    r"""Task (b): maximise :func:`period_signal` on :math:`[0, 2]` (5 initial points)."""

    def __init__(self, noise_std: float = 0.0, dtype: torch.dtype = torch.float64) -> None:
        super().__init__(
            name="period",
            domain=BoxDomain(torch.tensor([[0.0], [2.0]], dtype=dtype)),
            optimal_value=1.5,
            noise_std=noise_std,
            n_init=5,
            metadata={"optimizer": (0.25 + 3 / 56,), "true_period": 1.0, "reference": "HE paper Sec. 7 (b), eq. 14"},
        )

    def evaluate_true(self, X: Tensor) -> Tensor:
        return period_signal(X)


# ------------------------------------------------------------------------ additive3d

_MODE = (0.8, 0.8)
_MODE_SD = 0.08
_MODE_RHO = 0.9


def additive3d(X: Tensor) -> Tensor:
    r"""Task (c), reconstructed (the paper cites Ziomek & Bou-Ammar 2023, App. C).

    .. math::

        f(x) = 0.5\,e^{-(x_1 - 0.3)^2 / 0.02} + 0.5\,e^{-(x_2 - 0.3)^2 / 0.02}
            + 1.2\,\exp\!\Big(-\frac{z_1^2 - 2\rho z_1 z_2 + z_2^2}{2(1 - \rho^2)}\Big),
        \qquad z_i = (x_i - 0.8)/0.08,\ \rho = 0.9,

    on :math:`[0, 1]^3`. Away from :math:`(0.8, 0.8)` it is a sum of one-dimensional
    bumps in :math:`x_1` and :math:`x_2` (locally additive); the global optimum
    :math:`f^* \approx 1.2` is the correlated mode in the top-right corner of the
    :math:`(x_1, x_2)` plane, where the two dimensions are not separable;
    :math:`x_3` is redundant. These are the properties the paper describes
    (Sec. 7 (c), Fig. 5); the exact constants are ours.
    """
    x1, x2 = X[..., 0], X[..., 1]
    z1 = (x1 - _MODE[0]) / _MODE_SD
    z2 = (x2 - _MODE[1]) / _MODE_SD
    quad = (z1.square() - 2 * _MODE_RHO * z1 * z2 + z2.square()) / (2 * (1 - _MODE_RHO**2))
    return (
        0.5 * torch.exp(-(x1 - 0.3).square() / 0.02)
        + 0.5 * torch.exp(-(x2 - 0.3).square() / 0.02)
        + 1.2 * torch.exp(-quad)
    )


ADDITIVE3D_PARTITIONS = [[[0], [1], [2]], [[0, 1], [2]], [[0], [1, 2]], [[1], [0, 2]]]
r"""Candidate decompositions of task (c); the second, ((1,2),(3)), is the true one."""


class Additive3dProblem(Problem):
    r"""Task (c): maximise :func:`additive3d` on :math:`[0, 1]^3` (10 initial points, our choice)."""

    def __init__(self, noise_std: float = 0.0, dtype: torch.dtype = torch.float64) -> None:
        bounds = torch.tensor([[0.0] * 3, [1.0] * 3], dtype=dtype)
        grid = torch.linspace(0.6, 1.0, 401, dtype=dtype)
        g1, g2 = torch.meshgrid(grid, grid, indexing="ij")
        pts = torch.stack([g1.reshape(-1), g2.reshape(-1), torch.zeros(g1.numel(), dtype=dtype)], -1)
        values = additive3d(pts)
        best = int(values.argmax())
        super().__init__(
            name="additive3d",
            domain=BoxDomain(bounds),
            optimal_value=float(values[best]),
            noise_std=noise_std,
            n_init=10,
            metadata={"optimizer": tuple(pts[best].tolist()), "true_partition": "(1,2)(3)"},
        )

    def evaluate_true(self, X: Tensor) -> Tensor:
        return additive3d(X)


# ----------------------------------------------------------------------------- hills

HILL_CENTRES = tuple((j + 0.5) / 10 for j in range(10))
HILL_WIDTH = 0.025
HILL_HEIGHT = 1.0
TALL_HEIGHT = 2.0
HILLS_CANDIDATES = tuple(range(1, 11)) + (-1,)
r"""Task (d)'s U: the index of the tallest hill (1..10), or -1 for none."""


def hill_means(X: Tensor) -> Tensor:
    r"""Prior means of all 11 candidates: ``... x n x 1`` inputs on :math:`[0, 1]` -> ``... x 11 x n``.

    .. math::

        \mu_0^u(x) = \sum_{j=1}^{10} h^u_j \exp\big(-(x - c_j)^2 / (2 w^2)\big),
        \quad c_j = (j - 1/2)/10,\ w = 0.025,\ h^u_j = 2 \text{ if } j = u \text{ else } 1

    (:math:`u = -1`: all hills of height 1). Zero away from the hills. The hill shapes,
    heights and widths are not given in the paper (Fig. 6 only); these are ours.
    """
    x = X[..., 0].unsqueeze(-2)  # ... x 1 x n
    centres = torch.tensor(HILL_CENTRES, dtype=X.dtype, device=X.device)
    bumps = torch.exp(-(x.unsqueeze(-1) - centres).square() / (2 * HILL_WIDTH**2))  # ... x 1 x n x 10
    heights = torch.full((len(HILLS_CANDIDATES), 10), HILL_HEIGHT, dtype=X.dtype, device=X.device)
    for row, u in enumerate(HILLS_CANDIDATES):
        if u > 0:
            heights[row, u - 1] = TALL_HEIGHT
    return (bumps * heights.unsqueeze(-2)).sum(-1)  # ... x 11 x n


class HillsProblem(Problem):
    r"""Task (d): per seed, a function drawn from :math:`GP(\mu_0^{u^*}, k)` on a 1-d grid.

    The true candidate :math:`u^*` is drawn uniformly from the 11 candidates and the
    function is sampled at 501 grid points of :math:`[0, 1]` (the finite domain)
    with an RBF kernel, length scale 0.05, output scale 0.25 (our choices; the
    paper states none of them), both from a generator seeded by the run's seed, so
    every method sees the same 50 functions. Observation noise 0.05 (our choice).
    ``instance(seed)`` returns the problem of one seed; ``metadata["true_candidate"]``
    holds :math:`u^*`.
    """

    lengthscale = 0.05
    outputscale = 0.25

    def __init__(
        self,
        seed: int | None = None,
        noise_std: float = 0.05,
        dtype: torch.dtype = torch.float64,
        num_points: int = 501,
    ) -> None:
        points = torch.linspace(0, 1, num_points, dtype=dtype).unsqueeze(-1)
        self._num_points = num_points
        values, u_star = self._draw(points, seed)
        super().__init__(
            name="hills",
            domain=FiniteDomain(points),
            optimal_value=float(values.max()),
            noise_std=noise_std,
            n_init=5,
            metadata={"seed": seed, "true_candidate": u_star, "candidates": list(HILLS_CANDIDATES)},
        )
        self._values = values

    def _draw(self, points: Tensor, seed: int | None) -> tuple[Tensor, int]:
        gen = torch.Generator().manual_seed(10_007 if seed is None else 10_007 + int(seed))
        row = int(torch.randint(len(HILLS_CANDIDATES), (1,), generator=gen))
        mean = hill_means(points)[row]
        d2 = (points - points.T).square()
        K = self.outputscale * torch.exp(-d2 / (2 * self.lengthscale**2))
        L = torch.linalg.cholesky(K + 1e-8 * torch.eye(len(points), dtype=points.dtype))
        sample = mean + L @ torch.randn(len(points), generator=gen, dtype=points.dtype)
        return sample, HILLS_CANDIDATES[row]

    def instance(self, seed: int) -> HillsProblem:
        return HillsProblem(seed=seed, noise_std=self.noise_std, dtype=self.domain.points.dtype,
                            num_points=self._num_points).to(device=self.domain.points.device)

    def to(self, device: torch.device | str | None = None, dtype: torch.dtype | None = None) -> HillsProblem:
        super().to(device=device, dtype=dtype)
        self._values = self._values.to(device=device, dtype=dtype)
        return self

    def evaluate_true(self, X: Tensor) -> Tensor:
        idx = self.domain.index_of(X.reshape(-1, X.shape[-1]))
        if (idx < 0).any():
            raise ValueError("X: every point must be one of the problem's grid points.")
        return self._values[idx].reshape(X.shape[:-1])


# ------------------------------------------------------------------- candidate sets


def fit_period_candidates(num_global: int = 200, num_local: int = 40, seed: int = 0) -> list[dict[str, float]]:
    r"""Task (b)'s :math:`U`, built as the paper describes (Sec. 7 (b)).

    The "true" candidate is the maximum-likelihood periodic GP fitted to
    ``num_global`` uniform samples of :math:`[0, 2]`; the other four are fitted to
    ``num_local`` samples inside each of the four local sine waves of one period
    (periods constrained to ``[0.02, 0.6]`` and length scales to ``[0.05, 20]`` of the
    unit interval, started at the global and at the local sine period). Each candidate is a whole hyperparameter vector (period, length scale, output
    scale) of GPyTorch's periodic kernel, in unit-cube units of the domain
    :math:`[0, 2]` (so the true period 1 is 0.5). Deterministic given ``seed``.
    """
    from botorch.fit import fit_gpytorch_mll
    from botorch.models import SingleTaskGP
    from gpytorch.constraints import GreaterThan, Interval
    from gpytorch.kernels import PeriodicKernel, ScaleKernel
    from gpytorch.likelihoods import GaussianLikelihood
    from gpytorch.mlls import ExactMarginalLogLikelihood

    gen = torch.Generator().manual_seed(seed)
    intervals = [(0.0, 0.25), (0.25, 0.5), (0.5, 5 / 7), (5 / 7, 1.0)]
    sets = [2 * torch.rand(num_global, 1, generator=gen, dtype=torch.float64)]
    for lo, hi in intervals:
        sets.append(lo + (hi - lo) * torch.rand(num_local, 1, generator=gen, dtype=torch.float64))
    out = []
    for X in sets:
        Y = period_signal(X).unsqueeze(-1)
        likelihood = GaussianLikelihood(noise_constraint=GreaterThan(1e-6))
        # Periods below the domain width and length scales away from 0 keep the local fits
        # (a quarter of the signal each) from degenerating into non-periodic fits.
        covar = ScaleKernel(
            PeriodicKernel(
                period_length_constraint=Interval(0.02, 0.6), lengthscale_constraint=Interval(0.05, 20.0)
            )
        )
        model = SingleTaskGP(X / 2, Y, covar_module=covar, likelihood=likelihood, outcome_transform=None)
        covar.base_kernel.period_length = 0.5 if len(X) == num_global else 0.125
        covar.base_kernel.lengthscale = 1.0
        with torch.random.fork_rng():
            torch.manual_seed(seed)
            fit_gpytorch_mll(ExactMarginalLogLikelihood(likelihood, model))
        out.append(
            {
                "period": float(covar.base_kernel.period_length.item()),
                "lengthscale": float(covar.base_kernel.lengthscale.item()),
                "outputscale": float(covar.outputscale.item()),
            }
        )
    return out


def task_candidates(name: str, noise_std: float, dtype: torch.dtype = torch.float64):
    r"""The candidate set :math:`U` of an elimination task, by name.

    ``"lengthscale"`` (task a): Matern-5/2 length scales 0.3, 0.4, 0.5, 0.7, 1.0;
    ``"robust-peak"`` (our robust task): Matern-5/2 length scales 0.01, 0.03, 0.1, 0.3;
    ``"period"`` (task b): :func:`fit_period_candidates`; ``"additive3d"`` (task c): the four
    decompositions of an RBF base kernel, length scale 0.2 (our choice); ``"hills"`` (task d):
    the 11 hill means with the GP kernel of :class:`HillsProblem`. GP noise variance
    ``noise_std**2`` (the known noise level).
    """
    from botorch_unknown_hypers.candidate_families import (
        AdditiveCandidates,
        MeanFunctionCandidates,
        PeriodicCandidates,
    )
    from botorch_unknown_hypers.candidates import KernelCandidates

    noise = noise_std**2
    if name in ("lengthscale", "robust-peak"):
        values = [0.3, 0.4, 0.5, 0.7, 1.0] if name == "lengthscale" else [0.01, 0.03, 0.1, 0.3]
        ls = torch.tensor(values, dtype=dtype)
        return KernelCandidates.from_lengthscales(ls, kernel="matern52", noise=noise)
    if name == "period":
        fits = fit_period_candidates()
        return PeriodicCandidates(
            period=torch.tensor([f["period"] for f in fits], dtype=dtype),
            lengthscale=torch.tensor([f["lengthscale"] for f in fits], dtype=dtype),
            outputscale=torch.tensor([f["outputscale"] for f in fits], dtype=dtype),
            noise=noise,
        )
    if name == "additive3d":
        return AdditiveCandidates(ADDITIVE3D_PARTITIONS, lengthscale=torch.tensor(0.2, dtype=dtype), noise=noise)
    if name == "hills":
        base = KernelCandidates.from_lengthscales(
            torch.full((len(HILLS_CANDIDATES),), HillsProblem.lengthscale * math.sqrt(1.0), dtype=dtype),
            kernel="rbf",
            outputscale=HillsProblem.outputscale,
            noise=noise,
        )
        return MeanFunctionCandidates(base, hill_means, names=[str(u) for u in HILLS_CANDIDATES])
    raise ValueError(
        f"candidates must be one of lengthscale, period, additive3d, hills, robust-peak; got {name!r}."
    )
