import pytest
import torch

from botorch_unknown_hypers.problems import (
    PROBLEMS,
    BoxDomain,
    FiniteDomain,
    Problem,
    get_problem,
    list_problems,
)
from botorch_unknown_hypers.problems.problem_registry import register_problem
from botorch_unknown_hypers.problems.synthetic import Berkenkamp

DTYPES = [torch.float32, torch.float64]
NAMES = ["agnp", "berkenkamp", "berkenkamp-noisy", "crossed-barrel", "michalewicz5"]
DEFAULTS = {  # name -> (dim, noise_std, n_init, finite)
    "berkenkamp": (1, 0.0, 3, False),
    "berkenkamp-noisy": (1, 0.01, 3, False),
    "michalewicz5": (5, 0.0, 10, False),
    "crossed-barrel": (4, 0.0, 10, True),
    "agnp": (5, 0.0, 10, True),
}


MATERIALS = ("agnp", "crossed-barrel")


def _require_tables() -> None:
    """The tables ship inside the package; BUH_DATA_DIR must not point elsewhere here."""
    from botorch_unknown_hypers.problems import resolve_data_dir
    from botorch_unknown_hypers.problems.materials import MATERIALS_DATASETS

    folder = resolve_data_dir()
    assert all((folder / spec.file_name).is_file() for spec in MATERIALS_DATASETS.values()), folder


def test_list_problems():
    names = list_problems()
    assert names == sorted(names)
    assert set(NAMES) <= set(names)
    assert set(names) == set(PROBLEMS)


def test_unknown_name_lists_valid_names():
    with pytest.raises(ValueError) as info:
        get_problem("no-such-problem")
    msg = str(info.value)
    assert "no-such-problem" in msg
    for name in list_problems():
        assert name in msg


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", NAMES)
def test_get_problem(name, dtype):
    if name in MATERIALS:
        _require_tables()
    p = get_problem(name, dtype=dtype)
    dim, noise, n_init, finite = DEFAULTS[name]
    assert isinstance(p, Problem)
    assert p.name == name and p.dim == dim and p.noise_std == noise and p.n_init == n_init
    assert p.is_finite == finite
    assert isinstance(p.domain, FiniteDomain if finite else BoxDomain)
    tensor = p.domain.points if finite else p.domain.bounds
    assert tensor.dtype == dtype
    # the optimum is never beaten on a handful of domain points
    if finite:
        X = p.domain.points[:50]
    else:
        lo, hi = p.domain.bounds
        g = torch.Generator().manual_seed(0)
        X = lo + (hi - lo) * torch.rand(50, dim, dtype=dtype, generator=g)
    f = p.evaluate_true(X)
    assert f.shape == (50,) and f.dtype == dtype
    assert (f <= p.optimal_value + 1e-5).all()


def test_noise_override():
    assert get_problem("berkenkamp", noise_std=0.1).noise_std == 0.1
    assert get_problem("berkenkamp-noisy", noise_std=0.0).noise_std == 0.0
    _require_tables()
    assert get_problem("agnp", noise_std=0.2).noise_std == 0.2
    with pytest.raises(ValueError, match="noise_std"):
        get_problem("berkenkamp", noise_std=-1.0)
    with pytest.raises(ValueError, match="noise_std"):
        get_problem("berkenkamp", noise_std=float("nan"))


def test_fresh_instances():
    a, b = get_problem("berkenkamp"), get_problem("berkenkamp")
    assert a is not b
    a.noise_std = 5.0
    assert b.noise_std == 0.0


def test_data_dir_passed_to_materials(tmp_path):
    with pytest.raises(FileNotFoundError, match="BUH_DATA_DIR"):
        get_problem("crossed-barrel", data_dir=tmp_path)
    # synthetic problems ignore it
    assert get_problem("berkenkamp", data_dir=tmp_path).name == "berkenkamp"


def test_register_problem():
    @register_problem("_test-berkenkamp")
    def _factory(data_dir=None):
        return Berkenkamp(name="_test-berkenkamp")

    try:
        assert PROBLEMS["_test-berkenkamp"] is _factory
        assert "_test-berkenkamp" in list_problems()
        p = get_problem("_test-berkenkamp", dtype=torch.float32)
        assert p.domain.bounds.dtype == torch.float32
        with pytest.raises(ValueError, match="already registered"):
            register_problem("_test-berkenkamp", _factory)
        register_problem("_test-berkenkamp", _factory, overwrite=True)
    finally:
        PROBLEMS.pop("_test-berkenkamp", None)
    assert "_test-berkenkamp" not in list_problems()


@pytest.mark.parametrize("name", ["no-such-problem", ["branin"], {"branin": 1}, None])
def test_an_unknown_or_unhashable_name_is_refused_with_the_valid_names(name):
    with pytest.raises(ValueError, match=r"^Unknown problem .* Valid names: .*branin"):
        get_problem(name)
