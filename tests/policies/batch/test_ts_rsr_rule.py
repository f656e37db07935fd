import json

import pytest
import torch

from botorch_unknown_hypers.models.fixed_gp import SurrogateSpec
from botorch_unknown_hypers.policies.batch.ts_rsr_rule import TSRSR
from botorch_unknown_hypers.policies.batch.surrogate import SurrogatePolicy
from botorch_unknown_hypers.policies.tasks import TaskInfo
from botorch_unknown_hypers.domains import BoxDomain, FiniteDomain

SPEC = {"kernel": "matern52", "lengthscale": 0.7, "outputscale": 1.0, "noise_variance": 1e-6}
BOX = BoxDomain(torch.tensor([[-2.0, -2.0], [2.0, 2.0]], dtype=torch.float64))
KW = dict(num_restarts=4, raw_samples=64)


def f(X):
    return torch.sin(2 * X[:, 0]) * torch.cos(X[:, 1]) - 0.1 * (X**2).sum(-1)


def _data(n=15):
    X = torch.rand(n, 2, generator=torch.Generator().manual_seed(0), dtype=torch.float64) * 4 - 2
    return X, f(X).unsqueeze(-1)


def test_ts_rsr_box_deterministic_and_state_round_trip():
    X, Y = _data()
    a = TSRSR(BOX, seed=3, surrogate="paper", surrogate_spec=SPEC, **KW)
    b = TSRSR(BOX, seed=3, surrogate="paper", surrogate_spec=SPEC, **KW)
    Xa = a.suggest(X, Y, q=3)
    assert torch.equal(Xa, b.suggest(X, Y, q=3))
    assert a.selected == ["matern52:0.7"] * 3
    a.observe(Xa, f(Xa))
    X2, Y2 = torch.cat([X, Xa]), torch.cat([Y, f(Xa).unsqueeze(-1)])
    c = TSRSR(BOX, seed=99, surrogate="paper", surrogate_spec=SPEC, **KW)
    c.load_state_dict(json.loads(json.dumps(a.state_dict())))
    assert torch.equal(a.suggest(X2, Y2, q=3), c.suggest(X2, Y2, q=3))
    assert len(a.state.history) == 2 and len(a.state.history[-1].slots) == 3


def test_ts_rsr_pool_points_and_distinct():
    pts = torch.rand(120, 2, generator=torch.Generator().manual_seed(1), dtype=torch.float64) * 4 - 2
    X = pts[:15]
    p = TSRSR(FiniteDomain(pts), seed=0, surrogate_spec=SPEC)
    Xn = p.suggest(X, f(X), q=5)
    assert FiniteDomain(pts).contains(Xn).all()
    assert len({tuple(x) for x in Xn.tolist()}) == 5  # conditioning spreads the batch


def test_surrogate_modes_and_bind_task():
    X, Y = _data()
    task = TaskInfo(surrogate=SurrogateSpec.from_dict({"kernel": "rbf", "lengthscale": 0.3, "outputscale": 2.0}))

    p = TSRSR(BOX, surrogate="auto", **KW)
    p.build_model(X, Y)
    assert p.last_label.startswith("fitted:")
    p.bind_task(task)
    p.build_model(X, Y)
    assert p.last_label == "rbf:0.3"
    with pytest.raises(ValueError, match="surrogate='paper'"):
        TSRSR(BOX, surrogate="paper").build_model(X, Y)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"surrogate": "mle"}, "surrogate"),
        ({"surrogate_spec": 3}, "surrogate_spec"),
        ({"max_resamples": -1}, "max_resamples"),
        ({"num_restarts": 0}, "num_restarts"),
    ],
)
def test_bad_options(kwargs, match):
    with pytest.raises(ValueError, match=match):
        TSRSR(BOX, **kwargs)


def test_bad_state_leaves_policy_unchanged():
    X, Y = _data()
    p = TSRSR(BOX, seed=0, surrogate_spec=SPEC, **KW)
    p.suggest(X, Y, q=2)
    state = p.state_dict()
    for path, value, match in [
        (("max_mean",), "x", r"\['history'\]\[0\]\['max_mean'\]"),
        (("max_mean",), None, "max_mean"),
        (("slots",), 5, r"\['slots'\]"),
        (("slots", 0, "sigma"), "nan", r"\['slots'\]\[0\]\['sigma'\]"),
        (("slots", 0, "resamples"), 1.5, "resamples"),
    ]:
        bad = json.loads(json.dumps(state))
        entry = bad["state"]["history"][0]
        for key in path[:-1]:
            entry = entry[key]
        entry[path[-1]] = value
        with pytest.raises(ValueError, match=match):
            p.load_state_dict(bad)
        assert p.state_dict() == state
    assert issubclass(TSRSR, SurrogatePolicy)


def test_ts_rsr_f_star_points_option_is_validated_and_used():
    import torch

    from botorch_unknown_hypers.policies.registry import make_policy
    from botorch_unknown_hypers.domains import BoxDomain

    domain = BoxDomain(torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64))
    spec = {"kernel": "matern52", "lengthscale": 0.3, "outputscale": 1.0, "noise_variance": 1e-4}
    with pytest.raises(ValueError, match="f_star_points"):
        make_policy("ts-rsr", domain, surrogate="paper", surrogate_spec=spec, f_star_points=-3)
    policy = make_policy(
        "ts-rsr", domain, seed=1, surrogate="paper", surrogate_spec=spec, f_star_points=300, num_restarts=3, raw_samples=32
    )
    X = torch.rand(8, 2, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    Y = torch.sin(6 * X).sum(-1, keepdim=True)
    out = policy.suggest(X, Y, q=3)
    assert out.shape == (3, 2) and policy.f_star_points == 300 and len(policy.last_info.slots) == 3
