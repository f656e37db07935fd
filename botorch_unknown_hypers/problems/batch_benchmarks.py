r"""The synthetic and GP-prior benchmarks of the TS-RSR paper (Ren & Li [Ren2024]_, Sec. 6).

The paper compares its batch rule (:mod:`~botorch_unknown_hypers.acquisition.ts_rsr`)
with six batch baselines on these problems. It *minimises*; every problem here is in
maximisation form (:mod:`.base`), :math:`f = -g`, with
:attr:`~.base.Problem.optimal_value` the negated known minimum. The objectives are
deterministic (the paper's :math:`\sigma_n = 10^{-3}` is the surrogate's likelihood
noise), with 15 uniform initial points.

**Synthetic functions** (:func:`synthetic_benchmark`): BoTorch's Ackley-2/3, Rosenbrock,
Hartmann-6, Griewank-8 and Michalewicz-10, negated, on the paper's boxes, and
:class:`Bird` (not in BoTorch), :math:`g(x) = \sin x_1\, e^{(1 - \cos x_2)^2} +
\cos x_2\, e^{(1 - \sin x_1)^2} + (x_1 - x_2)^2` on :math:`[-2\pi, 2\pi]^2`.

**GP-prior functions** (``gp-rbf2``, ``gp-rbf3``, :class:`GPPriorGridProblem`): one
function per seed, drawn *exactly* from a zero-mean GP prior with the RBF kernel
:math:`k(x, x') = s \exp(-\|x - x'\|^2 / (2\ell^2))` on a product grid
:math:`G = G_1 \times \cdots \times G_d`. There :math:`K = s\, K_1 \otimes \cdots \otimes K_d`, so

.. math::

    f(G) = \sqrt{s}\, (A_1 \otimes \cdots \otimes A_d)\, z, \qquad A_i = K_i^{1/2},
    \qquad z \sim \mathcal{N}(0, I_{|G|}),

with symmetric square roots whose round-off eigenvalues are clipped at 0
(:func:`sample_kronecker_rbf`). A query snaps to its nearest grid node; :math:`f^*` is
the grid maximum. ``metadata`` holds the paper's settings (``paper_batch_size``,
``paper_iterations``, ``paper_runs``, ``paper_surrogate``: the authors' fixed GP). The
formulas, boxes and optima, the grids, the settings table and the deviations from the
authors' code are in ``docs/ts-rsr.md``.

Example:
    >>> problem = synthetic_benchmark("bird2")
    >>> problem.optimal_value, problem.metadata["paper_batch_size"]
    (106.764537, 5)

References:

.. [Ren2024]
    Z. Ren, N. Li. TS-RSR: A provably efficient approach for batch Bayesian
    optimization. arXiv:2403.04764, 2024.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
from botorch.test_functions.synthetic import (
    Ackley,
    Griewank,
    Hartmann,
    Michalewicz,
    Rosenbrock,
    SyntheticTestFunction,
)
from torch import Tensor

from botorch_unknown_hypers.checks import check_choice, check_nonnegative
from botorch_unknown_hypers.problems.problem import Problem
from botorch_unknown_hypers.domains import BoxDomain
from botorch_unknown_hypers.problems.synthetic import BoTorchTestProblem

PAPER_NOISE_VARIANCE = 1e-6
r"""The surrogate's fixed likelihood noise variance (:math:`\sigma_n = 10^{-3}`)."""

PAPER_N_INIT = 15
r"""Initial design size of every TS-RSR benchmark."""

GPYTORCH_DEFAULT = math.log(2.0)
r"""GPyTorch's untrained length scale and outputscale, softplus(0) = ln 2 (the tables' "ln 2")."""

REFERENCE = "Ren & Li, TS-RSR (arXiv:2403.04764), Sec. 6 and App. C; authors' code"


