r"""The prior-selection paper's synthetic prior sets and kernels (Sandberg & Haghir Chehreghani, Sec. 6.1).

Three tasks on :math:`N = 500` equidistant arms of :math:`[0, 20]`, noise :math:`\sigma = 0.25`:

- ``gp-kernel``: six kernels (SE, Matérn-5/2, Matérn-3/2, periodic, linear, rational quadratic);
- ``gp-lengthscale``: SE kernels with length scales 4, 2, 1, 0.5;
- ``gp-hill``: one SE kernel and five prior means, a row of hills with one doubled
  (:func:`hill_means`, **reconstructed**: the paper shows the means in a figure only).

The paper's kernel formulas differ from GPyTorch's conventions (:func:`paper_rbf`,
:func:`paper_matern`, :func:`paper_periodic`, :func:`paper_linear`, :func:`paper_rq`), so they are
written out here as plain functions ``(N x d, M x d) -> N x M``. The formulas and the
reconstruction of the hill means are in ``docs/prior-selection.md`` ("The paper's kernels and tasks").

References:
    J. Sandberg, M. Haghir Chehreghani. Efficient Prior Selection in Gaussian Process Bandits
    with Thompson Sampling. arXiv:2502.01226 v1, 2025.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import Tensor

from botorch_unknown_hypers.checks import check_positive
from botorch_unknown_hypers.models.tabular_priors import KernelFunction, TabularPriors

PAPER_NUM_ARMS = 500
PAPER_ARM_RANGE = (0.0, 20.0)
PAPER_NOISE = 0.25**2
r"""The synthetic tasks' noise variance :math:`\sigma^2 = 0.25^2` (Sec. 6.1)."""



# --------------------------------------------------------------------------- kernels


def _check_positive(**values: float) -> None:
    for name, value in values.items():
        check_positive(name, value)


def _squared_distance(X1: Tensor, X2: Tensor) -> Tensor:
    r"""``||x - x'||^2`` for ``... x N x d`` and ``... x M x d`` -> ``... x N x M`` (exact, no expansion trick)."""
    return (X1.unsqueeze(-2) - X2.unsqueeze(-3)).square().sum(-1)


def paper_rbf(lengthscale: float) -> KernelFunction:
    r"""The paper's squared-exponential kernel (Sec. 2): **no factor 1/2**.

    .. math::

        k(x, x') = \exp\big(-\lVert x - x' \rVert^2 / \ell^2\big).

    GPyTorch's ``RBFKernel`` is :math:`\exp(-r^2 / (2 \ell_g^2))`, so the paper's
    :math:`\ell` is GPyTorch's :math:`\ell_g = \ell / \sqrt 2`.

    Returns:
        A function ``(N x d, M x d) -> N x M``.
    """
    _check_positive(lengthscale=lengthscale)

    def kernel(X1: Tensor, X2: Tensor) -> Tensor:
        return torch.exp(-_squared_distance(X1, X2) / lengthscale**2)

    return kernel


def paper_matern(nu: float, lengthscale: float) -> KernelFunction:
    r"""The Matérn kernel (Sec. 2) in closed form for :math:`\nu \in \{1/2, 3/2, 5/2\}`.

    .. math::

        k_{3/2}(r) = (1 + \sqrt3 r / \ell) e^{-\sqrt3 r / \ell}, \qquad
        k_{5/2}(r) = (1 + \sqrt5 r / \ell + 5 r^2 / (3 \ell^2)) e^{-\sqrt5 r / \ell},

    and :math:`k_{1/2}(r) = e^{-r/\ell}`, with :math:`r = \lVert x - x' \rVert`:
    the paper's general form :math:`\frac{2^{1-\nu}}{\Gamma(\nu)} (\sqrt{2\nu} r/\ell)^\nu
    K_\nu(\sqrt{2\nu} r/\ell)`. This one agrees with GPyTorch's ``MaternKernel``.

    Returns:
        A function ``(N x d, M x d) -> N x M``.
    """
    _check_positive(lengthscale=lengthscale)
    if nu not in (0.5, 1.5, 2.5):
        raise ValueError(f"nu must be 0.5, 1.5 or 2.5 (closed forms only), got {nu}.")

    def kernel(X1: Tensor, X2: Tensor) -> Tensor:
        scaled = _squared_distance(X1, X2).sqrt() * (math.sqrt(2 * nu) / lengthscale)
        if nu == 0.5:
            return torch.exp(-scaled)
        if nu == 1.5:
            return (1 + scaled) * torch.exp(-scaled)
        return (1 + scaled + scaled.square() / 3) * torch.exp(-scaled)

    return kernel


