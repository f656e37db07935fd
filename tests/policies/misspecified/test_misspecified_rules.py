"""Tests of the misspecified-bandit policies: EC-GP-UCB, Phased GP-US and regret balancing
(their closed-form widths and bounds are tested in tests/test_misspecification.py)."""

from __future__ import annotations

import json
import math

import pytest
import torch

from botorch_unknown_hypers.models.kernel_ridge import make_known_kernel
from botorch_unknown_hypers.policies.misspecified.misspecified_rules import ECGPUCB, PhasedGPUS, RegretBalancing
from botorch_unknown_hypers.misspecification import epsilon_grid
from botorch_unknown_hypers.domains import BoxDomain, FiniteDomain

DTYPES = (torch.float64, torch.float32)
FAST = dict(num_restarts=2, raw_samples=32)
RBF = dict(kernel="rbf", lengthscale=0.3)


def rbf(A: torch.Tensor, B: torch.Tensor, lengthscale: float) -> torch.Tensor:
    return torch.exp(-torch.cdist(A, B).square() / (2 * lengthscale**2))


def pool_domain(n: int = 25, d: int = 1, seed: int = 0, dtype: torch.dtype = torch.float64) -> FiniteDomain:
    g = torch.Generator().manual_seed(seed)
    points = torch.rand(n, d, generator=g, dtype=torch.float64)
    points[0], points[1] = 0.0, 1.0  # bounding box = unit cube: kernel inputs are the raw points
    return FiniteDomain(points.to(dtype))


def objective(X: torch.Tensor) -> torch.Tensor:
    return torch.sin(5 * X.sum(-1)) + 0.3 * X[..., 0]


def play(policy, rounds: int, X=None, Y=None, noise_seed: int = 0):
    d = policy.domain.dim
    X = torch.empty(0, d, dtype=policy.dtype) if X is None else X
    Y = torch.empty(0, 1, dtype=policy.dtype) if Y is None else Y
    g = torch.Generator().manual_seed(noise_seed)
    for _ in range(rounds):
        x = policy.suggest(X, Y)
        y = objective(x).unsqueeze(-1) + 0.1 * torch.randn(1, 1, generator=g, dtype=policy.dtype)
        policy.observe(x, y)
        X, Y = torch.cat([X, x]), torch.cat([Y, y])
    return X, Y


# --------------------------------------------------------------------------- #
# posterior against brute force
# --------------------------------------------------------------------------- #


def brute_force_posterior(Xtr, Ytr, Xte, lengthscale, lam):
    K = rbf(Xtr, Xtr, lengthscale) + lam * torch.eye(len(Xtr), dtype=Xtr.dtype)
    k = rbf(Xtr, Xte, lengthscale)
    mean = k.T @ torch.linalg.solve(K, Ytr.reshape(-1))
    var = 1.0 - (k * torch.linalg.solve(K, k)).sum(0)
    return mean, var


@pytest.mark.parametrize("dtype", DTYPES)
def test_posterior_matches_brute_force_on_pool_with_replicates(dtype):
    domain = pool_domain(30, d=2, dtype=dtype)
    policy = ECGPUCB(domain, lam=0.5, **RBF, dtype=dtype)
    idx = torch.tensor([3, 7, 3, 12, 7, 3, 20])  # replicated points
    X, Y = domain.points[idx], objective(domain.points[idx]).unsqueeze(-1)
    model = policy.posterior(X, Y)
    mean, var = model.mean_variance(domain.points)
    ref_mean, ref_var = brute_force_posterior(X.double(), Y.double(), domain.points.double(), 0.3, 0.5)
    tol = 1e-9 if dtype == torch.float64 else 1e-4
    assert torch.allclose(mean.double(), ref_mean, atol=tol)
    assert torch.allclose(var.double(), ref_var, atol=tol)
    # log_det = sum_s ln(1 + sigma^2_{s-1}(x_s) / lam) computed one point at a time
    seq = 0.0
    for s in range(len(idx)):
        _, v = brute_force_posterior(X[:s].double(), Y[:s].double(), X[s : s + 1].double(), 0.3, 0.5) if s else (
            None,
            torch.ones(1, dtype=torch.float64),
        )
        seq += math.log1p(float(v) / 0.5)
    assert model.log_det == pytest.approx(seq, rel=1e-8 if dtype == torch.float64 else 1e-4)
    assert model.num_observations == len(idx)


