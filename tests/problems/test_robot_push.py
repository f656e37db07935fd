"""Tests of the robot pushing problems (botorch_unknown_hypers.problems.robot_push)."""

from __future__ import annotations

import math
import sys

import pytest
import torch

from botorch_unknown_hypers.problems import BoxDomain, get_problem
from botorch_unknown_hypers.problems.robot_push import (
    INSTALL_HINT,
    RobotPushProblem,
    import_box2d,
    simulate_push,
)

LN2 = math.log(2.0)


@pytest.fixture
def box2d():
    return pytest.importorskip("Box2D")


def test_missing_box2d_gives_the_install_hint(monkeypatch):
    monkeypatch.setitem(sys.modules, "Box2D", None)  # makes `import Box2D` fail
    for call in (import_box2d, lambda: RobotPushProblem(3), lambda: get_problem("robot-push4")):
        with pytest.raises(ImportError) as info:
            call()
        assert 'pip install "botorch-unknown-hypers[robot]"' in str(info.value)
        assert str(info.value) == INSTALL_HINT


@pytest.mark.parametrize("dim", [3, 4])
def test_domain_and_paper_settings(box2d, dim):
    p = get_problem(f"robot-push{dim}")
    assert isinstance(p, RobotPushProblem) and p.name == f"robot-push{dim}" and p.dim == dim
    assert isinstance(p.domain, BoxDomain)
    lower, upper = [-5.0, -5.0, 1.0, 0.0][:dim], [5.0, 5.0, 30.0, 2 * math.pi][:dim]
    torch.testing.assert_close(p.domain.bounds, torch.tensor([lower, upper], dtype=torch.float64))
    assert p.optimal_value == 0.0 and p.noise_std == 0.0 and p.n_init == 15
    meta = p.metadata
    assert meta["paper_batch_size"] == 5 and meta["paper_iterations"] == 30
    lengthscale, outputscale = ([1.0, 1.0, 0.1], 0.2) if dim == 3 else (LN2, LN2)
    assert meta["paper_surrogate"] == {
        "kernel": "matern52",
        "lengthscale": lengthscale,
        "outputscale": outputscale,
        "noise_variance": 1e-6,
    }
    assert "TS-RSR" in meta["reference"]
    if dim == 4:
        assert meta["code_angle_box"] == (0.0, math.pi)
    assert get_problem(f"robot-push{dim}", dtype=torch.float32).domain.bounds.dtype == torch.float32


def test_push_straight_at_the_object_moves_it(box2d):
    # hand at (-3, 0) facing the object: the disc is pushed along +x and stays on the axis
    x, y = simulate_push(-3.0, 0.0, 10.0, math.pi)
    assert x > 0.5 and abs(y) < 1e-3
    x_long, _ = simulate_push(-3.0, 0.0, 30.0, math.pi)
    assert x_long > x + 1.0  # a longer push moves it further
    # from above: pushed along -y
    x, y = simulate_push(0.0, 4.0, 20.0, math.pi / 2)
    assert y < -0.5 and abs(x) < 1e-3
    # too short to reach the object (0.5 units of travel for a 2-unit gap): it stays put
    assert simulate_push(-3.0, 0.0, 1.0, math.pi) == (0.0, 0.0)


def test_evaluate_true_is_deterministic_and_matches_the_simulation(box2d):
    p = RobotPushProblem(3, goal=(2.0, -1.0))
    X = torch.tensor([[-3.0, 0.0, 10.0], [2.0, 3.0, 25.0], [-4.0, -4.5, 5.0]], dtype=torch.float64)
    f = p.evaluate_true(X)
    assert torch.equal(f, p.evaluate_true(X)) and f.shape == (3,) and (f <= 0).all()
    for row, value in zip(X.tolist(), f.tolist()):
        x, y = simulate_push(row[0], row[1], row[2], math.atan2(row[1], row[0]))
        assert value == pytest.approx(-math.hypot(2.0 - x, -1.0 - y), abs=1e-12)
    # 4-d with the 3-d angle is the 3-d problem
    p4 = RobotPushProblem(4, goal=(2.0, -1.0))
    angles = torch.atan2(X[:, 1], X[:, 0]).remainder(2 * math.pi).unsqueeze(-1)
    torch.testing.assert_close(p4.evaluate_true(torch.cat([X, angles], -1)), f, atol=1e-4, rtol=0)
    # batch shapes and float32
    assert p.evaluate_true(X.reshape(3, 1, 3)).shape == (3, 1)
    assert p.evaluate_true(X.float()).dtype == torch.float32


def test_noisy_evaluate_depends_on_the_generator(box2d):
    p = RobotPushProblem(4, goal=(1.5, 0.5))
    X = torch.tensor([[-3.0, 0.0, 20.0, 0.0], [0.0, -4.0, 25.0, 1.5]], dtype=torch.float64)
    y1, f1 = p.evaluate(X, generator=torch.Generator().manual_seed(1))
    y2, f2 = p.evaluate(X, generator=torch.Generator().manual_seed(1))
    y3, f3 = p.evaluate(X, generator=torch.Generator().manual_seed(2))
    assert torch.equal(y1, y2) and not torch.equal(y1, y3)
    assert torch.equal(f1, f2) and torch.equal(f1, f3)
    torch.testing.assert_close(f1, p.evaluate_true(X))
    assert not torch.equal(y1, f1)
    # a noise of sd 0.1 on speed 5 moves the final position by a fraction of a unit
    assert (y1 - f1).abs().max() < 2.0
    # without velocity noise, y is f
    quiet = RobotPushProblem(4, goal=(1.5, 0.5), velocity_noise_std=0.0)
    assert torch.equal(*quiet.evaluate(X, generator=torch.Generator().manual_seed(1)))
    with pytest.raises(ValueError, match="outside"):
        p.evaluate(torch.tensor([[-3.0, 0.0, 40.0, 0.0]], dtype=torch.float64))


def test_goal_is_drawn_per_seed(box2d):
    base = get_problem("robot-push3")
    a, b, c = base.instance(3), base.instance(3), base.instance(4)
    assert a.goal == b.goal and a.goal != c.goal
    assert a.metadata["goal"] == a.goal and a.metadata["seed"] == 3
    goals = torch.tensor([base.instance(s).goal for s in range(50)])
    assert (goals.abs() <= 5).all() and goals.std(0).min() > 1.5  # uniform on [-5, 5]^2: sd ~ 2.9
    assert RobotPushProblem(4, seed=3).goal != a.goal  # 3-d and 4-d goals are independent
    x = torch.tensor([[-3.0, 0.0, 10.0]], dtype=torch.float64)
    assert torch.equal(a.evaluate_true(x), b.evaluate_true(x))


def test_constructor_errors(box2d):
    with pytest.raises(ValueError, match="dim"):
        RobotPushProblem(5)
    with pytest.raises(ValueError, match="goal"):
        RobotPushProblem(3, goal=(1.0, float("inf")))
    with pytest.raises(ValueError, match="angle_upper"):
        RobotPushProblem(4, angle_upper=-1.0)
    with pytest.raises(ValueError, match="push_speed"):
        RobotPushProblem(3, push_speed=0.0)
    with pytest.raises(ValueError, match="seed"):
        RobotPushProblem(3, seed="1")
    p = RobotPushProblem(4, angle_upper=math.pi)  # the authors' code box
    assert p.domain.bounds[1, 3].item() == pytest.approx(math.pi)
