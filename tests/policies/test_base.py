"""Tests of the policy interface every rule shares (botorch_unknown_hypers.policies.base):
input checks at the boundary, the JSON state round trip, validated loads that leave a policy
unchanged, and the policy's own seeded randomness."""

from __future__ import annotations

import json
import math
import sys
from dataclasses import dataclass

import pytest
import torch
from botorch.acquisition import PosteriorMean
from botorch.models.deterministic import GenericDeterministicModel

from botorch_unknown_hypers.domains import BoxDomain, FiniteDomain
from botorch_unknown_hypers.policies.base import (
    STATE_VERSION,
    NoState,
    Policy,
    generator_state_from_list,
    generator_state_to_list,
)
from botorch_unknown_hypers.policies.registry import list_methods, make_policy
from botorch_unknown_hypers.policies.tasks import TaskInfo
from botorch_unknown_hypers.rng import draw_seed

BOX = BoxDomain(torch.tensor([[0.0, -1.0], [1.0, 1.0]], dtype=torch.float64))
EMPTY = (torch.empty(0, 2, dtype=torch.float64), torch.empty(0, 1, dtype=torch.float64))


@dataclass
class CounterState:
    count: int = 0
    total: float = 0.0

    def check(self) -> None:
        if self.count < 0:
            raise ValueError(f"count must be >= 0, got {self.count}.")


class Counter(Policy):
    r"""Uniform random points; remembers how many observations it saw and their sum."""

    name = "counter"
    min_observations = 0

    def __init__(self, domain, **kwargs) -> None:
        super().__init__(domain, **kwargs)
        self.state = CounterState()
        self.loads = 0

    def _suggest(self, train_X, train_Y, q):
        return self.domain.sample_uniform(q, self.generator)

    def _observe(self, X, Y):
        self.state.count += X.shape[0]
        self.state.total += float(Y.sum())

    def _check_state(self, state) -> None:
        if state.total > 1e6:
            raise ValueError("state['state']['total'] is implausibly large.")

    def _after_load(self) -> None:
        self.loads += 1


class WrongShape(Counter):
    name = "wrong-shape"

    def _suggest(self, train_X, train_Y, q):
        return self.domain.sample_uniform(q + 1, self.generator)


def played(seed: int = 0, rounds: int = 3) -> Counter:
    policy = Counter(BOX, seed=seed)
    for r in range(rounds):
        x = policy.suggest(*EMPTY, q=2)
        policy.observe(x, torch.tensor([[float(r)], [1.0]], dtype=torch.float64))
    return policy


# --------------------------------------------------------------------------- #
# construction and the boundary checks
# --------------------------------------------------------------------------- #


def test_defaults_and_the_domain_on_the_policys_dtype():
    policy = Counter(BOX.to(dtype=torch.float32), seed=3)
    assert policy.dtype == torch.float64 and policy.domain.bounds.dtype == torch.float64
    assert policy.device == torch.device("cpu") and policy.seed == 3
    assert policy.num_observed == 0 and policy.selected == [] and policy.n_candidates == 0
    assert policy.diagnostics == {} and policy.robust_point is None
    assert torch.equal(policy.generator.get_state(), torch.Generator().manual_seed(3).get_state())


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"seed": 1.0}, "seed"),
        ({"seed": True}, "seed"),
        ({"seed": "0"}, "seed"),
        ({"dtype": torch.int64}, "dtype"),
        ({"dtype": "float64"}, "dtype"),
        ({"num_restarts": 0}, "num_restarts"),
        ({"num_restarts": 8, "raw_samples": 4}, "raw_samples"),
        ({"search": "adam"}, "search"),
        ({"search": None}, "search"),
    ],
)
def test_bad_options_raise_value_error_naming_the_argument(kwargs, name):
    with pytest.raises(ValueError, match=name):
        Counter(BOX, **kwargs)


def test_a_domain_must_be_a_domain():
    with pytest.raises(ValueError, match="domain must be a BoxDomain, a FiniteDomain or a MixedDomain"):
        Counter(torch.tensor([[0.0], [1.0]]))


@pytest.mark.parametrize("q", [0, -1, True, 1.0, "2"])
def test_suggest_refuses_a_bad_batch_size(q):
    with pytest.raises(ValueError, match="q must be an integer >= 1"):
        Counter(BOX).suggest(*EMPTY, q=q)


