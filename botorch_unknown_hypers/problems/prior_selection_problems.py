r"""The synthetic tasks of the prior-selection paper: functions drawn from one of K GP priors.

Sandberg & Haghir Chehreghani [Sandberg2025]_, Sec. 6.1. Each task is a set
:math:`\mathcal{P}` of K GP priors on the same 500 equidistant arms of
:math:`[0, 20]`; a run draws the true prior :math:`p^*` uniformly from
:math:`\mathcal{P}` and then one function

.. math::

    f \sim \mathcal{N}(m_{p^*}, C_{p^*}) \quad \text{over the arms},

observed with Gaussian noise of standard deviation :math:`\sigma = 0.25`. The
rules of :mod:`~botorch_unknown_hypers.policies.prior_selection.prior_selection_policy` must find the
best arm without knowing :math:`p^*`.

- ``gp-kernel``: six zero-mean kernels (SE, Matérn-5/2, Matérn-3/2, periodic,
  linear, rational quadratic), :func:`~botorch_unknown_hypers.problems.prior_tasks.kernel_task_priors`;
- ``gp-lengthscale``: zero-mean SE with :math:`\ell \in \{4, 2, 1, 1/2\}`,
  :func:`~botorch_unknown_hypers.problems.prior_tasks.lengthscale_task_priors`;
- ``gp-hill``: an SE kernel with five "hill" means (reconstructed, see
  :func:`~botorch_unknown_hypers.problems.prior_tasks.hill_means`),
  :func:`~botorch_unknown_hypers.problems.prior_tasks.hill_task_priors`.

Per seed (:meth:`PriorSelectionProblem.instance`), :math:`p^*` and :math:`f`
come from a generator seeded by the seed (and the task), on the CPU in
float64, so every method and every device sees the same function (common
random numbers; the noise stream is the loop's, also seeded by the seed). The
function is drawn with the prior factor of
:class:`~botorch_unknown_hypers.models.tabular.TabularPriorGP` (the symmetric
square root with the numerical-rank cutoff: the SE prior with :math:`\ell = 4`
and the rank-one linear prior are singular, and a jittered Cholesky would
inflate them; the symmetric root, unlike an eigen-factor, is the same on every
CPU kernel path up to rounding). The paper starts the rules from no data, so ``n_init = 0``. The kernels,
tasks and reconstructions are described in ``docs/prior-selection.md``.

References:

.. [Sandberg2025]
    J. Sandberg, M. Haghir Chehreghani. Efficient Prior Selection in Gaussian
    Process Bandits with Thompson Sampling. arXiv:2502.01226 v1, 2025.
"""

from __future__ import annotations

import torch
from torch import Tensor

from botorch_unknown_hypers.checks import check_choice, check_nonnegative
from botorch_unknown_hypers.models.tabular import TabularPriorGP
from botorch_unknown_hypers.problems.prior_tasks import PAPER_NOISE, PAPER_NUM_ARMS, hill_task_priors, kernel_task_priors, lengthscale_task_priors
from botorch_unknown_hypers.models.tabular_priors import TabularPriors
from botorch_unknown_hypers.policies.tasks import TaskInfo
from botorch_unknown_hypers.problems.problem import Problem
from botorch_unknown_hypers.domains import FiniteDomain

PRIOR_SELECTION_TASKS = {
    "gp-kernel": kernel_task_priors,
    "gp-lengthscale": lengthscale_task_priors,
    "gp-hill": hill_task_priors,
}
r"""Task name -> builder of its :class:`~botorch_unknown_hypers.models.tabular_priors.TabularPriors`."""

_SEED_OFFSETS = {"gp-kernel": 30_011, "gp-lengthscale": 40_009, "gp-hill": 50_021}
r"""Per-task offset of the function generator's seed (independent draws across tasks)."""


def task_priors(
    name: str,
    noise: float = PAPER_NOISE,
    num_arms: int = PAPER_NUM_ARMS,
    dtype: torch.dtype = torch.float64,
    device: torch.device | str | None = None,
) -> TabularPriors:
    r"""The prior set :math:`\mathcal{P}` of a task by name.

    Args:
        name: ``"gp-kernel"``, ``"gp-lengthscale"`` or ``"gp-hill"``.
        noise: The known noise variance :math:`\sigma^2` (the paper's :math:`0.25^2`).
        num_arms: Number of equidistant arms of :math:`[0, 20]` (500 in the paper).
        dtype, device: Of the priors' tensors.

    Example:
        >>> priors = task_priors("gp-lengthscale")
        >>> priors.labels(), priors.num_arms
        (['se_l4', 'se_l2', 'se_l1', 'se_l0.5'], 500)
    """
    check_choice("task", name, list(PRIOR_SELECTION_TASKS))
    if not (isinstance(num_arms, int) and num_arms >= 2):
        raise ValueError(f"num_arms must be an integer >= 2, got {num_arms!r}.")
    return PRIOR_SELECTION_TASKS[name](noise=noise, num_arms=num_arms, dtype=dtype, device=device)