def paper_periodic(period: float, lengthscale: float) -> KernelFunction:
    r"""The paper's periodic kernel (Sec. 2): factor 1/2, :math:`\ell` **not** squared.

    .. math::

        k(x, x') = \exp\Big(-\tfrac12 \sum_{i=1}^d \sin^2\big(\pi (x_i - x'_i) / \rho\big) / \ell\Big).

    Its minimum is :math:`e^{-d/(2\ell)}` (:math:`e^{-1/2} \approx 0.61` for
    :math:`d = \ell = 1`). GPyTorch's ``PeriodicKernel`` is
    :math:`\exp(-2 \sum_i \sin^2(\pi (x_i - x'_i)/\rho) / \lambda)`, so the paper's
    :math:`\ell` is GPyTorch's :math:`\lambda = 4 \ell`.

    Returns:
        A function ``(N x d, M x d) -> N x M``.
    """
    _check_positive(period=period, lengthscale=lengthscale)

    def kernel(X1: Tensor, X2: Tensor) -> Tensor:
        diff = X1.unsqueeze(-2) - X2.unsqueeze(-3)
        return torch.exp(-0.5 * torch.sin(math.pi * diff / period).square().sum(-1) / lengthscale)

    return kernel


def paper_linear(variance: float) -> KernelFunction:
    r"""The paper's linear kernel :math:`k(x, x') = v\, x^\top x'` (the printed "/ν" is a typo).

    With :math:`v = 0.05^2` on :math:`[0, 20]` it peaks at exactly 1 at
    :math:`x = x' = 20`; in :math:`d = 1` its Gram matrix has rank one and samples
    are lines through the origin. GPyTorch's ``LinearKernel`` has the same form.

    Returns:
        A function ``(N x d, M x d) -> N x M``.
    """
    _check_positive(variance=variance)

    def kernel(X1: Tensor, X2: Tensor) -> Tensor:
        return variance * X1 @ X2.transpose(-1, -2)

    return kernel


def paper_rq(alpha: float, lengthscale: float) -> KernelFunction:
    r"""The rational quadratic kernel (Sec. 2), as in GPyTorch's ``RQKernel``.

    .. math::

        k(x, x') = \big(1 + \lVert x - x' \rVert^2 / (2 \alpha \ell^2)\big)^{-\alpha}.

    Returns:
        A function ``(N x d, M x d) -> N x M``.
    """
    _check_positive(alpha=alpha, lengthscale=lengthscale)

    def kernel(X1: Tensor, X2: Tensor) -> Tensor:
        return (1 + _squared_distance(X1, X2) / (2 * alpha * lengthscale**2)).pow(-alpha)

    return kernel


# --------------------------------------------------------------------------- synthetic tasks


def paper_arms(
    num_arms: int = PAPER_NUM_ARMS,
    dtype: torch.dtype = torch.float64,
    device: torch.device | str | None = None,
) -> Tensor:
    r"""The synthetic tasks' arms: ``num_arms`` equidistant points of :math:`[0, 20]`, ``N x 1``.

    Arm :math:`i` is :math:`x_i = \mathrm{fl}(20 i / (N - 1))`, the float64 nearest to the exact
    quotient (:math:`20 i` is an exact integer and one IEEE division rounds correctly), computed
    on the CPU and then cast to ``dtype`` and moved to ``device``. The arms are pool points that
    saved data and states name by their exact coordinates, so they must be the same numbers on
    every machine: ``torch.linspace`` is not (its vectorised kernel rounds
    :math:`\mathrm{start} + i\,\mathrm{step}` with one fused multiply-add, its scalar kernel
    ``ATEN_CPU_CAPABILITY=default`` with two roundings; 29 of 500 arms differed by one ulp).
    """
    low, high = PAPER_ARM_RANGE
    steps = torch.arange(num_arms, dtype=torch.float64)  # exact integers
    arms = low + steps * (high - low) / (num_arms - 1)
    return arms.to(device=device, dtype=dtype).unsqueeze(-1)


KERNEL_TASK_NAMES = ["se", "matern52", "matern32", "periodic", "linear", "rq"]


def kernel_task_priors(
    noise: float = PAPER_NOISE,
    num_arms: int = PAPER_NUM_ARMS,
    dtype: torch.dtype = torch.float64,
    device: torch.device | str | None = None,
) -> TabularPriors:
    r"""The "kernel" experiment's six priors (Sec. 6.1), zero mean, length scale 1.

    SE, Matérn-5/2, Matérn-3/2, periodic (:math:`\rho = 5`), linear
    (:math:`v = 0.05^2`) and rational quadratic (:math:`\alpha = 0.5`), in the
    paper's conventions (:func:`paper_rbf` etc.); all satisfy
    :math:`k(x, x') \le 1` on :math:`[0, 20]`.
    """
    kernels = [
        paper_rbf(1.0),
        paper_matern(2.5, 1.0),
        paper_matern(1.5, 1.0),
        paper_periodic(5.0, 1.0),
        paper_linear(0.05**2),
        paper_rq(0.5, 1.0),
    ]
    arms = paper_arms(num_arms, dtype=dtype, device=device)
    return TabularPriors.from_kernels(arms, kernels, noise=noise, names=list(KERNEL_TASK_NAMES))


LENGTHSCALE_TASK_LENGTHSCALES = (4.0, 2.0, 1.0, 0.5)


