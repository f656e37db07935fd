"""Tests of the initial design, the benchmark loop ``run`` and ``AskTellOptimizer``."""

from __future__ import annotations

import json

import pandas as pd
import pytest
import torch

from botorch_unknown_hypers.loop import RESULT_COLUMNS, AskTellOptimizer, initial_design, run
from botorch_unknown_hypers.policies.baselines.standard_baselines import RandomPolicy
from botorch_unknown_hypers.policies.registry import make_policy
from botorch_unknown_hypers.policies.tasks import TaskInfo
from botorch_unknown_hypers.problems.problem import Problem
from botorch_unknown_hypers.domains import BoxDomain, FiniteDomain
from botorch_unknown_hypers.problems.problem_registry import get_problem
from tests.contract import CONTRACT_COLUMNS

FAST = dict(num_restarts=2, raw_samples=32)


class PoolProblem(Problem):
    r"""A small 2-d pool problem: ``f(x) = -||x - (0.3, 0.7)||^2`` on 25 grid points."""

    def __init__(self) -> None:
        g = torch.linspace(0, 1, 5, dtype=torch.float64)
        points = torch.cartesian_prod(g, g)
        f_star = float(self.evaluate_true(points).max())  # -0.005 at (0.25, 0.75)
        super().__init__(name="pool", domain=FiniteDomain(points), optimal_value=f_star, n_init=4)

    def evaluate_true(self, X: torch.Tensor) -> torch.Tensor:
        return -((X - X.new_tensor([0.3, 0.7])) ** 2).sum(-1)


def parse_x(history: pd.DataFrame) -> torch.Tensor:
    return torch.tensor([[float(v) for v in s.split(";")] for s in history["x"]], dtype=torch.float64)


def policy(name: str, domain, seed: int = 0):
    return make_policy(name, domain, seed=seed, **({} if name == "random" else FAST))


# --------------------------------------------------------------------------- #
# initial design
# --------------------------------------------------------------------------- #


def test_initial_design_box_sobol_in_bounds_and_deterministic():
    bounds = torch.tensor([[-1.0, 2.0, 0.0], [1.0, 5.0, 1e-3]], dtype=torch.float64)
    domain = BoxDomain(bounds)
    X = initial_design(domain, 16, seed=3)
    assert X.shape == (16, 3) and X.dtype == torch.float64
    assert domain.contains(X).all()
    assert ((X >= bounds[0]) & (X <= bounds[1])).all()
    assert torch.equal(X, initial_design(domain, 16, seed=3))
    assert not torch.allclose(X, initial_design(domain, 16, seed=4))
    assert torch.unique(X, dim=0).shape[0] == 16
    # Scrambled Sobol (stratified): each of the 16 equal slices of every axis holds one point.
    for j in range(3):
        u = (X[:, j] - bounds[0, j]) / (bounds[1, j] - bounds[0, j])
        assert sorted((u * 16).floor().long().tolist()) == list(range(16))


def test_initial_design_pool_without_replacement():
    problem = PoolProblem()
    pts = problem.domain.points
    X = initial_design(problem.domain, 10, seed=0)
    assert X.shape == (10, 2)
    idx = problem.domain.index_of(X)
    assert (idx >= 0).all()
    assert len(set(idx.tolist())) == 10  # no repeats
    assert torch.equal(X, initial_design(problem.domain, 10, seed=0))
    assert not torch.equal(X, initial_design(problem.domain, 10, seed=1))
    # The whole pool is a permutation of the pool.
    full = problem.domain.index_of(initial_design(problem.domain, pts.shape[0], seed=5))
    assert sorted(full.tolist()) == list(range(pts.shape[0]))


def test_initial_design_errors():
    problem = PoolProblem()
    with pytest.raises(ValueError, match="exceeds the pool size"):
        initial_design(problem.domain, 26, seed=0)
    with pytest.raises(ValueError):
        initial_design(problem.domain, 0, seed=0)
    with pytest.raises(ValueError):
        initial_design(BoxDomain(torch.tensor([[0.0], [1.0]])), 0, seed=0)


# --------------------------------------------------------------------------- #
# run(): the history table
# --------------------------------------------------------------------------- #


def check_regret_columns(history: pd.DataFrame, f_star: float) -> None:
    r"""Brute-force recomputation of the regret columns from ``f``."""
    f = history["f"].tolist()
    its = history["iteration"].tolist()
    cumulative = 0.0
    for i in range(len(f)):
        simple = f_star - max(f[: i + 1])
        assert history["simple_regret"].iloc[i] == pytest.approx(simple, abs=1e-12)
        if its[i] > 0:
            cumulative += f_star - f[i]
        assert history["cumulative_regret"].iloc[i] == pytest.approx(cumulative, abs=1e-12)
    assert (history["simple_regret"] >= -1e-12).all()
    assert history["simple_regret"].is_monotonic_decreasing
    assert (history.loc[history["iteration"] == 0, "cumulative_regret"] == 0).all()