def paper_surrogate(
    kernel: str, lengthscale: float | list[float], outputscale: float
) -> dict[str, str | float | list[float]]:
    r"""The authors' fixed surrogate GP as a plain dict (``metadata["paper_surrogate"]``).

    Args:
        kernel: ``"matern52"`` or ``"rbf"``.
        lengthscale: One length scale, or one per input (ARD), in raw input units
            (GPyTorch's convention :math:`\exp(-r^2 / (2\ell^2))` for the RBF kernel).
        outputscale: The kernel's outputscale :math:`s`.

    Returns:
        ``{"kernel", "lengthscale", "outputscale", "noise_variance"}``.
    """
    if kernel not in ("matern52", "rbf"):
        raise ValueError(f"kernel must be 'matern52' or 'rbf', got {kernel!r}.")
    return {
        "kernel": kernel,
        "lengthscale": list(lengthscale) if isinstance(lengthscale, (list, tuple)) else float(lengthscale),
        "outputscale": float(outputscale),
        "noise_variance": PAPER_NOISE_VARIANCE,
    }


def paper_metadata(
    batch_size: int, iterations: int, runs: int, surrogate: dict, **extra: object
) -> dict:
    r"""The paper's experiment settings of one problem (the table in ``docs/ts-rsr.md``).

    Args:
        batch_size: :math:`m`, points per round.
        iterations: :math:`T`, rounds after the initial design.
        runs: Trials pooled in the paper's tables.
        surrogate: :func:`paper_surrogate` of the problem.
        extra: Further entries.
    """
    return {
        "paper_batch_size": batch_size,
        "paper_iterations": iterations,
        "paper_runs": runs,
        "paper_surrogate": surrogate,
        "reference": REFERENCE,
        **extra,
    }


# --------------------------------------------------------------------------- #
# Bird                                                                          #
# --------------------------------------------------------------------------- #


class Bird(SyntheticTestFunction):
    r"""Bird test function (not in BoTorch).

    2-d function (usually evaluated on :math:`[-2\pi, 2\pi]^2`):

    .. math::

        g(x) = \sin x_1\, e^{(1 - \cos x_2)^2} + \cos x_2\, e^{(1 - \sin x_1)^2}
        + (x_1 - x_2)^2.

    Two global minimisers, :math:`(4.70104, 3.15294)` and
    :math:`(-1.58214, -3.13024)`, with :math:`g^* = -106.764537` (the numerical
    minimum is :math:`-106.76453675`; the rounded literature value is kept).
    """

    dim = 2
    continuous_inds = [0, 1]
    _bounds = [(-2.0 * math.pi, 2.0 * math.pi), (-2.0 * math.pi, 2.0 * math.pi)]
    _optimal_value = -106.764537
    # Nelder-Mead from the literature points, tolerance 1e-13 (double precision).
    _optimizers = [
        (4.7010431176420155, 3.1529385085053776),
        (-1.5821421799753073, -3.1302468147347837),
    ]
    _check_grad_at_opt = False

    def _evaluate_true(self, X: Tensor) -> Tensor:
        x1, x2 = X[..., 0], X[..., 1]
        return (
            torch.sin(x1) * torch.exp((1 - torch.cos(x2)).pow(2))
            + torch.cos(x2) * torch.exp((1 - torch.sin(x1)).pow(2))
            + (x1 - x2).pow(2)
        )


# --------------------------------------------------------------------------- #
# Synthetic benchmarks                                                          #
# --------------------------------------------------------------------------- #

MICHALEWICZ10_OPTIMAL_VALUE = 9.660151715641348
r"""Maximum of the negated 10-d Michalewicz on :math:`[0, \pi]^{10}`: the sum of the ten
separable 1-d maxima (the paper's rounded 9.66015 lies below it)."""

MICHALEWICZ10_OPTIMIZER = (
    2.20290551951973,
    math.pi / 2,
    1.2849915703565453,
    1.923058471297818,
    1.7204697727764295,
    math.pi / 2,
    1.454413970562216,
    1.7560865203644145,
    1.6557174164267723,
    math.pi / 2,
)
r"""A maximiser of the negated 10-d Michalewicz (coordinate-wise 1-d maximisers)."""


@dataclass(frozen=True)
class _SyntheticSpec:
    r"""One row of the paper's benchmark table for a closed-form function."""

    make_function: Callable[[list[tuple[float, float]]], SyntheticTestFunction]
    box: tuple[tuple[float, float], ...]
    optimal_value: float  # maximisation form
    optimizer: tuple[float, ...]
    batch_size: int
    iterations: int
    lengthscale: float | tuple[float, ...] = GPYTORCH_DEFAULT
    outputscale: float = GPYTORCH_DEFAULT
    paper_optimal_value: float | None = None


_TWO_PI = 2.0 * math.pi

