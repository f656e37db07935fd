r"""Prior selection in finite-arm GP bandits: PE-GP-TS, HP-GP-TS and their baselines.

Sandberg & Haghir Chehreghani [Sandberg2025]_ look for the best of N arms
:math:`\mathcal{X}` when :math:`f` was drawn from one of K candidate GP priors
:math:`p \in \mathcal{P}` (mean :math:`m_p`, covariance :math:`C_p` over the
arms), observed with known Gaussian noise :math:`\sigma^2`. Instead of fitting
hyperparameters, the rules below *select a prior* among the K, with Thompson
sampling at both levels. Every rule keeps **one**
:class:`~botorch_unknown_hypers.models.tabular.TabularPriorGP` holding all K
posteriors, conditioned in ``observe`` on **every** observation, whichever
prior was used (all priors see all data): :math:`\mu_{t,p}, \sigma_{t,p}`, used
at round :math:`t`, condition on the :math:`t - 1` earlier observations.

**PE-GP-TS** (Alg. 1, prior elimination). An active set :math:`\mathcal{P}_{t-1}`
(:math:`\mathcal{P}_0 = \mathcal{P}`) and per prior the rounds :math:`S_p` it was
played. At round :math:`t`:

- line 3: one independent joint posterior sample :math:`\tilde f_{t,p}` over all
  arms per active prior, all in **one** batched pathwise call;
- line 4: :math:`(x_t, p_t) = \arg\max_{(x, p) \in \mathcal{X} \times \mathcal{P}_{t-1}} \tilde f_{t,p}(x)`;
- line 5: :math:`S_{p_t} \leftarrow S_{p_t} \cup \{t\}`;
- lines 7-8: :math:`\eta_t = y_t - \mu_{t,p_t}(x_t)` and the width
  :math:`\sqrt{\beta_t}\,\sigma_{t,p_t}(x_t)`, both taken at selection time
  (before :math:`y_t`; latent :math:`\sigma`, no noise term) and stored;
- lines 9-10: only :math:`p_t` is tested, and eliminated iff (strict)

  .. math::

      \Big|\sum_{i \in S_{p_t}} \eta_i\Big| >
      \sqrt{\xi_t |S_{p_t}|} + \sum_{i \in S_{p_t}} \sqrt{\beta_i}\,\sigma_{i,p_t}(x_i),

  with the stored widths and :math:`\xi` at the current :math:`t`. The last
  active prior is never eliminated; the round is logged instead.

Constants (Theorem 4.1), :math:`\delta = 0.05` by default:

.. math::

    \beta_t = 2 \log\frac{2 |\mathcal{X}| |\mathcal{P}| \pi^2 t^2}{3 \delta}, \qquad
    \xi_t = 2 \sigma^2 \log\frac{|\mathcal{P}| \pi^2 t^2}{3 \delta}.

Note that the paper's :math:`\beta_t` is a *square*: it multiplies
:math:`\sigma` as :math:`\sqrt{\beta_t}` (:func:`pe_beta` returns
:math:`\beta_t`), unlike the ``beta`` multipliers elsewhere in this package.
:math:`\xi_t` is HE-GP-UCB's :func:`~botorch_unknown_hypers.policies.elimination.he_xi`
with :math:`|U| \to |\mathcal{P}|`; the test itself is
:func:`~botorch_unknown_hypers.policies.elimination.elimination_statistics` and
the last-survivor guard :class:`~botorch_unknown_hypers.policies.elimination.EliminationMixin`.
:math:`|\mathcal{X}|` and :math:`|\mathcal{P}|` are the original sizes: the
active set shrinks, the constants do not.

**PE-GP-UCB** (Ziomek et al. 2024b, as the paper restates it). Lines 3-4 become
the doubly optimistic :math:`\arg\max_{(x, p) \in \mathcal{X} \times \mathcal{P}_{t-1}}
\mu_{t,p}(x) + \sqrt{\beta_t}\,\sigma_{t,p}(x)`; the rest is Alg. 1. The paper
does not restate PE-GP-UCB's constants ("elimination methods use
:math:`\delta = 0.05`"): we use the Theorem 4.1 :math:`\beta_t, \xi_t` above, so
the two PE rules differ in lines 3-4 only.

**HP-GP-TS** (Alg. 2, hyperprior). A distribution :math:`P_{t-1}` over the priors
(:math:`P_0` the hyperprior, uniform by default). At round :math:`t`:

- line 2: :math:`p_t \sim P_{t-1}` (categorical draw, the policy's generator);
- lines 3-4: **one** posterior sample, from :math:`p_t` only; :math:`x_t` is its argmax;
- line 6: for **all** :math:`p`, with the one-step predictive likelihood taken
  before conditioning,

  .. math::

      \log P_t(p) = \log P_{t-1}(p)
          + \log \mathcal{N}\big(y_t; \mu_{t,p}(x_t), \sigma_{t,p}^2(x_t) + \sigma^2\big)
          - \log \textstyle\sum_{p'} (\cdot),

  normalised with ``logsumexp``. By the chain rule
  :math:`P_t(p) \propto P_0(p)\, \mathcal{N}(y_{1:t}; m_p[S], C_p[S, S] + \sigma^2 I)`,
  the exact Bayes posterior over :math:`\mathcal{P}`; no prior is ever zeroed.

**MAP-GP-TS**: as HP-GP-TS with :math:`p_t = \arg\max_p P_{t-1}(p)` (type-II
maximum likelihood over the prior set under a uniform hyperprior).

**Oracle GP-TS / GP-UCB**: PE-GP-TS / PE-GP-UCB with :math:`\mathcal{P} = \{p^*\}`
(so :math:`|\mathcal{P}| = 1` in :math:`\beta_t, \xi_t`). They learn :math:`p^*`
from the problem through :meth:`TabularPriorPolicy.bind_problem`, which
:func:`~botorch_unknown_hypers.loop.run` calls for every seed.

Our conventions where the paper is silent:

- :math:`t` counts the rule's rounds. Data told without a selection (an initial
  design when ``n_init > 0``; the paper has none) condition every prior and the
  hyperposterior but join no :math:`S_p`.
- Exact ties in an argmax are broken uniformly at random with the policy's
  generator, not by index: the UCB at :math:`t = 1`, where every stationary
  prior has :math:`\sigma = 1` at every arm, and the uniform hyperposterior of
  MAP-GP-TS at :math:`t = 1` (unspecified in the paper).
- Alg. 1 line 3 draws, in one call, the samples of the consecutive block of
  priors from the first to the last active one and discards the eliminated
  ones: the model slices such a block as a view, while gathering a
  non-consecutive active set copies the priors' ``N x N`` factors (3-4x
  slower). The active priors' samples are the same independent joint draws.
- The priors' arms must be the domain's pool points, in order; one arm per round.
  An observation at an arm other than the suggested one is data (every prior
  conditions on it), not a play.

Per-round ``diagnostics`` (JSON): ``prior`` (the chosen prior's index in the
task's list), ``true_prior`` (when a problem is bound); PE rules: ``active``
flags, ``n_active``, ``eta``, ``sigma``, ``sqrt_beta``, ``xi``, ``statistic``,
``threshold`` (:math:`V_t`), ``eliminated`` (this round's eliminated prior or
``null``), ``kept_last``; HP / MAP: ``hyperposterior``, its ``entropy``
(natural log) and the ``log_evidence`` per prior.

References:

.. [Sandberg2025]
    J. Sandberg, M. Haghir Chehreghani. Efficient Prior Selection in Gaussian
    Process Bandits with Thompson Sampling. arXiv:2502.01226 v1, 2025
    (Alg. 1 PE-GP-TS, Alg. 2 HP-GP-TS, Theorem 4.1).

.. [Ziomek2024b]
    J. Ziomek, M. Adachi, M. A. Osborne. Time-Varying Gaussian Process Bandits
    with Unknown Prior. arXiv:2402.01632, 2024 (PE-GP-UCB).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import torch
from torch import Tensor

from botorch_unknown_hypers.models.tabular import TabularPriorGP, TabularPriors
from botorch_unknown_hypers.policies.base import Policy
from botorch_unknown_hypers.policies.elimination import (
    EliminationMixin,
    elimination_statistics,
    he_xi,
)
from botorch_unknown_hypers.problems.base import Domain, FiniteDomain, Problem
from botorch_unknown_hypers.problems.prior_selection import (
    PRIOR_SELECTION_TASKS,
    task_priors,
)


def pe_beta(t: int, num_arms: int, num_priors: int, delta: float) -> float:
    r"""Theorem 4.1's :math:`\beta_t = 2 \log(2 |\mathcal{X}| |\mathcal{P}| \pi^2 t^2 / (3 \delta))`.

    This is the *square* of the multiplier of :math:`\sigma`: the width is
    :math:`\sqrt{\beta_t}\,\sigma_{t,p}(x)`. It equals
    ``bayesian_beta_finite(t, num_arms * num_priors, delta / 4) ** 2``: Srinivas'
    finite-domain width over the :math:`|\mathcal{X}| |\mathcal{P}|` (arm, prior)
    pairs, where Lemma 4 splits :math:`\delta` between the function's and the
    samples' concentration events and Theorem 4.1 halves it again for the noise
    event of :math:`\xi_t`.

    Example:
        >>> round(pe_beta(1, 500, 6, 0.05), 2)  # the kernel task at t = 1
        25.77
    """
    if t < 1 or num_arms < 1 or num_priors < 1:
        raise ValueError(f"t, num_arms and num_priors must be >= 1, got {t}, {num_arms}, {num_priors}.")
    if not 0 < delta < 1:
        raise ValueError(f"delta must lie in (0, 1), got {delta}.")
    return 2.0 * math.log(2.0 * num_arms * num_priors * math.pi**2 * t**2 / (3.0 * delta))


def random_argmax(values: Tensor, generator: torch.Generator) -> int:
    r"""Flat index of the maximum of ``values``, exact ties broken uniformly at random.

    Draws from ``generator`` (a CPU generator) only when there is a tie.
    """
    flat = values.reshape(-1)
    ties = (flat == flat.max()).nonzero().flatten()
    if ties.numel() == 1:
        return int(ties[0])
    pick = int(torch.randint(ties.numel(), (1,), generator=generator))
    return int(ties[pick])


def _prior_fingerprint(priors: TabularPriors) -> dict[str, Any]:
    r"""Identifies a prior set in a saved state without storing its ``K x N x N`` covariances."""
    return {
        "num_priors": len(priors),
        "num_arms": priors.num_arms,
        "noise": priors.noise,
        "names": priors.labels(),
        "checksum": [float(priors.means.double().sum()), float(priors.covariances.double().abs().sum())],
    }


class TabularPriorPolicy(Policy):
    r"""Shared machinery of the prior-selection rules: one TabularPriorGP over all priors.

    Subclasses implement ``_suggest`` and the hooks ``_start`` (fresh rule state for
    K priors), ``_play`` (bookkeeping of a played round, before conditioning),
    ``_condition`` (conditioning on one observation) and the rule state's
    ``_rule_state`` / ``_check_rule_state`` / ``_load_rule_state``.

    Args:
        domain: The arms, a :class:`~botorch_unknown_hypers.problems.base.FiniteDomain`
            whose points are the priors' arms (in order).
        seed, device, dtype: As :class:`~botorch_unknown_hypers.policies.base.Policy`.
        priors: A :class:`~botorch_unknown_hypers.models.tabular.TabularPriors`, or a
            task name (``"gp-kernel"``, ``"gp-lengthscale"``, ``"gp-hill"``); ``None``:
            taken from the problem in :meth:`bind_problem` (``loop.run`` calls it),
            required before the first ``suggest`` otherwise.
        noise_std: The known noise standard deviation :math:`\sigma`; ``None`` (default):
            the priors' own noise.

    Attributes:
        model: The :class:`~botorch_unknown_hypers.models.tabular.TabularPriorGP`
            (``None`` until the priors are known).
        prior_ids: Index, in the task's prior list, of each of the model's priors
            (``[0, ..., K - 1]``; ``[p*]`` for an oracle).
        true_prior: :math:`p^*` of a bound problem (diagnostics), else ``None``.
        round: Number of played rounds :math:`t`.
    """

    name = "tabular-prior"
    needs_true_prior = False

    def __init__(
        self,
        domain: Domain,
        seed: int = 0,
        device: torch.device | str | None = None,
        dtype: torch.dtype = torch.float64,
        priors: TabularPriors | str | None = None,
        noise_std: float | None = None,
    ) -> None:
        if not isinstance(domain, FiniteDomain):
            raise ValueError(
                f"domain: {self.name} needs a finite arm set (FiniteDomain) matching the priors' arms, "
                f"got {type(domain).__name__}."
            )
        super().__init__(domain, seed=seed, device=device, dtype=dtype)
        if noise_std is not None and not (math.isfinite(float(noise_std)) and float(noise_std) > 0):
            raise ValueError(f"noise_std must be None or finite and > 0, got {noise_std}.")
        self.noise_std_option = None if noise_std is None else float(noise_std)
        self.priors: TabularPriors | None = None
        self.prior_source: str | None = None
        self.noise_std: float | None = None
        self.prior_ids: list[int] = []
        self.model: TabularPriorGP | None = None
        self.true_prior: int | None = None
        self.round = 0
        self.pending: dict[str, Any] | None = None
        self.diagnostics: dict[str, Any] = {}
        if priors is not None:
            self._set_priors(*self._prepare_priors(priors))
            if not self.needs_true_prior:
                self._ensure_model()

    # ------------------------------------------------------------------ priors
    def _prepare_priors(
        self, priors: TabularPriors | str, source: str | None = None
    ) -> tuple[TabularPriors, str | None]:
        r"""Validated priors on the policy's device / dtype, with the ``noise_std`` override."""
        if isinstance(priors, str):
            if priors not in PRIOR_SELECTION_TASKS:
                raise ValueError(
                    f"priors must be a TabularPriors or one of {', '.join(PRIOR_SELECTION_TASKS)}; got {priors!r}."
                )
            source = priors
            priors = task_priors(priors, num_arms=self.domain.points.shape[0])
        elif not isinstance(priors, TabularPriors):
            raise ValueError(f"priors must be a TabularPriors or a task name, got {type(priors).__name__}.")
        if self.noise_std_option is not None and priors.noise != self.noise_std_option**2:
            priors = dataclasses.replace(priors, noise=self.noise_std_option**2)
        priors = priors.to(device=self.device, dtype=self.dtype)
        points = self.domain.points
        scale = max(1.0, float(points.abs().max()))
        if priors.arms.shape != points.shape or not torch.allclose(priors.arms, points, rtol=0.0, atol=1e-6 * scale):
            raise ValueError(
                f"priors: their {priors.num_arms} arms must be the domain's {points.shape[0]} points, in order."
            )
        return priors, source

    def _set_priors(self, priors: TabularPriors, source: str | None) -> None:
        self.priors, self.prior_source = priors, source
        self.noise_std = math.sqrt(priors.noise)

    def _require_priors(self) -> TabularPriors:
        if self.priors is None:
            raise ValueError(
                f"priors: {self.name} needs the candidate priors: pass priors=<TabularPriors or one of "
                f"{', '.join(PRIOR_SELECTION_TASKS)}>, or run it with loop.run on a prior-selection "
                "problem (which calls bind_problem)."
            )
        return self.priors

    def _model_prior_ids(self) -> list[int]:
        r"""Which of the task's priors the model holds: all of them (oracles: :math:`p^*`)."""
        return list(range(len(self._require_priors())))

    def _ensure_model(self) -> TabularPriorGP:
        if self.model is None:
            ids = self._model_prior_ids()
            priors = self._require_priors()
            model = TabularPriorGP(priors if ids == list(range(len(priors))) else priors.subset(ids))
            self._start(len(ids))  # may reject an option (a hyperprior of the wrong length)
            self.prior_ids, self.model = ids, model
        return self.model

    def bind_problem(self, problem: Problem) -> None:
        r"""Learn from the run's problem what the rule may use: the task's priors (when none
        were given) and, for the oracles and the diagnostics, the true prior
        ``problem.metadata["true_prior"]``. :func:`~botorch_unknown_hypers.loop.run` calls
        this after ``problem.instance(seed)``."""
        problem_priors = getattr(problem, "priors", None)
        metadata = getattr(problem, "metadata", None) or {}
        true_prior = metadata.get("true_prior")
        if self.needs_true_prior and true_prior is None:
            raise ValueError(
                f"bind_problem: {self.name} needs a problem with metadata['true_prior'] "
                f"(a prior-selection task), got {getattr(problem, 'name', problem)!r}."
            )
        priors, source = self.priors, self.prior_source
        if priors is None and isinstance(problem_priors, TabularPriors):
            priors, source = self._prepare_priors(problem_priors, source=getattr(problem, "task", None))
        if true_prior is not None:
            true_prior = int(true_prior)
            if priors is not None and not 0 <= true_prior < len(priors):
                raise ValueError(f"bind_problem: true prior {true_prior} is not one of the {len(priors)} priors.")
            if self.needs_true_prior and self.model is not None and self.prior_ids != [true_prior]:
                raise ValueError(f"bind_problem: {self.name} already runs with true prior {self.prior_ids[0]}.")
        previous = (self.priors, self.prior_source, self.noise_std, self.true_prior)
        if priors is not None:
            self._set_priors(priors, source)
        self.true_prior = true_prior
        if self.priors is not None:
            try:
                self._ensure_model()
            except ValueError:  # e.g. a hyperprior of the wrong length: leave the policy as it was
                self.priors, self.prior_source, self.noise_std, self.true_prior = previous
                raise

    # -------------------------------------------------------------------- data
    def _sample_generator(self) -> torch.Generator:
        r"""The policy's generator on the CPU; on CUDA a device generator seeded from it."""
        if self.device.type == "cpu":
            return self.generator
        return torch.Generator(device=self.device).manual_seed(self.next_seed())

    def _sync(self, train_X: Tensor, train_Y: Tensor) -> TabularPriorGP:
        r"""Make the model condition on exactly ``train_X, train_Y``.

        Normally it already does (``observe`` conditions on every observation);
        rows it has not seen (an initial design) are added, and data that are not an
        extension of its own rebuild it from scratch.
        """
        model = self._ensure_model()
        targets = train_Y.reshape(-1)
        seen = model.num_observations
        state = model.state
        # O(n d) check that the model's data are the first rows (index_of would cost O(n N)).
        if not (
            seen <= targets.shape[0]
            and torch.allclose(train_X[:seen], self.domain.points[state.train_indices], rtol=0.0, atol=1e-9)
            and torch.equal(targets[:seen], state.train_Y)
        ):
            self.model = model = TabularPriorGP(model.priors)
            self._restart()
            seen = 0
        # One rank-one update per new row: each depends on the previous one.
        for index, y in zip(self.domain.index_of(train_X[seen:]).tolist(), targets[seen:]):
            self._condition(index, y)
        return model

    def _observe(self, X: Tensor, Y: Tensor) -> None:
        self._ensure_model()
        pending, self.pending = self.pending, None
        for index, y in zip(self.domain.index_of(X).tolist(), Y.reshape(-1)):
            if pending is not None and index == pending["arm"]:
                self.round += 1
                self._play(pending, float(y))
            # A told arm other than the suggested one is data, not a play.
            pending = None
            self._condition(index, y)
        self._after_observe()

    def _condition(self, index: int, y: Tensor) -> None:
        r"""Condition every prior on one observation (rules may update their state first)."""
        self.model.condition(index, y)

    # ------------------------------------------------------------ rule hooks
    def _start(self, num_priors: int) -> None:
        r"""Fresh rule state for the model's ``num_priors`` priors."""

    def _restart(self) -> None:
        r"""The model was rebuilt from scratch: reset what depends on its data."""

    def _play(self, pending: dict[str, Any], y: float) -> None:
        r"""Bookkeeping of a played round (``self.round`` is its ``t``), before conditioning."""

    def _after_observe(self) -> None:
        r"""Update the diagnostics once the observation is conditioned on."""

    def _rule_state(self) -> dict[str, Any]:
        return {}

    def _check_rule_state(self, extra: dict[str, Any], num_priors: int) -> None:
        pass

    def _load_rule_state(self, extra: dict[str, Any]) -> None:
        pass

    def _labels(self) -> list[str]:
        return self.model.labels()

    # ------------------------------------------------------------------- state
    def _descriptor(self) -> dict[str, Any] | None:
        if self.priors is None:
            return None
        return {"task": self.prior_source, **_prior_fingerprint(self.priors)}

    def _priors_from_descriptor(self, descriptor: dict[str, Any]) -> tuple[TabularPriors, str | None]:
        r"""The state's priors: the policy's own (when it has them) or the task's, checked by fingerprint."""
        if not isinstance(descriptor, dict):
            raise ValueError("state['extra']['priors'] must be a dict or None.")
        if self.priors is not None:
            priors, source = self.priors, self.prior_source
        else:
            task = descriptor.get("task")
            if task not in PRIOR_SELECTION_TASKS:
                raise ValueError(
                    f"state['extra']['priors']: the state's priors are not a named task ({task!r}); "
                    f"construct {self.name} with the same priors=... before loading it."
                )
            priors = task_priors(task, noise=float(descriptor["noise"]), num_arms=int(descriptor["num_arms"]))
            priors, source = self._prepare_priors(priors, source=task)
        own = _prior_fingerprint(priors)
        same = (
            all(own[key] == descriptor.get(key) for key in ("num_priors", "num_arms", "names"))
            and math.isclose(own["noise"], float(descriptor.get("noise", math.nan)), rel_tol=1e-6)
            and all(
                math.isclose(a, float(b), rel_tol=1e-6, abs_tol=1e-9)
                for a, b in zip(own["checksum"], descriptor.get("checksum", [math.nan] * 2), strict=True)
            )
        )
        if not same:
            raise ValueError(
                f"state['extra']['priors'] describes other priors than {self.name}'s "
                f"({descriptor.get('names')} vs {own['names']})."
            )
        return priors, source

    def _extra_state(self) -> dict[str, Any]:
        model = self.model
        return {
            "priors": self._descriptor(),
            "prior_ids": list(self.prior_ids) if model is not None else None,
            "true_prior": self.true_prior,
            # The observation history: the model is rebuilt by replaying it.
            "train_indices": model.train_indices.tolist() if model is not None else [],
            "train_Y": model.train_Y.tolist() if model is not None else [],
            "round": self.round,
            "pending": None if self.pending is None else dict(self.pending),
            **self._rule_state(),
        }

    def _check_extra_state(self, extra: dict[str, Any]) -> None:
        try:
            descriptor, prior_ids, true_prior = extra["priors"], extra["prior_ids"], extra["true_prior"]
            indices, targets = list(extra["train_indices"]), list(extra["train_Y"])
            round_, pending = extra["round"], extra["pending"]
        except (KeyError, TypeError) as e:
            raise ValueError(f"state['extra'] is not a {self.name} state: missing {e}") from None
        if not isinstance(round_, int) or round_ < 0:
            raise ValueError("state['extra']['round'] must be a non-negative int.")
        if descriptor is None:
            if prior_ids is not None or indices or pending is not None:
                raise ValueError("state['extra'] has data but no priors.")
            return
        priors, _ = self._priors_from_descriptor(descriptor)
        num_total, num_arms = len(priors), priors.num_arms
        if true_prior is not None and not (isinstance(true_prior, int) and 0 <= true_prior < num_total):
            raise ValueError(f"state['extra']['true_prior'] must be None or an int in [0, {num_total}).")
        ok = (
            isinstance(prior_ids, list)
            and len(prior_ids) >= 1
            and len(set(prior_ids)) == len(prior_ids)
            and all(isinstance(p, int) and 0 <= p < num_total for p in prior_ids)
            and (prior_ids == [true_prior] if self.needs_true_prior else prior_ids == list(range(num_total)))
        )
        if not ok:
            raise ValueError(f"state['extra']['prior_ids'] is inconsistent with {self.name} and its priors.")
        if len(indices) != len(targets) or not all(isinstance(i, int) and 0 <= i < num_arms for i in indices):
            raise ValueError("state['extra']['train_indices'] / ['train_Y'] must be equally long, with arm indices.")
        if not all(isinstance(y, (int, float)) and math.isfinite(y) for y in targets):
            raise ValueError("state['extra']['train_Y'] must hold finite numbers.")
        if pending is not None and not (
            isinstance(pending, dict)
            and 0 <= int(pending.get("prior", -1)) < len(prior_ids)
            and 0 <= int(pending.get("arm", -1)) < num_arms
        ):
            raise ValueError("state['extra']['pending'] must be None or a selection {prior, arm, ...}.")
        self._check_rule_state(extra, len(prior_ids))

    def _load_extra_state(self, extra: dict[str, Any]) -> None:
        descriptor = extra["priors"]
        self.round = int(extra["round"])
        self.pending = None if extra["pending"] is None else dict(extra["pending"])
        self.true_prior = extra["true_prior"]
        if descriptor is None:
            self.model, self.prior_ids = None, []
            if self.priors is not None and not self.needs_true_prior:
                self._ensure_model()
            return
        if self.priors is None:
            self._set_priors(*self._priors_from_descriptor(descriptor))
        self.prior_ids = list(extra["prior_ids"])
        priors = self.priors
        self.model = TabularPriorGP(
            priors if self.prior_ids == list(range(len(priors))) else priors.subset(self.prior_ids)
        )
        # Replaying the same rank-one updates in the same order rebuilds the state bit for bit.
        for index, y in zip(extra["train_indices"], extra["train_Y"]):
            self.model.condition(int(index), float(y))
        self._load_rule_state(extra)