@pytest.mark.parametrize("name", ["random", "mle-gp-ucb"])
def test_run_history_contract(name):
    problem = get_problem("berkenkamp")
    history = run(problem, policy(name, problem.domain, seed=1), iterations=4, seed=1)
    assert list(history.columns) == RESULT_COLUMNS
    assert set(CONTRACT_COLUMNS) <= set(history.columns)
    assert len(history) == problem.n_init + 4  # one row per evaluated point
    assert (history["iteration"] == 0).sum() == problem.n_init == 3
    assert history["iteration"].tolist() == [0, 0, 0, 1, 2, 3, 4]
    assert history["batch_index"].tolist() == [0, 1, 2, 0, 0, 0, 0]
    assert (history["problem"] == "berkenkamp").all() and (history["method"] == name).all()
    assert (history["seed"] == 1).all()
    X = parse_x(history)
    assert problem.domain.contains(X).all()
    # f is the noiseless value at the logged point (x is logged with 10 digits).
    f_true = problem.evaluate_true(X)
    assert torch.allclose(torch.tensor(history["f"].values), f_true, atol=1e-8)
    assert (history["y"] == history["f"]).all()  # noiseless problem
    check_regret_columns(history, problem.optimal_value)
    initial = history[history["iteration"] == 0]
    assert (initial["selected"] == "").all() and (initial["n_candidates"] == 0).all()
    assert (initial["wall_time_s"] == 0).all()
    assert (history["wall_time_s"] >= 0).all()
    rounds = history[history["iteration"] > 0]
    if name == "mle-gp-ucb":
        assert (rounds["n_candidates"] == 1).all()
        assert all(float(s) > 0 for s in rounds["selected"])  # the fitted length scale
    else:
        assert (rounds["selected"] == "").all() and (rounds["n_candidates"] == 0).all()
    # The initial design is the documented one.
    assert torch.allclose(X[:3], initial_design(problem.domain, 3, seed=1), atol=1e-9)


def test_run_regret_uses_noiseless_f_on_noisy_problem():
    problem = get_problem("berkenkamp-noisy")
    assert problem.noise_std == 0.01
    history = run(problem, policy("random", problem.domain, seed=2), iterations=12, seed=2)
    diff = (history["y"] - history["f"]).abs()
    assert (diff > 0).all() and diff.max() < 0.1
    check_regret_columns(history, problem.optimal_value)
    # A regret computed from y instead of f would differ.
    from_y = problem.optimal_value - history["y"].cummax()
    assert not (from_y - history["simple_regret"]).abs().lt(1e-12).all()
    f_true = problem.evaluate_true(parse_x(history))
    assert torch.allclose(torch.tensor(history["f"].values), f_true, atol=1e-8)


def test_run_on_pool_problem():
    problem = PoolProblem()
    history = run(problem, policy("mle-gp-ucb", problem.domain), iterations=3, seed=0)
    assert len(history) == 4 + 3
    assert problem.domain.contains(parse_x(history)).all()
    check_regret_columns(history, problem.optimal_value)
    first = problem.domain.index_of(parse_x(history)[:4])
    assert len(set(first.tolist())) == 4


@pytest.mark.parametrize("name", ["random", "mle-gp-ucb", "gp-ts"])
def test_run_is_deterministic_given_the_seed(name):
    problem = get_problem("berkenkamp-noisy")
    torch.manual_seed(0)
    a = run(problem, policy(name, problem.domain, seed=4), iterations=3, seed=4)
    torch.manual_seed(123)  # the global RNG must not matter
    b = run(problem, policy(name, problem.domain, seed=4), iterations=3, seed=4)
    pd.testing.assert_frame_equal(a.drop(columns="wall_time_s"), b.drop(columns="wall_time_s"))
    c = run(problem, policy(name, problem.domain, seed=5), iterations=3, seed=5)
    assert not a["x"].equals(c["x"])