@pytest.mark.parametrize("dtype", DTYPES)
def test_box_posterior_and_ucb_model_match_brute_force(dtype):
    bounds = torch.tensor([[-1.0, 2.0], [3.0, 4.0]], dtype=dtype)
    domain = BoxDomain(bounds)
    policy = ECGPUCB(domain, lam=0.3, **RBF, dtype=dtype, **FAST)
    g = torch.Generator().manual_seed(3)
    X = (bounds[0] + (bounds[1] - bounds[0]) * torch.rand(9, 2, generator=g, dtype=torch.float64)).to(dtype)
    Y = objective(X).unsqueeze(-1)
    Xte = (bounds[0] + (bounds[1] - bounds[0]) * torch.rand(5, 2, generator=g, dtype=torch.float64)).to(dtype)
    unit = lambda Z: (Z.double() - bounds[0].double()) / (bounds[1] - bounds[0]).double()  # noqa: E731
    ref_mean, ref_var = brute_force_posterior(unit(X), Y.double(), unit(Xte), 0.3, 0.3)
    mean, var = policy.posterior(X, Y).mean_variance(policy.to_unit(Xte))
    tol = 1e-9 if dtype == torch.float64 else 1e-4
    assert torch.allclose(mean.double(), ref_mean, atol=tol) and torch.allclose(var.double(), ref_var, atol=tol)
    from botorch_unknown_hypers.models.kernel_ridge import known_kernel_gp

    post = known_kernel_gp(X, Y, policy.kernel_module, 0.3, bounds).posterior(Xte)
    assert torch.allclose(post.mean.squeeze(-1).double(), ref_mean, atol=tol)
    assert torch.allclose(post.variance.squeeze(-1).double(), ref_var, atol=tol)


# --------------------------------------------------------------------------- #
# EC-GP-UCB
# --------------------------------------------------------------------------- #


def brute_force_gp_ucb(points, rounds, lam, noise_std, delta, B, lengthscale, noise_seed):
    r"""GP-UCB with the Eq. 13 width, every quantity recomputed from scratch (float64)."""
    chosen, ys = [], []
    g = torch.Generator().manual_seed(noise_seed)
    info_sum = 0.0  # sum_{s < t} ln(1 + sigma^2_{s-1}(x_s) / lam)
    for _ in range(rounds):
        if chosen:
            Xtr = points[chosen]
            mean, var = brute_force_posterior(Xtr, torch.tensor(ys, dtype=torch.float64), points, lengthscale, lam)
        else:
            mean, var = torch.zeros(len(points), dtype=torch.float64), torch.ones(len(points), dtype=torch.float64)
        beta = noise_std / math.sqrt(lam) * math.sqrt(2 * math.log(1 / delta) + info_sum) + B
        j = int(torch.argmax(mean + beta * var.clamp_min(0).sqrt()))
        info_sum += math.log1p(float(var[j]) / lam)
        chosen.append(j)
        x = points[j : j + 1]
        ys.append(float(objective(x)) + 0.1 * float(torch.randn(1, 1, generator=g, dtype=torch.float64)))
    return chosen


def test_ec_gp_ucb_with_eps_zero_is_brute_force_gp_ucb():
    domain = pool_domain(40)
    policy = ECGPUCB(domain, eps=0.0, lam=0.2, noise_std=0.1, delta=0.05, B=0.5, **RBF)
    X, _ = play(policy, 15, noise_seed=4)
    expected = brute_force_gp_ucb(domain.points, 15, 0.2, 0.1, 0.05, 0.5, 0.3, noise_seed=4)
    assert domain.index_of(X).tolist() == expected
    assert len(set(expected)) > 3  # not a degenerate run


@pytest.mark.parametrize("dtype", DTYPES)
def test_ec_gp_ucb_width_and_labels(dtype):
    domain = pool_domain(20, dtype=dtype)
    policy = ECGPUCB(domain, eps=0.3, lam=4.0, **RBF, dtype=dtype)
    X, Y = play(policy, 5)
    x = policy.suggest(X, Y)
    model = policy.posterior(X, Y)
    beta = policy.width(model)
    assert policy.last_beta == pytest.approx(beta)
    assert policy.last_width == pytest.approx(beta + 0.3 * math.sqrt(6) / 2.0)  # t = 6, sqrt(lam) = 2
    mean, var = model.mean_variance(policy.to_unit(domain.points))
    assert int(domain.index_of(x)) == int(torch.argmax(mean + policy.last_width * var.sqrt()))
    assert policy.selected == ["eps=0.3"] and policy.n_candidates == 1
    assert x.dtype == dtype


