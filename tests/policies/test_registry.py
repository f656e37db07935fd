"""Tests of the method registry."""

from __future__ import annotations

import json

import pytest
import torch

from botorch_unknown_hypers.policies import METHODS, Policy, list_methods, make_policy, register_method
from botorch_unknown_hypers.policies.registry import method_limits
from botorch_unknown_hypers.policies.baselines.standard_baselines import GPThompsonSampling, MLEGPUCB, RandomPolicy
from botorch_unknown_hypers.domains import BoxDomain, FiniteDomain

DOMAIN = BoxDomain(torch.tensor([[0.0, 0.0], [1.0, 2.0]], dtype=torch.float64))


def test_list_methods():
    names = list_methods()
    assert names == sorted(names)
    assert set(names) == set(METHODS)
    assert {"random", "mle-gp-ucb", "gp-ts"} <= set(names)


@pytest.mark.parametrize(
    "name, cls", [("random", RandomPolicy), ("mle-gp-ucb", MLEGPUCB), ("mle-gp-ts", GPThompsonSampling)]
)
def test_make_policy(name, cls):
    pol = make_policy(name, DOMAIN, seed=5)
    assert isinstance(pol, cls) and isinstance(pol, Policy)
    assert pol.name == name and pol.seed == 5
    assert pol.dtype == torch.float64 and pol.device == torch.device("cpu")
    assert pol.state_dict()["name"] == name


def test_make_policy_options_and_dtype():
    pol = make_policy("mle-gp-ucb", DOMAIN, beta=2.0, num_restarts=2, raw_samples=32, dtype=torch.float32)
    assert pol.beta == 2.0 and pol.num_restarts == 2 and pol.raw_samples == 32
    assert pol.dtype == torch.float32 and pol.domain.bounds.dtype == torch.float32


def test_unknown_method_lists_the_valid_names():
    with pytest.raises(ValueError, match="unknown method 'nope'") as info:
        make_policy("nope", DOMAIN)
    for name in list_methods():
        assert name in str(info.value)


def test_register_method():
    class Mine(RandomPolicy):
        name = "test-mine"

    try:
        register_method("test-mine", Mine)
        assert "test-mine" in list_methods()
        assert isinstance(make_policy("test-mine", DOMAIN), Mine)
        with pytest.raises(ValueError, match="already registered"):
            register_method("test-mine", Mine)
        register_method("test-mine", RandomPolicy, overwrite=True)
        assert type(make_policy("test-mine", DOMAIN)) is RandomPolicy
    finally:
        METHODS.pop("test-mine", None)
    assert "test-mine" not in list_methods()


def test_every_registered_path_is_a_policy_of_that_name():
    for name in list_methods():
        factory = METHODS[name]
        assert isinstance(factory, type) and issubclass(factory, Policy), name
        assert factory.name == name