@pytest.mark.parametrize("name", ["random", "mle-gp-ucb"])
def test_run_batches(name):
    problem = get_problem("berkenkamp")
    history = run(problem, policy(name, problem.domain), iterations=2, seed=0, batch_size=3, n_init=2)
    assert len(history) == 2 + 2 * 3
    assert history["iteration"].tolist() == [0, 0, 1, 1, 1, 2, 2, 2]
    assert history["batch_index"].tolist() == [0, 1, 0, 1, 2, 0, 1, 2]
    assert problem.domain.contains(parse_x(history)).all()
    check_regret_columns(history, problem.optimal_value)
    # Every round's wall time is logged on each of its rows.
    for _, g in history[history["iteration"] > 0].groupby("iteration"):
        assert g["wall_time_s"].nunique() == 1


def test_run_argument_errors():
    problem = get_problem("berkenkamp")
    pol = make_policy("random", problem.domain)
    with pytest.raises(ValueError):
        run(problem, pol, iterations=-1)
    with pytest.raises(ValueError):
        run(problem, pol, iterations=1, batch_size=0)
    with pytest.raises(ValueError):
        run(PoolProblem(), pol, iterations=1)  # d = 2 vs d = 1


def test_run_callback_and_method_name():
    problem = get_problem("berkenkamp")
    calls = []
    history = run(problem, make_policy("random", problem.domain), iterations=3, method="my-label", callback=calls.append)
    assert calls == [1, 2, 3]
    assert (history["method"] == "my-label").all()


# --------------------------------------------------------------------------- #
# AskTellOptimizer
# --------------------------------------------------------------------------- #


def test_ask_before_tell_raises():
    problem = get_problem("berkenkamp")
    opt = AskTellOptimizer(make_policy("random", problem.domain))
    with pytest.raises(ValueError, match="tell"):
        opt.ask()


def started_optimizer(name: str, problem: Problem, rounds: int = 1, seed: int = 0) -> AskTellOptimizer:
    opt = AskTellOptimizer(policy(name, problem.domain, seed=seed))
    X0 = initial_design(problem.domain, problem.n_init, seed=seed)
    opt.tell(X0, problem.evaluate_true(X0))
    assert opt.policy.num_observed == 0  # the initial design is not a play
    for _ in range(rounds):
        X = opt.ask()
        opt.tell(X, problem.evaluate_true(X))
    assert opt.policy.num_observed == rounds
    return opt


def bad_tells(d: int, inside: torch.Tensor, outside: torch.Tensor):
    return {
        "nan_Y": (inside, torch.tensor([float("nan")], dtype=torch.float64)),
        "inf_Y": (inside, torch.tensor([float("inf")], dtype=torch.float64)),
        "inf_X": (torch.full((1, d), float("inf"), dtype=torch.float64), torch.tensor([0.5], dtype=torch.float64)),
        "nan_X": (torch.full((1, d), float("nan"), dtype=torch.float64), torch.tensor([0.5], dtype=torch.float64)),
        "wrong_d": (torch.full((1, d + 1), 0.5, dtype=torch.float64), torch.tensor([0.5], dtype=torch.float64)),
        "X_1d": (inside[0], torch.tensor([0.5], dtype=torch.float64)),
        "mismatched_rows": (inside, torch.tensor([0.5, 0.6], dtype=torch.float64)),
        "Y_2_columns": (inside, torch.tensor([[0.5, 0.6]], dtype=torch.float64)),
        "outside": (outside, torch.tensor([0.5], dtype=torch.float64)),
        "bool_X": (torch.tensor([[True]]), torch.tensor([0.5], dtype=torch.float64)),
        "empty": (inside[:0], torch.zeros(0, dtype=torch.float64)),
    }


def assert_rejected_without_change(opt: AskTellOptimizer, X, Y) -> None:
    train_X, train_Y = opt.train_X.clone(), opt.train_Y.clone()
    state = json.dumps(opt.policy.state_dict())
    with pytest.raises((ValueError, TypeError)):
        opt.tell(X, Y)
    assert torch.equal(opt.train_X, train_X) and torch.equal(opt.train_Y, train_Y)
    assert json.dumps(opt.policy.state_dict()) == state


@pytest.mark.parametrize(
    "case",
    ["nan_Y", "inf_Y", "inf_X", "nan_X", "wrong_d", "X_1d", "mismatched_rows", "Y_2_columns", "outside", "bool_X", "empty"],
)
def test_tell_rejects_bad_input_on_a_box(case):
    problem = get_problem("berkenkamp")
    opt = started_optimizer("random", problem, rounds=2)
    inside = torch.tensor([[0.5]], dtype=torch.float64)
    outside = torch.tensor([[1.5]], dtype=torch.float64)
    X, Y = bad_tells(1, inside, outside)[case]
    assert_rejected_without_change(opt, X, Y)