def lengthscale_task_priors(
    noise: float = PAPER_NOISE,
    num_arms: int = PAPER_NUM_ARMS,
    dtype: torch.dtype = torch.float64,
    device: torch.device | str | None = None,
) -> TabularPriors:
    r"""The "lengthscale" experiment's four priors: zero-mean SE, :math:`\ell \in \{4, 2, 1, 1/2\}`.

    The length scales are the paper's (:math:`\exp(-r^2/\ell^2)`, :func:`paper_rbf`);
    in GPyTorch's convention they are :math:`\ell / \sqrt 2`.
    """
    arms = paper_arms(num_arms, dtype=dtype, device=device)
    return TabularPriors.from_kernels(
        arms,
        [paper_rbf(ls) for ls in LENGTHSCALE_TASK_LENGTHSCALES],
        noise=noise,
        names=[f"se_l{ls:g}" for ls in LENGTHSCALE_TASK_LENGTHSCALES],
    )


NUM_HILLS = 10
HILL_HEIGHT = 1.0
TALL_HILLS = (2, 4, 6, 8)
r"""Which hill (1-based, hill :math:`j` on :math:`[j - 1, j]`) is doubled in means 1-4 (our choice)."""


def hill_means(
    arms: Tensor,
    hill_height: float = HILL_HEIGHT,
    tall_hills: Sequence[int] = TALL_HILLS,
) -> Tensor:
    r"""The "hill" experiment's prior means, **reconstructed** (the paper shows Fig. 3 only).

    Hill :math:`j = 1, \dots, 10` is a raised-cosine bump of height :math:`h` on
    the unit interval :math:`[j - 1, j]`,

    .. math::

        b_j(x) = h \sin^2\big(\pi (x - j + 1)\big)\ \text{on}\ [j - 1, j], \quad 0\ \text{elsewhere},

    so mean 0, :math:`\sum_j b_j`, is ten touching hills of height :math:`h`
    across :math:`[0, 10]` (continuously differentiable) and **exactly** zero on
    :math:`(10, 20]`. Mean :math:`i \ge 1` adds :math:`b_{j_i}` once more: hill
    :math:`j_i` = ``tall_hills[i - 1]`` has height :math:`2h` and every other
    point is unchanged.

    Our choices: compactly supported bumps (a Gaussian bump would leak onto
    :math:`(10, 20]` and onto its neighbours), :math:`h = 1` (the SE prior's
    standard deviation, so a doubled hill is visible but not obvious in one
    draw), and doubled hills 2, 4, 6, 8, spread over :math:`[0, 10]`.

    Args:
        arms: ``N x 1`` arm coordinates.
        hill_height: Height :math:`h` of a small hill.
        tall_hills: The 1-based hills doubled in means 1, 2, ...

    Returns:
        ``(1 + len(tall_hills)) x N`` means.
    """
    if arms.ndim != 2 or arms.shape[-1] != 1:
        raise ValueError(f"arms must be N x 1, got shape {tuple(arms.shape)}.")
    _check_positive(hill_height=hill_height)
    tall = list(tall_hills)
    if any(not (1 <= int(j) <= NUM_HILLS) for j in tall):
        raise ValueError(f"tall_hills must lie in [1, {NUM_HILLS}], got {tall}.")
    x = arms[:, 0]
    starts = torch.arange(NUM_HILLS, dtype=arms.dtype, device=arms.device)  # hill j starts at j - 1
    offset = x.unsqueeze(-1) - starts  # N x 10
    inside = (offset >= 0) & (offset <= 1)
    bumps = torch.where(inside, hill_height * torch.sin(math.pi * offset).square(), torch.zeros_like(offset))
    heights = torch.ones(1 + len(tall), NUM_HILLS, dtype=arms.dtype, device=arms.device)
    for row, hill in enumerate(tall, start=1):
        heights[row, int(hill) - 1] = 2.0
    return heights @ bumps.transpose(0, 1)


def hill_task_priors(
    noise: float = PAPER_NOISE,
    num_arms: int = PAPER_NUM_ARMS,
    hill_height: float = HILL_HEIGHT,
    tall_hills: Sequence[int] = TALL_HILLS,
    dtype: torch.dtype = torch.float64,
    device: torch.device | str | None = None,
) -> TabularPriors:
    r"""The "hill" experiment's five priors: :func:`hill_means` with an SE kernel, :math:`\ell = 1`.

    Prior 0 has ten hills of height :math:`h`; prior :math:`i = 1..4` doubles hill
    ``tall_hills[i - 1]`` (reconstruction, see :func:`hill_means`).
    """
    arms = paper_arms(num_arms, dtype=dtype, device=device)
    means = hill_means(arms, hill_height=hill_height, tall_hills=tall_hills)
    covariance = paper_rbf(1.0)(arms, arms)
    return TabularPriors(
        arms=arms,
        means=means,
        covariances=covariance.expand(means.shape[0], -1, -1).clone(),
        noise=noise,
        names=["hills"] + [f"tall_hill{int(j)}" for j in tall_hills],
    )
