r"""Finite-arm GPs under K candidate priors: the model behind PE-GP-TS and HP-GP-TS.

Sandberg & Haghir Chehreghani (arXiv:2502.01226 v1) select among a finite set
:math:`\mathcal{P}` of GP priors on a finite arm set :math:`\mathcal{X}`
(:math:`|\mathcal{X}| = N`, :math:`|\mathcal{P}| = K`). Prior :math:`p` is a
mean vector :math:`m_p \in \mathbb{R}^N` and a covariance matrix
:math:`C_p \in \mathbb{R}^{N \times N}` over the arms; on the synthetic tasks
they come from kernels, on the real-data tasks they are empirical moments with
no kernel at all. Observations are :math:`y_t = f(x_t) + \varepsilon_t`,
:math:`\varepsilon_t \sim \mathcal{N}(0, \sigma^2)` with known :math:`\sigma^2`,
and **every** prior is conditioned on **all** observations, whichever prior the
rule selected (implementer's note, gotcha 1). This module holds

- :class:`TabularPriors`, the K priors as tensors (``K x N`` means,
  ``K x N x N`` covariances), with builders for the paper's three synthetic
  prior sets (:func:`kernel_task_priors`, :func:`lengthscale_task_priors`,
  :func:`hill_task_priors`) and the paper's kernel formulas (:func:`paper_rbf`,
  :func:`paper_matern`, :func:`paper_periodic`, :func:`paper_linear`,
  :func:`paper_rq`), whose conventions differ from GPyTorch's;
- :class:`TabularPriorGP`, the exact posteriors of all K priors, batched over
  K, with the three quantities the rules need: posterior means and variances
  at every arm (Alg. 1 lines 7-8), one-step predictive likelihoods (Alg. 2,
  line 6) and joint posterior samples over all arms (Alg. 1 line 3,
  Alg. 2 line 3).

Posterior (paper Eqs. 1-2). For observed arm indices
:math:`S = (s_1, \dots, s_n)` (repeats allowed) and targets :math:`y`, let

.. math::

    L_p L_p^\top = C_p[S, S] + \sigma^2 I, \qquad
    A_p = L_p^{-1} C_p[S, :] \ (n \times N), \qquad
    w_p = L_p^{-1} (y - m_p[S]) \ (n).

Then

.. math::

    \mu_p = m_p + A_p^\top w_p, \qquad
    \Sigma_p = C_p - A_p^\top A_p, \qquad
    \sigma_p^2(x) = C_p[x, x] - \lVert A_p[:, x] \rVert^2.

Incremental conditioning. Adding :math:`(j, y_{n+1})` appends one row to
:math:`L_p`, :math:`A_p` and :math:`w_p`:

.. math::

    l = A_p[:, j], \quad
    d = \sqrt{\sigma_p^2(j) + \sigma^2}, \quad
    a = (C_p[j, :] - l^\top A_p) / d, \quad
    \omega = (y_{n+1} - \mu_p(j)) / d,

and :math:`\mu_p \leftarrow \mu_p + \omega a`,
:math:`\sigma_p^2 \leftarrow \sigma_p^2 - a^2`: :math:`O(K (n^2 + n N))` per
observation for all K priors (one batched call, no loop over priors), against
:math:`O(K (n^3 + n^2 N))` to refactorise. The new pivot
:math:`d^2 = \sigma_p^2(j) + \sigma^2 \ge \sigma^2 > 0` is the predictive
variance, so the update never fails and needs **no jitter**, even for the
rank-one linear kernel or a rank-deficient empirical covariance. We keep this
growing Cholesky rather than rank-one downdates of the ``K x N x N``
posterior covariance: that costs :math:`O(K N^2)` per step and ``K N^2``
memory, and repeated downdates lose positive semi-definiteness to
cancellation. :math:`A_p` is also exactly what the pathwise update below needs.

Evidence chain rule (HP-GP-TS hyperposterior, Alg. 2 line 6). Since
:math:`\omega_t = (y_t - \mu_{t,p}(x_t)) / d_t` with
:math:`d_t^2 = \sigma_{t,p}^2(x_t) + \sigma^2`,

.. math::

    \log \mathcal{N}(y_{1:n}; m_p[S], C_p[S, S] + \sigma^2 I)
    = \sum_{t=1}^n \log \mathcal{N}\big(y_t; \mu_{t,p}(x_t), \sigma_{t,p}^2(x_t) + \sigma^2\big)
    = -\tfrac12 \lVert w_p \rVert^2 - \textstyle\sum_t \log (L_p)_{tt} - \tfrac n2 \log 2\pi,

where :math:`\mu_{t,p}, \sigma_{t,p}` condition on the first :math:`t - 1`
observations. :meth:`TabularPriorGP.predictive_log_likelihood` gives one term
(taken *before* conditioning); :meth:`TabularPriorGP.log_evidence` gives the
left-hand side by a fresh Cholesky, as a cross-check.

Pathwise (Matheron) sampling (implementer's note, gotcha 6). A joint posterior
sample over all N arms is

.. math::

    \tilde f_p = f_p + C_p[:, S] (C_p[S, S] + \sigma^2 I)^{-1} (y - f_p[S] - \varepsilon'),
    \quad f_p = m_p + F_p z, \quad z \sim \mathcal{N}(0, I_N),
    \quad \varepsilon' \sim \mathcal{N}(0, \sigma^2 I_n),

where, since :math:`C_p[:, S] = A_p^\top L_p^\top`, the update is
:math:`C_p[:, S] (C_p[S, S] + \sigma^2 I)^{-1} v = A_p^\top (L_p^{-1} v)`: one
triangular solve and one product with the cached :math:`A_p`. The prior factor
:math:`F_p = V_p \operatorname{diag}(\lambda_p^+)^{1/2}` comes from one
symmetric eigendecomposition :math:`C_p = V_p \operatorname{diag}(\lambda_p) V_p^\top`
per prior, computed once (in float64) and cached, where :math:`\lambda_p^+`
sets the eigenvalues below the numerical-rank cutoff
:math:`N \epsilon \max_i |\lambda_{p,i}|` (the negative ones included) to 0.
SE with :math:`\ell = 4`, the rank-one linear kernel, the periodic kernel and
the empirical covariances are numerically singular, so a Cholesky would need
jitter, which inflates the sample covariance, while the cutoff changes
:math:`C_p` by less than the eigensolver's own rounding error (and keeps the
linear prior's samples exactly straight lines). A sample then costs
:math:`O(N^2 + n^2 + n N)` per prior, against :math:`O(N^3)` to factorise the
posterior covariance :math:`\Sigma_p` afresh every round.

What is reconstructed. The paper gives the kernels' formulas and the priors'
hyperparameters (Sec. 6.1) but not the hill means (a figure only): see
:func:`hill_means` for our hill shape, height and which hills are doubled.

References:

.. [Sandberg2025]
    J. Sandberg, M. Haghir Chehreghani. Efficient Prior Selection in Gaussian
    Process Bandits with Thompson Sampling. arXiv:2502.01226 v1, 2025.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from botorch.acquisition.objective import PosteriorTransform
from botorch.models.model import Model
from botorch.posteriors.gpytorch import GPyTorchPosterior
from gpytorch.distributions import MultivariateNormal
from linear_operator import to_linear_operator
from linear_operator.utils.cholesky import psd_safe_cholesky
from torch import Tensor

KernelFunction = Callable[[Tensor, Tensor], Tensor]
r"""A kernel as a plain function: ``(N x d, M x d) -> N x M``."""

MeanFunction = Callable[[Tensor], Tensor]
r"""A prior mean as a plain function: ``N x d -> N``."""

PAPER_NUM_ARMS = 500
PAPER_ARM_RANGE = (0.0, 20.0)
PAPER_NOISE = 0.25**2
r"""The synthetic tasks' noise variance :math:`\sigma^2 = 0.25^2` (Sec. 6.1)."""