# --------------------------------------------------------------------------- elimination


class PEGPTS(EliminationMixin, TabularPriorPolicy):
    r"""PE-GP-TS (Alg. 1): joint Thompson sampling over (arm, active prior), prior elimination.

    Args:
        domain: The arms (:class:`~botorch_unknown_hypers.problems.base.FiniteDomain`).
        delta: :math:`\delta` of the Theorem 4.1 constants (0.05 in the paper).
        Other args: as :class:`TabularPriorPolicy` (``priors``, ``noise_std``, ``seed``, ...).

    Attributes:
        alive: Active flag per model prior (:math:`\mathcal{P}_t`).
        play_prior, play_eta, play_width: Per played round: :math:`p_t`, :math:`\eta_t` and
            :math:`\sqrt{\beta_t}\sigma_{t,p_t}(x_t)`, stored at the time.

    Example:
        >>> from botorch_unknown_hypers.loop import run
        >>> from botorch_unknown_hypers.problems import get_problem
        >>> problem = get_problem("gp-kernel")
        >>> history = run(problem, PEGPTS(problem.domain), iterations=20)  # priors from the problem
    """

    name = "pe-gp-ts"
    optimistic = False  # True: PE-GP-UCB's selection

    def __init__(self, domain: Domain, delta: float = 0.05, **kwargs: Any) -> None:
        if not (isinstance(delta, (int, float)) and 0 < delta < 1):
            raise ValueError(f"delta must lie in (0, 1), got {delta!r}.")
        self.delta = float(delta)
        self.alive, self.eliminated_at, self.kept_last = [], {}, []
        self.play_prior: list[int] = []
        self.play_eta: list[float] = []
        self.play_width: list[float] = []
        super().__init__(domain, **kwargs)

    def _start(self, num_priors: int) -> None:
        self.alive = [True] * num_priors
        self.eliminated_at, self.kept_last = {}, []
        self.play_prior, self.play_eta, self.play_width = [], [], []

    def sqrt_beta(self, t: int) -> float:
        r""":math:`\sqrt{\beta_t}` with the model's :math:`|\mathcal{X}|` and :math:`|\mathcal{P}|`."""
        return math.sqrt(pe_beta(t, self.model.num_arms, self.model.num_priors, self.delta))

    def xi(self, t: int) -> float:
        r""":math:`\xi_t = 2\sigma^2 \log(|\mathcal{P}| \pi^2 t^2 / (3\delta))` (Theorem 4.1)."""
        return he_xi(t, self.model.num_priors, self.noise_std, self.delta)

    def statistics(self, t: int | None = None) -> dict[str, list[float]]:
        r"""Per model prior: :math:`|\sum_{i \in S_p} \eta_i|` and the threshold :math:`V` at round
        ``t`` (default: the last played round)."""
        self._ensure_model()
        t = max(self.round if t is None else t, 1)
        stat, threshold = elimination_statistics(
            self.play_prior, self.play_eta, self.play_width, self.model.num_priors, self.xi(t)
        )
        return {"statistic": stat.tolist(), "threshold": threshold.tolist()}

    def _scores(self, span: range, mean: Tensor, variance: Tensor, sqrt_beta: float) -> Tensor:
        r"""``len(span) x N`` values of the priors ``span`` to maximise jointly over (prior, arm)."""
        if self.optimistic:  # PE-GP-UCB: the doubly optimistic UCB
            return mean[span.start : span.stop] + sqrt_beta * variance[span.start : span.stop].sqrt()
        # Alg. 1 line 3: one independent joint sample per prior, one batched call
        return self.model.sample(1, generator=self._sample_generator(), prior_indices=span)[0]

    def _suggest(self, train_X: Tensor, train_Y: Tensor, q: int) -> Tensor:
        if q != 1:
            raise ValueError(f"q: {self.name} proposes one arm per round (q = 1), got {q}.")
        model = self._sync(train_X, train_Y)
        t = self.round + 1
        active = [p for p, alive in enumerate(self.alive) if alive]
        mean, variance = model.mean_variance()  # K x N, conditioned on the t - 1 earlier observations
        sqrt_beta = self.sqrt_beta(t)
        # The consecutive priors from the first to the last active one: the model slices them as
        # views, where gathering a non-consecutive active set would copy their N x N factors
        # (3-4x slower than drawing the few eliminated priors' samples too and discarding them).
        span = range(active[0], active[-1] + 1)
        scores = self._scores(span, mean, variance, sqrt_beta)
        inactive = torch.tensor([not self.alive[p] for p in span], device=scores.device)
        scores = scores.masked_fill(inactive.unsqueeze(-1), -math.inf)
        # Alg. 1 line 4: joint argmax over (active prior, arm)
        local, arm = divmod(random_argmax(scores, self.generator), model.num_arms)
        prior = span.start + local
        sigma = float(variance[prior, arm].sqrt())
        # Alg. 1 lines 7-8: mu_{t,p_t}(x_t) and the width, stored at selection time
        self.pending = {
            "prior": prior,
            "arm": arm,
            "mean": float(mean[prior, arm]),
            "sigma": sigma,
            "sqrt_beta": sqrt_beta,
            "width": sqrt_beta * sigma,
        }
        self.selected = [self._labels()[prior]]
        self.n_candidates = len(active)
        self.diagnostics = {
            "prior": self.prior_ids[prior],
            "true_prior": self.true_prior,
            "sigma": sigma,
            "sqrt_beta": sqrt_beta,
        }
        return self.domain.points[arm].unsqueeze(0)

    def _play(self, pending: dict[str, Any], y: float) -> None:
        t, prior = self.round, pending["prior"]
        eta = y - pending["mean"]  # Alg. 1 line 7
        self.play_prior.append(prior)  # line 5: t joins S_{p_t}
        self.play_eta.append(eta)
        self.play_width.append(pending["width"])
        xi_t = self.xi(t)
        stats, thresholds = elimination_statistics(
            self.play_prior, self.play_eta, self.play_width, self.model.num_priors, xi_t
        )
        statistic, threshold = float(stats[prior]), float(thresholds[prior])  # line 8: V_t
        eliminated, kept_last = None, False
        if statistic > threshold:  # lines 9-10: strict, only p_t is tested
            kept = len(self.kept_last)
            self._eliminate(prior, t)  # never the last active prior (logged in kept_last)
            kept_last = len(self.kept_last) > kept
            eliminated = None if kept_last else self.prior_ids[prior]
        self.diagnostics.update(
            {"eta": eta, "xi": xi_t, "statistic": statistic, "threshold": threshold,
             "eliminated": eliminated, "kept_last": kept_last}
        )

    def _after_observe(self) -> None:
        self.diagnostics.update({"active": list(self.alive), "n_active": sum(self.alive)})

    def _rule_state(self) -> dict[str, Any]:
        return {
            "alive": list(self.alive),
            "eliminated_at": {str(k): v for k, v in self.eliminated_at.items()},
            "kept_last": list(self.kept_last),
            "play_prior": list(self.play_prior),
            "play_eta": list(self.play_eta),
            "play_width": list(self.play_width),
        }

    def _check_rule_state(self, extra: dict[str, Any], num_priors: int) -> None:
        try:
            alive, eliminated_at = extra["alive"], extra["eliminated_at"]
            played, eta, width, kept = extra["play_prior"], extra["play_eta"], extra["play_width"], extra["kept_last"]
            ok = (
                len(alive) == num_priors
                and any(alive)
                and isinstance(eliminated_at, dict)
                and all(0 <= int(k) < num_priors for k in eliminated_at)
                and len(played) == len(eta) == len(width) == extra["round"]
                and all(isinstance(p, int) and 0 <= p < num_priors for p in played)
                and all(math.isfinite(float(v)) for v in [*eta, *width, *kept])
            )
        except (KeyError, TypeError, ValueError) as e:
            raise ValueError(f"state['extra'] is not a {self.name} state: {e}") from None
        if not ok:
            raise ValueError(f"state['extra'] is inconsistent with {self.name}'s {num_priors} priors.")

    def _load_rule_state(self, extra: dict[str, Any]) -> None:
        self.alive = [bool(a) for a in extra["alive"]]
        self.eliminated_at = {int(k): int(v) for k, v in extra["eliminated_at"].items()}
        self.kept_last = [int(v) for v in extra["kept_last"]]
        self.play_prior = [int(p) for p in extra["play_prior"]]
        self.play_eta = [float(v) for v in extra["play_eta"]]
        self.play_width = [float(v) for v in extra["play_width"]]