class PriorSelectionProblem(Problem):
    r"""One of the paper's synthetic tasks: per seed, :math:`p^*` uniform on the priors and
    :math:`f \sim GP(m_{p^*}, C_{p^*})` on the arms.

    Args:
        task: ``"gp-kernel"``, ``"gp-lengthscale"`` or ``"gp-hill"``.
        seed: The run's seed (``instance(seed)`` builds the problem of another seed).
        noise_std: Observation noise standard deviation :math:`\sigma` (0.25 in the paper).
            The task's priors carry :math:`\sigma^2` as their known noise (the paper's
            :math:`0.25^2` when ``noise_std`` is 0).
        num_arms: Number of equidistant arms of :math:`[0, 20]`.
        dtype: Of the domain and the function values (the draw itself is float64).

    Attributes:
        priors: The task's :class:`~botorch_unknown_hypers.models.tabular_priors.TabularPriors`
            (read by the rules' ``bind_problem``).
        true_prior: Index of :math:`p^*` in ``priors`` (also ``metadata["true_prior"]``).

    Example:
        >>> problem = PriorSelectionProblem("gp-hill").instance(2)
        >>> problem.metadata["priors"][problem.true_prior]
        'tall_hill4'
    """

    def __init__(
        self,
        task: str,
        seed: int = 0,
        noise_std: float = 0.25,
        num_arms: int = PAPER_NUM_ARMS,
        dtype: torch.dtype = torch.float64,
    ) -> None:
        check_nonnegative("noise_std", noise_std)
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise ValueError(f"seed must be an int, got {seed!r}.")
        noise = noise_std**2 if noise_std > 0 else PAPER_NOISE
        priors = task_priors(task, noise=noise, num_arms=num_arms, dtype=torch.float64)
        values, true_prior = self._draw(task, priors, seed)
        super().__init__(
            name=task,
            domain=FiniteDomain(priors.arms.clone()),
            optimal_value=float(values.max()),
            noise_std=float(noise_std),
            n_init=0,  # the paper's rules start from no data
            metadata={
                "seed": seed,
                "true_prior": true_prior,
                "priors": priors.labels(),
                "reference": "Sandberg & Haghir Chehreghani (arXiv:2502.01226 v1), Sec. 6.1",
            },
        )
        self.task = task
        self.seed = seed
        self.priors = priors
        self._values = values
        self._num_arms = num_arms
        if dtype != torch.float64:
            self.to(dtype=dtype)

    @staticmethod
    def _draw(task: str, priors: TabularPriors, seed: int) -> tuple[Tensor, int]:
        r"""``(f over the arms, p*)`` from a generator seeded by ``seed`` and the task."""
        gen = torch.Generator().manual_seed(_SEED_OFFSETS[task] + seed)
        true_prior = int(torch.randint(len(priors), (1,), generator=gen))
        values = TabularPriorGP(priors.subset([true_prior])).sample(1, generator=gen).reshape(-1)
        return values, true_prior

    @property
    def true_prior(self) -> int:
        r"""Index of the true prior :math:`p^*` in :attr:`priors`."""
        return self.metadata["true_prior"]

    def task_info(self) -> TaskInfo:
        r"""The task's priors and true prior :math:`p^*` (the rules select among them; oracles use :math:`p^*`)."""
        return TaskInfo(name=self.task, priors=self.priors, true_prior=self.true_prior)

    def instance(self, seed: int) -> PriorSelectionProblem:
        return PriorSelectionProblem(
            self.task,
            seed=seed,
            noise_std=self.noise_std,
            num_arms=self._num_arms,
            dtype=self.domain.points.dtype,
        ).to(device=self.domain.points.device)

    def to(self, device: torch.device | str | None = None, dtype: torch.dtype | None = None) -> PriorSelectionProblem:
        super().to(device=device, dtype=dtype)
        self._values = self._values.to(device=device, dtype=dtype)
        self.priors = self.priors.to(device=device, dtype=dtype)
        return self

    def evaluate_true(self, X: Tensor) -> Tensor:
        idx = self.domain.index_of(X.reshape(-1, X.shape[-1]))
        if (idx < 0).any():
            raise ValueError(f"X: every point must be one of the {self._num_arms} arms of problem {self.name!r}.")
        return self._values[idx].reshape(X.shape[:-1])