def _symmetry_tolerance(dtype: torch.dtype) -> float:
    r"""Relative asymmetry accepted in a covariance (``sqrt(eps)``: 1.5e-8 float64, 3.5e-4 float32)."""
    return math.sqrt(torch.finfo(dtype).eps)


def _as_index_tensor(indices: Tensor | Sequence[int], size: int, name: str, device: torch.device) -> Tensor:
    r"""A non-empty 1-d ``LongTensor`` of indices in ``[0, size)``; ValueError naming ``name`` otherwise."""
    idx = torch.as_tensor(indices, dtype=torch.long, device=device)
    if idx.ndim != 1 or idx.numel() == 0:
        raise ValueError(f"{name} must be a non-empty 1-d list of indices, got shape {tuple(idx.shape)}.")
    if (idx < 0).any() or (idx >= size).any():
        raise ValueError(f"{name} must lie in [0, {size - 1}], got {idx.tolist()}.")
    return idx


# --------------------------------------------------------------------------- priors


@dataclass(frozen=True)
class TabularPriors:
    r"""K Gaussian priors over N arms: ``K x N`` means and ``K x N x N`` covariances.

    This is the paper's :math:`\{(\mu_{1,p}, k_{1,p})\}_{p \in \mathcal{P}}`
    restricted to the arm set, which is all a finite-arm rule ever uses; kernel
    priors are evaluated on the arms once (:meth:`from_kernels`), and empirical
    priors (Intel, PeMS) are given directly.

    Args:
        arms: ``N x d`` arm coordinates (used only to map BoTorch inputs to arms).
        means: ``K x N`` prior means :math:`m_p`.
        covariances: ``K x N x N`` prior covariances :math:`C_p`, symmetric up to
            a relative tolerance ``sqrt(eps)`` (then symmetrised exactly), with a
            non-negative diagonal. Positive semi-definiteness is not checked
            (it would cost ``O(K N^3)``); :class:`TabularPriorGP` clips negative
            eigenvalues when sampling.
        noise: The known observation noise variance :math:`\sigma^2 > 0`, shared
            by all priors.
        names: Optional ``K`` labels.

    Example:
        >>> arms = torch.linspace(0, 20, 500, dtype=torch.float64).unsqueeze(-1)
        >>> priors = TabularPriors.from_kernels(
        ...     arms, [paper_rbf(1.0), paper_matern(2.5, 1.0)], noise=0.25**2, names=["se", "m52"]
        ... )
        >>> len(priors), priors.covariances.shape
        (2, torch.Size([2, 500, 500]))
    """

    arms: Tensor
    means: Tensor
    covariances: Tensor
    noise: float
    names: list[str] | None = None

    def __post_init__(self) -> None:
        for name in ("arms", "means", "covariances"):
            value = getattr(self, name)
            if not isinstance(value, Tensor):
                raise ValueError(f"{name} must be a torch.Tensor, got {type(value).__name__}.")
            if not value.is_floating_point():
                raise ValueError(f"{name} must be a floating-point tensor, got {value.dtype}.")
        arms, means, cov = self.arms, self.means, self.covariances
        if arms.ndim != 2 or arms.shape[0] == 0:
            raise ValueError(
                f"arms must be N x d with N >= 1 (use arms.unsqueeze(-1) for 1-d arms), "
                f"got shape {tuple(arms.shape)}."
            )
        num_arms = arms.shape[0]
        if means.ndim != 2 or means.shape[0] == 0 or means.shape[1] != num_arms:
            raise ValueError(f"means must be K x N with N = {num_arms}, got shape {tuple(means.shape)}.")
        num_priors = means.shape[0]
        if cov.shape != (num_priors, num_arms, num_arms):
            raise ValueError(
                f"covariances must be K x N x N = ({num_priors}, {num_arms}, {num_arms}), "
                f"got shape {tuple(cov.shape)}."
            )
        for name in ("arms", "means", "covariances"):
            value = getattr(self, name)
            if value.dtype != means.dtype or value.device != means.device:
                raise ValueError(
                    f"{name} must share dtype and device with means ({means.dtype}, {means.device}), "
                    f"got ({value.dtype}, {value.device})."
                )
            if not torch.isfinite(value).all():
                raise ValueError(f"{name} contains NaN or inf.")
        scale = max(1.0, float(cov.abs().max()))
        asymmetry = float((cov - cov.transpose(-1, -2)).abs().max())
        if asymmetry > _symmetry_tolerance(cov.dtype) * scale:
            raise ValueError(
                f"covariances must be symmetric: max |C - C^T| = {asymmetry:.3g} "
                f"exceeds {_symmetry_tolerance(cov.dtype) * scale:.3g}."
            )
        if (cov.diagonal(dim1=-2, dim2=-1) < -_symmetry_tolerance(cov.dtype) * scale).any():
            raise ValueError("covariances must have a non-negative diagonal.")
        # Exact symmetry, so that eigh / Cholesky see one well-defined matrix.
        object.__setattr__(self, "covariances", 0.5 * (cov + cov.transpose(-1, -2)))
        noise = float(self.noise)
        if not math.isfinite(noise) or noise <= 0:
            raise ValueError(f"noise must be a finite, strictly positive variance, got {self.noise}.")
        object.__setattr__(self, "noise", noise)
        if self.names is not None:
            names = list(self.names)
            if len(names) != num_priors or not all(isinstance(n, str) for n in names):
                raise ValueError(f"names must be None or a list of {num_priors} strings, got {self.names!r}.")
            object.__setattr__(self, "names", names)

    # ----------------------------------------------------------------- basics
    def __len__(self) -> int:
        return self.means.shape[0]

    @property
    def num_arms(self) -> int:
        r"""The number of arms N."""
        return self.arms.shape[0]

    def labels(self) -> list[str]:
        r"""Text label per prior: ``names``, or ``p0, p1, ...``."""
        return list(self.names) if self.names is not None else [f"p{k}" for k in range(len(self))]

    def subset(self, indices: Tensor | Sequence[int]) -> TabularPriors:
        r"""The priors at ``indices`` (in that order), on the same arms and noise."""
        idx = _as_index_tensor(indices, len(self), "indices", self.means.device)
        return TabularPriors(
            arms=self.arms,
            means=self.means[idx],
            covariances=self.covariances[idx],
            noise=self.noise,
            names=None if self.names is None else [self.names[i] for i in idx.tolist()],
        )

    def to(self, device: torch.device | str | None = None, dtype: torch.dtype | None = None) -> TabularPriors:
        r"""A copy on ``device`` with floating-point ``dtype``."""
        return TabularPriors(
            arms=self.arms.to(device=device, dtype=dtype),
            means=self.means.to(device=device, dtype=dtype),
            covariances=self.covariances.to(device=device, dtype=dtype),
            noise=self.noise,
            names=self.names,
        )

    def to_dict(self) -> dict[str, Any]:
        r"""JSON-safe representation (nested lists of floats)."""
        return {
            "type": "tabular",
            "arms": self.arms.tolist(),
            "means": self.means.tolist(),
            "covariances": self.covariances.tolist(),
            "noise": self.noise,
            "names": None if self.names is None else list(self.names),
        }

    @classmethod
    def from_dict(
        cls,
        state: dict[str, Any],
        dtype: torch.dtype = torch.float64,
        device: torch.device | str | None = None,
    ) -> TabularPriors:
        r"""Inverse of :meth:`to_dict`; raises ``ValueError`` on a malformed dict."""
        if not isinstance(state, dict) or state.get("type") != "tabular":
            raise ValueError("state is not a TabularPriors dict (missing type='tabular').")
        try:
            tensors = {
                key: torch.tensor(state[key], dtype=dtype, device=device)
                for key in ("arms", "means", "covariances")
            }
            noise = state["noise"]
        except KeyError as e:
            raise ValueError(f"state is missing the key {e.args[0]!r}.") from None
        return cls(noise=noise, names=state.get("names"), **tensors)

    @classmethod
    def from_kernels(
        cls,
        arms: Tensor,
        kernels: Sequence[KernelFunction],
        means: Sequence[MeanFunction] | None = None,
        noise: float = PAPER_NOISE,
        names: list[str] | None = None,
    ) -> TabularPriors:
        r"""Evaluate K kernel (and mean) functions on the arms.

        Args:
            arms: ``N x d`` arm coordinates.
            kernels: K functions ``(N x d, M x d) -> N x M``, e.g. :func:`paper_rbf`.
            means: K functions ``N x d -> N``; ``None`` is the zero mean for all.
            noise: Observation noise variance :math:`\sigma^2`.
            names: Optional K labels.
        """
        if not isinstance(arms, Tensor) or arms.ndim != 2:
            raise ValueError(f"arms must be an N x d tensor, got {getattr(arms, 'shape', type(arms))}.")
        kernels = list(kernels)
        if len(kernels) == 0:
            raise ValueError("kernels is empty: at least one prior is needed.")
        if means is not None and len(means) != len(kernels):
            raise ValueError(f"means must have one function per kernel ({len(kernels)}), got {len(means)}.")
        # One evaluation per prior at construction: the priors are arbitrary callables.
        covariances = torch.stack([kernel(arms, arms) for kernel in kernels])
        if means is None:
            mean_values = torch.zeros(len(kernels), arms.shape[0], dtype=arms.dtype, device=arms.device)
        else:
            mean_values = torch.stack([mean(arms).reshape(arms.shape[0]) for mean in means])
        return cls(arms=arms, means=mean_values, covariances=covariances, noise=noise, names=names)


