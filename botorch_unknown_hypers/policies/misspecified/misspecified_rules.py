r"""Misspecified kernelised bandits: EC-GP-UCB, phased GP uncertainty sampling, regret balancing.

Bogunovic & Krause (NeurIPS 2021). The learner knows the kernel :math:`k` (:math:`k(x, x) \le 1`),
the domain and a norm bound :math:`B`, but :math:`f^*` is only :math:`\epsilon`-close to the RKHS
ball (Eq. 3). None of the rules fits hyperparameters: all use kernel ridge regression with the
known kernel and a regulariser :math:`\lambda`
(:class:`~botorch_unknown_hypers.models.kernel_ridge.KernelRidge`) and the width of Lemma 1 (Eq. 13,
variance form; :func:`~botorch_unknown_hypers.misspecification.confidence_width`).

1. :class:`ECGPUCB` (``ec-gp-ucb``, Alg. 1, :math:`\epsilon` known): the enlarged UCB (Eq. 14)
   :math:`x_t = \arg\max_x \mu^*_{t-1}(x) + (\beta_t + \epsilon\sqrt t/\sqrt\lambda)\sigma_{t-1}(x)`;
   with :math:`\epsilon = 0` it is GP-UCB with the Lemma 1 width.
2. :class:`PhasedGPUS` (``phased-gp-us``, Alg. 2, :math:`\epsilon` unknown) on a finite domain (a box
   is replaced by its Sobol discretisation of user-chosen size): episodes of length
   :math:`2^{e-1}` that restart from the prior and query :math:`\arg\max_{x \in D_e}\sigma^2_{t-1}(x)`
   (Eq. 19); after each, the elimination of Eq. 20 without an :math:`\epsilon` term.
3. :class:`RegretBalancing` (``regret-balancing``, Alg. 3): :math:`M` EC-GP-UCB bases with
   :math:`\hat\epsilon_i = 2^{1-i}/\sqrt{\gamma_T}`, balanced by their candidate regret bounds
   (Eqs. 23, 85) and eliminated by the test of Eq. 24 (per-play averages by default).

Every arg max breaks ties by the lowest index; kernel inputs are scaled to the unit cube;
:math:`\sigma_0(x) = \sqrt{k(x, x)}`. The constants :math:`c'_1, c'_2, c` of Alg. 3 are practical
defaults (the theoretical ones make every bound :math:`N`, i.e. round-robin). Every choice where
the paper is ambiguous, and the study: ``docs/misspecified-bandits.md``.

References:
    I. Bogunovic, A. Krause. Misspecified Gaussian Process Bandit Optimization. NeurIPS 2021.
    A. Pacchiano, C. Dann, C. Gentile, P. Bartlett. Regret Bound Balancing and Elimination for
    Model Selection in Bandits and RL. arXiv:2012.13045, 2020.
    S. R. Chowdhury, A. Gopalan. On Kernelized Multi-armed Bandits. ICML 2017.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import Tensor

from botorch_unknown_hypers.models.kernel_ridge import (
    KernelRidge,
    collapse_replicates,
    greedy_information_gain,
)
from botorch_unknown_hypers.domains import Domain
from botorch_unknown_hypers.host import host_tensor
from botorch_unknown_hypers.misspecification import (
    ELIMINATION_TESTS,
    balancing_eliminations,
    candidate_regret_bounds,
    enlarged_width,
    epsilon_grid,
    phased_elimination,
)
from botorch_unknown_hypers.checks import check_bool, check_choice, check_int, check_nonnegative, check_positive
from botorch_unknown_hypers.policies.misspecified.known_kernel import KnownKernelPolicy
from botorch_unknown_hypers.policies.json_state import JSONValue

def _require_single(q: int, name: str) -> None:
    if q != 1:
        raise ValueError(f"q: {name} is sequential (one point per round), got q = {q}.")


# --------------------------------------------------------------------------- #
# Algorithm 1
# --------------------------------------------------------------------------- #


class ECGPUCB(KnownKernelPolicy):
    r"""EC-GP-UCB (Alg. 1): GP-UCB with the confidence width enlarged by :math:`\epsilon\sqrt t/\sqrt\lambda`.

    .. math::

        x_t = \arg\max_{x} \mu^*_{t-1}(x) + \Big(\beta_t + \frac{\epsilon\sqrt t}{\sqrt\lambda}\Big)\sigma_{t-1}(x),

    :math:`\beta_t` from Eq. 13 (variance form), :math:`t` = observations used + 1.
    ``eps = 0`` is GP-UCB with the Lemma 1 width. Stateless given the data.

    Args (beyond :class:`KnownKernelPolicy`'s):
        eps: The known misspecification :math:`\epsilon \ge 0` (default 0).

    Example:
        >>> policy = ECGPUCB(FiniteDomain(points), eps=0.1, kernel="rbf", lengthscale=0.2)
        >>> x = policy.suggest(train_X, train_Y)  # 1 x d
    """

    name = "ec-gp-ucb"

    def __init__(
        self,
        domain: Domain,
        seed: int = 0,
        device: torch.device | str | None = None,
        dtype: torch.dtype = torch.float64,
        eps: float = 0.0,
        **options: Any,
    ) -> None:
        check_nonnegative("eps", eps)
        super().__init__(domain, seed=seed, device=device, dtype=dtype, **options)
        self.eps = float(eps)
        self.last_beta = float("nan")
        self.last_width = float("nan")

    def _suggest(self, train_X: Tensor, train_Y: Tensor, q: int) -> Tensor:
        _require_single(q, "ec-gp-ucb")
        model = self.posterior(train_X, train_Y)
        t = model.num_observations + 1
        beta = self.width(model)  # Alg. 1, line 4: beta_t (Eq. 13)
        width = enlarged_width(beta, self.eps, t, self.lam)  # + eps sqrt(t) / sqrt(lambda) (Eq. 14)
        X = self.maximize_ucb(model, width)
        self.last_beta, self.last_width = beta, width
        self.selected = [f"eps={self.eps:g}"]
        self.n_candidates = 1
        self.diagnostics = {"beta": beta, "width": width}
        return X


# --------------------------------------------------------------------------- #
# Algorithm 2
# --------------------------------------------------------------------------- #


@dataclass
class PhasedState:
    r"""Phased uncertainty sampling's memory.

    Attributes:
        episode: The current episode :math:`e`.
        active: Indices (into :math:`D`) of the current :math:`D_e`.
        active_sets: :math:`[D_1, D_2, \dots]`.
        episode_X, episode_Y: The current episode's observations.
        episode_log: Per finished episode: length, :math:`\beta`, :math:`|D_e|`, :math:`|D_{e+1}|`,
            :math:`\max_{D_e}\sigma_{m_e}` and the lower-bound maximiser.
        discretization_seed: Seed of the Sobol discretisation of a box.
    """

    episode: int = 1
    active: list[int] = field(default_factory=list)
    active_sets: list[list[int]] = field(default_factory=list)
    episode_X: list[list[float]] = field(default_factory=list)
    episode_Y: list[float] = field(default_factory=list)
    episode_log: list[JSONValue] = field(default_factory=list)
    discretization_seed: int = 0

    def check(self) -> None:
        if self.episode < 1 or not self.active:
            raise ValueError("episode must be >= 1 and active non-empty.")
        if len(self.episode_X) != len(self.episode_Y) or len(self.episode_X) >= 2 ** (self.episode - 1):
            raise ValueError("episode_X and episode_Y must be equally long, shorter than the episode.")


class PhasedGPUS(KnownKernelPolicy):
    r"""Phased GP uncertainty sampling (Alg. 2): episodes of :math:`2^{e-1}` variance-maximising
    queries in the surviving set :math:`D_e`, then the elimination of Eq. 20.

    Each episode starts from the prior (earlier episodes' data are discarded):
    :math:`x_t = \arg\max_{x \in D_e}\sigma^2_{t-1}(x)` (Eq. 19, lowest pool index on ties;
    points may repeat). After :math:`m_e` observations, :math:`\mu^*_{m_e}`,
    :math:`\sigma_{m_e}` and :math:`\beta_{m_e+1}` (Eq. 13) are computed from the episode's
    own points and

    .. math:: D_{e+1} = \{x \in D_e : \mu^*_{m_e}(x) + \beta_{m_e+1}\sigma_{m_e}(x) \ge
        \max_{x' \in D_e}\mu^*_{m_e}(x') - \beta_{m_e+1}\sigma_{m_e}(x')\}.

    The horizon is not needed: the last episode is simply cut short by the caller.

    Args (beyond :class:`KnownKernelPolicy`'s):
        num_discretization: On a box, the size of the scrambled Sobol discretisation
            (seeded by ``seed``) that plays the role of :math:`D` (default 1024).

    ``selected`` is ``"episode=e"``; ``n_candidates`` is :math:`|D_e|`.

    Attributes:
        pool: ``N x d`` points of :math:`D` (the pool, or the box's discretisation).
        active: Pool indices of the current :math:`D_e`.
        active_sets: :math:`[D_1, D_2, \dots]`, pool indices per episode.
        episode_log: Per finished episode: length, :math:`\beta`, :math:`|D_e|`,
            :math:`|D_{e+1}|`, :math:`\max_{D_e}\sigma_{m_e}` and the lower-bound maximiser.
    """

    name = "phased-gp-us"

    def __init__(
        self,
        domain: Domain,
        seed: int = 0,
        device: torch.device | str | None = None,
        dtype: torch.dtype = torch.float64,
        num_discretization: int = 1024,
        **options: Any,
    ) -> None:
        check_int("num_discretization", num_discretization, 1)
        super().__init__(domain, seed=seed, device=device, dtype=dtype, **options)
        self.num_discretization = num_discretization
        self.state = PhasedState(discretization_seed=self.seed)
        self._build_pool()
        self.state.active = list(range(self.pool.shape[0]))
        self.state.active_sets = [list(self.state.active)]

    def _build_pool(self) -> None:
        self.pool = self.domain.discretize(self.num_discretization, self.state.discretization_seed)
        self._pool_unit_all = self.to_unit(self.pool)

    @property
    def episode_length(self) -> int:
        r""":math:`m_e = 2^{e-1}`."""
        return int(2 ** (self.state.episode - 1))

    def _episode_tensors(self, X_list: list[list[float]], Y_list: list[float]) -> tuple[Tensor, Tensor]:
        d = self.domain.dim
        X = torch.tensor(X_list, dtype=self.dtype, device=self.device).reshape(-1, d)
        Y = torch.tensor(Y_list, dtype=self.dtype, device=self.device).reshape(-1, 1)
        return X, Y

    def _suggest(self, train_X: Tensor, train_Y: Tensor, q: int) -> Tensor:
        st = self.state
        remaining = self.episode_length - len(st.episode_X)
        if q > remaining:
            raise ValueError(
                f"q: episode {st.episode} has {remaining} queries left; a batch cannot cross an "
                f"episode boundary (the elimination needs the episode's observations), got q = {q}."
            )
        X_episode, _ = self._episode_tensors(st.episode_X, st.episode_Y)
        active = host_tensor(st.active, torch.long, self.device)
        candidates = self._pool_unit_all[active]
        picks: list[int] = []
        hallucinated = self.to_unit(X_episode)
        for _ in range(q):  # sequential by definition; the variance needs no y (Eq. 9)
            X_unique, counts, _sums = collapse_replicates(hallucinated, hallucinated.new_zeros(hallucinated.shape[0]))
            model = KernelRidge(self.kernel_module, self.lam, X_unique, counts, counts.new_zeros(counts.shape))
            _, variance = model.mean_variance(candidates)
            j = int(torch.argmax(variance))  # Eq. 19 over D_e
            picks.append(int(active[j]))
            hallucinated = torch.cat([hallucinated, candidates[j : j + 1]])
        self.selected = [f"episode={st.episode}"] * q
        self.n_candidates = len(st.active)
        return self.pool[torch.tensor(picks, dtype=torch.long, device=self.device)]

    def _eliminate(self, X_list: list[list[float]], Y_list: list[float], active: list[int], episode: int) -> tuple[list[int], dict[str, Any]]:
        r"""Eq. 20 on :math:`D_e` = ``active`` from the episode's data; returns :math:`D_{e+1}` and a log entry."""
        X, Y = self._episode_tensors(X_list, Y_list)
        model = self.posterior(X, Y)
        beta = self.width(model)  # beta_{m_e + 1} from the episode's m_e points
        index = torch.tensor(active, dtype=torch.long, device=self.device)
        mean, variance = model.mean_variance(self._pool_unit_all[index])
        std = variance.sqrt()
        keep = phased_elimination(mean, variance, beta)  # Alg. 2, line 10: Eq. 20, no eps term
        survivors = index[keep].tolist()
        entry = {
            "episode": episode,
            "length": len(Y_list),
            "beta": beta,
            "size": len(active),
            "kept": len(survivors),
            "max_std": float(std.max()),
            "lcb_argmax": int(index[int(torch.argmax(mean - beta * std))]),
        }
        return survivors, entry

    def _observe(self, X: Tensor, Y: Tensor) -> None:
        # Work on copies, then commit: a failure leaves the state unchanged.
        st = self.state
        episode, active = st.episode, list(st.active)
        X_list, Y_list = list(st.episode_X), list(st.episode_Y)
        active_sets, log = [list(a) for a in st.active_sets], list(st.episode_log)
        for x, y in zip(X.tolist(), Y.reshape(-1).tolist()):  # sequential: an episode may end mid-batch
            X_list.append([float(v) for v in x])
            Y_list.append(float(y))
            if len(X_list) == 2 ** (episode - 1):  # Alg. 2: end of episode e
                active, entry = self._eliminate(X_list, Y_list, active, episode)
                log.append(entry)
                episode += 1
                active_sets.append(list(active))
                X_list, Y_list = [], []  # reset to the prior (Alg. 2, line 3)
        st.episode, st.active = episode, active
        st.episode_X, st.episode_Y = X_list, Y_list
        st.active_sets, st.episode_log = active_sets, log

    def _check_state(self, state: PhasedState) -> None:
        size = self.domain.discretization_size(self.num_discretization)
        if not all(0 <= i < size for i in [*state.active, *(i for s in state.active_sets for i in s)]):
            raise ValueError(f"state['state']: active sets must hold indices of the {size} points of D.")
        if not all(len(x) == self.domain.dim for x in state.episode_X):
            raise ValueError(f"state['state']['episode_X'] must hold points with d = {self.domain.dim}.")

    def _after_load(self) -> None:
        self._build_pool()  # the discretisation of a box depends on the state's seed

# --------------------------------------------------------------------------- #
# Algorithm 3
# --------------------------------------------------------------------------- #


@dataclass
class BalancingBasesState:
    r"""Regret-bound balancing's memory over the :math:`M` bases.

    Attributes:
        play_count, cumulative_reward, alive: :math:`N_i`, :math:`J_i` and the active set :math:`I_t` as
            flags (the survivor layout of every candidate-set rule).
        base_of_round: The base played in each observed round.
        eliminated_at: Base -> round of its elimination.
        pending_base: The base whose point awaits its observation.
    """

    play_count: list[int] = field(default_factory=list)
    cumulative_reward: list[float] = field(default_factory=list)
    alive: list[bool] = field(default_factory=list)
    base_of_round: list[int] = field(default_factory=list)
    eliminated_at: dict[int, int] = field(default_factory=dict)
    pending_base: int | None = None

    def check(self) -> None:
        M = len(self.alive)
        if not (M and any(self.alive) and len(self.play_count) == len(self.cumulative_reward) == M):
            raise ValueError("play_count, cumulative_reward and alive must describe the same bases, one active.")
        if any(n < 0 for n in self.play_count) or len(self.base_of_round) != sum(self.play_count):
            raise ValueError("play_count must be non-negative and sum to the number of rounds.")
        indices = [*self.base_of_round, *self.eliminated_at, *([] if self.pending_base is None else [self.pending_base])]
        if not all(0 <= i < M for i in indices):
            raise ValueError(f"base indices must lie in [0, {M}).")


class RegretBalancing(KnownKernelPolicy):
    r"""Regret bound balancing and elimination (Alg. 3) over EC-GP-UCB bases with :math:`\hat\epsilon_i`.

    Each round: :math:`i_t = \arg\min_{i \in I_t}\mathcal R_i(N_i(t-1))` (Eq. 23, lowest
    index on ties); base :math:`i_t` plays its EC-GP-UCB point (Alg. 1 with
    :math:`\hat\epsilon_{i_t}`, on its own data, round index = its data count + 1); then
    :math:`N_{i_t} \mathrel{+}= 1`, :math:`J_{i_t} \mathrel{+}= y_t` and every active base
    failing the test of :func:`balancing_eliminations` leaves :math:`I_{t+1}`.

    Args (beyond :class:`KnownKernelPolicy`'s):
        horizon: :math:`T`, for :math:`\gamma_T` and :math:`M` (default 256).
        gamma_T: :math:`\gamma_T`; ``None`` (default): greedy estimate / (1 - 1/e) on the
            pool (a box: its Sobol discretisation of ``num_discretization`` points).
        num_bases: Override of :math:`M` (default ``None``: the paper's formula, >= 1).
        c1, c2: :math:`c'_1, c'_2` of Eq. 85 (defaults 0.1 and 1, practical, see the module).
        c: :math:`c` of Eq. 24 (default ``None``: :math:`\sqrt2\,\sigma`).
        regret_cap: Largest regret of one round, the cap :math:`rN` (default 1, the
            paper's :math:`f^* \in [0, 1]`).
        share_data: Every base uses all data (default ``False``: own rounds only).
        elimination_test: ``"normalized"`` (default) or ``"as-printed"``.
        num_discretization: See ``gamma_T`` (default 1024).

    ``selected`` is ``"eps=<eps_hat of the played base>"``; ``n_candidates`` is :math:`|I_t|`.
    Only the played base's posterior is computed each round (bases differ in data and
    width, and only one plays), so there is no loop over bases.

    Attributes:
        eps_grid: :math:`\hat\epsilon_1 > \dots > \hat\epsilon_M`.
        state: :class:`BalancingBasesState`.
    """

    name = "regret-balancing"

    def __init__(
        self,
        domain: Domain,
        seed: int = 0,
        device: torch.device | str | None = None,
        dtype: torch.dtype = torch.float64,
        horizon: int = 256,
        gamma_T: float | None = None,
        num_bases: int | None = None,
        c1: float = 0.1,
        c2: float = 1.0,
        c: float | None = None,
        regret_cap: float = 1.0,
        share_data: bool = False,
        elimination_test: str = "normalized",
        num_discretization: int = 1024,
        **options: Any,
    ) -> None:
        check_int("horizon", horizon, 1)
        if gamma_T is not None:
            check_positive("gamma_T", gamma_T)
        if num_bases is not None:
            check_int("num_bases", num_bases, 1)
        check_nonnegative("c1", c1)
        check_nonnegative("c2", c2)
        if c is not None:
            check_nonnegative("c", c)
        check_positive("regret_cap", regret_cap)
        check_bool("share_data", share_data)
        check_choice("elimination_test", elimination_test, ELIMINATION_TESTS)
        check_int("num_discretization", num_discretization, 1)
        super().__init__(domain, seed=seed, device=device, dtype=dtype, **options)
        self.horizon = horizon
        if gamma_T is None:
            points = self.to_unit(self.domain.discretize(num_discretization, self.seed))
            greedy, _ = greedy_information_gain(self.kernel_module, points, self.lam, horizon)
            gamma_T = max(greedy / (1.0 - 1.0 / math.e), 1e-12)
        self.gamma_T = float(gamma_T)
        self.eps_grid = epsilon_grid(self.gamma_T, horizon, num_bases)
        self.c1, self.c2 = float(c1), float(c2)
        self.c = math.sqrt(2.0) * self.noise_std if c is None else float(c)
        self.regret_cap = float(regret_cap)
        self.share_data = share_data
        self.elimination_test = elimination_test
        M = len(self.eps_grid)
        self.state = BalancingBasesState(play_count=[0] * M, cumulative_reward=[0.0] * M, alive=[True] * M)
        self.last_beta = float("nan")
        self.last_width = float("nan")

    @property
    def num_bases(self) -> int:
        return len(self.eps_grid)

    def bounds(self, play_count: list[int] | None = None) -> Tensor:
        r"""``M`` candidate bounds :math:`\mathcal R_i(N_i)` (Eq. 85) at ``play_count`` (default: current)."""
        counts = torch.tensor(self.state.play_count if play_count is None else play_count, dtype=self.dtype)
        eps_hat = torch.tensor(self.eps_grid, dtype=self.dtype)
        return candidate_regret_bounds(counts, eps_hat, self.gamma_T, self.B, self.c1, self.c2, self.regret_cap)

    def choose_base(self) -> int:
        r"""Eq. 23: :math:`\arg\min_{i \in I_t}\mathcal R_i(N_i(t-1))`, lowest index on ties."""
        bounds = self.bounds()
        bounds[~torch.tensor(self.state.alive)] = math.inf
        return int(torch.argmin(bounds))

    def _base_data(self, base: int, train_X: Tensor, train_Y: Tensor) -> tuple[Tensor, Tensor]:
        if self.share_data:
            return train_X, train_Y
        played = self.state.base_of_round
        n_initial = train_X.shape[0] - len(played)
        if n_initial < 0:
            raise ValueError(f"train_X: {train_X.shape[0]} rows, but the policy observed {len(played)} rounds.")
        rounds = torch.tensor(played, dtype=torch.long, device=train_X.device)
        mask = torch.cat([torch.ones(n_initial, dtype=torch.bool, device=train_X.device), rounds == base])
        return train_X[mask], train_Y[mask]

    def _suggest(self, train_X: Tensor, train_Y: Tensor, q: int) -> Tensor:
        _require_single(q, "regret-balancing")
        base = self.choose_base()  # Alg. 3, line 4 (Eq. 23)
        X_base, Y_base = self._base_data(base, train_X, train_Y)
        model = self.posterior(X_base, Y_base)
        beta = self.width(model)
        width = enlarged_width(beta, self.eps_grid[base], model.num_observations + 1, self.lam)
        X = self.maximize_ucb(model, width)  # Alg. 3, line 5: Base_{i_t} plays
        self.state.pending_base = base
        self.last_beta, self.last_width = beta, width
        self.selected = [f"eps={self.eps_grid[base]:.6g}"]
        self.n_candidates = sum(self.state.alive)
        self.diagnostics = {"base": base, "beta": beta, "width": width}
        return X

    def _observe(self, X: Tensor, Y: Tensor) -> None:
        st = self.state
        base = st.pending_base if st.pending_base is not None else self.choose_base()
        play_count, cumulative_reward = list(st.play_count), list(st.cumulative_reward)
        active, eliminated_at = list(st.alive), dict(st.eliminated_at)
        rounds = list(st.base_of_round)
        for y in Y.reshape(-1).tolist():
            play_count[base] += 1  # Alg. 3, line 6 (N_{i_t}(t) = N_{i_t}(t-1) + 1)
            cumulative_reward[base] += float(y)
            rounds.append(base)
            fails = balancing_eliminations(  # Alg. 3, line 7: Eq. 24
                torch.tensor(cumulative_reward, dtype=self.dtype),
                torch.tensor(play_count),
                self.bounds(play_count),
                torch.tensor(active),
                self.c,
                self.delta,
                self.elimination_test,
            )
            for i in fails.nonzero().flatten().tolist():
                active[i] = False
                eliminated_at[i] = len(rounds)
        st.play_count, st.cumulative_reward = play_count, cumulative_reward
        st.alive, st.eliminated_at, st.base_of_round = active, eliminated_at, rounds
        st.pending_base = None

    def _check_state(self, state: BalancingBasesState) -> None:
        if len(state.alive) != self.num_bases:
            raise ValueError(f"state['state'] must describe the {self.num_bases} bases of this policy.")


__all__ = ["ECGPUCB", "KnownKernelPolicy", "PhasedGPUS", "RegretBalancing"]
