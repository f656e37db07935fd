r"""Prior selection in GP bandits: PE-GP-TS, HP-GP-TS and their baselines, on arms and boxes.

Sandberg & Haghir Chehreghani [Sandberg2025]_ look for the best of N arms
:math:`\mathcal{X}` when :math:`f` was drawn from one of K candidate GP priors
:math:`p \in \mathcal{P}` (mean :math:`m_p`, covariance :math:`C_p` over the
arms), observed with known Gaussian noise :math:`\sigma^2`. Instead of fitting
hyperparameters, the rules below *select a prior* among the K, with Thompson
sampling at both levels. On arms, every rule keeps **one**
:class:`~botorch_unknown_hypers.models.tabular.TabularPriorGP` holding all K
posteriors (on a box, see below), conditioned in ``observe`` on **every** observation, whichever
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

**On a box** (:class:`~botorch_unknown_hypers.problems.base.BoxDomain`), the K priors
are (mean function, kernel) pairs given as one
:class:`~botorch_unknown_hypers.candidates.CandidateSpec` (e.g.
:class:`~botorch_unknown_hypers.candidates.KernelCandidates`,
:class:`~botorch_unknown_hypers.candidate_families.MeanFunctionCandidates`), batched in
one K-wide :class:`~botorch_unknown_hypers.models.candidate_gp.CandidateGP`
(:class:`BoxPriors` holds the priors and the data). The rules and their bookkeeping
are the same; what changes:

- the model is the ``CandidateGP`` of the priors over **all** data
  :math:`D_{t-1}`, rebuilt each round (one batched :math:`O(K n^3)` Cholesky; no
  incremental conditioning), with inputs scaled to the unit cube by the bounds (the
  candidates' length scales are in unit-cube units); before any data, the priors'
  own moments and sample paths;
- Alg. 1 line 3 / Alg. 2 line 3: one independent posterior sample *path* per
  prior (BoTorch's pathwise sampling, ``draw_matheron_paths`` on the K-wide model,
  with i.i.d. weights across priors), all maximised together by batched
  multi-start L-BFGS-B
  (:func:`~botorch_unknown_hypers.acquisition.prior_sampling.sample_candidate_maxima`);
  PE-GP-TS then takes the best (point, prior) pair over the active priors' path
  maxima, HP / MAP-GP-TS draw the sampled prior's path only;
- PE-GP-UCB: the doubly optimistic joint maximiser
  :func:`~botorch_unknown_hypers.acquisition.optimize.optimize_ucb_joint` with
  :math:`\sqrt{\beta_t}` over the active priors;
- :math:`\eta_t` and :math:`\sigma_{t,p_t}(x_t)` come from the ``CandidateGP``
  posterior at :math:`x_t` (before :math:`y_t`); the hyperposterior update uses the
  one-step predictive :math:`\mathcal{N}(y_t; \mu_{t,p}(x_t), \sigma^2_{t,p}(x_t) + \sigma^2)`
  of the same model (their sum is ``CandidateGP.log_marginal_likelihood``);
- :math:`|\mathcal{X}|` in :math:`\beta_t` is infinite on a box. We substitute
  Srinivas et al.'s [Srinivas2010]_ (Thm 2) discretisation size
  :math:`|D_t| = \tau_t^d`, :math:`\tau_t = d t^2 b r\sqrt{\log(4da/\delta)}`
  (:func:`box_num_arms`; :math:`r = 1` for the unit cube the GPs see, derivative
  tail constants ``lipschitz=(a, b)``, default ``(1, 1)``), so that

  .. math::

      \beta_t = 2 \log\frac{2 |D_t| |\mathcal{P}| \pi^2 t^2}{3 \delta};

  with :math:`|\mathcal{P}| = 1` this is exactly Srinivas' continuous-domain
  :math:`\beta_t`, as Theorem 4.1's pool :math:`\beta_t` with :math:`|\mathcal{P}| = 1` is
  Srinivas' finite-domain one at :math:`\delta/4`. It is a documented substitute, not a
  re-derivation of Theorem 4.1 on boxes; ``num_arms_equivalent`` replaces :math:`|D_t|`
  by a fixed number (e.g. the size of a grid that resolves the box). :math:`\xi_t` does
  not involve :math:`|\mathcal{X}|`;
- the noise :math:`\sigma^2` is the candidates' (one common value; ``noise_std``
  overrides it); kernels must have BoTorch random features (RBF, Matern) for the
  Thompson-sampling rules;
- randomness: each round's paths are drawn with the global RNG forked and seeded from
  the policy's generator (:meth:`~botorch_unknown_hypers.policies.base.Policy.seeded` /
  ``next_seed``), which also seeds the Sobol raw points and restart selection, so a
  run is deterministic given the seed;
- the state stores the observed points instead of arm indices; the ``CandidateGP`` is
  rebuilt from them, so a restored policy makes the same next suggestion.

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

.. [Srinivas2010]
    N. Srinivas, A. Krause, S. Kakade, M. Seeger. Gaussian Process Optimization in
    the Bandit Setting: No Regret and Experimental Design. ICML 2010 (Thm 2, the
    continuous-domain discretisation behind :func:`box_num_arms`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import torch
from botorch.models.transforms import Normalize
from torch import Tensor

from botorch_unknown_hypers.acquisition.multistart import CandidateValues, maximize_per_candidate
from botorch_unknown_hypers.acquisition.optimize import optimize_ucb_joint
from botorch_unknown_hypers.acquisition.prior_sampling import (
    check_pathwise_kernel,
    draw_candidate_prior_paths,
    path_chunk,
    sample_candidate_maxima,
)
from botorch_unknown_hypers.candidates import CandidateSpec
from botorch_unknown_hypers.models.candidate_gp import CandidateGP
from botorch_unknown_hypers.models.tabular import TabularPriorGP, TabularPriors
from botorch_unknown_hypers.policies.base import Policy, check_optimizer_options
from botorch_unknown_hypers.policies.elimination import (
    EliminationMixin,
    elimination_statistics,
    he_xi,
)
from botorch_unknown_hypers.problems.base import Problem
from botorch_unknown_hypers.domains import BoxDomain, Domain, FiniteDomain
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


def box_num_arms(t: int, dim: int, delta: float, a: float = 1.0, b: float = 1.0, r: float = 1.0) -> float:
    r"""The finite stand-in for :math:`|\mathcal{X}|` on a box: Srinivas et al.'s discretisation size.

    Srinivas et al. (2010), Thm 2, cover :math:`[0, r]^d` at round :math:`t` by a grid
    :math:`D_t` of :math:`|D_t| = \tau_t^d` points,

    .. math::

        \tau_t = d\, t^2\, b\, r \sqrt{\log(4 d a / \delta)},

    fine enough that :math:`|f(x) - f([x]_t)| \le 1/t^2` when the derivatives of
    :math:`f` obey :math:`P(\sup|\partial f/\partial x_j| > L) \le a e^{-L^2/b^2}`.
    Plugged into Theorem 4.1's :math:`\beta_t` for :math:`|\mathcal{X}|` with
    :math:`|\mathcal{P}| = 1`, it gives exactly Srinivas' Thm 2 :math:`\beta_t`
    (:func:`~botorch_unknown_hypers.confidence.bayesian_beta_continuous` squared).
    ``max(tau, 1)`` as there.

    Example:
        >>> round(box_num_arms(1, 1, 0.05), 3)  # d = 1, a = b = r = 1
        2.093
    """
    if t < 1 or dim < 1:
        raise ValueError(f"t and dim must be >= 1, got {t} and {dim}.")
    if not 0 < delta < 1:
        raise ValueError(f"delta must lie in (0, 1), got {delta}.")
    if not (a > 0 and b > 0 and r > 0 and 4.0 * dim * a / delta > 1):
        raise ValueError(f"a, b, r must be positive with 4 * dim * a / delta > 1, got {a}, {b}, {r}.")
    tau = dim * t**2 * b * r * math.sqrt(math.log(4.0 * dim * a / delta))
    return max(tau, 1.0) ** dim


def _candidate_noise(candidates: CandidateSpec, dim: int) -> Tensor:
    r"""The ``K`` noise variances of a candidate set (from its likelihood)."""
    _, _, likelihood = candidates.build(dim)
    return likelihood.noise.detach().reshape(-1)


def _with_noise(candidates: CandidateSpec, variance: float) -> CandidateSpec:
    r"""The candidates with every noise variance set to ``variance`` (dataclass specs with a
    ``noise`` field, or a ``base`` spec that has one, e.g. MeanFunctionCandidates)."""
    if dataclasses.is_dataclass(candidates):
        fields = {f.name for f in dataclasses.fields(candidates)}
        if "noise" in fields:
            return dataclasses.replace(candidates, noise=variance)
        if "base" in fields:
            return dataclasses.replace(candidates, base=_with_noise(candidates.base, variance))
    raise ValueError(
        f"noise_std: cannot set the noise of {type(candidates).__name__}; build the candidates with "
        f"noise={variance} and leave noise_std=None."
    )


def _spec_fingerprint(candidates: CandidateSpec, noise: float) -> dict[str, Any]:
    r"""Identifies a candidate set in a saved state: its labels, noise and ``to_dict`` (if any)."""
    try:
        spec = candidates.to_dict()
    except ValueError:  # e.g. MeanFunctionCandidates hold a Python function
        spec = None
    return {"num_priors": len(candidates), "names": candidates.labels(), "noise": noise, "spec": spec}


class BoxPriors:
    r"""K candidate priors (mean, kernel) on a box and every observation so far.

    The box counterpart of :class:`~botorch_unknown_hypers.models.tabular.TabularPriorGP`:
    :meth:`condition` only stores the observation, and the K-wide
    :class:`~botorch_unknown_hypers.models.candidate_gp.CandidateGP` of the priors (or of a
    subset) is built over **all** data on demand (an :math:`O(K n^3)` factorisation, cached
    until the next observation). Inputs are scaled to the unit cube by the box's bounds
    (``Normalize``), so the candidates' length scales are in unit-cube units, as in
    :class:`~botorch_unknown_hypers.policies.elimination.HEGPUCB`. Before any data the
    moments and sample paths are the priors' own.

    Args:
        candidates: The K priors, a :class:`~botorch_unknown_hypers.candidates.CandidateSpec`
            (the noise variances are the candidates' own).
        bounds: ``2 x d`` box.
        train_X: Optional ``n x d`` observed points; ``train_Y``: their ``n`` values.
    """

    def __init__(
        self,
        candidates: CandidateSpec,
        bounds: Tensor,
        train_X: Tensor | None = None,
        train_Y: Tensor | None = None,
    ) -> None:
        self.candidates = candidates
        self.bounds = bounds
        dim = bounds.shape[-1]
        self._train_X = bounds.new_zeros(0, dim) if train_X is None else train_X.to(bounds).reshape(-1, dim)
        self._train_Y = bounds.new_zeros(0) if train_Y is None else train_Y.to(bounds).reshape(-1)
        if self._train_X.shape[0] != self._train_Y.shape[0]:
            raise ValueError("train_X and train_Y must have as many rows.")
        self._prior_mean, self._prior_covar, likelihood = candidates.build(dim)
        self.noise = likelihood.noise.detach().reshape(-1).to(bounds)  # K noise variances
        self._transform = self.input_transform()
        self._models: dict[tuple[int, ...], CandidateGP] = {}

    @property
    def num_priors(self) -> int:
        return len(self.candidates)

    @property
    def dim(self) -> int:
        return self.bounds.shape[-1]

    @property
    def num_observations(self) -> int:
        return self._train_Y.shape[0]

    @property
    def train_X(self) -> Tensor:
        r"""The ``n x d`` observed points."""
        return self._train_X

    @property
    def train_Y(self) -> Tensor:
        r"""The ``n`` observed values."""
        return self._train_Y

    def labels(self) -> list[str]:
        return self.candidates.labels()

    def input_transform(self) -> Normalize:
        r"""A fresh ``Normalize`` to the unit cube of the box (eval mode)."""
        transform = Normalize(self.dim, bounds=self.bounds)
        transform.eval()
        return transform

    def _indices(self, indices: Sequence[int] | None) -> tuple[int, ...]:
        return tuple(range(self.num_priors)) if indices is None else tuple(int(i) for i in indices)

    def candidate_gp(self, indices: Sequence[int] | None = None) -> CandidateGP | None:
        r"""The ``CandidateGP`` of the priors ``indices`` (default all) over all data; ``None``
        before any data."""
        if self.num_observations == 0:
            return None
        key = self._indices(indices)
        if key not in self._models:
            candidates = self.candidates if key == tuple(range(self.num_priors)) else self.candidates.subset(list(key))
            self._models[key] = CandidateGP(
                self._train_X, self._train_Y.unsqueeze(-1), candidates, input_transform=self.input_transform()
            )
        return self._models[key]

    def prior_mean_variance(self, X: Tensor) -> tuple[Tensor, Tensor]:
        r"""Prior means and latent variances of all K priors, candidate ``k`` at ``X[k]``
        (``K x m x d``); ``K x m`` each, differentiable in ``X``."""
        Z = self._transform(X)
        return self._prior_mean(Z), self._prior_covar(Z, diag=True)

    def mean_variance(self, X: Tensor, indices: Sequence[int] | None = None) -> tuple[Tensor, Tensor]:
        r"""Posterior means and latent variances (``len(indices) x m``) at shared ``m x d`` points."""
        key = self._indices(indices)
        model = self.candidate_gp(key)
        with torch.no_grad():
            if model is not None:
                return model.marginal_mean_variance(X.unsqueeze(0))
            mean, variance = self.prior_mean_variance(X.expand(self.num_priors, *X.shape))
            rows = torch.tensor(key, device=X.device)
            return mean[rows], variance[rows]

    def predictive_log_likelihood(self, x: Tensor, y: float | Tensor) -> Tensor:
        r"""One-step predictive log-likelihood of every prior, **before** conditioning on ``(x, y)``:
        :math:`\log \mathcal{N}(y; \mu_p(x), \sigma_p^2(x) + \sigma^2)` (``K``)."""
        mean, variance = self.mean_variance(x.reshape(1, self.dim))
        predictive_variance = variance[:, 0].clamp_min(0) + self.noise
        value = torch.as_tensor(y).to(mean)
        return -0.5 * (
            (value - mean[:, 0]).square() / predictive_variance + predictive_variance.log() + math.log(2 * math.pi)
        )

    def log_marginal_likelihood(self) -> Tensor:
        r"""Log marginal likelihood of all data under every prior (``K``; zeros before any data)."""
        model = self.candidate_gp()
        return self.noise.new_zeros(self.num_priors) if model is None else model.log_marginal_likelihood()

    def condition(self, x: Tensor, y: float | Tensor) -> None:
        r"""Add one observation (the factorisations are rebuilt at the next use)."""
        self._train_X = torch.cat([self._train_X, x.reshape(1, self.dim).to(self._train_X)])
        self._train_Y = torch.cat([self._train_Y, torch.as_tensor(y).reshape(1).to(self._train_Y)])
        self._models = {}

    def prior_ucb(self, indices: Sequence[int], sqrt_beta: float) -> CandidateValues:
        r"""``K' x m x d -> K' x m`` prior UCBs :math:`m_p(x) + \sqrt{\beta}\sqrt{k_p(x, x)}` of
        the priors ``indices`` (before any data)."""
        mean_module, covar_module, _ = self.candidates.subset(list(self._indices(indices))).build(self.dim)
        transform = self.input_transform()

        def ucb(X: Tensor) -> Tensor:
            Z = transform(X)
            values = mean_module(Z) + sqrt_beta * covar_module(Z, diag=True).clamp_min(0).sqrt()
            # A zero mean and a stationary kernel give a constant without a graph: keep the
            # (zero) gradient that L-BFGS-B asks for.
            return values + 0.0 * Z.sum(-1)

        return ucb

    def prior_paths(self, indices: Sequence[int], num_features: int) -> CandidateValues:
        r"""One independent prior sample path per prior in ``indices`` (before any data)."""
        return draw_candidate_prior_paths(
            self.candidates.subset(list(self._indices(indices))),
            self.dim,
            self.bounds,
            self.input_transform(),
            num_features,
        )


class TabularPriorPolicy(Policy):
    r"""Shared machinery of the prior-selection rules: one model holding all K priors.

    On a finite arm set the model is a :class:`~botorch_unknown_hypers.models.tabular.TabularPriorGP`
    (conditioned by rank-one updates); on a box a :class:`BoxPriors` (the K-wide
    ``CandidateGP`` over all data, rebuilt each round). Subclasses implement ``_suggest``
    and the hooks ``_start`` (fresh rule state for K priors), ``_play`` (bookkeeping of a
    played round, before conditioning), ``_condition`` (conditioning on one observation,
    at an arm index on a pool, at a point on a box) and the rule state's
    ``_rule_state`` / ``_check_rule_state`` / ``_load_rule_state``.

    Args:
        domain: The arms, a :class:`~botorch_unknown_hypers.problems.base.FiniteDomain`
            whose points are the priors' arms (in order), or a
            :class:`~botorch_unknown_hypers.problems.base.BoxDomain` with ``priors`` a
            :class:`~botorch_unknown_hypers.candidates.CandidateSpec`.
        seed, device, dtype: As :class:`~botorch_unknown_hypers.policies.base.Policy`.
        priors: On a pool: a :class:`~botorch_unknown_hypers.models.tabular.TabularPriors`,
            or a task name (``"gp-kernel"``, ``"gp-lengthscale"``, ``"gp-hill"``); ``None``:
            taken from the problem in :meth:`bind_problem` (``loop.run`` calls it),
            required before the first ``suggest`` otherwise. On a box (required): K
            (mean, kernel) pairs as one ``CandidateSpec``, e.g.
            :class:`~botorch_unknown_hypers.candidates.KernelCandidates` or
            :class:`~botorch_unknown_hypers.candidate_families.MeanFunctionCandidates`, with
            length scales in unit-cube units (inputs are scaled by the box's bounds).
        noise_std: The known noise standard deviation :math:`\sigma`; ``None`` (default):
            the priors' own noise (on a box, one common noise variance of the candidates).
        num_restarts, raw_samples: Box only: L-BFGS-B restarts and Sobol raw points per
            sample path (or UCB) maximisation.
        num_features: Box only: random Fourier features of each sample path.

    Attributes:
        model: The :class:`~botorch_unknown_hypers.models.tabular.TabularPriorGP` or
            :class:`BoxPriors` (``None`` until the priors are known).
        prior_ids: Index, in the task's prior list, of each of the model's priors
            (``[0, ..., K - 1]``; ``[p*]`` for an oracle).
        true_prior: :math:`p^*` of a bound problem (diagnostics), else ``None``.
        round: Number of played rounds :math:`t`.
    """

    name = "tabular-prior"
    needs_true_prior = False
    needs_paths = True  # Thompson sampling: the box priors' kernels need random features

    def __init__(
        self,
        domain: Domain,
        seed: int = 0,
        device: torch.device | str | None = None,
        dtype: torch.dtype = torch.float64,
        priors: TabularPriors | CandidateSpec | str | None = None,
        noise_std: float | None = None,
        num_restarts: int = 10,
        raw_samples: int = 512,
        num_features: int = 1024,
    ) -> None:
        self.box = isinstance(domain, BoxDomain)
        if self.box and not isinstance(priors, CandidateSpec):
            raise ValueError(
                f"domain: {self.name} on a box (BoxDomain) needs priors=<a CandidateSpec of K (mean, kernel) "
                f"pairs, e.g. KernelCandidates>; tabular priors need a FiniteDomain of their arms. "
                f"Got priors of type {type(priors).__name__}."
            )
        if not self.box and not isinstance(domain, FiniteDomain):
            raise ValueError(
                f"domain: {self.name} needs a finite arm set (FiniteDomain) matching the priors' arms, "
                f"got {type(domain).__name__}."
            )
        super().__init__(domain, seed=seed, device=device, dtype=dtype)
        if noise_std is not None and not (math.isfinite(float(noise_std)) and float(noise_std) > 0):
            raise ValueError(f"noise_std must be None or finite and > 0, got {noise_std}.")
        check_optimizer_options(num_restarts, raw_samples)
        if not (isinstance(num_features, int) and num_features >= 2 and num_features % 2 == 0):
            raise ValueError(f"num_features must be a positive even int, got {num_features!r}.")
        self.num_restarts, self.raw_samples, self.num_features = num_restarts, raw_samples, num_features
        self.noise_std_option = None if noise_std is None else float(noise_std)
        self.priors: TabularPriors | CandidateSpec | None = None
        self.prior_source: str | None = None
        self.noise_std: float | None = None
        self.prior_ids: list[int] = []
        self.model: TabularPriorGP | BoxPriors | None = None
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
        self, priors: TabularPriors | CandidateSpec | str, source: str | None = None
    ) -> tuple[TabularPriors | CandidateSpec, str | None]:
        r"""Validated priors on the policy's device / dtype, with the ``noise_std`` override."""
        if self.box:
            return self._prepare_box_priors(priors), None
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

    def _prepare_box_priors(self, priors: CandidateSpec) -> CandidateSpec:
        r"""Box priors: a ``CandidateSpec`` on the policy's device / dtype with one noise variance."""
        if not isinstance(priors, CandidateSpec):
            raise ValueError(f"priors: on a box, a CandidateSpec of (mean, kernel) pairs; got {type(priors).__name__}.")
        if self.noise_std_option is not None:
            priors = _with_noise(priors, self.noise_std_option**2)
        if hasattr(priors, "to"):
            priors = priors.to(device=self.device, dtype=self.dtype)
        dim = self.domain.dim
        _, covar_module, likelihood = priors.build(dim)  # also checks ARD length scales against d
        noise = likelihood.noise.detach().reshape(-1)
        if not torch.allclose(noise, noise[:1].expand_as(noise), rtol=1e-6, atol=0.0):
            raise ValueError(
                f"priors: the candidates' noise variances differ ({noise.tolist()}); the rules assume one "
                "known noise sigma^2: build the candidates with one noise or pass noise_std."
            )
        if self.needs_paths:
            check_pathwise_kernel(covar_module, dim)
        return priors

    def _set_priors(self, priors: TabularPriors | CandidateSpec, source: str | None) -> None:
        self.priors, self.prior_source = priors, source
        noise = float(_candidate_noise(priors, self.domain.dim)[0]) if self.box else priors.noise
        self.noise_std = math.sqrt(noise)

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

    def _ensure_model(self) -> TabularPriorGP | BoxPriors:
        if self.model is None:
            ids = self._model_prior_ids()
            priors = self._require_priors()
            chosen = priors if ids == list(range(len(priors))) else priors.subset(ids)
            model = BoxPriors(chosen, self.domain.bounds) if self.box else TabularPriorGP(chosen)
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

    def _sync(self, train_X: Tensor, train_Y: Tensor) -> TabularPriorGP | BoxPriors:
        r"""Make the model condition on exactly ``train_X, train_Y``.

        Normally it already does (``observe`` conditions on every observation);
        rows it has not seen (an initial design) are added, and data that are not an
        extension of its own rebuild it from scratch.
        """
        model = self._ensure_model()
        targets = train_Y.reshape(-1)
        seen = model.num_observations
        # O(n d) check that the model's data are the first rows (index_of would cost O(n N)).
        seen_X = model.train_X if self.box else self.domain.points[model.state.train_indices]
        seen_Y = model.train_Y if self.box else model.state.train_Y
        if not (
            seen <= targets.shape[0]
            and torch.allclose(train_X[:seen], seen_X, rtol=0.0, atol=1e-9)
            and torch.equal(targets[:seen], seen_Y)
        ):
            self.model = model = BoxPriors(model.candidates, model.bounds) if self.box else TabularPriorGP(model.priors)
            self._restart()
            seen = 0
        # One update per new row: each depends on the previous one.
        for location, y in zip(self._locations(train_X[seen:]), targets[seen:]):
            self._condition(location, y)
        return model

    def _locations(self, X: Tensor) -> list[int] | list[Tensor]:
        r"""Where the rows of ``X`` are for the model: arm indices on a pool, the points on a box."""
        return list(X) if self.box else self.domain.index_of(X).tolist()

    def _is_suggested(self, location: int | Tensor, pending: dict[str, Any]) -> bool:
        if self.box:
            return torch.allclose(location, location.new_tensor(pending["x"]), rtol=0.0, atol=1e-9)
        return location == pending["arm"]

    def _observe(self, X: Tensor, Y: Tensor) -> None:
        self._ensure_model()
        pending, self.pending = self.pending, None
        for location, y in zip(self._locations(X), Y.reshape(-1)):
            if pending is not None and self._is_suggested(location, pending):
                self.round += 1
                self._play(pending, float(y))
            # A told point other than the suggested one is data, not a play.
            pending = None
            self._condition(location, y)
        self._after_observe()

    def _condition(self, location: int | Tensor, y: Tensor) -> None:
        r"""Condition every prior on one observation at an arm index (pool) or a point (box);
        rules may update their state first."""
        self.model.condition(location, y)

    def _path_maxima(self, model: BoxPriors, indices: Sequence[int]) -> tuple[Tensor, Tensor]:
        r"""Box: one independent posterior sample path per prior in ``indices`` (all data), each
        maximised on the box; ``len(indices) x d`` maximisers and their values. Seeded from the
        policy's generator."""
        bounds, options = self.domain.bounds, (self.num_restarts, self.raw_samples)
        gp = model.candidate_gp(indices)
        if gp is not None:
            return sample_candidate_maxima(gp, bounds, *options, num_features=self.num_features, seed=self.next_seed())
        with self.seeded():  # no data yet: the priors' own paths
            paths = model.prior_paths(indices, self.num_features)
        chunk = path_chunk(len(indices), self.num_features, 0)
        return maximize_per_candidate(paths, len(indices), bounds, *options, seed=self.next_seed(), chunk=chunk)

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
        if self.box:
            return {"task": None, **_spec_fingerprint(self.priors, self.noise_std**2)}
        return {"task": self.prior_source, **_prior_fingerprint(self.priors)}

    def _check_box_descriptor(self, descriptor: dict[str, Any]) -> None:
        r"""The state's box priors must be the policy's own (a spec cannot be rebuilt from a state)."""
        own = self._descriptor()
        same = (
            all(own[key] == descriptor.get(key) for key in ("num_priors", "names", "spec"))
            and math.isclose(own["noise"], float(descriptor.get("noise", math.nan)), rel_tol=1e-6)
        )
        if not same:
            raise ValueError(
                f"state['extra']['priors'] describes other priors than {self.name}'s "
                f"({descriptor.get('names')} vs {own['names']}); construct it with the same priors=..."
            )

    def _priors_from_descriptor(self, descriptor: dict[str, Any]) -> tuple[TabularPriors, str | None]:
        r"""The state's priors: the policy's own (when it has them) or the task's, checked by fingerprint."""
        if not isinstance(descriptor, dict):
            raise ValueError("state['extra']['priors'] must be a dict or None.")
        if self.box:
            self._check_box_descriptor(descriptor)
            return self.priors, None
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
        # The observation history: the model is rebuilt from it (arm indices on a pool, points on a box).
        history = "train_X" if self.box else "train_indices"
        return {
            "priors": self._descriptor(),
            "prior_ids": list(self.prior_ids) if model is not None else None,
            "true_prior": self.true_prior,
            history: getattr(model, history).tolist() if model is not None else [],
            "train_Y": model.train_Y.tolist() if model is not None else [],
            "round": self.round,
            "pending": None if self.pending is None else dict(self.pending),
            **self._rule_state(),
        }

    def _check_extra_state(self, extra: dict[str, Any]) -> None:
        try:
            descriptor, prior_ids, true_prior = extra["priors"], extra["prior_ids"], extra["true_prior"]
            indices, targets = list(extra["train_X" if self.box else "train_indices"]), list(extra["train_Y"])
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
        num_total = len(priors)
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
        if self.box:
            self._check_box_history(indices, targets, pending, len(prior_ids))
        else:
            num_arms = priors.num_arms
            if len(indices) != len(targets) or not all(isinstance(i, int) and 0 <= i < num_arms for i in indices):
                raise ValueError(
                    "state['extra']['train_indices'] / ['train_Y'] must be equally long, with arm indices."
                )
            if pending is not None and not (
                isinstance(pending, dict)
                and 0 <= int(pending.get("prior", -1)) < len(prior_ids)
                and 0 <= int(pending.get("arm", -1)) < num_arms
            ):
                raise ValueError("state['extra']['pending'] must be None or a selection {prior, arm, ...}.")
        if not all(isinstance(y, (int, float)) and math.isfinite(y) for y in targets):
            raise ValueError("state['extra']['train_Y'] must hold finite numbers.")
        self._check_rule_state(extra, len(prior_ids))

    def _check_box_history(
        self, points: list[Any], targets: list[Any], pending: dict[str, Any] | None, num_priors: int
    ) -> None:
        domain = self.domain.to(device="cpu", dtype=torch.float64)

        def in_box(x: Any) -> bool:
            try:
                tensor = torch.tensor(x, dtype=torch.float64)
            except (TypeError, ValueError, RuntimeError):
                return False
            return tensor.shape == (domain.dim,) and bool(torch.isfinite(tensor).all() and domain.contains(tensor))

        if len(points) != len(targets) or not all(in_box(x) for x in points):
            raise ValueError("state['extra']['train_X'] / ['train_Y'] must be equally long, with points in the box.")
        if pending is not None and not (
            isinstance(pending, dict) and 0 <= int(pending.get("prior", -1)) < num_priors and in_box(pending.get("x"))
        ):
            raise ValueError("state['extra']['pending'] must be None or a selection {prior, x, ...}.")

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
        chosen = priors if self.prior_ids == list(range(len(priors))) else priors.subset(self.prior_ids)
        if self.box:
            # The CandidateGP is rebuilt from all data at the next use, as every round.
            tkwargs = {"device": self.device, "dtype": self.dtype}
            train_X = torch.tensor(extra["train_X"], **tkwargs).reshape(-1, self.domain.dim)
            self.model = BoxPriors(chosen, self.domain.bounds, train_X, torch.tensor(extra["train_Y"], **tkwargs))
        else:
            self.model = TabularPriorGP(chosen)
            # Replaying the same rank-one updates in the same order rebuilds the state bit for bit.
            for index, y in zip(extra["train_indices"], extra["train_Y"]):
                self.model.condition(int(index), float(y))
        self._load_rule_state(extra)


# --------------------------------------------------------------------------- elimination


class PEGPTS(EliminationMixin, TabularPriorPolicy):
    r"""PE-GP-TS (Alg. 1): joint Thompson sampling over (arm, active prior), prior elimination.

    Args:
        domain: The arms (:class:`~botorch_unknown_hypers.problems.base.FiniteDomain`) or a
            box (:class:`~botorch_unknown_hypers.problems.base.BoxDomain`, ``priors`` a
            ``CandidateSpec``).
        delta: :math:`\delta` of the Theorem 4.1 constants (0.05 in the paper).
        num_arms_equivalent: Replaces :math:`|\mathcal{X}|` in :math:`\beta_t` (e.g. the size of
            a grid that resolves the box); ``None`` (default): the pool size on a pool,
            :func:`box_num_arms` on a box.
        lipschitz: ``(a, b)`` of :func:`box_num_arms` (box only, ``num_arms_equivalent=None``),
            for :math:`f` on the unit cube the GPs see.
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

    def __init__(
        self,
        domain: Domain,
        delta: float = 0.05,
        num_arms_equivalent: float | None = None,
        lipschitz: tuple[float, float] = (1.0, 1.0),
        **kwargs: Any,
    ) -> None:
        if not (isinstance(delta, (int, float)) and 0 < delta < 1):
            raise ValueError(f"delta must lie in (0, 1), got {delta!r}.")
        if num_arms_equivalent is not None and not (
            isinstance(num_arms_equivalent, (int, float)) and math.isfinite(num_arms_equivalent)
            and num_arms_equivalent >= 1
        ):
            raise ValueError(f"num_arms_equivalent must be None or a finite number >= 1, got {num_arms_equivalent!r}.")
        self.delta = float(delta)
        self.num_arms_equivalent = None if num_arms_equivalent is None else float(num_arms_equivalent)
        self.lipschitz = (float(lipschitz[0]), float(lipschitz[1]))
        if isinstance(domain, BoxDomain):
            box_num_arms(1, domain.dim, self.delta, *self.lipschitz)  # rejects bad (a, b) early
        self.alive, self.eliminated_at, self.kept_last = [], {}, []
        self.play_prior: list[int] = []
        self.play_eta: list[float] = []
        self.play_width: list[float] = []
        super().__init__(domain, **kwargs)

    def _start(self, num_priors: int) -> None:
        self.alive = [True] * num_priors
        self.eliminated_at, self.kept_last = {}, []
        self.play_prior, self.play_eta, self.play_width = [], [], []

    def num_arms(self, t: int) -> float:
        r""":math:`|\mathcal{X}|` in :math:`\beta_t`: ``num_arms_equivalent`` if given, else the pool
        size, or on a box Srinivas' discretisation size :func:`box_num_arms` at round ``t`` (for
        the unit cube the GPs see, :math:`r = 1`)."""
        if self.num_arms_equivalent is not None:
            return self.num_arms_equivalent
        if self.box:
            return box_num_arms(t, self.domain.dim, self.delta, *self.lipschitz)
        return self.model.num_arms

    def sqrt_beta(self, t: int) -> float:
        r""":math:`\sqrt{\beta_t}` with :meth:`num_arms` and the model's :math:`|\mathcal{P}|`."""
        return math.sqrt(pe_beta(t, self.num_arms(t), self.model.num_priors, self.delta))

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

    def _select_on_box(self, model: BoxPriors, active: list[int], sqrt_beta: float) -> tuple[Tensor, int]:
        r"""Box, lines 3-4: ``(x_t, local index of p_t in active)``, jointly over (point, active prior)."""
        bounds, options = self.domain.bounds, (self.num_restarts, self.raw_samples)
        gp = model.candidate_gp(active)
        if self.optimistic and gp is not None:  # PE-GP-UCB: the doubly optimistic joint maximiser
            x, local, _ = optimize_ucb_joint(gp, sqrt_beta, bounds, *options, seed=self.next_seed())
            return x, local
        if self.optimistic:  # no data yet: the priors' own UCBs, maximised per prior
            X_best, values = maximize_per_candidate(
                model.prior_ucb(active, sqrt_beta), len(active), bounds, *options, seed=self.next_seed()
            )
        else:  # Alg. 1 line 3: one independent path per active prior, each maximised
            X_best, values = self._path_maxima(model, active)
        local = random_argmax(values, self.generator)  # line 4: the best (point, prior) pair
        return X_best[local], local

    def _suggest(self, train_X: Tensor, train_Y: Tensor, q: int) -> Tensor:
        if q != 1:
            raise ValueError(f"q: {self.name} proposes one arm per round (q = 1), got {q}.")
        model = self._sync(train_X, train_Y)
        t = self.round + 1
        active = [p for p, alive in enumerate(self.alive) if alive]
        if self.box:
            return self._suggest_on_box(model, active, t)
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
        self._selected(prior, sigma, sqrt_beta, len(active))
        return self.domain.points[arm].unsqueeze(0)

    def _suggest_on_box(self, model: BoxPriors, active: list[int], t: int) -> Tensor:
        sqrt_beta = self.sqrt_beta(t)
        x, local = self._select_on_box(model, active, sqrt_beta)
        prior = active[local]
        # Alg. 1 lines 7-8: mu_{t,p_t}(x_t) and the width, at selection time (CandidateGP on D_{t-1})
        mean, variance = model.mean_variance(x.unsqueeze(0), active)
        sigma = float(variance[local, 0].clamp_min(0).sqrt())
        self.pending = {
            "prior": prior,
            "x": x.tolist(),
            "mean": float(mean[local, 0]),
            "sigma": sigma,
            "sqrt_beta": sqrt_beta,
            "width": sqrt_beta * sigma,
        }
        self._selected(prior, sigma, sqrt_beta, len(active))
        return x.unsqueeze(0)

    def _selected(self, prior: int, sigma: float, sqrt_beta: float, num_active: int) -> None:
        self.selected = [self._labels()[prior]]
        self.n_candidates = num_active
        self.diagnostics = {
            "prior": self.prior_ids[prior],
            "true_prior": self.true_prior,
            "sigma": sigma,
            "sqrt_beta": sqrt_beta,
        }

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
    needs_paths = False


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
        domain: The arms (:class:`~botorch_unknown_hypers.problems.base.FiniteDomain`) or a
            box (:class:`~botorch_unknown_hypers.problems.base.BoxDomain`, ``priors`` a
            ``CandidateSpec``).
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
        if self.box:
            # Alg. 2 lines 3-4: one posterior sample path of p_t only (all data), maximised on the box
            X_best, _ = self._path_maxima(model, [prior])
            X = X_best[:1]
            self.pending = {"prior": prior, "x": X[0].tolist()}
        else:
            # Alg. 2 lines 3-4: one joint posterior sample of p_t only, and its argmax
            sample = model.sample(1, generator=self._sample_generator(), prior_indices=[prior])[0, 0]
            arm = random_argmax(sample, self.generator)
            self.pending = {"prior": prior, "arm": arm}
            X = self.domain.points[arm].unsqueeze(0)
        self.selected = [self._labels()[prior]]
        self.n_candidates = model.num_priors
        self.diagnostics = {"prior": self.prior_ids[prior], "true_prior": self.true_prior}
        return X

    def _condition(self, location: int | Tensor, y: Tensor) -> None:
        # Alg. 2 line 6: every prior's one-step predictive likelihood, before conditioning
        log_likelihood = self.model.predictive_log_likelihood(location, y).to(device="cpu", dtype=torch.float64)
        self.log_evidence = self.log_evidence + log_likelihood
        unnormalised = self.log_hyperposterior + log_likelihood
        self.log_hyperposterior = unnormalised - torch.logsumexp(unnormalised, dim=0)
        super()._condition(location, y)

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