class PEGPUCB(PEGPTS):
    r"""PE-GP-UCB: Alg. 1 with the doubly optimistic UCB selection (Theorem 4.1 constants)."""

    name = "pe-gp-ucb"
    optimistic = True


class _Oracle:
    r"""The rule run with :math:`\mathcal{P} = \{p^*\}`, :math:`p^*` from the bound problem."""

    needs_true_prior = True

    def _model_prior_ids(self) -> list[int]:
        if self.true_prior is None:
            raise ValueError(
                f"{self.name} needs the true prior: run it with loop.run on a prior-selection problem "
                "(which calls bind_problem), or call bind_problem(problem) before suggest."
            )
        priors = self._require_priors()
        if not 0 <= self.true_prior < len(priors):
            raise ValueError(f"true prior {self.true_prior} is not one of the {len(priors)} priors.")
        return [self.true_prior]


class OracleGPTS(_Oracle, PEGPTS):
    r"""Oracle GP-TS: PE-GP-TS with the true prior only (:math:`|\mathcal{P}| = 1`)."""

    name = "oracle-gp-ts"


class OracleGPUCB(_Oracle, PEGPUCB):
    r"""Oracle GP-UCB: PE-GP-UCB with the true prior only (:math:`|\mathcal{P}| = 1`)."""

    name = "oracle-gp-ucb"