def test_a_rule_module_is_imported_when_first_built_or_asked(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    code = """
import sys
from botorch_unknown_hypers.policies.registry import METHODS, list_methods, method_limits
nuts = "botorch_unknown_hypers.policies.balancing.nuts"
assert "nuts-gp-ucb" in list_methods() and "nuts-gp-ucb" in METHODS and len(METHODS) == len(list_methods())
assert nuts not in sys.modules and "botorch_unknown_hypers.policies.elimination.he_gp_ucb" not in sys.modules
assert method_limits("nuts-gp-ucb") == (1, 1)
assert nuts in sys.modules
"""
    root = Path(__file__).resolve().parents[2]
    env = {"PYTHONPATH": str(root), "PATH": str(Path(sys.executable).parent), "OMP_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr


@pytest.mark.parametrize(
    "name, factory, match",
    [("", RandomPolicy, "name must be a non-empty string"), (3, RandomPolicy, "name must be"), ("x", "random", "factory must be callable")],
)
def test_register_method_refuses_bad_input(name, factory, match):
    before = dict.fromkeys(METHODS)
    with pytest.raises(ValueError, match=match):
        register_method(name, factory)
    assert dict.fromkeys(METHODS) == before


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(domain=None), r"^domain must be a BoxDomain, a FiniteDomain or a MixedDomain, got NoneType\.$"),
        (dict(domain="box"), r"^domain must be a BoxDomain, a FiniteDomain or a MixedDomain, got str\.$"),
        (dict(device="bogus"), r"^device must be a device torch can use, got 'bogus'"),
        (dict(device=0), r"^device must be a torch\.device, a device string"),
        (dict(dtype=torch.float16), r"^dtype must be torch\.float64 or torch\.float32"),
        (dict(dtype="float64"), r"^dtype must be torch\.float64 or torch\.float32"),
        (dict(name=None), r"^unknown method None"),
    ],
    ids=repr,
)
@pytest.mark.parametrize("method", ["lb-gp-ucb", "he-gp-ucb", "random"])
def test_make_policy_refuses_bad_arguments_naming_them(method, kwargs, match):
    args = dict(name=method, domain=DOMAIN)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        make_policy(args.pop("name"), args.pop("domain"), **args)


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU is present")
def test_make_policy_refuses_an_absent_gpu():
    with pytest.raises(ValueError, match=r"^device must be a device torch can use, got 'cuda'"):
        make_policy("lb-gp-ucb", DOMAIN, device="cuda")


def test_every_rule_that_needs_no_data_suggests_from_none_on_a_box_and_a_pool():
    import warnings

    from tests.golden.cases import CASES

    tried = set()
    for case in CASES:
        if case.problem == "hills" or method_limits(case.method)[1] != 0:
            continue
        problem = case.make_problem()
        policy = make_policy(case.method, problem.domain, seed=0, **case.make_options())
        if getattr(problem, "task_info", None) is not None:
            policy.bind_task(problem.task_info())
        d = problem.domain.dim
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            X = policy.suggest(torch.empty(0, d, dtype=torch.float64), torch.empty(0, 1, dtype=torch.float64))
        assert X.shape == (1, d), case.key
        tried.add(case.method)
    assert {"random", "pe-gp-ts", "ec-gp-ucb"} <= tried


@pytest.mark.parametrize("pool", [False, True])
def test_he_gp_ucb_needs_one_observation(pool):
    domain = DOMAIN if not pool else FiniteDomain(DOMAIN.sample(12, 0))
    policy = make_policy("he-gp-ucb", domain)
    before = json.dumps(policy.state_dict(), sort_keys=True)
    with pytest.raises(ValueError, match=r"^train_X must hold at least 1 observation\(s\) for 'he-gp-ucb'"):
        policy.suggest(torch.empty(0, 2, dtype=torch.float64), torch.empty(0, 1, dtype=torch.float64))
    assert json.dumps(policy.state_dict(), sort_keys=True) == before
    assert method_limits("he-gp-ucb") == (None, 1)


def test_parse_method_spec_reads_names_and_json_options():
    from botorch_unknown_hypers.policies.registry import parse_method_spec

    assert parse_method_spec("qlognei") == ("qlognei", {})
    assert parse_method_spec("lb-gp-ucb-auto[shrink=[1.0,0.5]&acquisition=ucb&restart=true&growth=1.01]") == (
        "lb-gp-ucb-auto", {"shrink": [1.0, 0.5], "acquisition": "ucb", "restart": True, "growth": 1.01})
    assert parse_method_spec("x[]") == ("x", {})
    for bad in ("lb[shrink]", "lb[a=1&a=2]", "lb[=1]", "lb[a=1", "[a=1]", 3):
        with pytest.raises(ValueError):
            parse_method_spec(bad)


