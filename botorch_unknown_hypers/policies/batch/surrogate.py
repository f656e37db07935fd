r"""Batch policies on one GP surrogate: the paper's fixed hyperparameters or a fitted GP.

:class:`SurrogatePolicy` is the shared base of the TS-RSR paper's methods (Ren & Li: ``ts-rsr``
in :mod:`~botorch_unknown_hypers.policies.batch.ts_rsr_rule`, the batch baselines in
:mod:`~botorch_unknown_hypers.policies.batch.batch_baselines` and
:mod:`~botorch_unknown_hypers.policies.batch.batch_sampling`). Its surrogate is one of

- ``"paper"``: the paper's fixed-hyperparameter GP (the authors never train it;
  raw input units; targets standardised every round; noise variance ``1e-6``),
  with the hyperparameters the problem states (:meth:`SurrogatePolicy.bind_task`;
  ``loop.run`` calls it) or given as ``surrogate_spec``;
- ``"fitted"``: BoTorch's default ``SingleTaskGP`` (inputs normalised to the unit
  cube, targets standardised, BoTorch's default priors) fitted every round by
  ``fit_gpytorch_mll``, what practitioners use;
- ``"fully-bayesian"``: BoTorch's ``FullyBayesianSingleTaskGP`` (the same transforms and
  dimension-scaled priors, Matern-5/2), its hyperparameters sampled by NUTS every round
  (:func:`~botorch_unknown_hypers.models.fitted.fit_fully_bayesian_single_task_gp`, the JAX key
  drawn from the policy's generator);
- ``"auto"`` (default): ``"paper"`` when a spec is known, else ``"fitted"``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

import torch
from botorch.models.model import Model
from torch import Tensor

from botorch_unknown_hypers.acquisition.device_search import AUTO_SEARCH
from botorch_unknown_hypers.checks import check_choice
from botorch_unknown_hypers.domains import Domain
from botorch_unknown_hypers.models.fitted import fit_default_single_task_gp, fit_fully_bayesian_single_task_gp
from botorch_unknown_hypers.models.fixed_gp import SurrogateSpec, fixed_hyperparameter_gp
from botorch_unknown_hypers.policies.base import Policy
from botorch_unknown_hypers.policies.json_state import JSONValue
from botorch_unknown_hypers.policies.tasks import TaskInfo

SURROGATES = ("auto", "paper", "fitted", "fully-bayesian")


@dataclass
class BatchHistory:
    r"""Batches proposed so far (``n``) and the JSON-safe diagnostics of each."""

    n: int = 0
    history: list[JSONValue] = field(default_factory=list)

    def check(self) -> None:
        if self.n < 0:
            raise ValueError(f"n must be >= 0, got {self.n}.")
        if not all(isinstance(h, dict) for h in self.history):
            raise ValueError("history must be a list of dicts.")


class SurrogatePolicy(Policy):
    r"""A batch policy on one GP surrogate (paper's fixed hyperparameters or fitted).

    Args:
        domain: Box or pool.
        seed, device, dtype: As :class:`Policy`.
        surrogate: ``"auto"``, ``"paper"``, ``"fitted"`` or ``"fully-bayesian"`` (module docstring).
        surrogate_spec: Fixed hyperparameters (a :class:`SurrogateSpec` or its dict);
            overrides the problem's ``metadata["paper_surrogate"]``.
        num_restarts, raw_samples, search: Multi-start settings and refinement of box
            optimisations (as :class:`~botorch_unknown_hypers.policies.base.Policy`).
    """

    def __init__(
        self,
        domain: Domain,
        seed: int = 0,
        device: torch.device | str | None = None,
        dtype: torch.dtype = torch.float64,
        surrogate: str = "auto",
        surrogate_spec: SurrogateSpec | dict[str, Any] | None = None,
        num_restarts: int = 10,
        raw_samples: int = 512,
        search: str = AUTO_SEARCH,
    ) -> None:
        super().__init__(domain, seed, device, dtype, num_restarts, raw_samples, search)
        check_choice("surrogate", surrogate, SURROGATES)
        if isinstance(surrogate_spec, dict):
            surrogate_spec = SurrogateSpec.from_dict(surrogate_spec)
        elif surrogate_spec is not None and not isinstance(surrogate_spec, SurrogateSpec):
            raise ValueError(f"surrogate_spec must be a SurrogateSpec, a dict or None, got {type(surrogate_spec).__name__}.")
        self.surrogate = surrogate
        self.user_spec = surrogate_spec
        self.problem_spec: SurrogateSpec | None = None
        self.last_label = ""
        self.state = BatchHistory()

    def bind_task(self, task: TaskInfo) -> None:
        r"""Take the benchmark's fixed surrogate hyperparameters (``task.surrogate``), if any."""
        self.problem_spec = task.surrogate

    @property
    def spec(self) -> SurrogateSpec | None:
        return self.user_spec if self.user_spec is not None else self.problem_spec

    def build_model(self, train_X: Tensor, train_Y: Tensor) -> Model:
        r"""The surrogate of this round, on all data (``n x d``, ``n x 1``)."""
        mode = self.surrogate
        if mode == "auto":
            mode = "paper" if self.spec is not None else "fitted"
        if mode == "paper":
            if self.spec is None:
                raise ValueError(
                    "surrogate='paper' needs fixed hyperparameters: pass surrogate_spec=... or run "
                    "on a problem whose task states a surrogate (loop.run binds it)."
                )
            self.last_label = self.spec.label()
            return fixed_hyperparameter_gp(train_X, train_Y, self.spec)
        if mode == "fully-bayesian":
            seed = int(torch.randint(0, 2**31 - 1, (1,), generator=self.generator))
            model = fit_fully_bayesian_single_task_gp(train_X, train_Y, self.domain.bounds, seed=seed)
            lengthscales = cast(Tensor, model.median_lengthscale)  # a property of BoTorch's fully Bayesian GP
            self.last_label = "fully-bayesian:" + ";".join(f"{v:.4g}" for v in lengthscales.tolist())
            return model
        model = fit_default_single_task_gp(train_X, train_Y, self.domain.bounds)
        ls = model.covar_module.lengthscale.detach().flatten().tolist()
        self.last_label = "fitted:" + ";".join(f"{v:.4g}" for v in ls)
        return model


__all__ = ["SURROGATES", "BatchHistory", "SurrogatePolicy"]
