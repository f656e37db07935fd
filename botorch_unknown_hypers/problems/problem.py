r"""Black-box problems: a domain, a noiseless objective and its optimum.

Every problem in this package is a *maximisation* problem. A problem knows

- its domain, either a box :math:`[l, u] \subset \mathbb{R}^d`
  (:class:`~botorch_unknown_hypers.domains.BoxDomain`) or a finite pool of points
  (:class:`~botorch_unknown_hypers.domains.FiniteDomain`);
- its noiseless objective :math:`f`, evaluated in batch;
- its optimum value :math:`f^* = \max_x f(x)`, so that the regret
  :math:`r_t = f^* - f(x_t)` is always computed on the noiseless :math:`f`;
- its observation noise standard deviation :math:`\sigma_N`
  (:math:`y = f(x) + \varepsilon`, :math:`\varepsilon \sim \mathcal{N}(0, \sigma_N^2)`);
- the size of its initial design.

The setting is the one all five papers share (see the length-scale balancing
paper, Ziomek et al. 2024, Sec. 2).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field

import torch
from torch import Tensor

from botorch_unknown_hypers.domains import Domain, FiniteDomain
from botorch_unknown_hypers.models.fixed_gp import SurrogateSpec
from botorch_unknown_hypers.policies.tasks import TaskInfo


@dataclass
class Problem(ABC):
    r"""A maximisation black box with a known optimum.

    Subclasses implement :meth:`evaluate_true`, the noiseless objective.

    Attributes:
        name: Registered name (``buh list``).
        domain: The search space.
        optimal_value: :math:`f^*`, the maximum of the noiseless objective.
        noise_std: Observation noise standard deviation :math:`\sigma_N`.
        n_init: Size of the initial design the papers use.
    """

    name: str
    domain: Domain
    optimal_value: float
    noise_std: float = 0.0
    n_init: int = 10
    metadata: dict = field(default_factory=dict)

    @property
    def dim(self) -> int:
        return self.domain.dim

    @property
    def is_finite(self) -> bool:
        return isinstance(self.domain, FiniteDomain)

    @abstractmethod
    def evaluate_true(self, X: Tensor) -> Tensor:
        r"""The noiseless objective.

        Args:
            X: A ``batch_shape x d``-dim tensor of points in the domain.

        Returns:
            A ``batch_shape``-dim tensor of values :math:`f(x)`.
        """

    def evaluate(self, X: Tensor, generator: torch.Generator | None = None) -> tuple[Tensor, Tensor]:
        r"""Noisy observation and noiseless value at ``X``.

        Args:
            X: A ``batch_shape x d``-dim tensor.
            generator: Random generator for the noise (on ``X``'s device).

        Returns:
            ``(y, f)``, each ``batch_shape``-dim: ``y = f + noise_std * eps``.
        """
        if X.shape[-1] != self.dim:
            raise ValueError(f"X must have {self.dim} columns, got {X.shape[-1]}.")
        if not self.domain.contains(X).all():
            raise ValueError(f"X has points outside the domain of problem {self.name!r}.")
        f = self.evaluate_true(X)
        if self.noise_std > 0:
            eps = torch.randn(f.shape, generator=generator, device=f.device, dtype=f.dtype)
            return f + self.noise_std * eps, f
        return f.clone(), f

    def task_info(self) -> TaskInfo:
        r"""What the problem tells a rule about itself: its name and, for the TS-RSR benchmarks,
        the paper's fixed surrogate (``metadata["paper_surrogate"]``). Subclasses add more."""
        spec = self.metadata.get("paper_surrogate")
        return TaskInfo(name=self.name, surrogate=None if spec is None else SurrogateSpec.from_dict(spec))

    def instance(self, seed: int) -> Problem:
        r"""The black box of run ``seed``: ``self`` unless the problem draws a function per seed
        (e.g. functions sampled from a GP prior, the same for every method given the seed)."""
        return self

    def to(self, device: torch.device | str | None = None, dtype: torch.dtype | None = None) -> Problem:
        r"""Move the domain (and any tensors a subclass holds) to ``device`` / ``dtype``."""
        self.domain = self.domain.to(device=device, dtype=dtype)
        return self