# --------------------------------------------------------------------------- kernels


def _check_positive(**values: float) -> None:
    for name, value in values.items():
        if not (math.isfinite(float(value)) and float(value) > 0):
            raise ValueError(f"{name} must be finite and strictly positive, got {value}.")


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
    r"""The synthetic tasks' arms: ``num_arms`` equidistant points of :math:`[0, 20]`, ``N x 1``."""
    low, high = PAPER_ARM_RANGE
    return torch.linspace(low, high, num_arms, dtype=dtype, device=device).unsqueeze(-1)


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


# --------------------------------------------------------------------------- model


@dataclass(frozen=True)
class TabularPosteriorState:
    r"""The conditioned state of :class:`TabularPriorGP` (see the module docstring).

    Args:
        train_indices: ``n`` observed arm indices :math:`S` (repeats allowed).
        train_Y: ``n`` observations :math:`y`.
        cholesky: ``K x n x n`` lower :math:`L_p`, :math:`L_p L_p^\top = C_p[S, S] + \sigma^2 I`.
        whitened_cross: ``K x n x N`` :math:`A_p = L_p^{-1} C_p[S, :]`.
        whitened_residual: ``K x n`` :math:`w_p = L_p^{-1} (y - m_p[S])`.
        mean: ``K x N`` posterior means :math:`\mu_p`.
        variance: ``K x N`` latent posterior variances :math:`\sigma_p^2` (not clipped).
    """

    train_indices: Tensor
    train_Y: Tensor
    cholesky: Tensor
    whitened_cross: Tensor
    whitened_residual: Tensor
    mean: Tensor
    variance: Tensor

    def subset(self, idx: Tensor) -> TabularPosteriorState:
        r"""The state of the priors at ``idx`` (the data are shared)."""
        return TabularPosteriorState(
            train_indices=self.train_indices,
            train_Y=self.train_Y,
            cholesky=self.cholesky[idx],
            whitened_cross=self.whitened_cross[idx],
            whitened_residual=self.whitened_residual[idx],
            mean=self.mean[idx],
            variance=self.variance[idx],
        )

    def to(self, device: torch.device | str | None = None, dtype: torch.dtype | None = None) -> TabularPosteriorState:
        return TabularPosteriorState(
            train_indices=self.train_indices.to(device=device),
            **{
                name: getattr(self, name).to(device=device, dtype=dtype)
                for name in ("train_Y", "cholesky", "whitened_cross", "whitened_residual", "mean", "variance")
            },
        )