def test_ec_gp_ucb_on_box_starts_at_centre_and_stays_inside():
    domain = BoxDomain(torch.tensor([[0.0, -2.0], [1.0, 2.0]], dtype=torch.float64))
    policy = ECGPUCB(domain, eps=0.1, **RBF, **FAST)
    x0 = policy.suggest(torch.empty(0, 2, dtype=torch.float64), torch.empty(0, 1, dtype=torch.float64))
    assert x0.tolist() == [[0.5, 0.0]]
    X, _ = play(policy, 4)
    assert domain.contains(X).all()


# --------------------------------------------------------------------------- #
# Phased GP uncertainty sampling
# --------------------------------------------------------------------------- #


def test_phased_episode_schedule_and_first_elimination_hand_computed():
    points = torch.tensor([[0.0], [0.5], [1.0]], dtype=torch.float64)
    policy = PhasedGPUS(FiniteDomain(points), kernel="rbf", lengthscale=0.5, lam=1.0, noise_std=0.1, B=0.1, delta=0.05)
    empty = (torch.empty(0, 1, dtype=torch.float64), torch.empty(0, 1, dtype=torch.float64))
    # episode 1 (m_1 = 1): prior variance is constant -> lowest index
    x = policy.suggest(*empty)
    assert x.tolist() == [[0.0]] and policy.episode_length == 1
    policy.observe(x, torch.tensor([[2.0]], dtype=torch.float64))
    # hand computation: one point x_0, y = 2, lam = 1, k(0, .5) = e^-0.5, k(0, 1) = e^-2
    k = [1.0, math.exp(-0.5), math.exp(-2.0)]
    mean = [ki * 2.0 / 2.0 for ki in k]
    std = [math.sqrt(1.0 - ki**2 / 2.0) for ki in k]
    beta = 0.1 * math.sqrt(2 * math.log(20) + math.log(2.0)) + 0.1  # beta_2, from the episode's point
    ucb = [m + beta * s for m, s in zip(mean, std)]
    lcb = [m - beta * s for m, s in zip(mean, std)]
    keep = [i for i in range(3) if ucb[i] >= max(lcb)]
    assert keep == [0, 1]  # x_2 is eliminated: 0.49 < 0.75
    assert policy.state.active == keep and policy.state.active_sets == [[0, 1, 2], [0, 1]]
    assert policy.state.episode_log[0]["beta"] == pytest.approx(beta)
    assert policy.state.episode == 2 and policy.episode_length == 2 and policy.state.episode_X == []
    # episode 2 restarts from the prior on D_2 = {0, 1}: first x_0 (tie), then the farther x_1
    x = policy.suggest(*empty)
    assert x.tolist() == [[0.0]]
    policy.observe(x, torch.tensor([[0.0]], dtype=torch.float64))
    assert policy.suggest(*empty).tolist() == [[0.5]]
    assert policy.selected == ["episode=2"] and policy.n_candidates == 2


def test_phased_schedule_lengths_batches_and_maximisation_within_active_set():
    domain = pool_domain(30)
    policy = PhasedGPUS(domain, **RBF)
    X, Y = play(policy, 15)  # episodes of 1, 2, 4, 8 = 15 evaluations
    assert [e["length"] for e in policy.state.episode_log] == [1, 2, 4, 8]
    assert policy.state.episode == 5 and len(policy.state.active_sets) == 5
    for before, after in zip(policy.state.active_sets, policy.state.active_sets[1:]):
        assert set(after) <= set(before) and after
    # a batch within an episode is the sequential variance-maximising design, all inside D_e
    batch = policy.suggest(X, Y, q=3)
    assert set(domain.index_of(batch).tolist()) <= set(policy.state.active)
    with pytest.raises(ValueError, match="q"):
        policy.suggest(X, Y, q=17)


def test_phased_on_box_uses_sobol_discretisation_of_chosen_size():
    domain = BoxDomain(torch.tensor([[0.0, 0.0], [2.0, 1.0]], dtype=torch.float64))
    policy = PhasedGPUS(domain, num_discretization=64, **RBF)
    assert policy.pool.shape == (64, 2) and domain.contains(policy.pool).all()
    X, _ = play(policy, 3)
    pool_rows = torch.cdist(X, policy.pool).min(dim=-1).values
    assert (pool_rows < 1e-12).all()