SYNTHETIC_BENCHMARKS: dict[str, _SyntheticSpec] = {
    "ackley2": _SyntheticSpec(
        lambda box: Ackley(dim=2, negate=True, bounds=box), ((-5.0, 5.0),) * 2, 0.0, (0.0,) * 2, 5, 50
    ),
    "rosenbrock2": _SyntheticSpec(
        lambda box: Rosenbrock(dim=2, negate=True, bounds=box), ((-2.0, 2.0), (-1.0, 3.0)), 0.0, (1.0, 1.0), 5, 50
    ),
    "bird2": _SyntheticSpec(
        lambda box: Bird(negate=True, bounds=box),
        ((-_TWO_PI, _TWO_PI),) * 2,
        106.764537,
        Bird._optimizers[0],
        5,
        50,
    ),
    "ackley3": _SyntheticSpec(
        lambda box: Ackley(dim=3, negate=True, bounds=box), ((-5.0, 5.0),) * 3, 0.0, (0.0,) * 3, 20, 15
    ),
    "hartmann6": _SyntheticSpec(
        lambda box: Hartmann(dim=6, negate=True, bounds=box),
        ((0.0, 1.0),) * 6,
        3.32237,
        (0.20169, 0.150011, 0.476874, 0.275332, 0.311652, 0.6573),
        5,
        30,
        lengthscale=(0.2,) * 6,  # the authors' code override (ARD)
    ),
    "griewank8": _SyntheticSpec(
        lambda box: Griewank(dim=8, negate=True, bounds=box), ((-1.0, 4.0),) * 8, 0.0, (0.0,) * 8, 10, 30
    ),
    "michalewicz10": _SyntheticSpec(
        lambda box: Michalewicz(dim=10, negate=True, bounds=box),
        ((0.0, math.pi),) * 10,
        MICHALEWICZ10_OPTIMAL_VALUE,
        MICHALEWICZ10_OPTIMIZER,
        5,
        30,
        paper_optimal_value=9.66015,
    ),
}
r"""Name -> the paper's settings of each closed-form benchmark (maximisation form)."""


def synthetic_benchmark(name: str, noise_std: float = 0.0) -> BoTorchTestProblem:
    r"""A closed-form TS-RSR benchmark by name, in maximisation form.

    Args:
        name: One of :data:`SYNTHETIC_BENCHMARKS` (``ackley2``, ``rosenbrock2``,
            ``bird2``, ``ackley3``, ``hartmann6``, ``griewank8``, ``michalewicz10``).
        noise_std: Observation noise standard deviation (0 in the paper).

    Returns:
        A :class:`~botorch_unknown_hypers.problems.synthetic.BoTorchTestProblem` with
        15 initial points and the paper's settings in ``metadata`` (``docs/ts-rsr.md``);
        ``metadata["optimizer"]`` is a maximiser (a tuple of floats).

    Example:
        >>> synthetic_benchmark("rosenbrock2").domain.bounds.tolist()
        [[-2.0, -1.0], [2.0, 3.0]]
    """
    check_choice("name", name, list(SYNTHETIC_BENCHMARKS))
    check_nonnegative("noise_std", noise_std)
    spec = SYNTHETIC_BENCHMARKS[name]
    box = [tuple(b) for b in spec.box]
    lengthscale = list(spec.lengthscale) if isinstance(spec.lengthscale, tuple) else spec.lengthscale
    extra: dict = {"optimizer": spec.optimizer}
    if spec.paper_optimal_value is not None:
        extra["paper_optimal_value"] = spec.paper_optimal_value
    return BoTorchTestProblem(
        spec.make_function(box),
        name=name,
        optimal_value=spec.optimal_value,
        bounds=torch.tensor(box, dtype=torch.float64).T.contiguous(),
        noise_std=noise_std,
        n_init=PAPER_N_INIT,
        metadata=paper_metadata(
            spec.batch_size,
            spec.iterations,
            runs=10,
            surrogate=paper_surrogate("matern52", lengthscale, spec.outputscale),
            **extra,
        ),
    )


# --------------------------------------------------------------------------- #
# GP-prior functions on a grid                                                  #
# --------------------------------------------------------------------------- #