@pytest.mark.parametrize("case", ["nan_Y", "inf_X", "wrong_d", "mismatched_rows", "outside"])
def test_tell_rejects_bad_input_on_a_pool(case):
    problem = PoolProblem()
    opt = started_optimizer("random", problem, rounds=2)
    inside = problem.domain.points[7:8]
    outside = inside + 0.1  # inside the pool's box, but not a pool point
    assert problem.domain.bounds[0].le(outside).all() and outside.le(problem.domain.bounds[1]).all()
    X, Y = bad_tells(2, inside, outside)[case]
    assert_rejected_without_change(opt, X, Y)
    # A valid pool point is accepted afterwards.
    opt.tell(inside, torch.tensor([0.0], dtype=torch.float64))
    assert opt.train_X.shape[0] == 4 + 3


def test_tell_rejection_leaves_a_fitted_policy_unchanged():
    problem = get_problem("berkenkamp")
    opt = started_optimizer("mle-gp-ucb", problem, rounds=1)
    for X, Y in bad_tells(1, torch.tensor([[0.5]], dtype=torch.float64), torch.tensor([[-0.5]], dtype=torch.float64)).values():
        assert_rejected_without_change(opt, X, Y)


@pytest.mark.parametrize("name", ["mle-gp-ucb", "gp-ts"])
def test_state_dict_round_trip_gives_the_same_next_ask(name):
    problem = get_problem("berkenkamp")
    opt = started_optimizer(name, problem, rounds=2, seed=3)
    state = json.loads(json.dumps(opt.state_dict()))
    # A fresh optimiser built with another seed: everything must come from the state.
    restored = AskTellOptimizer(policy(name, problem.domain, seed=99))
    restored.load_state_dict(state)
    assert torch.equal(restored.train_X, opt.train_X) and torch.equal(restored.train_Y, opt.train_Y)
    assert restored.policy.state_dict() == opt.policy.state_dict()
    x_restored = restored.ask()
    x_original = opt.ask()
    assert torch.equal(x_restored, x_original)
    assert restored.policy.selected == opt.policy.selected
    # And the step after the next one agrees too.
    for o in (opt, restored):
        o.tell(x_original, problem.evaluate_true(x_original))
    assert torch.equal(restored.ask(), opt.ask())


def test_load_state_dict_rejects_bad_state_unchanged():
    problem = get_problem("berkenkamp")
    opt = started_optimizer("random", problem, rounds=1)
    good = json.loads(json.dumps(opt.state_dict()))
    before = json.dumps(opt.state_dict())
    bad_states = [
        {"train_X": good["train_X"]},
        dict(good, train_X=[[2.0]] + good["train_X"][1:]),  # outside the box
        dict(good, train_Y=good["train_Y"][:-1]),  # mismatched rows
        dict(good, policy=dict(good["policy"], name="gp-ts")),
        dict(good, policy=dict(good["policy"], generator=[0, 1, 2])),
    ]
    for bad in bad_states:
        with pytest.raises(ValueError):
            opt.load_state_dict(bad)
        assert json.dumps(opt.state_dict()) == before


# --------------------------------------------------------------------------- #
# no initial design (n_init = 0) and the bind_task hook
# --------------------------------------------------------------------------- #


def test_run_without_initial_design_calls_bind_task():
    class TaskPoolProblem(PoolProblem):
        def __init__(self) -> None:
            super().__init__()
            self.task = TaskInfo(name="pool")

        def task_info(self) -> TaskInfo:
            return self.task

    problem = TaskPoolProblem()

    class BindingRandom(RandomPolicy):
        name = "random"

        def bind_task(self, task: TaskInfo) -> None:
            self.bound = task

    pol = BindingRandom(problem.domain, seed=2)
    history = run(problem, pol, iterations=3, seed=2, n_init=0)
    assert history["iteration"].tolist() == [1, 2, 3]  # no initial-design rows
    assert pol.num_observed == 3  # the first round is already observed
    assert pol.bound is problem.task  # the seed's instance's task (a PoolProblem is its own instance)
    check_regret_columns(history, problem.optimal_value)
    assert history["simple_regret"].iloc[0] == pytest.approx(problem.optimal_value - history["f"].iloc[0])
    with pytest.raises(ValueError, match="n_init"):
        run(problem, make_policy("random", problem.domain), iterations=1, n_init=-1)