def test_respell_for_defaults_names_what_ran_under_the_new_defaults():
    r"""Brute force over labels: every respelled label gives, under the new defaults, the options
    the old label gave under the old ones, and spells no changed option at its new default."""
    from botorch_unknown_hypers.policies.registry import parse_method_spec, respell_for_defaults

    old = {"acquisition": "lognei", "kernel": "rbf", "noise_floor": 1e-6}
    new = {"acquisition": "logei-plugin", "kernel": "matern52", "noise_floor": None}
    base = {"reduction": "evidence", "probe": 0.1}  # unchanged defaults
    labels = ["auto", "auto[kernel=matern52&acquisition=logei-plugin&noise_floor=null]", "auto[kernel=matern52]",
              "auto[reduction=map&noise_floor=null]", "auto[shrink=[1.0,0.5]&acquisition=ucb]", "auto[probe=0&kernel=rbf]"]
    for label in labels:
        respelled = respell_for_defaults(label, "auto", old, new)
        ran = {**base, **old, **parse_method_spec(label)[1]}
        now = parse_method_spec(respelled)
        assert now[0] == "auto" and {**base, **new, **now[1]} == ran, (label, respelled)
        assert not any(key in now[1] and now[1][key] == new[key] for key in new), respelled
    assert respell_for_defaults("auto", "auto", old, new) == "auto[acquisition=lognei&kernel=rbf&noise_floor=1e-06]"
    assert respell_for_defaults("auto[kernel=matern52&acquisition=logei-plugin&noise_floor=null]", "auto", old, new) == "auto"
    assert respell_for_defaults("auto[probe=0&kernel=rbf]", "auto", old, new) == "auto[probe=0&kernel=rbf&acquisition=lognei&noise_floor=1e-06]"
    assert respell_for_defaults("he-gp-ucb-auto", "auto", old, new) == "he-gp-ucb-auto"  # another method: as it is
    with pytest.raises(ValueError, match="old and new must give the same options"):
        respell_for_defaults("auto", "auto", old, {"acquisition": "ucb"})
    with pytest.raises(ValueError, match="cannot be written as a spec option"):
        respell_for_defaults("auto", "auto", {"acquisition": "true"}, {"acquisition": "lognei"})  # would read back as True


def _mixed_objective(domain, X: torch.Tensor) -> torch.Tensor:
    import math

    values = []
    for x in X:
        v = domain.to_values(x)
        values.append(-((math.log10(v["lr"]) + 3) ** 2) - 0.3 * (v["n"] - 3) ** 2 - {"a": 0.0, "b": 0.5, "c": 0.2}[v["act"]])
    return torch.tensor(values, dtype=torch.float64).unsqueeze(-1)


@pytest.mark.parametrize("method", sorted(METHODS))
def test_every_rule_runs_on_a_mixed_domain_or_names_what_it_needs(method):
    import warnings

    from botorch_unknown_hypers.domains import CategoricalParameter, FloatParameter, IntParameter, MixedDomain

    domain = MixedDomain((FloatParameter("lr", 1e-5, 1e-1, log=True), IntParameter("n", 1, 6), CategoricalParameter("act", ("a", "b", "c"))))
    fast = {"num_restarts": 2, "raw_samples": 32}
    try:
        try:
            policy = make_policy(method, domain, seed=0, **fast)
        except TypeError:
            policy = make_policy(method, domain, seed=0)
    except ValueError as e:  # a refusal names the domain and what the rule needs instead
        assert "MixedDomain" in str(e) and ("BoxDomain" in str(e) or "FiniteDomain" in str(e)), str(e)
        return
    X = domain.sample(4, 0)
    Y = _mixed_objective(domain, X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(2):
            x = policy.suggest(X, Y)
            assert bool(domain.contains(x).all()), (method, x)
            X, Y = torch.cat([X, x]), torch.cat([Y, _mixed_objective(domain, x)])
        # The state round-trips through JSON exactly: a reloaded rule proposes the same point.
        state = json.loads(json.dumps(policy.state_dict()))
        try:
            copy = make_policy(method, domain, seed=0, **fast)
        except TypeError:
            copy = make_policy(method, domain, seed=0)
        copy.load_state_dict(state)
        assert json.dumps(copy.state_dict(), sort_keys=True) == json.dumps(policy.state_dict(), sort_keys=True)
        assert torch.equal(copy.suggest(X, Y), policy.suggest(X, Y)), method