def test_suggest_checks_the_data_and_the_rules_answer():
    policy = Counter(BOX)
    with pytest.raises(ValueError, match="train_X"):
        policy.suggest(torch.tensor([[2.0, 0.0]], dtype=torch.float64), torch.zeros(1, 1, dtype=torch.float64))
    with pytest.raises(ValueError, match="train_Y"):
        policy.suggest(torch.tensor([[0.5, 0.0]], dtype=torch.float64), torch.zeros(2, 1, dtype=torch.float64))
    with pytest.raises(ValueError, match="train_Y"):
        policy.suggest(torch.tensor([[0.5, 0.0]], dtype=torch.float64), torch.tensor([float("nan")], dtype=torch.float64))
    # n x 1 and n targets, float32 data: accepted and the batch is in the policy's dtype
    X = policy.suggest(torch.tensor([[0.5, 0.0]]), torch.tensor([0.3]), q=3)
    assert X.shape == (3, 2) and X.dtype == torch.float64 and BOX.contains(X).all()
    assert policy.selected == ["", "", ""]  # a rule that sets no labels gets empty ones
    with pytest.raises(RuntimeError, match=r"returned shape \(3, 2\), expected \(2, 2\)"):
        WrongShape(BOX).suggest(*EMPTY, q=2)


def test_observe_validates_before_anything_changes():
    policy = played(rounds=1)
    before = policy.state_dict()
    bad = [
        (torch.tensor([[2.0, 0.0]], dtype=torch.float64), torch.zeros(1, 1, dtype=torch.float64)),  # outside
        (torch.tensor([[0.5, 0.0]], dtype=torch.float64), torch.tensor([[float("inf")]], dtype=torch.float64)),
        (torch.tensor([[0.5, 0.0]], dtype=torch.float64), torch.zeros(2, 1, dtype=torch.float64)),
    ]
    for X, Y in bad:
        with pytest.raises(ValueError):
            policy.observe(X, Y)
        assert policy.state_dict() == before
    policy.observe(torch.tensor([[0.5, 0.0], [1.0, 1.0]], dtype=torch.float64), torch.tensor([2.0, 3.0], dtype=torch.float64))
    assert policy.num_observed == 4 and policy.state.count == 4 and policy.state.total == pytest.approx(1.0 + 5.0)


def test_bind_task_is_ignored_by_default():
    policy = played()
    before = policy.state_dict()
    policy.bind_task(TaskInfo(name="anything", true_prior=0))
    assert policy.state_dict() == before


# --------------------------------------------------------------------------- #
# state round trip
# --------------------------------------------------------------------------- #


def test_state_dict_is_plain_json_and_restores_the_next_suggestion():
    policy = played(seed=4)
    state = json.loads(json.dumps(policy.state_dict(), allow_nan=False))
    assert set(state) == {"version", "name", "seed", "generator", "num_observed", "selected", "n_candidates", "state"}
    assert state["version"] == STATE_VERSION and state["name"] == "counter" and state["seed"] == 4
    assert state["num_observed"] == 6 and state["state"] == {"count": 6, "total": 6.0}  # (0 + 1) + (1 + 1) + (2 + 1)
    fresh = Counter(BOX, seed=99)
    fresh.diagnostics = {"stale": True}
    fresh.load_state_dict(state)
    assert fresh.state_dict() == policy.state_dict() and fresh.loads == 1 and fresh.diagnostics == {}
    assert fresh.seed == 4 and fresh.num_observed == 6
    assert torch.equal(fresh.suggest(*EMPTY, q=2), policy.suggest(*EMPTY, q=2))


def bad_states(good: dict) -> list[tuple[object, str]]:
    return [
        ("not a dict", "state must be a dict"),
        ({**good, "version": 1}, "version"),
        ({k: v for k, v in good.items() if k != "version"}, "version"),
        ({**good, "extra": 1}, "unknown keys"),
        ({**good, "name": "random"}, "not 'counter'"),
        ({**good, "generator": good["generator"][:-1]}, "generator"),
        ({**good, "generator": [256] + good["generator"][1:]}, "generator"),
        ({**good, "generator": "abc"}, "generator"),
        ({**good, "num_observed": -1}, "num_observed"),
        ({**good, "num_observed": 2.0}, "num_observed"),
        ({**good, "seed": "0"}, "seed"),
        ({**good, "selected": [1]}, "selected"),
        ({**good, "n_candidates": -2}, "n_candidates"),
        ({**good, "state": {"count": -1, "total": 0.0}}, "count"),  # the dataclass's check()
        ({**good, "state": {"count": "3", "total": 0.0}}, "count"),
        ({**good, "state": {"count": 1, "total": 1e9}}, "implausibly large"),  # the rule's _check_state
    ]


