r"""TS-RSR (Ren & Li): batch Bayesian optimisation by the regret-to-sigma ratio.

:class:`TSRSR` is a :class:`~botorch_unknown_hypers.policies.batch.surrogate.SurrogatePolicy`, the
shared base of the TS-RSR paper's methods (``ts-rsr`` here, the batch baselines in
:mod:`~botorch_unknown_hypers.policies.batch.batch_baselines`), on the paper's fixed surrogate or a
fitted one.

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
from torch import Tensor

from botorch_unknown_hypers.acquisition.ts_rsr import TSRSRBatchInfo, gen_ts_rsr_batch
from botorch_unknown_hypers.policies.batch.surrogate import SurrogatePolicy
from botorch_unknown_hypers.domains import Domain


@dataclass
class TSRSRState:
    r"""TS-RSR's memory: batches proposed so far (``n``) and the diagnostics of each, typed so
    that a loaded history is checked entry by entry (finite :math:`\max_x \mu_t`, whole slots)."""

    n: int = 0
    history: list[TSRSRBatchInfo] = field(default_factory=list)

    def check(self) -> None:
        if self.n < 0:
            raise ValueError(f"n must be >= 0, got {self.n}.")


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
            search=self.search,
        )
        self.last_info = info
        self.state.history.append(info)
        self.state.n += 1
        self.n_candidates = 1
        self.selected = [self.last_label] * q
        return X