def kronecker_rbf_factors(nodes: Sequence[Tensor], lengthscale: float) -> list[Tensor]:
    r"""Symmetric square roots :math:`A_i = K_i^{1/2}` of the 1-d RBF kernel matrices.

    :math:`(K_i)_{jk} = \exp(-(g_{ij} - g_{ik})^2 / (2\ell^2))` on the nodes
    :math:`g_i`. :math:`A_i = V_i \operatorname{diag}(\max(\lambda_i, 0))^{1/2}
    V_i^\top` from :func:`torch.linalg.eigh`; the negative round-off eigenvalues of
    these numerically singular matrices are clipped at 0.

    Args:
        nodes: ``d`` one-dimensional tensors, the grid's nodes along each axis.
        lengthscale: The RBF length scale :math:`\ell` (GPyTorch's convention).

    Returns:
        ``d`` tensors, ``n_i x n_i``, with :math:`A_i A_i^\top = K_i` (up to round-off).
    """
    factors = []
    for g in nodes:
        sq_dist = (g.unsqueeze(-1) - g.unsqueeze(-2)).pow(2)
        kernel = torch.exp(-0.5 * sq_dist / lengthscale**2)
        eigenvalues, eigenvectors = torch.linalg.eigh(kernel)
        root = eigenvalues.clamp_min(0.0).sqrt()
        factors.append((eigenvectors * root) @ eigenvectors.transpose(-1, -2))
    return factors


def sample_kronecker_rbf(
    nodes: Sequence[Tensor],
    lengthscale: float,
    outputscale: float = 1.0,
    sample_shape: torch.Size | tuple[int, ...] = torch.Size(),
    generator: torch.Generator | None = None,
) -> Tensor:
    r"""Exact draws of a zero-mean RBF GP on the product grid of ``nodes``.

    :math:`f = \sqrt{s}\, (A_1 \otimes \cdots \otimes A_d)\, z`, computed as ``d``
    mode products :math:`Z \times_1 A_1 \cdots \times_d A_d` of the standard normal
    array :math:`Z` (row-major ``vec``), never forming the Kronecker product.

    Args:
        nodes: ``d`` one-dimensional tensors of nodes (``n_1, ..., n_d``); their dtype
            and device are the draw's.
        lengthscale: RBF length scale :math:`\ell`, :math:`k = s \exp(-r^2 / (2\ell^2))`.
        outputscale: :math:`s`.
        sample_shape: Number of independent functions, as a shape.
        generator: Random generator on the nodes' device.

    Returns:
        A ``sample_shape x n_1 x ... x n_d``-dim tensor; entry ``[..., j_1, ..., j_d]``
        is :math:`f(g_{1 j_1}, \ldots, g_{d j_d})`.

    Example:
        >>> axis = torch.linspace(0, 1, 26, dtype=torch.float64)
        >>> sample_kronecker_rbf([axis] * 3, 0.15, 10.0, (4,)).shape
        torch.Size([4, 26, 26, 26])
    """
    sample_shape = torch.Size(sample_shape)
    sizes = [g.shape[0] for g in nodes]
    ref = nodes[0]
    values = torch.randn(*sample_shape, *sizes, generator=generator, dtype=ref.dtype, device=ref.device)
    offset = len(sample_shape)
    # One mode product per axis (d <= 3 here): (A_1 x ... x A_d) vec(Z).
    for axis, factor in enumerate(kronecker_rbf_factors(nodes, lengthscale)):
        values = torch.tensordot(factor, values, dims=([1], [offset + axis])).movedim(0, offset + axis)
    return math.sqrt(outputscale) * values


def _positive(value: float, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}.")
    return float(value)