# --------------------------------------------------------------------------- hyperprior


class HPGPTS(TabularPriorPolicy):
    r"""HP-GP-TS (Alg. 2): sample a prior from the hyperposterior, then Thompson-sample it.

    Args:
        domain: The arms (:class:`~botorch_unknown_hypers.problems.base.FiniteDomain`).
        hyperprior: :math:`P_0` as K positive weights (normalised); ``None``: uniform.
        Other args: as :class:`TabularPriorPolicy` (``priors``, ``noise_std``, ``seed``, ...).

    Attributes:
        log_hyperposterior: ``K`` :math:`\log P_t(p)` (float64, CPU), normalised.
        log_evidence: ``K`` :math:`\log \mathcal{N}(y_{1:t}; m_p[S], C_p[S, S] + \sigma^2 I)`,
            the running sum of the one-step predictive log-likelihoods.
    """

    name = "hp-gp-ts"

    def __init__(self, domain: Domain, hyperprior: Sequence[float] | Tensor | None = None, **kwargs: Any) -> None:
        if hyperprior is not None:
            weights = torch.as_tensor(hyperprior, dtype=torch.float64).reshape(-1)
            if weights.numel() == 0 or not torch.isfinite(weights).all() or not (weights > 0).all():
                raise ValueError(f"hyperprior must be None or positive finite weights, got {hyperprior!r}.")
            hyperprior = (weights / weights.sum()).tolist()
        self.hyperprior_option = hyperprior
        self.log_hyperprior = self.log_hyperposterior = self.log_evidence = torch.zeros(0, dtype=torch.float64)
        super().__init__(domain, **kwargs)

    def _start(self, num_priors: int) -> None:
        if self.hyperprior_option is None:
            log_prior = torch.full((num_priors,), -math.log(num_priors), dtype=torch.float64)
        elif len(self.hyperprior_option) != num_priors:
            raise ValueError(f"hyperprior must have one weight per prior ({num_priors}), "
                             f"got {len(self.hyperprior_option)}.")
        else:
            log_prior = torch.tensor(self.hyperprior_option, dtype=torch.float64).log()
        self.log_hyperprior = log_prior
        self._restart()

    def _restart(self) -> None:
        self.log_hyperposterior = self.log_hyperprior.clone()
        self.log_evidence = torch.zeros_like(self.log_hyperprior)

    @property
    def hyperposterior(self) -> Tensor:
        r"""``K`` probabilities :math:`P_t(p)`."""
        return self.log_hyperposterior.exp()

    def _choose_prior(self) -> int:
        r"""Alg. 2 line 2: :math:`p_t \sim P_{t-1}`."""
        return int(torch.multinomial(self.hyperposterior, 1, generator=self.generator))

    def _suggest(self, train_X: Tensor, train_Y: Tensor, q: int) -> Tensor:
        if q != 1:
            raise ValueError(f"q: {self.name} proposes one arm per round (q = 1), got {q}.")
        model = self._sync(train_X, train_Y)
        prior = self._choose_prior()
        # Alg. 2 lines 3-4: one joint posterior sample of p_t only, and its argmax
        sample = model.sample(1, generator=self._sample_generator(), prior_indices=[prior])[0, 0]
        arm = random_argmax(sample, self.generator)
        self.pending = {"prior": prior, "arm": arm}
        self.selected = [self._labels()[prior]]
        self.n_candidates = model.num_priors
        self.diagnostics = {"prior": self.prior_ids[prior], "true_prior": self.true_prior}
        return self.domain.points[arm].unsqueeze(0)

    def _condition(self, index: int, y: Tensor) -> None:
        # Alg. 2 line 6: every prior's one-step predictive likelihood, before conditioning
        log_likelihood = self.model.predictive_log_likelihood(index, y).to(device="cpu", dtype=torch.float64)
        self.log_evidence = self.log_evidence + log_likelihood
        unnormalised = self.log_hyperposterior + log_likelihood
        self.log_hyperposterior = unnormalised - torch.logsumexp(unnormalised, dim=0)
        super()._condition(index, y)

    def _after_observe(self) -> None:
        log_p = self.log_hyperposterior
        self.diagnostics.update(
            {
                "hyperposterior": log_p.exp().tolist(),
                "entropy": float(-(log_p.exp() * log_p).sum()),
                "log_evidence": self.log_evidence.tolist(),
            }
        )

    def _rule_state(self) -> dict[str, Any]:
        return {
            "log_hyperprior": self.log_hyperprior.tolist(),
            "log_hyperposterior": self.log_hyperposterior.tolist(),
            "log_evidence": self.log_evidence.tolist(),
        }

    def _check_rule_state(self, extra: dict[str, Any], num_priors: int) -> None:
        try:
            values = [extra[key] for key in ("log_hyperprior", "log_hyperposterior", "log_evidence")]
            ok = all(len(v) == num_priors and all(math.isfinite(float(x)) for x in v) for v in values)
        except (KeyError, TypeError, ValueError) as e:
            raise ValueError(f"state['extra'] is not a {self.name} state: {e}") from None
        if not ok:
            raise ValueError(f"state['extra'] log-probabilities must be {num_priors} finite numbers each.")

    def _load_rule_state(self, extra: dict[str, Any]) -> None:
        for key in ("log_hyperprior", "log_hyperposterior", "log_evidence"):
            setattr(self, key, torch.tensor(extra[key], dtype=torch.float64))


class MAPGPTS(HPGPTS):
    r"""MAP-GP-TS: HP-GP-TS with the most probable prior, ties broken at random (seeded)."""

    name = "map-gp-ts"

    def _choose_prior(self) -> int:
        return random_argmax(self.log_hyperposterior, self.generator)