def test_bad_states_are_rejected_and_leave_the_policy_unchanged():
    policy = played(seed=2)
    good = json.loads(json.dumps(policy.state_dict()))
    before = json.dumps(policy.state_dict())
    generator_before = policy.generator.get_state()
    for state, message in bad_states(good):
        with pytest.raises(ValueError, match=message):
            policy.load_state_dict(state)
        assert json.dumps(policy.state_dict()) == before and policy.loads == 0
        assert torch.equal(policy.generator.get_state(), generator_before)


def test_generator_state_list_round_trip_and_validation():
    generator = torch.Generator().manual_seed(8)
    torch.rand(5, generator=generator)
    as_list = generator_state_to_list(generator)
    assert all(type(v) is int and 0 <= v < 256 for v in as_list)
    restored = torch.Generator()
    restored.set_state(generator_state_from_list(json.loads(json.dumps(as_list))))
    assert torch.equal(torch.rand(3, generator=restored), torch.rand(3, generator=generator))
    for bad in ([True] + as_list[1:], [-1] + as_list[1:], as_list[:10], [1.0] * len(as_list), None):
        with pytest.raises(ValueError, match=r"state\['generator'\]"):
            generator_state_from_list(bad)


# --------------------------------------------------------------------------- #
# seeded randomness and maximisation
# --------------------------------------------------------------------------- #


def test_next_seed_and_seeded_draw_from_the_policys_generator_only():
    policy = Counter(BOX, seed=5)
    replay = torch.Generator().manual_seed(5)
    assert policy.next_seed() == draw_seed(replay)
    torch.manual_seed(0)
    rng = torch.get_rng_state()
    with policy.seeded():
        inside = torch.rand(3)
    assert torch.equal(torch.get_rng_state(), rng)  # the caller's RNG is untouched
    torch.manual_seed(draw_seed(replay))  # the block ran on the global RNG seeded by the next seed
    assert torch.equal(inside, torch.rand(3))
    twin = Counter(BOX, seed=5)
    twin.next_seed()
    with twin.seeded():
        assert torch.equal(torch.rand(3), inside)


def test_same_seed_same_batches_other_seed_other_batches():
    a = [Counter(BOX, seed=1).suggest(*EMPTY, q=4) for _ in range(2)]
    b = Counter(BOX, seed=2).suggest(*EMPTY, q=4)
    assert torch.equal(a[0], a[1]) and not torch.equal(a[0], b)