class TabularPriorGP(Model):
    r"""Exact GP posteriors of K tabular priors, all conditioned on the same data.

    The data are arm indices and observations; every method is batched over the
    K priors. :meth:`condition` adds one observation in
    :math:`O(K (n^2 + n N))` (growing Cholesky, see the module docstring);
    :meth:`sample` draws joint posterior samples over all arms by pathwise
    conditioning; :meth:`posterior` implements BoTorch's ``Model`` API with the
    prior dimension at ``-3`` of the posterior (``batch_shape x K x q x 1``), as
    :class:`~botorch_unknown_hypers.models.CandidateGP` does.

    Everything lives on the priors' device and dtype; move with :meth:`to`.

    Example:
        >>> priors = kernel_task_priors()
        >>> model = TabularPriorGP(priors)
        >>> log_weights = model.predictive_log_likelihood(120, 0.3)  # K, before conditioning
        >>> model.condition(120, 0.3)
        >>> model.sample(2, prior_indices=[0, 3]).shape
        torch.Size([2, 2, 500])
    """

    _num_outputs = 1

    def __init__(
        self,
        priors: TabularPriors,
        train_indices: Tensor | None = None,
        train_Y: Tensor | None = None,
    ) -> None:
        r"""
        Args:
            priors: The K priors over N arms.
            train_indices: Optional ``n`` observed arm indices (``LongTensor``, repeats allowed).
            train_Y: Optional ``n`` (or ``n x 1``) observations, given iff ``train_indices`` is.
        """
        super().__init__()
        if not isinstance(priors, TabularPriors):
            raise ValueError(f"priors must be a TabularPriors, got {type(priors).__name__}.")
        self.priors = priors
        self._prior_factor: Tensor | None = None  # K x N x N, computed on the first sample()
        indices, targets = self._validate_data(train_indices, train_Y)
        self._state = self._factorise(indices, targets)

    # ----------------------------------------------------------------- basics
    @property
    def num_outputs(self) -> int:
        return 1

    @property
    def batch_shape(self) -> torch.Size:
        r"""``(K,)``: the prior dimension of every posterior."""
        return torch.Size([len(self.priors)])

    @property
    def num_priors(self) -> int:
        return len(self.priors)

    @property
    def num_arms(self) -> int:
        return self.priors.num_arms

    @property
    def noise(self) -> float:
        r"""The known noise variance :math:`\sigma^2`."""
        return self.priors.noise

    @property
    def num_observations(self) -> int:
        return self._state.train_indices.shape[0]

    @property
    def train_indices(self) -> Tensor:
        r"""The ``n`` observed arm indices (a copy)."""
        return self._state.train_indices.clone()

    @property
    def train_Y(self) -> Tensor:
        r"""The ``n`` observations (a copy)."""
        return self._state.train_Y.clone()

    @property
    def state(self) -> TabularPosteriorState:
        r"""The current (immutable) conditioned state."""
        return self._state

    def labels(self) -> list[str]:
        return self.priors.labels()

    def _tkwargs(self) -> dict[str, Any]:
        return {"dtype": self.priors.means.dtype, "device": self.priors.means.device}

    def _validate_data(self, train_indices: Tensor | None, train_Y: Tensor | None) -> tuple[Tensor, Tensor]:
        if (train_indices is None) != (train_Y is None):
            raise ValueError("train_indices and train_Y must be given together.")
        tkwargs = self._tkwargs()
        if train_indices is None:
            return (
                torch.zeros(0, dtype=torch.long, device=tkwargs["device"]),
                torch.zeros(0, **tkwargs),
            )
        indices = torch.as_tensor(train_indices, device=tkwargs["device"])
        if indices.is_floating_point() or indices.is_complex() or indices.ndim != 1:
            raise ValueError(f"train_indices must be a 1-d LongTensor of arm indices, got {indices.dtype} "
                             f"of shape {tuple(indices.shape)}.")
        indices = indices.long()
        if ((indices < 0) | (indices >= self.num_arms)).any():
            raise ValueError(f"train_indices must lie in [0, {self.num_arms - 1}].")
        targets = torch.as_tensor(train_Y, **tkwargs)
        if targets.ndim == 2 and targets.shape[-1] == 1:
            targets = targets.squeeze(-1)
        if targets.shape != indices.shape:
            raise ValueError(f"train_Y must have shape ({indices.shape[0]},), got {tuple(targets.shape)}.")
        if not torch.isfinite(targets).all():
            raise ValueError("train_Y contains NaN or inf.")
        return indices, targets

    # ------------------------------------------------------------ conditioning
    def _factorise(self, indices: Tensor, targets: Tensor) -> TabularPosteriorState:
        r"""The state conditioned on all of ``(indices, targets)`` at once (one batched Cholesky)."""
        means, cov = self.priors.means, self.priors.covariances
        num, n = len(self.priors), indices.shape[0]
        tkwargs = self._tkwargs()
        if n == 0:
            return TabularPosteriorState(
                train_indices=indices,
                train_Y=targets,
                cholesky=torch.zeros(num, 0, 0, **tkwargs),
                whitened_cross=torch.zeros(num, 0, self.num_arms, **tkwargs),
                whitened_residual=torch.zeros(num, 0, **tkwargs),
                mean=means.clone(),
                variance=cov.diagonal(dim1=-2, dim2=-1).clone(),
            )
        cov_SS = cov[:, indices.unsqueeze(-1), indices.unsqueeze(-2)]  # K x n x n
        eye = torch.eye(n, **tkwargs)
        # sigma^2 > 0 bounds the eigenvalues below: jitter is only a fallback for float32.
        chol = psd_safe_cholesky(cov_SS + self.noise * eye)
        cross = torch.linalg.solve_triangular(chol, cov[:, indices, :], upper=False)  # K x n x N
        residual = (targets - means[:, indices]).unsqueeze(-1)  # K x n x 1
        whitened_residual = torch.linalg.solve_triangular(chol, residual, upper=False).squeeze(-1)
        return TabularPosteriorState(
            train_indices=indices,
            train_Y=targets,
            cholesky=chol,
            whitened_cross=cross,
            whitened_residual=whitened_residual,
            mean=means + (whitened_residual.unsqueeze(-2) @ cross).squeeze(-2),
            variance=cov.diagonal(dim1=-2, dim2=-1) - cross.square().sum(-2),
        )

    def _check_observation(self, index: int | Tensor, y: float | Tensor) -> tuple[int, Tensor]:
        if isinstance(index, Tensor):
            if index.numel() != 1 or index.is_floating_point():
                raise ValueError(f"index must be one integer arm index, got {index}.")
            index = int(index.item())
        index = int(index)
        if not (0 <= index < self.num_arms):
            raise ValueError(f"index must lie in [0, {self.num_arms - 1}], got {index}.")
        value = torch.as_tensor(y, **self._tkwargs())
        if value.numel() != 1:
            raise ValueError(f"y must be a single observation, got shape {tuple(value.shape)}.")
        value = value.reshape(())
        if not torch.isfinite(value):
            raise ValueError(f"y must be finite, got {value.item()}.")
        return index, value

    def condition(self, index: int | Tensor, y: float | Tensor) -> None:
        r"""Condition every prior on one observation ``y`` at arm ``index``, in place.

        Appends one row to the growing Cholesky (module docstring): cost
        :math:`O(K (n^2 + n N))`, no refactorisation and no jitter (the pivot is
        the predictive variance :math:`\sigma_p^2(x) + \sigma^2 \ge \sigma^2`).

        Args:
            index: Arm index in ``[0, N)``.
            y: The observation.
        """
        index, value = self._check_observation(index, y)
        state, cov = self._state, self.priors.covariances
        num, n = len(self.priors), self.num_observations
        pivot_row = state.whitened_cross[:, :, index]  # K x n: l = L^{-1} C[S, j]
        # Predictive std d = sqrt(sigma_p^2(j) + sigma^2); the clip guards rounding only.
        pivot = (state.variance[:, index].clamp_min(0) + self.noise).sqrt()  # K
        projection = (pivot_row.unsqueeze(-2) @ state.whitened_cross).squeeze(-2)  # K x N: l^T A
        new_cross = (cov[:, index, :] - projection) / pivot.unsqueeze(-1)
        new_residual = (value - state.mean[:, index]) / pivot  # K: (y - mu_p(j)) / d
        chol = torch.zeros(num, n + 1, n + 1, **self._tkwargs())
        chol[:, :n, :n] = state.cholesky
        chol[:, n, :n] = pivot_row
        chol[:, n, n] = pivot
        index_tensor = torch.tensor([index], dtype=torch.long, device=state.train_indices.device)
        self._state = TabularPosteriorState(
            train_indices=torch.cat([state.train_indices, index_tensor]),
            train_Y=torch.cat([state.train_Y, value.reshape(1)]),
            cholesky=chol,
            whitened_cross=torch.cat([state.whitened_cross, new_cross.unsqueeze(-2)], dim=-2),
            whitened_residual=torch.cat([state.whitened_residual, new_residual.unsqueeze(-1)], dim=-1),
            mean=state.mean + new_residual.unsqueeze(-1) * new_cross,
            variance=state.variance - new_cross.square(),
        )

    def conditioned(self, index: int | Tensor, y: float | Tensor) -> TabularPriorGP:
        r"""Functional :meth:`condition`: a new model; ``self`` is unchanged (the state is shared, immutably)."""
        model = self._with_state(self.priors, self._state)
        model.condition(index, y)
        return model

    def condition_on_observations(self, X: Tensor, Y: Tensor, **kwargs: Any) -> TabularPriorGP:
        r"""BoTorch API: a new model that also observed ``Y`` (``m`` or ``m x 1``) at arms ``X`` (``m x d``).

        The observations are added one by one: each rank-one update depends on the previous one.
        """
        if X.ndim != 2:
            raise ValueError(f"X must be m x d (no batch dimensions), got shape {tuple(X.shape)}.")
        indices = self.arm_indices(X)
        Y = torch.as_tensor(Y, **self._tkwargs()).reshape(-1)
        if Y.shape[0] != indices.shape[0]:
            raise ValueError(f"Y must hold {indices.shape[0]} observations, got {Y.shape[0]}.")
        model = self._with_state(self.priors, self._state)
        for index, value in zip(indices.tolist(), Y, strict=True):
            model.condition(index, value)
        return model

    @classmethod
    def _with_state(
        cls, priors: TabularPriors, state: TabularPosteriorState, prior_factor: Tensor | None = None
    ) -> TabularPriorGP:
        model = cls(priors)
        model._state = state
        model._prior_factor = prior_factor
        return model

    def subset(self, prior_indices: Tensor | Sequence[int]) -> TabularPriorGP:
        r"""A model over the priors at ``prior_indices`` with the same data, sliced (no refactorisation)."""
        idx = _as_index_tensor(prior_indices, self.num_priors, "prior_indices", self.priors.means.device)
        factor = None if self._prior_factor is None else self._prior_factor[idx]
        return self._with_state(self.priors.subset(idx), self._state.subset(idx), factor)

    def to(self, *args: Any, **kwargs: Any) -> TabularPriorGP:
        r"""Move priors and state in place, as ``nn.Module.to``: ``to(device)``, ``to(dtype)``,
        ``to(tensor)`` or ``to(device=..., dtype=...)``."""
        device, dtype = kwargs.pop("device", None), kwargs.pop("dtype", None)
        if kwargs:
            raise ValueError(f"to() got unexpected arguments {sorted(kwargs)}.")
        for arg in args:
            if isinstance(arg, Tensor):
                device, dtype = arg.device, arg.dtype
            elif isinstance(arg, torch.dtype):
                dtype = arg
            else:
                device = arg
        self.priors = self.priors.to(device=device, dtype=dtype)
        self._state = self._state.to(device=device, dtype=dtype)
        if self._prior_factor is not None:
            self._prior_factor = self._prior_factor.to(device=device, dtype=dtype)
        return super().to(device=device, dtype=dtype)

    # --------------------------------------------------------------- queries
    def mean_variance(self) -> tuple[Tensor, Tensor]:
        r"""Posterior means :math:`\mu_p` and latent (noise-free) variances :math:`\sigma_p^2` at every arm.

        Returns:
            ``(mean, variance)``, each ``K x N`` (variances clipped at 0).
        """
        return self._state.mean.clone(), self._state.variance.clamp_min(0)

    def predictive_log_likelihood(self, index: int | Tensor, y: float | Tensor) -> Tensor:
        r"""One-step predictive log-likelihood of every prior (Alg. 2, line 6), **before** conditioning.

        .. math::

            \log \mathcal{N}\big(y; \mu_p(x), \sigma_p^2(x) + \sigma^2\big), \quad x = \text{arm } index.

        Summed over rounds (each taken before the round's :meth:`condition`) it
        equals :meth:`log_evidence` (chain rule).

        Returns:
            ``K`` log-likelihoods.
        """
        index, value = self._check_observation(index, y)
        mean = self._state.mean[:, index]
        predictive_variance = self._state.variance[:, index].clamp_min(0) + self.noise
        return -0.5 * (
            (value - mean).square() / predictive_variance
            + predictive_variance.log()
            + math.log(2 * math.pi)
        )

    def log_evidence(self) -> Tensor:
        r"""Log marginal likelihood of all data under every prior, by a fresh Cholesky.

        .. math::

            \log \mathcal{N}\big(y_{1:n}; m_p[S], C_p[S, S] + \sigma^2 I\big).

        Costs :math:`O(K n^3)`; it cross-checks the sum of
        :meth:`predictive_log_likelihood` terms.

        Returns:
            ``K`` values (zeros when there are no data).
        """
        indices, targets = self._state.train_indices, self._state.train_Y
        n = indices.shape[0]
        if n == 0:
            return torch.zeros(self.num_priors, **self._tkwargs())
        cov = self.priors.covariances[:, indices.unsqueeze(-1), indices.unsqueeze(-2)]
        chol = psd_safe_cholesky(cov + self.noise * torch.eye(n, **self._tkwargs()))
        residual = (targets - self.priors.means[:, indices]).unsqueeze(-1)
        whitened = torch.linalg.solve_triangular(chol, residual, upper=False).squeeze(-1)
        log_det = chol.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return -0.5 * whitened.square().sum(-1) - log_det - 0.5 * n * math.log(2 * math.pi)

    def prior_factor(self) -> Tensor:
        r"""``K x N x N`` factors :math:`F_p` with :math:`F_p F_p^\top = C_p` up to rounding.

        :math:`F_p = V_p \operatorname{diag}(\lambda_p)^{1/2}` from the eigendecomposition, with
        eigenvalues below the numerical-rank cutoff :math:`N \epsilon \max_i |\lambda_{p,i}|`
        (negative ones included) set to 0: this changes :math:`C_p` by less than
        the eigensolver's own rounding error. Computed once (eigendecomposition in float64, then cast to the priors'
        dtype) and cached: :math:`O(K N^3)` once, instead of once per sample.
        """
        if self._prior_factor is None:
            cov = self.priors.covariances
            eigenvalues, eigenvectors = torch.linalg.eigh(cov.to(torch.float64))
            # Numerical rank, as torch.linalg.matrix_rank: eigenvalues below N eps lambda_max
            # are rounding noise of either sign; their square roots (~1e-8) would otherwise
            # add spurious directions, e.g. bend the linear prior's straight-line samples.
            cutoff = cov.shape[-1] * torch.finfo(torch.float64).eps * eigenvalues.abs().amax(-1, keepdim=True)
            eigenvalues = torch.where(eigenvalues > cutoff, eigenvalues, torch.zeros_like(eigenvalues))
            factor = eigenvectors * eigenvalues.sqrt().unsqueeze(-2)
            self._prior_factor = factor.to(cov.dtype)
        return self._prior_factor

    def sample(
        self,
        num_samples: int = 1,
        generator: torch.Generator | None = None,
        prior_indices: Sequence[int] | Tensor | None = None,
    ) -> Tensor:
        r"""Independent joint posterior samples over all arms (Alg. 1 line 3, Alg. 2 line 3).

        Pathwise (Matheron) conditioning, batched over priors and samples:

        .. math::

            \tilde f_p = m_p + F_p z + A_p^\top L_p^{-1} (y - m_p[S] - (F_p z)[S] - \varepsilon'),

        :math:`z \sim \mathcal{N}(0, I_N)`, :math:`\varepsilon' \sim \mathcal{N}(0, \sigma^2 I_n)`:
        :math:`O(N^2 + n^2 + n N)` per prior and sample, against :math:`O(N^3)`
        to factorise the posterior covariance.

        Args:
            num_samples: Number of samples per prior.
            generator: Optional ``torch.Generator`` on the priors' device.
            prior_indices: The priors to sample (``K'`` of them, in that order);
                ``None`` for all K. Every prior gets its own random numbers.

        Returns:
            ``num_samples x K' x N`` samples.
        """
        if int(num_samples) < 1:
            raise ValueError(f"num_samples must be a positive integer, got {num_samples}.")
        num_samples = int(num_samples)
        if prior_indices is None:
            idx = torch.arange(self.num_priors, device=self.priors.means.device)
        else:
            idx = _as_index_tensor(prior_indices, self.num_priors, "prior_indices", self.priors.means.device)
        tkwargs = self._tkwargs()
        # A run of consecutive priors (all of them, or one) is a view: gathering would copy
        # the K' x N x N factors and the K' x n x N cached products at every call.
        start = int(idx[0])
        if bool((idx == torch.arange(start, start + idx.shape[0], device=idx.device)).all()):
            def take(values: Tensor) -> Tensor:
                return values[start : start + idx.shape[0]]
        else:
            def take(values: Tensor) -> Tensor:
                return values[idx]
        factor = take(self.prior_factor())  # K' x N x N
        z = torch.randn(idx.shape[0], num_samples, self.num_arms, generator=generator, **tkwargs)
        # K' x S x N, as batched matmuls over K' (no S-fold expansion of the factors).
        draws = take(self.priors.means).unsqueeze(-2) + z @ factor.transpose(-1, -2)
        n = self.num_observations
        if n > 0:
            state = self._state
            noise = self.noise**0.5 * torch.randn(idx.shape[0], num_samples, n, generator=generator, **tkwargs)
            gap = state.train_Y - draws[..., state.train_indices] - noise  # K' x S x n
            solved = torch.linalg.solve_triangular(
                take(state.cholesky), gap.transpose(-1, -2), upper=False
            )  # K' x n x S
            draws = draws + solved.transpose(-1, -2) @ take(state.whitened_cross)
        return draws.transpose(0, 1).contiguous()

    # ---------------------------------------------------------------- BoTorch
    def arm_indices(self, X: Tensor) -> Tensor:
        r"""Indices of the arms whose coordinates equal the rows of ``X`` exactly.

        Args:
            X: ``batch_shape x q x d`` (or ``q x d``) points, each an arm, in the priors' dtype.

        Returns:
            ``batch_shape x q`` arm indices (the first matching arm).
        """
        arms = self.priors.arms
        if X.ndim < 1 or X.shape[-1] != arms.shape[-1]:
            raise ValueError(f"X must be ... x d with d = {arms.shape[-1]}, got shape {tuple(X.shape)}.")
        if X.dtype != arms.dtype or X.device != arms.device:
            raise ValueError(f"X must have the arms' dtype and device ({arms.dtype}, {arms.device}), "
                             f"got ({X.dtype}, {X.device}).")
        matches = (X.unsqueeze(-2) == arms).all(-1)  # batch_shape x q x N
        found = matches.any(-1)
        if not found.all():
            missing = X[~found][0].tolist()
            raise ValueError(
                f"X: every row must be one of the {arms.shape[0]} arms (exact coordinates); "
                f"{int((~found).sum())} rows are not, e.g. {missing}."
            )
        return matches.to(torch.uint8).argmax(-1)

    def posterior(
        self,
        X: Tensor,
        output_indices: list[int] | None = None,
        observation_noise: bool | Tensor = False,
        posterior_transform: PosteriorTransform | None = None,
        **kwargs: Any,
    ) -> GPyTorchPosterior:
        r"""Joint posterior of all K priors at the arms ``X``.

        Args:
            X: ``batch_shape x q x d``; every row must be an arm (exact match).
            output_indices: ``None`` or ``[0]`` (single output).
            observation_noise: Add :math:`\sigma^2` to the diagonal (``bool`` only).
            posterior_transform: Optional BoTorch posterior transform.

        Returns:
            A ``GPyTorchPosterior`` of shape ``batch_shape x K x q x 1``: an MVN of
            batch shape ``batch_shape x K`` with the full ``q x q`` covariance.
        """
        if output_indices not in (None, [0]):
            raise ValueError(f"output_indices: {type(self).__name__} has a single output.")
        if isinstance(observation_noise, Tensor):
            raise ValueError(f"observation_noise: only True/False is supported by {type(self).__name__}.")
        if X.ndim < 2:
            raise ValueError(f"X must be batch_shape x q x d, got shape {tuple(X.shape)}.")
        indices = self.arm_indices(X)  # batch_shape x q
        batch_shape, q = indices.shape[:-1], indices.shape[-1]
        flat = indices.reshape(-1, q)  # B x q
        state, cov = self._state, self.priors.covariances
        cross = state.whitened_cross[:, :, flat]  # K x n x B x q
        covariance = cov[:, flat.unsqueeze(-1), flat.unsqueeze(-2)] - torch.einsum(
            "knbq,knbr->kbqr", cross, cross
        )  # K x B x q x q
        if observation_noise:
            covariance = covariance + self.noise * torch.eye(q, **self._tkwargs())
        mean = state.mean[:, flat]  # K x B x q
        K = self.num_priors
        mean = mean.transpose(0, 1).reshape(*batch_shape, K, q)
        covariance = covariance.transpose(0, 1).reshape(*batch_shape, K, q, q)
        # Lazy covariance: repeated arms in X or a low-rank prior make it singular, and a
        # dense MVN would Cholesky-factorise it eagerly (and fail).
        posterior = GPyTorchPosterior(distribution=MultivariateNormal(mean, to_linear_operator(covariance)))
        if posterior_transform is not None:
            return posterior_transform(posterior=posterior, X=X)
        return posterior