def test_skip_initial_design():
    problem = PoolProblem()
    opt = AskTellOptimizer(make_policy("random", problem.domain, seed=0))
    opt.skip_initial_design()
    X = opt.ask()  # proposes from no data
    opt.tell(X, problem.evaluate_true(X))
    assert opt.policy.num_observed == 1 and opt.train_X.shape == (1, 2)
    with pytest.raises(ValueError, match="already"):
        opt.skip_initial_design()
    # the state round trip keeps "no initial design pending"
    restored = AskTellOptimizer(make_policy("random", problem.domain, seed=0))
    restored.load_state_dict(json.loads(json.dumps(opt.state_dict())))
    assert torch.equal(restored.ask(), opt.ask())


# --------------------------------------------------------------------------- #
# boundary: what a new user gets wrong, refused before anything is touched
# --------------------------------------------------------------------------- #

BOX2 = BoxDomain(torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64))


@pytest.mark.parametrize("bad", [None, "lb-gp-ucb", BOX2, RandomPolicy], ids=repr)
def test_ask_tell_optimizer_refuses_anything_but_a_policy(bad):
    with pytest.raises(ValueError, match=r"^policy must be a Policy") as info:
        AskTellOptimizer(bad)
    if isinstance(bad, str):
        assert "make_policy('lb-gp-ucb', domain)" in str(info.value)


def _state(pol) -> str:
    return json.dumps(pol.state_dict(), sort_keys=True)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(problem=None), r"^problem must be a black box .*got NoneType, which lacks name, domain"),
        (dict(problem="branin"), r"^problem must be a black box"),
        (dict(policy=None), r"^policy must be a Policy"),
        (dict(policy="random"), r"^policy must be a Policy \(build one: make_policy\('random', domain\)\)"),
        (dict(iterations="5"), r"^iterations must be an integer >= 0, got '5'\.$"),
        (dict(iterations=2.5), r"^iterations must be an integer >= 0, got 2\.5\.$"),
        (dict(iterations=True), r"^iterations must be an integer"),
        (dict(iterations=-1), r"^iterations must be an integer >= 0, got -1\.$"),
        (dict(seed="0"), r"^seed must be an integer >= 0"),
        (dict(seed=-1), r"^seed must be an integer >= 0"),
        (dict(batch_size=1.5), r"^batch_size must be an integer >= 1"),
        (dict(batch_size=0), r"^batch_size must be an integer >= 1"),
        (dict(n_init=1.5), r"^n_init must be an integer >= 0"),
        (dict(n_init=-1), r"^n_init must be an integer >= 0"),
        (dict(method=3), r"^method must be a string"),
        (dict(callback=3), r"^callback must be callable"),
    ],
    ids=lambda v: repr(v) if isinstance(v, dict) else "",
)
def test_run_refuses_bad_arguments_naming_them_with_the_policy_untouched(kwargs, match):
    problem = PoolProblem()
    pol = RandomPolicy(problem.domain, seed=0)
    before = _state(pol)
    args = dict(problem=problem, policy=pol, iterations=2)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        run(args.pop("problem"), args.pop("policy"), **args)
    assert _state(pol) == before and pol.num_observed == 0


@pytest.mark.parametrize(
    "domain, what",
    [
        (FiniteDomain(torch.tensor([[0.1, 0.2], [0.3, 0.4]], dtype=torch.float64)), "pool points"),  # not the problem's pool
        (BOX2, "box is not a pool"),  # a box on a pool problem (its corners are pool points)
    ],
)
def test_run_refuses_a_policy_whose_domain_is_not_in_the_problem(domain, what):
    pol = RandomPolicy(domain, seed=0)
    with pytest.raises(ValueError, match=rf"^policy.domain must lie in the problem's domain: the policy's {what}"):
        run(PoolProblem(), pol, iterations=1)


def test_run_accepts_a_pool_inside_a_box_problem():
    problem = get_problem("branin")
    pool = FiniteDomain(problem.domain.sample(20, 0))
    history = run(problem, RandomPolicy(pool, seed=0), iterations=2, n_init=2)
    assert len(history) == 4


def test_initial_design_refuses_non_integers():
    with pytest.raises(ValueError, match=r"^n must be an integer >= 1, got 2\.0\.$"):
        initial_design(BOX2, 2.0, 0)
    with pytest.raises(ValueError, match=r"^domain must be a BoxDomain, a FiniteDomain or a MixedDomain, got NoneType\.$"):
        initial_design(None, 2, 0)


def test_tell_refuses_a_non_bool_initial_flag_with_nothing_told():
    opt = AskTellOptimizer(RandomPolicy(BOX2, seed=0))
    with pytest.raises(ValueError, match=r"^initial must be a bool or None"):
        opt.tell(BOX2.sample(2, 0), torch.zeros(2, 1, dtype=torch.float64), initial="yes")
    assert opt.train_X.shape[0] == 0 and opt._pending_initial