def test_maximize_on_a_pool_is_exhaustive():
    points = torch.rand(25, 2, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    policy = Counter(FiniteDomain(points))
    target = torch.tensor([0.3, 0.6], dtype=torch.float64)
    acqf = PosteriorMean(GenericDeterministicModel(lambda X: -(X - target).square().sum(-1, keepdim=True)))
    x = policy.maximize(acqf)
    nearest = int((points - target).norm(dim=-1).argmin())
    assert torch.equal(x, points[nearest : nearest + 1])


def test_maximize_on_a_box_finds_an_interior_maximum():
    policy = Counter(BOX, num_restarts=2, raw_samples=16)
    target = torch.tensor([0.3, -0.4], dtype=torch.float64)
    acqf = PosteriorMean(GenericDeterministicModel(lambda X: -(X - target).square().sum(-1, keepdim=True)))
    rng = torch.get_rng_state()
    x = policy.maximize(acqf)
    assert torch.equal(torch.get_rng_state(), rng)
    torch.testing.assert_close(x, target.unsqueeze(0), rtol=0, atol=1e-4)


def test_a_rule_without_memory_saves_an_empty_state():
    class Memoryless(Policy):
        name = "memoryless"
        min_observations = 0

        def _suggest(self, train_X, train_Y, q):
            return self.domain.neutral_point().expand(q, -1)

    policy = Memoryless(BOX, seed=1)
    assert isinstance(policy.state, NoState)
    x = policy.suggest(*EMPTY, q=2)
    torch.testing.assert_close(x, torch.tensor([[0.5, 0.0]] * 2, dtype=torch.float64))
    policy.observe(x, torch.zeros(2, dtype=torch.float64))  # the default _observe keeps nothing
    state = json.loads(json.dumps(policy.state_dict()))
    assert state["state"] == {} and state["num_observed"] == 2
    fresh = Memoryless(BOX, seed=7)
    fresh.load_state_dict(state)
    assert fresh.state_dict() == policy.state_dict()
    with pytest.raises(ValueError, match="not 'memoryless'"):
        fresh.load_state_dict(played().state_dict())


def test_rules_that_need_data_say_so_and_empty_observations_are_refused():
    class NeedsData(Counter):
        name = "needs-data"
        min_observations = 1

    policy = NeedsData(BOX)
    with pytest.raises(ValueError, match=r"train_X must hold at least 1 observation\(s\) for 'needs-data'"):
        policy.suggest(*EMPTY)
    before = json.dumps(policy.state_dict())
    with pytest.raises(ValueError, match="X must hold at least one point"):
        policy.observe(*EMPTY)
    with pytest.raises(TypeError, match="X must hold real numbers"):
        policy.observe(torch.tensor([[True, False]]), torch.tensor([1.0]))
    assert json.dumps(policy.state_dict()) == before


def test_lists_integers_and_lower_precision_are_converted_at_the_boundary():
    policy = Counter(BOX)
    policy.observe([[1, 0]], [2])  # integers and lists: converted to the policy's float64
    policy.observe(torch.tensor([[0.5, 0.25]], dtype=torch.float32), torch.tensor([1.0], dtype=torch.float32))
    assert policy.state.count == 2 and policy.state.total == 3.0
    with pytest.raises(ValueError, match="X must lie in the box"):
        policy.observe(torch.tensor([[2, 0]]), torch.tensor([1.0]))  # an integer outside stays outside


# Every box maximisation of a rule takes the policy's ``search``. The rules below go through
# the shared pieces (Policy.maximize / maximize_slot, the joint (x, k) argmax, the posterior
# mean's maximiser). Only "torch" runs the device search; from the same data both searches
# make the same first choice up to the optimisers' tolerance (later rounds may part where a
# restart converges to another local optimum), and a seeded run repeats exactly.
SEARCH_RULES = ["mle-gp-ucb", "lb-gp-ucb", "he-gp-ucb", "lb-gp-ucb-auto", "he-gp-ucb-auto", "qlognei"]


@pytest.mark.parametrize("name", SEARCH_RULES)
def test_search_torch_refines_every_box_maximisation_on_the_device(name, monkeypatch):
    import botorch_unknown_hypers.acquisition.device_search as device_search
    import botorch_unknown_hypers.acquisition.multistart as multistart

    calls = {"n": 0}
    batched = device_search.maximize_batched

    def counted(*args, **kwargs):
        calls["n"] += 1
        return batched(*args, **kwargs)

    monkeypatch.setattr(device_search, "maximize_batched", counted)  # the joint refinement's
    monkeypatch.setattr(multistart, "maximize_batched", counted)  # one acquisition's, per-candidate

    def f(X):
        return torch.sin(3 * X[:, :1]) + torch.cos(2 * X[:, 1:]) - (X**2).sum(-1, keepdim=True)

    runs = {}
    for search in ("scipy", "torch", "torch"):
        policy = make_policy(name, BOX, seed=0, search=search, num_restarts=4, raw_samples=64)
        assert policy.search == search
        X = BOX.sample_uniform(6, torch.Generator().manual_seed(1))
        Y = f(X)
        before = calls["n"]
        for _ in range(3):
            x = policy.suggest(X, Y)
            X, Y = torch.cat([X, x]), torch.cat([Y, f(x)])
        if search in runs:
            assert torch.equal(X[6:], runs[search][0])
        runs[search] = (X[6:], calls["n"] - before)
    assert runs["scipy"][1] == 0 and runs["torch"][1] > 0
    torch.testing.assert_close(runs["torch"][0][0], runs["scipy"][0][0], rtol=0, atol=1e-3)
    assert BOX.contains(runs["torch"][0]).all()


# Every registered method reaches the device search. The methods below do no continuous
# maximisation on a box, by design, and are left out (each with the reason):
NO_BOX_MAXIMISATION = {
    # uniform draws from the domain: nothing is maximised
    "random",
    # Alg. 2 maximises the variance over a finite domain: a box is replaced by its Sobol
    # discretisation, scored exhaustively
    "phased-gp-us",
    # the epsilon-perturbation sets must be exact: both rules need a finite pool and refuse a
    # box (a box problem is handed over as a dense grid, scored exhaustively)
    "he-stableopt",
    "stableopt-mle",
}
# Options a method needs on a box: K (mean, kernel) priors for the prior-selection rules (in
# unit-cube units), few NUTS samples; the oracles also learn the true prior from their task.
BOX_PRIORS = ("pe-gp-ts", "pe-gp-ucb", "hp-gp-ts", "map-gp-ts", "oracle-gp-ts", "oracle-gp-ucb")
NUTS_FAST = {"num_samples": 8, "warmup_steps": 8}


def _count_refinements(monkeypatch) -> dict[str, int]:
    r"""Counts of the device search's and SciPy's refinements of box restarts, wherever a rule
    reaches them (the SciPy ones are looked up when called, so patching their modules counts
    every use)."""
    import botorch.generation.gen as gen
    import botorch.optim as optim

    import botorch_unknown_hypers.acquisition.device_search as device_search
    import botorch_unknown_hypers.acquisition.multistart as multistart

    calls = {"torch": 0, "scipy": 0}

    def counted(kind, fn):
        def wrapper(*args, **kwargs):
            calls[kind] += 1
            return fn(*args, **kwargs)

        return wrapper

    batched = counted("torch", device_search.maximize_batched)
    monkeypatch.setattr(device_search, "maximize_batched", batched)
    monkeypatch.setattr(multistart, "maximize_batched", batched)
    monkeypatch.setattr(gen, "gen_candidates_scipy", counted("scipy", gen.gen_candidates_scipy))
    monkeypatch.setattr(optim, "optimize_acqf", counted("scipy", optim.optimize_acqf))
    return calls


def _box_method_options(name: str) -> dict:
    from botorch_unknown_hypers.candidates import KernelCandidates

    if name in BOX_PRIORS:
        ls = torch.tensor([0.4, 0.15], dtype=torch.float64)
        return {"priors": KernelCandidates.from_lengthscales(ls, kernel="matern52", noise=1e-2)}
    return NUTS_FAST if name == "nuts-gp-ucb" else {}



@pytest.mark.parametrize("name", [name for name in list_methods() if name not in NO_BOX_MAXIMISATION])
def test_every_method_refines_its_box_maximisations_with_the_policys_search(name, monkeypatch):
    import warnings

    calls = _count_refinements(monkeypatch)
    policy = make_policy(name, BOX, seed=0, search="torch", num_restarts=2, raw_samples=16, **_box_method_options(name))
    assert policy.search == "torch"
    if getattr(policy, "needs_true_prior", False):
        policy.bind_task(TaskInfo(true_prior=1))
    X = BOX.sample_uniform(6, torch.Generator().manual_seed(1))
    Y = torch.sin(3 * X[:, :1]) + torch.cos(2 * X[:, 1:]) - (X**2).sum(-1, keepdim=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. NUTS's few samples
        x = policy.suggest(X, Y)
    assert x.shape == (1, 2) and BOX.contains(x).all()
    assert calls["torch"] > 0, f"{name} ignored search='torch'"
    assert calls["scipy"] == 0, f"{name} still refined {calls['scipy']} box maximisation(s) with SciPy"


@pytest.mark.parametrize("name", ["pe-gp-ts", "pe-gp-ucb"])
def test_prior_rules_refine_their_prior_maximisations_before_any_data_with_the_policys_search(name, monkeypatch):
    calls = _count_refinements(monkeypatch)
    policy = make_policy(name, BOX, seed=0, search="torch", num_restarts=2, raw_samples=16, **_box_method_options(name))
    x = policy.suggest(*EMPTY)  # the priors' own paths / UCBs, maximised on the box
    assert BOX.contains(x).all() and calls["torch"] > 0 and calls["scipy"] == 0


def test_the_methods_left_out_do_no_box_maximisation(monkeypatch):
    assert NO_BOX_MAXIMISATION <= set(list_methods())
    calls = _count_refinements(monkeypatch)
    X = BOX.sample_uniform(6, torch.Generator().manual_seed(1))
    Y = X.sum(-1, keepdim=True)
    for name in ("random", "phased-gp-us"):
        policy = make_policy(name, BOX, seed=0, search="torch", num_restarts=2, raw_samples=16)
        assert BOX.contains(policy.suggest(X, Y)).all()
    assert calls == {"torch": 0, "scipy": 0}
    for name in ("he-stableopt", "stableopt-mle"):
        with pytest.raises(ValueError, match="need a finite pool"):
            make_policy(name, BOX, seed=0, search="torch")


def test_make_policy_refuses_an_unknown_search_naming_it():
    with pytest.raises(ValueError, match=r"^search must be one of \('scipy', 'torch', 'auto'\), got 'adam'"):
        make_policy("ts-rsr", BOX, search="adam")


def test_the_default_search_is_the_device_search_on_cuda_and_scipy_elsewhere():
    from botorch_unknown_hypers.acquisition.device_search import resolve_search

    assert resolve_search("auto", "cuda") == resolve_search("auto", torch.device("cuda:1")) == "torch"
    assert resolve_search("auto", "cpu") == "scipy" and resolve_search("torch", "cpu") == "torch"
    assert resolve_search("scipy", "cuda") == "scipy"  # an explicit choice stays
    for name in ("auto", "lb-gp-ucb", "he-gp-ucb", "ts-rsr", "mle-gp-ucb"):
        assert make_policy(name, BOX).search == "scipy"  # this CPU: SciPy, as the rule of docs/scaling.md kept
    assert make_policy("auto", BOX, search="torch").search == "torch"


def test_candidate_factors_copy_the_candidates_to_the_host_once(monkeypatch):
    from botorch_unknown_hypers.candidates import KernelCandidates

    domain = BoxDomain(torch.tensor([[0.0, 0.0], [1.0, 2.0]], dtype=torch.float64))
    policy = make_policy("he-gp-ucb", domain, seed=0)
    spec = KernelCandidates.from_lengthscales(torch.tensor([0.1, 0.3, 0.6], dtype=torch.float64), noise=1e-4)
    X = domain.bounds[0] + (domain.bounds[1] - domain.bounds[0]) * torch.rand(12, 2, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    calls = []
    original = KernelCandidates.to_dict
    monkeypatch.setattr(KernelCandidates, "to_dict", lambda self: calls.append(1) or original(self))
    factor = policy.candidate_factors(spec, X)
    assert len(calls) == 1 and factor.num_candidates == 3


def test_candidate_modules_are_built_once_per_set_on_the_data_dtype_and_the_oldest_dropped():
    from botorch_unknown_hypers.candidates import KernelCandidates

    domain = BoxDomain(torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64))
    policy = make_policy("he-gp-ucb", domain, seed=0)
    like = torch.zeros(3, 2, dtype=torch.float64)

    def spec(*lengthscales):
        return KernelCandidates.from_lengthscales(torch.tensor(lengthscales, dtype=torch.float32), noise=1e-3)

    a = spec(0.1, 0.2)
    keys = policy.context.candidate_keys(a)
    first = policy.context.candidate_modules(a, keys, like)
    assert first[1].batch_shape == torch.Size([2]) and next(first[1].parameters()).dtype == torch.float64
    assert policy.context.candidate_modules(spec(0.1, 0.2), policy.context.candidate_keys(spec(0.1, 0.2)), like) is first
    assert policy.context.candidate_modules(a, keys, like.float()) is not first  # another dtype: its own
    assert policy.context.candidate_modules(a, None, like) is None  # no identity: the model builds its own
    first[1].to(torch.float32)  # moved by a model that holds them: not handed out as float64 again
    moved = policy.context.candidate_modules(a, keys, like)
    assert moved is not first and next(moved[1].parameters()).dtype == torch.float64
    for scale in range(policy.context.KEPT_MODULE_SETS):
        policy.context.candidate_modules(spec(0.3 + scale), policy.context.candidate_keys(spec(0.3 + scale)), like)
    assert policy.context.candidate_modules(a, keys, like) is not moved  # dropped as the oldest of five sets


def test_a_length_scale_balancing_round_builds_its_one_new_candidates_modules_once(monkeypatch):
    from botorch_unknown_hypers.candidates import KernelCandidates
    from botorch_unknown_hypers.loop import initial_design
    from botorch_unknown_hypers.problems import get_problem

    problem = get_problem("berkenkamp")
    policy = make_policy("lb-gp-ucb", problem.domain, seed=0, num_restarts=2, raw_samples=32)
    X = initial_design(problem.domain, 4, seed=0)
    Y = problem.evaluate(X)[0]
    built = []
    original = KernelCandidates.build
    shared = []
    monkeypatch.setattr(KernelCandidates, "build", lambda self, dim, **kw: built.append(len(self)) or shared.append(kw.get("constraints")) or original(self, dim, **kw))
    for _ in range(3):
        built.clear()
        x = policy.suggest(X, Y)
        y = problem.evaluate(x)[0]
        policy.observe(x, y)
        X, Y = torch.cat([X, x]), torch.cat([Y, y])
        # the factor caches at the candidate's noise and at the information gain's, and the model
        assert built == [1]
    # every set after the campaign's first shares the constraints of the kept ones
    assert len(shared) == 3 and shared[0] is None and all(c is not None for c in shared[1:])
    assert shared[1].positive is shared[2].positive and shared[1].noise is shared[2].noise


def _lb_rounds(policy, problem, X, Y, rounds):
    for _ in range(rounds):
        x = policy.suggest(X, Y)
        y = problem.evaluate(x)[0]
        policy.observe(x, y)
        X, Y = torch.cat([X, x]), torch.cat([Y, y])
    return X, Y


def test_data_that_extend_the_last_rounds_are_checked_with_the_observations_in_one_read(monkeypatch):
    r"""The check that the round's data extend the last round's joins the observations' own check
    (one read), so the factor caches do not compare the inputs again; data changed in place are
    still found out, and the round then equals a fresh policy's."""
    from botorch_unknown_hypers.loop import initial_design
    from botorch_unknown_hypers.problems import get_problem

    problem = get_problem("michalewicz5")
    X, Y = initial_design(problem.domain, 6, seed=0), None
    Y = problem.evaluate(X)[0]
    policy = make_policy("lb-gp-ucb", problem.domain, seed=0, num_restarts=2, raw_samples=32)
    X, Y = _lb_rounds(policy, problem, X, Y, 2)
    compared, equal = [], torch.equal

    def spy(a, b):  # the comparisons made by the factor caches
        compared.append(sys._getframe(1).f_code.co_filename.endswith("factor_cache.py") and a.shape[-1] == X.shape[-1])
        return equal(a, b)

    monkeypatch.setattr(torch, "equal", spy)
    caches = list(policy.factor_caches.values())
    x = policy.suggest(X, Y)
    unit, prefix = policy.context.unit_inputs(X)  # the round's data (the same tensor): their unit image of the round
    assert len(caches) == 2 and not any(compared)  # no inputs compared
    assert prefix is not None and all(c._inputs is unit for c in caches)
    monkeypatch.undo()
    y = problem.evaluate(x)[0]
    policy.observe(x, y)
    X, Y = torch.cat([X, x]), torch.cat([Y, y])
    restarts = [c.stats.refactor_reasons.get("data not an extension", 0) for c in caches]
    X[0, 0] = (X[0, 0] + 0.1) % 1.0  # the caller's tensor changed in place between rounds
    state = policy.state_dict()
    fresh = make_policy("lb-gp-ucb", problem.domain, seed=0, num_restarts=2, raw_samples=32)
    fresh.load_state_dict(json.loads(json.dumps(state)))
    assert torch.equal(policy.suggest(X, Y), fresh.suggest(X, Y))
    after = [c.stats.refactor_reasons.get("data not an extension", 0) for c in caches]
    assert all(a > r for a, r in zip(after, restarts))  # every cache restarted (counted per candidate dropped)
    assert policy.context.unit_inputs(X)[1] is None  # not an extension: nothing vouched for
    with pytest.raises(ValueError, match="train_Y must be finite"):
        policy.suggest(X, torch.cat([Y[:-1], torch.full_like(Y[:1], math.nan)]))


def test_candidate_factor_sets_read_both_caches_together_with_the_factors_of_each_alone(monkeypatch):
    r"""A rule's GP factors and its information gain's, advanced over new rows in one host read
    (one per cache before), bit for bit the factors that each cache gives when asked alone; a
    repeated noise is refused by name before any cache is made."""
    from botorch_unknown_hypers.candidates import KernelCandidates
    from tests.host_reads import record_reads

    domain = BoxDomain(torch.tensor([[0.0, 0.0], [1.0, 2.0]], dtype=torch.float64))
    spec = KernelCandidates.from_lengthscales(torch.tensor([0.1, 0.3, 0.6], dtype=torch.float64), noise=1e-4)
    X = domain.bounds[0] + (domain.bounds[1] - domain.bounds[0]) * torch.rand(20, 2, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    together, alone = make_policy("he-gp-ucb", domain, seed=0), make_policy("he-gp-ucb", domain, seed=0)
    together.context.candidate_factor_sets(spec, X[:12], [None, 1e-2])
    reads = record_reads(monkeypatch)
    gp, info = together.context.candidate_factor_sets(spec, X, [None, 1e-2])
    monkeypatch.undo()
    assert reads.count("tolist") == 1  # the pivots of both caches' eight new rows
    for noise, factor in ((None, gp), (1e-2, info)):
        alone.candidate_factors(spec, X[:12], noise)
        reference = alone.candidate_factors(spec, X, noise)
        assert torch.equal(factor.L, reference.L) and torch.equal(factor.jitter, reference.jitter)
    fresh = make_policy("he-gp-ucb", domain, seed=0)
    with pytest.raises(ValueError, match=r"^noises must be distinct \(one cache each\), got \[None, None\]"):
        fresh.context.candidate_factor_sets(spec, X, [None, None])
    assert fresh.factor_caches == {}


CHECKED_FIRST = ("lb-gp-ucb", "lnb-gp-ucb", "hb-gp-ucb", "lb-gp-ucb-auto", "he-gp-ucb", "he-gp-ucb-auto", "a-gp-ucb")


def _everything(rule):
    r"""What a user can see of a rule: its saved state, its generator and its public attributes."""
    public = {k: repr(v) for k, v in vars(rule).items() if not k.startswith("_") and k not in ("generator", "state")}
    return json.dumps(rule.state_dict(), sort_keys=True), rule.generator.get_state(), public, sorted(map(repr, rule.factor_caches))


@pytest.mark.parametrize("name", CHECKED_FIRST)
def test_refused_data_leave_the_rule_as_it_was_and_its_round_never_starts(name, monkeypatch):
    r"""NaN values, an infinite value and a point outside the box raise their named errors before
    the rule's round starts (``_suggest`` is never called), with the saved state, the generator
    and every public attribute unchanged; the next point is a resumed twin's. Valid data that do
    not extend the last round's give a fresh policy's point, with no prefix vouched for."""
    box = BoxDomain(torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64))

    def make():
        return make_policy(name, box, seed=0, num_restarts=2, raw_samples=16)

    X = torch.rand(8, 2, generator=torch.Generator().manual_seed(4), dtype=torch.float64)
    Y = (X - 0.3).square().sum(-1, keepdim=True).neg()
    policy = make()
    x = policy.suggest(X, Y)
    policy.observe(x, torch.tensor([[-0.5]], dtype=torch.float64))
    X, Y = torch.cat([X, x]), torch.cat([Y, torch.tensor([[-0.5]], dtype=torch.float64)])
    saved = json.dumps(policy.state_dict(), sort_keys=True)
    before = _everything(policy)
    outside = X.clone()
    outside[-1, 0] = 1.5
    nan = torch.cat([Y[:-1], torch.full_like(Y[:1], math.nan)])
    inf = torch.cat([torch.full_like(Y[:1], math.inf), Y[1:]])
    rounds = []
    with monkeypatch.context() as m:
        m.setattr(type(policy), "_suggest", lambda self, *args: rounds.append(args))
        for bad_X, bad_Y, match in ((X, nan, r"^train_Y must be finite"), (X, inf, r"^train_Y must be finite"),
                                    (outside, Y, r"^train_X must lie in the box")):
            with pytest.raises(ValueError, match=match):
                policy.suggest(bad_X, bad_Y)
            after = _everything(policy)
            assert after[0] == before[0] and torch.equal(after[1], before[1]) and after[2:] == before[2:]
    assert rounds == []
    twin = make()
    twin.load_state_dict(json.loads(saved))
    assert torch.equal(policy.suggest(X, Y), twin.suggest(X, Y))
    moved = X.clone()
    moved[0, 0] = (moved[0, 0] + 0.1) % 1.0  # valid data that do not extend the last round's
    extra = torch.tensor([[0.25, 0.75]], dtype=torch.float64)
    for new_X, new_Y in ((moved, Y), (torch.cat([moved, extra]), torch.cat([Y, Y[:1]]))):
        policy.load_state_dict(json.loads(saved))
        fresh = make()
        fresh.load_state_dict(json.loads(saved))
        assert torch.equal(policy.suggest(new_X, new_Y), fresh.suggest(new_X, new_Y))
        assert policy.context.unit_inputs(new_X)[1] is None
        policy.suggest(X, Y)  # the last round's inputs again