# --------------------------------------------------------------------------- #
# regret balancing
# --------------------------------------------------------------------------- #


def test_regret_balancing_picks_smallest_candidate_bound():
    policy = RegretBalancing(pool_domain(20), gamma_T=4.0, num_bases=3, c1=0.1, c2=1.0, **RBF)
    assert policy.eps_grid == pytest.approx([0.5, 0.25, 0.125])
    policy.state.play_count = [1, 1, 1]  # bounds [1, 1, 0.85]
    assert policy.choose_base() == 2
    policy.state.play_count = [1, 1, 4]  # bounds [1, 1, 2.2]: tie between 0 and 1 -> lowest index
    assert policy.choose_base() == 0
    policy.state.alive = [False, True, True]
    assert policy.choose_base() == 1


def test_regret_balancing_eliminates_a_base_with_low_rewards():
    policy = RegretBalancing(pool_domain(20), gamma_T=4.0, num_bases=2, c1=0.1, c2=1.0, c=0.0, **RBF)
    X = torch.empty(0, 1, dtype=torch.float64)
    Y = torch.empty(0, 1, dtype=torch.float64)
    bases = []
    for _ in range(6):
        x = policy.suggest(X, Y)
        base = policy.state.pending_base
        bases.append(base)
        y = torch.tensor([[1.0 if base == 0 else -1.0]], dtype=torch.float64)  # base 1 is "inconsistent"
        policy.observe(x, y)
        X, Y = torch.cat([X, x]), torch.cat([Y, y])
    # round 1 plays base 0 (tie), round 2 base 1; then -1 + R_1(1) / 1 = -1 + 0.6 + 0.5 < 1 -> eliminated
    assert bases[:2] == [0, 1]
    assert policy.state.alive == [True, False] and policy.state.eliminated_at == {1: 2}
    assert bases[2:] == [0, 0, 0, 0]
    assert policy.state.play_count == [5, 1] and policy.state.cumulative_reward == pytest.approx([5.0, -1.0])
    assert policy.state.base_of_round == bases


def test_regret_balancing_bases_use_their_own_data():
    domain = pool_domain(20)
    policy = RegretBalancing(domain, gamma_T=4.0, num_bases=2, **RBF)
    X, Y = play(policy, 6)
    base = policy.choose_base()
    X_base, _ = policy._base_data(base, X, Y)
    own = [i for i, b in enumerate(policy.state.base_of_round) if b == base]
    assert torch.equal(X_base, X[own])
    shared = RegretBalancing(domain, gamma_T=4.0, num_bases=2, share_data=True, **RBF)
    assert torch.equal(shared._base_data(base, X, Y)[0], X)


def test_regret_balancing_default_gamma_is_greedy_upper_bound():
    from botorch_unknown_hypers.models.kernel_ridge import greedy_information_gain

    domain = pool_domain(25)
    policy = RegretBalancing(domain, horizon=32, **RBF)
    kernel = make_known_kernel("rbf", 0.3, 1.0, 1)
    greedy, _ = greedy_information_gain(kernel, domain.points, 1.0, 32)
    assert policy.gamma_T == pytest.approx(greedy / (1 - 1 / math.e))
    assert policy.eps_grid == pytest.approx(epsilon_grid(policy.gamma_T, 32))


# --------------------------------------------------------------------------- #
# state round-trip and input validation
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize(
    "cls, options, rounds",
    [
        (ECGPUCB, dict(eps=0.2), 5),
        (PhasedGPUS, {}, 5),  # mid-episode (episode 3, 2 of 4 done)
        (RegretBalancing, dict(num_bases=3, gamma_T=3.0), 7),
    ],
)
@pytest.mark.parametrize("domain_kind", ["pool", "box"])
def test_state_dict_round_trip_gives_identical_suggestions(cls, options, rounds, domain_kind):
    if domain_kind == "pool":
        domain = pool_domain(30, d=2)
    else:
        domain = BoxDomain(torch.tensor([[0.0, 0.0], [1.0, 2.0]], dtype=torch.float64))
        options = dict(options, num_discretization=64) if cls is not ECGPUCB else options
    opts = dict(seed=3, **RBF, **FAST, **options)
    policy = cls(domain, **opts)
    X, Y = play(policy, rounds)
    state = json.loads(json.dumps(policy.state_dict()))
    fresh = cls(domain, **dict(opts, seed=11))
    fresh.load_state_dict(state)
    assert fresh.state_dict() == policy.state_dict()
    x_old, x_new = policy.suggest(X, Y), fresh.suggest(X, Y)
    assert torch.equal(x_old, x_new) and policy.selected == fresh.selected
    y = objective(x_old).unsqueeze(-1)
    policy.observe(x_old, y)
    fresh.observe(x_new, y)
    X, Y = torch.cat([X, x_old]), torch.cat([Y, y])
    assert torch.equal(policy.suggest(X, Y), fresh.suggest(X, Y))


