r"""Mixed-space problems: BoTorch's ``AckleyMixed`` and ``Labs`` on a
:class:`~botorch_unknown_hypers.domains.MixedDomain`.

- ``ackley-mixed`` (:math:`d = 8`): Ackley at :math:`|x - x^*|` over 5 binary parameters and 3
  floats in :math:`[0, 1]`, :math:`f^* = 0` (negated: every rule maximises). BoTorch's
  ``randomize_optimum=True`` draws :math:`x^*` from the global RNG; it is drawn here once under a
  forked RNG seeded with :data:`OPTIMUM_SEED`, so the problem is the same in every process (not
  the origin, a corner that rules drawn to the boundary would find for free). The seed is one no
  run uses: under seed 0, a rule seeded 0 that draws uniform points (``random``) played
  :math:`x^*` exactly as its first point.
- ``labs`` (:math:`d = 16`): the merit factor :math:`F(s) = n^2 / (2 E(s))` of a binary
  sequence :math:`s \in \{\pm 1\}^n`, :math:`E(s) = \sum_{k=1}^{n-1} (\sum_i s_i s_{i+k})^2`
  (low-autocorrelation binary sequences), maximised; :math:`f^*` is computed by enumerating the
  :math:`2^{16}` sequences (:math:`16/3`; 32 of the 65536 attain it).

Both are integer parameters in :math:`\{0, 1\}` (one column each, on their grid) and, for
``ackley-mixed``, continuous floats: the points a rule sees are BoTorch's inputs unchanged.

- ``hpo-four`` (:math:`d = 6`): a learning-rate / depth / activation / dropout search,
  :math:`(\log_{10} lr + 3)^2 + 0.3 (n - 3)^2 + c(act) + (p - 0.1)^2`, minimised (negated),
  :math:`f^* = 0` at :math:`lr = 10^{-3}, n = 3`, relu, :math:`p = 0.1`; ``lr`` log-scale in
  :math:`[10^{-5}, 10^{-1}]`, ``n`` an integer in 1..6, ``act`` one of relu (0), tanh (0.5),
  gelu (0.2) (three one-hot columns), ``p`` in :math:`[0, 0.5]`. The one problem here with a
  categorical parameter, so the one where a one-hot model and BoTorch's categorical kernel differ.
"""

from __future__ import annotations

import itertools
import math

import torch
from torch import Tensor

from botorch_unknown_hypers.domains import CategoricalParameter, FloatParameter, IntParameter, MixedDomain
from botorch_unknown_hypers.problems.problem import Problem


OPTIMUM_SEED = 2_718_281
r"""The seed of the global RNG when ``ackley-mixed`` draws its optimum (module docstring)."""


class BoTorchMixedProblem(Problem):
    r"""A BoTorch ``SyntheticTestFunction`` with discrete (binary) and continuous inputs in
    :math:`[0, 1]`, on the mixed domain of its ``discrete_inds``; values negated when the
    function is minimised, so that the problem is maximised."""

    def __init__(self, name: str, function: object, optimal_value: float, minimise: bool, n_init: int, dtype: torch.dtype, device: torch.device | str | None) -> None:
        discrete = set(function.discrete_inds)  # type: ignore[attr-defined]
        params = tuple(
            IntParameter(f"x{j}", 0, 1) if j in discrete else FloatParameter(f"x{j}", 0.0, 1.0)
            for j in range(function.dim)  # type: ignore[attr-defined]
        )
        super().__init__(
            name=name,
            domain=MixedDomain(params, dtype=dtype, device=device),
            optimal_value=optimal_value,
            n_init=n_init,
            metadata={"reference": f"BoTorch botorch.test_functions.synthetic.{type(function).__name__}"},
        )
        self.function = function.to(dtype=dtype, device=self.domain.device)  # type: ignore[attr-defined]
        self.sign = -1.0 if minimise else 1.0

    def evaluate_true(self, X: Tensor) -> Tensor:
        return self.sign * self.function.evaluate_true(X)  # type: ignore[attr-defined]

    def to(self, device: torch.device | str | None = None, dtype: torch.dtype | None = None) -> BoTorchMixedProblem:
        super().to(device=device, dtype=dtype)  # moves the domain, in place
        self.function = self.function.to(device=self.domain.device, dtype=self.domain.bounds.dtype)  # type: ignore[attr-defined]
        return self


def ackley_mixed(dtype: torch.dtype = torch.float64, device: torch.device | str | None = None) -> BoTorchMixedProblem:
    r"""``ackley-mixed`` (module docstring)."""
    from botorch.test_functions.synthetic import AckleyMixed

    with torch.random.fork_rng():
        torch.manual_seed(OPTIMUM_SEED)
        function = AckleyMixed(dim=8, randomize_optimum=True, dtype=torch.float64)
    return BoTorchMixedProblem("ackley-mixed", function, 0.0, True, 10, dtype, device)


def labs(dtype: torch.dtype = torch.float64, device: torch.device | str | None = None) -> BoTorchMixedProblem:
    r"""``labs`` (module docstring); the optimum by enumeration of every sequence."""
    from botorch.test_functions.synthetic import Labs

    function = Labs(dim=16, dtype=torch.float64)
    every = torch.tensor(list(itertools.product((0.0, 1.0), repeat=16)), dtype=torch.float64)
    optimal = float(function.evaluate_true(every).max())
    return BoTorchMixedProblem("labs", function, optimal, False, 10, dtype, device)


ACTIVATION_COST = {"relu": 0.0, "tanh": 0.5, "gelu": 0.2}
r"""``hpo-four``'s cost of each activation (module docstring)."""


class HPOFour(Problem):
    r"""``hpo-four`` (module docstring): ``lr`` (column 0, :math:`\log lr`), ``layers`` (1),
    ``act`` (2-4, one-hot), ``dropout`` (5)."""

    def __init__(self, dtype: torch.dtype = torch.float64, device: torch.device | str | None = None) -> None:
        act = CategoricalParameter("act", tuple(ACTIVATION_COST))
        domain = MixedDomain(
            (FloatParameter("lr", 1e-5, 1e-1, log=True), IntParameter("layers", 1, 6), act, FloatParameter("dropout", 0.0, 0.5)),
            dtype=dtype,
            device=device,
        )
        super().__init__(name="hpo-four", domain=domain, optimal_value=0.0, n_init=10,
                         metadata={"reference": "the four-parameter objective of benchmarks/mixed_optuna.py"})

    def evaluate_true(self, X: Tensor) -> Tensor:
        log10_lr = X[..., 0] / math.log(10.0)
        costs = torch.tensor(list(ACTIVATION_COST.values()), dtype=X.dtype, device=X.device)
        activation = (X[..., 2:5] * costs).sum(-1)  # a one-hot row picks its choice's cost
        return -((log10_lr + 3) ** 2 + 0.3 * (X[..., 1] - 3) ** 2 + activation + (X[..., 5] - 0.1) ** 2)


def hpo_four(dtype: torch.dtype = torch.float64, device: torch.device | str | None = None) -> HPOFour:
    r"""``hpo-four`` (module docstring)."""
    return HPOFour(dtype, device)
