r"""BoTorch test functions of the practical suite that no paper of the package uses.

``benchmarks/practical_suite.py`` compares the rules with BoTorch's default on ten problems the
package was not developed on; seven are registered elsewhere (``hartmann6``, ``griewank8``,
``michalewicz5``, ``berkenkamp``, ``gp-rbf3``, ``agnp``, ``crossed-barrel``). The other three are
BoTorch's own test functions on their canonical boxes, negated (maximised), noiseless, with 10
initial points:

- ``branin``: :math:`g(x) = (x_2 - \tfrac{5.1}{4\pi^2}x_1^2 + \tfrac5\pi x_1 - 6)^2 +
  10(1 - \tfrac1{8\pi})\cos x_1 + 10` on :math:`[-5, 10] \times [0, 15]`, three global minima
  :math:`g^* = 0.397887`;
- ``rosenbrock4``: :math:`g(x) = \sum_{i<4} 100(x_{i+1} - x_i^2)^2 + (x_i - 1)^2` on
  :math:`[-5, 10]^4`, :math:`g^* = 0` at :math:`\mathbf 1` (outputs up to about :math:`10^6`);
- ``ackley5``: :math:`g(x) = -20 e^{-0.2\sqrt{\|x\|^2/5}} - e^{\sum_i \cos(2\pi x_i)/5} + 20 + e`
  on :math:`[-32.768, 32.768]^5`, :math:`g^* = 0` at the origin.

:math:`f^* = -g^*` is the function's own ``optimal_value``.
"""

from __future__ import annotations

from collections.abc import Callable

from botorch.test_functions.synthetic import Ackley, Branin, Rosenbrock, SyntheticTestFunction

from botorch_unknown_hypers.checks import check_choice
from botorch_unknown_hypers.problems.synthetic import BoTorchTestProblem

PRACTICAL_N_INIT = 10
r"""Initial design size of the practical suite."""

PRACTICAL_FUNCTIONS: dict[str, Callable[[], SyntheticTestFunction]] = {
    "branin": lambda: Branin(negate=True),
    "rosenbrock4": lambda: Rosenbrock(dim=4, negate=True),
    "ackley5": lambda: Ackley(dim=5, negate=True),
}
r"""Name -> builder of the negated BoTorch test function (canonical box)."""


def practical_benchmark(name: str, noise_std: float = 0.0) -> BoTorchTestProblem:
    r"""One of :data:`PRACTICAL_FUNCTIONS` as a maximisation problem (10 initial points).

    Args:
        name: ``"branin"``, ``"rosenbrock4"`` or ``"ackley5"``.
        noise_std: Observation noise standard deviation (default 0).
    """
    check_choice("name", name, list(PRACTICAL_FUNCTIONS))
    function = PRACTICAL_FUNCTIONS[name]()
    return BoTorchTestProblem(
        function,
        name=name,
        optimal_value=float(function.optimal_value),
        noise_std=noise_std,
        n_init=PRACTICAL_N_INIT,
        metadata={"reference": "BoTorch test function, canonical box"},
    )


__all__ = ["PRACTICAL_FUNCTIONS", "PRACTICAL_N_INIT", "practical_benchmark"]
