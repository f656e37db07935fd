r"""The synthetic tasks of the hyperparameter elimination paper (Sec. 7), reconstructed.

Ziomek, Adachi, Osborne [ZiomekHE]_, tasks (b)-(d). The paper prints the second piece
of Eq. (14) without an argument, only cites the function of task (c) and shows the hill
means of task (d) in a figure only; each reconstruction is documented where it is made
and in ``docs/hyperparameter-elimination.md`` ("The tasks", "Where the code and the paper
differ").

- ``period`` (task b): a piecewise sine signal on :math:`[0, 1)` repeated on
  :math:`[1, 2]` (true period 1), maximised on :math:`[0, 2]`, 5 initial points;
- ``additive3d`` (task c): the cited 3-d function of Ziomek & Bou-Ammar
  [ZiomekBouAmmar2023]_ (App. C), additive-looking away from the optimum, with a
  correlated (non-separable) mode at :math:`(0.8, 0.8)`; :math:`x_3` is redundant;
- ``hills`` (task d): functions drawn, per seed, from a GP whose prior mean has ten
  hills, one of them taller (or none): the candidate index is the tallest hill.

:func:`task_candidates` builds each task's candidate set :math:`U` by name.

References:

.. [ZiomekHE]
    J. Ziomek, M. Adachi, M. A. Osborne. Beyond Lengthscales: No-regret Bayesian
    Optimisation With Unknown Hyperparameters Of Any Type.

.. [ZiomekBouAmmar2023]
    J. Ziomek, H. Bou-Ammar. Are Random Decompositions all we need in High
    Dimensional Bayesian Optimisation? ICML 2023.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from botorch_unknown_hypers.problems.problem import Problem
from botorch_unknown_hypers.domains import BoxDomain, FiniteDomain
from botorch_unknown_hypers.rng import forked_rng

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

    The paper prints the second piece as ``1.5 sin(28/3 pi)``, without an argument; the
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

_MODE = (0.8, 0.8)  # the correlated mode
_MODE_VAR = 0.02  # its variance in x1 and in x2
_MODE_RHO = 0.75  # its correlation
_MODE_WEIGHT = 1.0 / 3.5
_RIDGE = 0.3  # the two one-dimensional ridges x1 = 0.3 and x2 = 0.3
_RIDGE_VAR = 0.01
_RIDGE_WEIGHT = 2.5 / 3.5


def additive3d(X: Tensor) -> Tensor:
    r"""Task (c): the 3-d function of Ziomek & Bou-Ammar (2023), App. C, restated from its source.

    The HE paper only cites this function. We restate it from the definition the
    cited authors published with their code (their "adversarial" test function,
    which they minimise as :math:`-f`):

    .. math::

        f(x) = \frac{w_1}{2\pi\sqrt{v^2(1 - \rho^2)}}
            \exp\!\Big(\frac{-\tfrac12 (x_1 - 0.8)^2/v - \tfrac12 (x_2 - 0.8)^2/v
                + \rho (x_1 - 0.8)(x_2 - 0.8)/v}{1 - \rho^2}\Big)
            + \frac{w_2}{2\pi\sqrt{s}}\Big(e^{-(x_1 - 0.3)^2/(2s)} + e^{-(x_2 - 0.3)^2/(2s)}\Big),

    with :math:`v = 0.02`, :math:`\rho = 0.75`, :math:`s = 0.01`, :math:`w_1 = 1/3.5`,
    :math:`w_2 = 2.5/3.5` (the normalising constants are theirs, including the
    :math:`2\pi\sqrt{s}` of the one-dimensional terms), on :math:`[0, 1]^3`.
    Two one-dimensional ridges at :math:`x_1 = 0.3` and :math:`x_2 = 0.3` make the
    function look additive over most of the domain (local maximum
    :math:`\approx 2.27` at :math:`(0.3, 0.3)`); the global maximum
    :math:`f^* \approx 3.4374` is the correlated mode at :math:`(0.8, 0.8)`, where
    :math:`x_1` and :math:`x_2` are not separable; :math:`x_3` is redundant.
    """
    x1, x2 = X[..., 0], X[..., 1]
    d1, d2 = x1 - _MODE[0], x2 - _MODE[1]
    quad = (-0.5 * d1.square() / _MODE_VAR - 0.5 * d2.square() / _MODE_VAR + _MODE_RHO * d1 * d2 / _MODE_VAR) / (
        1 - _MODE_RHO**2
    )
    mode = _MODE_WEIGHT / (2 * math.pi * math.sqrt(_MODE_VAR**2 * (1 - _MODE_RHO**2))) * torch.exp(quad)
    ridge_scale = _RIDGE_WEIGHT / (2 * math.pi * math.sqrt(_RIDGE_VAR))
    ridges = torch.exp(-0.5 * (x1 - _RIDGE).square() / _RIDGE_VAR) + torch.exp(
        -0.5 * (x2 - _RIDGE).square() / _RIDGE_VAR
    )
    return mode + ridge_scale * ridges


ADDITIVE3D_PARTITIONS = [[[0], [1], [2]], [[0, 1], [2]], [[0], [1, 2]], [[1], [0, 2]]]
r"""Candidate decompositions of task (c); the second, ((1,2),(3)), is the true one."""
ADDITIVE3D_LENGTHSCALE = 0.1
r"""The RBF length scale of every group (our choice; the paper states none). At 0.1 the
true decomposition's RKHS holds :func:`additive3d` (minimum-norm interpolants on
100/300/1000 uniform points have norm 7.5/8.5/9.0, converging), while the other three
decompositions do not (their interpolant norms grow without bound: 390 to 1580)."""


class Additive3dProblem(Problem):
    r"""Task (c): maximise :func:`additive3d` on :math:`[0, 1]^3` (10 initial points, our choice)."""

    def __init__(self, noise_std: float = 0.0, dtype: torch.dtype = torch.float64) -> None:
        bounds = torch.tensor([[0.0] * 3, [1.0] * 3], dtype=dtype)
        grid = torch.linspace(0.78, 0.82, 401, dtype=dtype)
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
            metadata={
                "optimizer": tuple(pts[best].tolist()),
                "true_partition": "(1,2)(3)",
                "reference": "Ziomek & Bou-Ammar (2023), App. C",
            },
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


PERIOD_WAVES = (
    (1.0, 8.0, 1 / 8),
    (1.5, 28 / 3, 1 / 4),
    (1.2, 8.0, 11 / 28),
    (0.8, 8.0, 5 / 7),
)
r"""The four local sine waves :math:`a \sin(\omega\pi(x - c))` of :func:`period_signal` as ``(a, omega, c)``."""


def period_wave(X: Tensor, index: int) -> Tensor:
    r"""Local sine wave ``index`` of :func:`period_signal`, continued over the whole domain."""
    a, omega, c = PERIOD_WAVES[index]
    return a * torch.sin(omega * math.pi * (X[..., 0] - c))


def fit_period_candidates(num_points: int = 200, seed: int = 0) -> list[dict[str, float]]:
    r"""Task (b)'s :math:`U`, built as the paper describes (Sec. 7 (b)).

    The "true" candidate is the maximum-likelihood periodic GP fitted to
    ``num_points`` uniform samples of the black box on :math:`[0, 2]`; the other four
    are fitted to each of the four local sine waves (:data:`PERIOD_WAVES`), each
    sampled at the same points. We fit a local wave as the function it is, continued
    over the domain: fitted only to samples inside its quarter-length interval, one
    cycle is explained as well by any period longer than the interval, and such fits
    run to the period bound instead of the local period. The local fits find the
    local periods 1/4 (three waves, different amplitudes) and 3/14, never the true
    period 1, as the paper says. Each candidate is a whole hyperparameter vector
    (period, length scale, output scale) of GPyTorch's periodic kernel in unit-cube
    units of :math:`[0, 2]` (so the true period 1 is 0.5); periods are constrained to
    ``[0.02, 0.6]`` and length scales to ``[0.05, 20]``. Deterministic given ``seed``.
    """
    from botorch.fit import fit_gpytorch_mll
    from botorch.models import SingleTaskGP
    from gpytorch.constraints import GreaterThan, Interval
    from gpytorch.kernels import PeriodicKernel, ScaleKernel
    from gpytorch.likelihoods import GaussianLikelihood
    from gpytorch.mlls import ExactMarginalLogLikelihood

    gen = torch.Generator().manual_seed(seed)
    X = 2 * torch.rand(num_points, 1, generator=gen, dtype=torch.float64)
    targets = [period_signal(X)] + [period_wave(X, j) for j in range(len(PERIOD_WAVES))]
    starts = [0.5] + [1.0 / omega for _, omega, _ in PERIOD_WAVES]  # unit-cube periods 2 / omega / 2
    out = []
    for Y, start in zip(targets, starts):
        likelihood = GaussianLikelihood(noise_constraint=GreaterThan(1e-6))
        covar = ScaleKernel(
            PeriodicKernel(
                period_length_constraint=Interval(0.02, 0.6), lengthscale_constraint=Interval(0.05, 20.0)
            )
        )
        model = SingleTaskGP(X / 2, Y.unsqueeze(-1), covar_module=covar, likelihood=likelihood, outcome_transform=None)
        covar.base_kernel.period_length = start
        covar.base_kernel.lengthscale = 1.0
        with forked_rng(seed):
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
    decompositions of an RBF base kernel, length scale :data:`ADDITIVE3D_LENGTHSCALE`; ``"hills"`` (task d):
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
        return AdditiveCandidates(
            ADDITIVE3D_PARTITIONS, lengthscale=torch.tensor(ADDITIVE3D_LENGTHSCALE, dtype=dtype), noise=noise
        )
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