class GPPriorGridProblem(Problem):
    r"""A function drawn per seed from a zero-mean RBF GP prior on a product grid.

    The draw is exact (:func:`sample_kronecker_rbf`); a query is snapped to its
    nearest grid node, and :math:`f^*` is the grid maximum (module docstring).

    Args:
        bounds: A ``2 x d``-dim tensor, the box the grid spans (corners included).
        grid_size: Nodes per axis (an int, or one per axis), at least 2.
        lengthscale: RBF length scale :math:`\ell` in input units.
        outputscale: Prior variance :math:`s`.
        seed: The run's seed (``instance(seed)`` gives another seed's function).
        seed_offset: Added to ``seed`` to seed the draw (independent problems).
        name: Registered name.
        n_init: Initial design size.
        noise_std: Observation noise standard deviation.
        metadata: Extra entries (e.g. :func:`paper_metadata`).
        dtype: Of the domain and the values (the draw itself is float64 on the CPU).

    Attributes:
        grid_size: Nodes per axis, a ``d``-tuple.
        grid_step: Node spacing per axis, a ``d``-dim tensor.

    Example:
        >>> bounds = torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64)
        >>> p = GPPriorGridProblem(bounds, grid_size=11, lengthscale=0.2, seed=1)
        >>> p.grid_step.tolist()
        [0.1, 0.1]
    """

    def __init__(
        self,
        bounds: Tensor,
        grid_size: int | Sequence[int],
        lengthscale: float,
        outputscale: float = 1.0,
        seed: int = 0,
        seed_offset: int = 0,
        name: str = "gp-rbf",
        n_init: int = PAPER_N_INIT,
        noise_std: float = 0.0,
        metadata: dict | None = None,
        dtype: torch.dtype = torch.float64,
    ) -> None:
        bounds = torch.as_tensor(bounds, dtype=torch.float64).detach().cpu()
        domain = BoxDomain(bounds)
        dim = domain.dim
        if isinstance(grid_size, bool) or not isinstance(grid_size, (int, Sequence)):
            raise ValueError(f"grid_size must be an int or a sequence of ints, got {grid_size!r}.")
        sizes = (grid_size,) * dim if isinstance(grid_size, int) else tuple(grid_size)
        if len(sizes) != dim or any(isinstance(n, bool) or not isinstance(n, int) or n < 2 for n in sizes):
            raise ValueError(f"grid_size must be an int >= 2 or {dim} such ints, got {grid_size!r}.")
        lengthscale = _positive(lengthscale, "lengthscale")
        outputscale = _positive(outputscale, "outputscale")
        for value, label in ((seed, "seed"), (seed_offset, "seed_offset"), (n_init, "n_init")):
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"{label} must be an int, got {value!r}.")
        if n_init < 0:
            raise ValueError(f"n_init must be >= 0, got {n_init}.")
        check_nonnegative("noise_std", noise_std)

        nodes = [torch.linspace(float(lo), float(hi), n, dtype=torch.float64) for lo, hi, n in zip(*bounds, sizes)]
        gen = torch.Generator().manual_seed(seed_offset + seed)
        values = sample_kronecker_rbf(nodes, lengthscale, outputscale, generator=gen).reshape(-1)
        best = int(values.argmax())
        strides = [math.prod(sizes[i + 1 :]) for i in range(dim)]
        optimizer = tuple(float(nodes[i][(best // strides[i]) % sizes[i]]) for i in range(dim))
        step = (bounds[1] - bounds[0]) / torch.tensor([n - 1 for n in sizes], dtype=torch.float64)
        meta = copy.deepcopy(metadata or {})
        meta.update(
            {
                "seed": seed,
                "grid_size": sizes,
                "grid_step": step.tolist(),
                "lengthscale": lengthscale,
                "outputscale": outputscale,
                "optimizer": optimizer,
            }
        )
        super().__init__(
            name=name,
            domain=domain,
            optimal_value=float(values[best]),
            noise_std=float(noise_std),
            n_init=n_init,
            metadata=meta,
        )
        self.grid_size = sizes
        self.grid_step = step
        self.lengthscale = lengthscale
        self.outputscale = outputscale
        self.seed = seed
        self.seed_offset = seed_offset
        self._extra_metadata = copy.deepcopy(metadata or {})
        self._values = values
        self._strides = torch.tensor(strides, dtype=torch.long)
        self._max_index = torch.tensor([n - 1 for n in sizes], dtype=torch.long)
        if dtype != torch.float64:
            self.to(dtype=dtype)

    def instance(self, seed: int) -> GPPriorGridProblem:
        bounds = self.domain.bounds
        return GPPriorGridProblem(
            bounds.detach().to(device="cpu", dtype=torch.float64),
            grid_size=self.grid_size,
            lengthscale=self.lengthscale,
            outputscale=self.outputscale,
            seed=seed,
            seed_offset=self.seed_offset,
            name=self.name,
            n_init=self.n_init,
            noise_std=self.noise_std,
            metadata=self._extra_metadata,
            dtype=bounds.dtype,
        ).to(device=bounds.device)

    def to(self, device: torch.device | str | None = None, dtype: torch.dtype | None = None) -> GPPriorGridProblem:
        super().to(device=device, dtype=dtype)
        self._values = self._values.to(device=device, dtype=dtype)
        self.grid_step = self.grid_step.to(device=device, dtype=dtype)
        self._strides = self._strides.to(device=device)
        self._max_index = self._max_index.to(device=device)
        return self

    def node_index(self, X: Tensor) -> Tensor:
        r"""Per-axis index of the grid node nearest each row of ``X``.

        Args:
            X: A ``batch_shape x d``-dim tensor (points outside the box go to the
                nearest boundary node).

        Returns:
            A ``batch_shape x d``-dim ``long`` tensor.
        """
        lower = self.domain.bounds[0].to(X)
        index = torch.round((X - lower) / self.grid_step.to(X)).long()
        return torch.minimum(index.clamp_min(0), self._max_index.to(index.device))

    def snap(self, X: Tensor) -> Tensor:
        r"""The grid node nearest each row of ``X`` (``batch_shape x d``), same shape."""
        return self.domain.bounds[0].to(X) + self.node_index(X).to(X) * self.grid_step.to(X)

    def grid_points(self) -> Tensor:
        r"""All grid nodes, an ``N x d``-dim tensor (``N = prod(grid_size)``, row-major)."""
        lower, upper = self.domain.bounds
        axes = [torch.linspace(float(lo), float(hi), n, dtype=lower.dtype, device=lower.device)
                for lo, hi, n in zip(lower, upper, self.grid_size)]
        return torch.stack(torch.meshgrid(*axes, indexing="ij"), dim=-1).reshape(-1, self.dim)

    def evaluate_true(self, X: Tensor) -> Tensor:
        r"""The drawn function at the grid node nearest each row of ``X``.

        Args:
            X: A ``batch_shape x d``-dim tensor.

        Returns:
            A ``batch_shape``-dim tensor.
        """
        flat = (self.node_index(X) * self._strides.to(X.device)).sum(dim=-1)
        return self._values.to(device=X.device, dtype=X.dtype)[flat]


GP_RBF2_SEED_OFFSET = 60_013
GP_RBF3_SEED_OFFSET = 60_029


def gp_rbf2(seed: int = 0, grid_size: int = 201, noise_std: float = 0.0) -> GPPriorGridProblem:
    r"""``gp-rbf2``: an exact RBF-prior draw on :math:`[-5, 5]^2`, :math:`\ell = 0.25`, :math:`s = 1`.

    Args:
        seed: The run's seed.
        grid_size: Nodes per axis (201: step 0.05, the choice explained in ``docs/ts-rsr.md``).
        noise_std: Observation noise standard deviation (0 in the paper).
    """
    bounds = torch.tensor([[-5.0, -5.0], [5.0, 5.0]], dtype=torch.float64)
    return GPPriorGridProblem(
        bounds,
        grid_size=grid_size,
        lengthscale=0.25,
        outputscale=1.0,
        seed=seed,
        seed_offset=GP_RBF2_SEED_OFFSET,
        name="gp-rbf2",
        noise_std=noise_std,
        metadata=paper_metadata(
            20, 20, runs=100, surrogate=paper_surrogate("rbf", 0.25, 1.0),
            paper_function="random Fourier features, theta ~ U[0, 1] (here: exact GP draw)",
        ),
    )


def gp_rbf3(seed: int = 0, grid_size: int = 26, noise_std: float = 0.0) -> GPPriorGridProblem:
    r"""``gp-rbf3``: an exact RBF-prior draw on :math:`[0, 1]^3`, :math:`\ell = 0.15`, :math:`s = 10`.

    Args:
        seed: The run's seed.
        grid_size: Nodes per axis (26: step 0.04, as in the authors' code).
        noise_std: Observation noise standard deviation (0 in the paper).
    """
    bounds = torch.tensor([[0.0] * 3, [1.0] * 3], dtype=torch.float64)
    return GPPriorGridProblem(
        bounds,
        grid_size=grid_size,
        lengthscale=0.15,
        outputscale=10.0,
        seed=seed,
        seed_offset=GP_RBF3_SEED_OFFSET,
        name="gp-rbf3",
        noise_std=noise_std,
        metadata=paper_metadata(5, 50, runs=50, surrogate=paper_surrogate("rbf", 0.15, 10.0)),
    )