@pytest.mark.parametrize(
    "cls, options, name",
    [
        (ECGPUCB, dict(eps=-0.1), "eps"),
        (ECGPUCB, dict(eps=float("nan")), "eps"),
        (ECGPUCB, dict(lam=0.0), "lam"),
        (ECGPUCB, dict(lam=-1.0), "lam"),
        (ECGPUCB, dict(noise_std=-1.0), "noise_std"),
        (ECGPUCB, dict(B=-1.0), "B"),
        (ECGPUCB, dict(delta=1.0), "delta"),
        (ECGPUCB, dict(outputscale=1.5), "outputscale"),
        (ECGPUCB, dict(lengthscale=0.0), "lengthscale"),
        (ECGPUCB, dict(kernel="cosine"), "kernel"),
        (PhasedGPUS, dict(num_discretization=0), "num_discretization"),
        (RegretBalancing, dict(horizon=0), "horizon"),
        (RegretBalancing, dict(gamma_T=-2.0), "gamma_T"),
        (RegretBalancing, dict(num_bases=0), "num_bases"),
        (RegretBalancing, dict(c1=-1.0), "c1"),
        (RegretBalancing, dict(c2=-1.0), "c2"),
        (RegretBalancing, dict(c=-1.0), "c"),
        (RegretBalancing, dict(regret_cap=0.0), "regret_cap"),
        (RegretBalancing, dict(elimination_test="literal"), "elimination_test"),
    ],
)
def test_bad_options_raise_value_error_naming_the_argument(cls, options, name):
    with pytest.raises(ValueError, match=name):
        cls(pool_domain(10), **options)


@pytest.mark.parametrize("cls", [ECGPUCB, PhasedGPUS, RegretBalancing])
def test_bad_calls_and_states_leave_state_unchanged(cls):
    domain = pool_domain(20)
    policy = cls(domain, **RBF, **({"num_bases": 2, "gamma_T": 3.0} if cls is RegretBalancing else {}))
    X, Y = play(policy, 4)
    before = policy.state_dict()
    if cls is not PhasedGPUS:
        with pytest.raises(ValueError, match="q"):
            policy.suggest(X, Y, q=2)
    with pytest.raises(ValueError):
        policy.observe(torch.tensor([[0.123456]], dtype=torch.float64), torch.zeros(1, 1, dtype=torch.float64))
    bad = json.loads(json.dumps(before))
    key = next(iter(bad["state"])) if bad["state"] else None
    if key is not None:
        bad["state"][key] = "garbage"
        with pytest.raises(ValueError):
            policy.load_state_dict(bad)
    assert policy.state_dict() == before


def test_phased_rejects_inconsistent_episode_state():
    policy = PhasedGPUS(pool_domain(20), **RBF)
    play(policy, 4)
    state = json.loads(json.dumps(policy.state_dict()))
    before = policy.state_dict()
    state["state"]["active"] = [999]
    with pytest.raises(ValueError, match="active"):
        policy.load_state_dict(state)
    state = json.loads(json.dumps(before))
    state["state"]["episode_X"] = [[0.5]] * 4  # more than the episode's length (4)
    state["state"]["episode_Y"] = [0.0] * 4
    with pytest.raises(ValueError, match="episode_X"):
        policy.load_state_dict(state)
    assert policy.state_dict() == before


def test_regret_balancing_rejects_bad_counts():
    policy = RegretBalancing(pool_domain(20), num_bases=2, gamma_T=3.0, **RBF)
    play(policy, 3)
    before = policy.state_dict()
    state = json.loads(json.dumps(before))
    state["state"]["play_count"] = [5, 5]  # does not match base_of_round (3 rounds)
    with pytest.raises(ValueError, match="play_count must .* sum to the number of rounds"):
        policy.load_state_dict(state)
    state = json.loads(json.dumps(before))
    state["state"]["alive"] = [False, False]
    with pytest.raises(ValueError, match="alive must describe the same bases, one active"):
        policy.load_state_dict(state)
    assert policy.state_dict() == before
