r"""Batch Bayesian optimisation policies on one GP surrogate, and TS-RSR (Ren & Li).

:class:`SurrogatePolicy` is the shared base of the TS-RSR paper's methods
(``ts-rsr`` here, the batch baselines in
:mod:`~botorch_unknown_hypers.policies.batch_baselines`). Its surrogate is one of

- ``"paper"``: the paper's fixed-hyperparameter GP (the authors never train it;
  raw input units; targets standardised every round; noise variance ``1e-6``),
  with the hyperparameters the problem lists in ``metadata["paper_surrogate"]``
  (:meth:`SurrogatePolicy.bind_problem`; ``loop.run`` calls it) or given as
  ``surrogate_spec``;
- ``"fitted"``: BoTorch's default ``SingleTaskGP`` (inputs normalised to the unit
  cube, targets standardised, BoTorch's default priors) fitted every round by
  ``fit_gpytorch_mll``, what practitioners use;
- ``"auto"`` (default): ``"paper"`` when a spec is known, else ``"fitted"``.

:class:`TSRSR` builds each batch with
:func:`~botorch_unknown_hypers.acquisition.ts_rsr.gen_ts_rsr_batch_box` (boxes) or
:func:`~botorch_unknown_hypers.acquisition.ts_rsr.gen_ts_rsr_batch_pool` (pools):
for slot :math:`i`, an independent posterior sample maximum
:math:`\tilde f^*_{t,i}` (redrawn while :math:`\le \max_x \mu_t(x)`), then
:math:`x_{t+1,i} = \arg\min_x (\tilde f^*_{t,i} - \mu_t(x)) / \sigma_t(x \mid x_{t+1,<i})`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch
from botorch.models.model import Model
from torch import Tensor

from botorch_unknown_hypers.acquisition.ts_rsr import TSRSRBatchInfo, gen_ts_rsr_batch
from botorch_unknown_hypers.models.fitted import fit_default_single_task_gp
from botorch_unknown_hypers.models.fixed_gp import SurrogateSpec, fixed_hyperparameter_gp
from botorch_unknown_hypers.policies.base import Policy
from botorch_unknown_hypers.policies.state import JSONValue
from botorch_unknown_hypers.policies.tasks import TaskInfo
from botorch_unknown_hypers.domains import Domain

SURROGATES = ("auto", "paper", "fitted")


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


@dataclass
class TSRSRState:
    r"""TS-RSR's memory: batches proposed so far (``n``) and the diagnostics of each, typed so
    that a loaded history is checked entry by entry (finite :math:`\max_x \mu_t`, whole slots)."""

    n: int = 0
    history: list[TSRSRBatchInfo] = field(default_factory=list)

    def check(self) -> None:
        if self.n < 0:
            raise ValueError(f"n must be >= 0, got {self.n}.")


class SurrogatePolicy(Policy):
    r"""A batch policy on one GP surrogate (paper's fixed hyperparameters or fitted).

    Args:
        domain: Box or pool.
        seed, device, dtype: As :class:`Policy`.
        surrogate: ``"auto"``, ``"paper"`` or ``"fitted"`` (module docstring).
        surrogate_spec: Fixed hyperparameters (a :class:`SurrogateSpec` or its dict);
            overrides the problem's ``metadata["paper_surrogate"]``.
        num_restarts, raw_samples: Multi-start settings of box optimisations.
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
    ) -> None:
        super().__init__(domain, seed, device, dtype, num_restarts, raw_samples)
        if surrogate not in SURROGATES:
            raise ValueError(f"surrogate must be one of {SURROGATES}, got {surrogate!r}.")
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
        model = fit_default_single_task_gp(train_X, train_Y, self.domain.bounds)
        ls = model.covar_module.lengthscale.detach().flatten().tolist()
        self.last_label = "fitted:" + ";".join(f"{v:.4g}" for v in ls)
        return model


class TSRSR(SurrogatePolicy):
    r"""TS-RSR (Ren & Li, Algorithm 1 with the App. C redraw rule).

    Per slot an independent posterior sample maximum :math:`\tilde f^*_{t,i}`
    (redrawn while :math:`\tilde f^*_{t,i} \le \max_x \mu_t(x)`, at most
    ``max_resamples`` times), then

    .. math::

        x_{t+1,i} = \arg\min_x \frac{\tilde f^*_{t,i} - \mu_t(x)}{\sigma_t(x \mid x_{t+1,1..i-1})},

    with :math:`\mu_t` frozen in the batch and :math:`\sigma` conditioned on the
    chosen points with the noise term (eq. 2). No :math:`\beta`, no tuning constant.

    Choices where the paper is silent: the sample maxima, the
    posterior-mean maximum and every argmin are continuous batched L-BFGS-B
    optimisations over the box, every argmin with one start at argmax mu_t
    (the authors' code takes maxima over ~1000 random
    points and refines only slots 2..m with 10 Adam steps); on a pool all are exact.
    ``f_star_points=N`` switches the sample maxima to the authors' version (max of a
    joint sample over N uniform random points plus the posterior-mean maximiser), an
    ablation (``--option f_star_points=1000``); the argmins stay continuous.

    Attributes:
        last_info: :class:`~botorch_unknown_hypers.acquisition.ts_rsr.TSRSRBatchInfo` of
            the last batch (:math:`\tilde f^*`, redraws, :math:`\Psi`, :math:`\sigma`
            against conditional :math:`\sigma`); ``state.history`` holds that of every batch.
    """

    name = "ts-rsr"

    def __init__(self, domain: Domain, seed: int = 0, device: torch.device | str | None = None,
                 dtype: torch.dtype = torch.float64, max_resamples: int = 10,
                 f_star_points: int | None = None, **kwargs: Any) -> None:
        if not isinstance(max_resamples, int) or isinstance(max_resamples, bool) or max_resamples < 0:
            raise ValueError(f"max_resamples must be a non-negative integer, got {max_resamples!r}.")
        if f_star_points is not None and (
            isinstance(f_star_points, bool) or not isinstance(f_star_points, int) or f_star_points < 1
        ):
            raise ValueError(f"f_star_points must be None or a positive integer, got {f_star_points!r}.")
        super().__init__(domain, seed=seed, device=device, dtype=dtype, **kwargs)
        self.max_resamples = max_resamples
        self.f_star_points = f_star_points
        self.last_info: TSRSRBatchInfo | None = None
        self.state = TSRSRState()

    def _suggest(self, train_X: Tensor, train_Y: Tensor, q: int) -> Tensor:
        model = self.build_model(train_X, train_Y)
        X, info = gen_ts_rsr_batch(
            model,
            self.domain,
            train_X,
            q,
            self.generator,
            num_restarts=self.num_restarts,
            raw_samples=self.raw_samples,
            max_resamples=self.max_resamples,
            f_star_points=self.f_star_points,
        )
        self.last_info = info
        self.state.history.append(info)
        self.state.n += 1
        self.n_candidates = 1
        self.selected = [self.last_label] * q
        return X
