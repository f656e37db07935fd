import csv
from pathlib import Path

import pytest
import torch

import botorch_unknown_hypers
from botorch_unknown_hypers.problems import (
    FiniteDomain,
    MaterialsProblem,
    load_materials_problem,
    resolve_data_dir,
)
from botorch_unknown_hypers.problems.materials import MATERIALS_DATASETS

DTYPES = [torch.float32, torch.float64]

# name -> (rows, unique configurations, best value of the maximised objective)
EXPECTED = {
    "crossed-barrel": (1800, 600, 46.7114),
    "agnp": (3295, 164, -0.14836),
}


def _data_dir() -> Path:
    """The tables shipped inside the package."""
    return Path(botorch_unknown_hypers.__file__).resolve().parent / "data" / "materials"


def _real_data_dir() -> Path:
    """The real materials tables: always shipped with the package."""
    folder = _data_dir()
    assert all((folder / spec.file_name).is_file() for spec in MATERIALS_DATASETS.values())
    return folder


def test_tables_ship_with_their_licence_and_citation():
    folder = _data_dir()
    assert "MIT License" in (folder / "LICENSE").read_text()
    readme = (folder / "README.md").read_text()
    assert "Liang et al." in readme and "npj Computational Materials" in readme


@pytest.fixture(scope="module")
def loaded():
    return {name: load_materials_problem(name, data_dir=_real_data_dir()) for name in EXPECTED}


def _reference_table(name: str):
    """Brute-force reference with the csv module: {raw config: mean of distinct y}."""
    spec = MATERIALS_DATASETS[name]
    groups: dict[tuple[float, ...], set[float]] = {}
    n_rows = 0
    with open(_real_data_dir() / spec.file_name, newline="") as fh:
        for row in csv.DictReader(fh):
            n_rows += 1
            x = tuple(float(row[c]) for c in spec.feature_names)
            y = float(row[spec.objective_name])
            groups.setdefault(x, set()).add(y if spec.maximise else -y)
    return n_rows, {x: sum(v) / len(v) for x, v in groups.items()}


@pytest.mark.parametrize("name", list(EXPECTED))
def test_real_data_matches_reference(loaded, name):
    p = loaded[name]
    n_rows, n_unique, best = EXPECTED[name]
    assert isinstance(p, MaterialsProblem) and isinstance(p.domain, FiniteDomain)
    assert p.name == name and p.is_finite
    assert p.n_init == 10 and p.noise_std == 0.0 and p.optimal_value == 0.0
    assert p.domain.points.shape == (n_unique, len(MATERIALS_DATASETS[name].feature_names))
    assert p.metadata["n_rows"] == n_rows and p.metadata["n_unique"] == n_unique
    assert p.metadata["raw_best_value"] == pytest.approx(best, abs=1e-4)
    assert p.metadata["feature_names"] == MATERIALS_DATASETS[name].feature_names
    assert p.metadata["objective_name"] == MATERIALS_DATASETS[name].objective_name

    ref_rows, ref = _reference_table(name)
    assert ref_rows == n_rows and len(ref) == n_unique
    raw = p.metadata["raw_points"]
    keys = [tuple(r) for r in raw.tolist()]
    # pool order: raw configurations sorted lexicographically
    assert keys == sorted(ref)
    ref_vals = torch.tensor([ref[k] for k in keys], dtype=torch.float64)
    assert torch.allclose(p.metadata["raw_values"], ref_vals, atol=1e-12, rtol=0)
    assert torch.allclose(p.values, ref_vals - ref_vals.max(), atol=1e-12, rtol=0)


@pytest.mark.parametrize("name", list(EXPECTED))
def test_real_data_shift_and_scaling(loaded, name):
    p = loaded[name]
    # f* = 0 exactly, attained at the recorded optimiser, all other values <= 0
    assert p.values.max().item() == 0.0
    assert (p.values <= 0).all()
    assert p.values[p.metadata["optimizer_index"]].item() == 0.0
    # features in [0, 1], each column reaching both ends
    pts = p.domain.points
    assert (pts >= 0).all() and (pts <= 1).all()
    assert torch.equal(pts.min(dim=0).values, torch.zeros(pts.shape[1], dtype=pts.dtype))
    assert torch.equal(pts.max(dim=0).values, torch.ones(pts.shape[1], dtype=pts.dtype))
    # the scaling maps back to the raw configurations
    lo, hi = p.metadata["feature_min"], p.metadata["feature_max"]
    assert torch.allclose(lo + pts * (hi - lo), p.metadata["raw_points"], atol=1e-9, rtol=1e-12)
    # distinct configurations stay distinct
    assert torch.unique(pts, dim=0).shape[0] == pts.shape[0]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(EXPECTED))
def test_evaluate_whole_pool(name, dtype):
    p = load_materials_problem(name, data_dir=_real_data_dir(), dtype=dtype)
    pts = p.domain.points
    assert pts.dtype == dtype and p.values.dtype == dtype
    perm = torch.randperm(pts.shape[0], generator=torch.Generator().manual_seed(0))
    X = pts[perm]
    y, f = p.evaluate(X)
    assert f.dtype == dtype and torch.equal(f, p.values[perm]) and torch.equal(y, f)
    # batch shapes are kept
    f2 = p.evaluate_true(X[:12].reshape(3, 4, -1))
    assert f2.shape == (3, 4) and torch.equal(f2.reshape(-1), p.values[perm[:12]])
    assert p.evaluate_true(pts).max().item() == 0.0


@pytest.mark.parametrize("name", list(EXPECTED))
def test_point_outside_pool(loaded, name):
    p = loaded[name]
    x = p.domain.points[:1] * 0.5 + 0.25 + 1e-3  # inside [0, 1]^d but not a pool point
    assert p.domain.index_of(x).item() == -1
    with pytest.raises(ValueError, match="not in the pool"):
        p.evaluate_true(x)
    with pytest.raises(ValueError):
        p.evaluate(x)


@pytest.mark.parametrize("dtype", DTYPES)
def test_noisy_evaluate_reproducible(dtype):
    p = load_materials_problem("agnp", data_dir=_real_data_dir(), dtype=dtype, noise_std=0.05)
    X = p.domain.points[:20]
    y1, f1 = p.evaluate(X, generator=torch.Generator().manual_seed(11))
    y2, f2 = p.evaluate(X, generator=torch.Generator().manual_seed(11))
    y3, _ = p.evaluate(X, generator=torch.Generator().manual_seed(12))
    assert torch.equal(y1, y2) and torch.equal(f1, f2)
    assert not torch.equal(y1, y3) and not torch.equal(y1, f1)
    assert torch.equal(f1, p.values[:20])


# --------------------------------------------------------------- synthetic CSVs


def _write_crossed_barrel(folder: Path, rows) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "Crossed_barrel_dataset.csv"
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["n", "theta", "r", "t", "toughness"])
        w.writerows(rows)
    return path


TINY_ROWS = [
    # group A: values 1, 1, 4 -> mean of distinct values = 2.5 (plain mean would be 2)
    (6, 0, 1.5, 0.7, 1.0),
    (6, 0, 1.5, 0.7, 1.0),
    (6, 0, 1.5, 0.7, 4.0),
    # group B: single value 3
    (12, 200, 2.5, 1.4, 3.0),
    # group C: values 2, 2 -> 2
    (8, 100, 2.0, 1.05, 2.0),
    (8, 100, 2.0, 1.05, 2.0),
]


def test_distinct_value_averaging(tmp_path):
    _write_crossed_barrel(tmp_path, TINY_ROWS)
    p = load_materials_problem("crossed-barrel", data_dir=tmp_path)
    assert p.metadata["n_rows"] == 6 and p.metadata["n_unique"] == 3
    # lexicographic pool order: (6, ...), (8, ...), (12, ...)
    assert p.metadata["raw_points"][:, 0].tolist() == [6.0, 8.0, 12.0]
    assert p.metadata["raw_values"].tolist() == [2.5, 2.0, 3.0]
    assert p.metadata["raw_best_value"] == 3.0
    assert p.values.tolist() == [-0.5, -1.0, 0.0]
    expected_pts = torch.tensor(
        [[0.0, 0.0, 0.0, 0.0], [1 / 3, 0.5, 0.5, 0.5], [1.0, 1.0, 1.0, 1.0]], dtype=torch.float64
    )
    assert torch.allclose(p.domain.points, expected_pts, atol=1e-12)
    f = p.evaluate_true(expected_pts[[2, 0, 0, 1]])
    assert f.tolist() == [0.0, -0.5, -0.5, -1.0]


def test_minimised_objective_is_negated(tmp_path):
    spec = MATERIALS_DATASETS["agnp"]
    with open(tmp_path / spec.file_name, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(list(spec.feature_names) + [spec.objective_name])
        w.writerow([1, 1, 1, 1, 200, 0.5])
        w.writerow([1, 1, 1, 1, 200, 0.3])
        w.writerow([1, 1, 1, 1, 200, 0.3])
        w.writerow([2, 3, 1, 0, 250, 0.2])
    p = load_materials_problem("agnp", data_dir=tmp_path)
    assert p.metadata["raw_values"].tolist() == pytest.approx([-0.4, -0.2])
    assert p.metadata["raw_best_value"] == pytest.approx(-0.2)
    assert p.values.tolist() == pytest.approx([-0.2, 0.0])
    # a constant input column maps to 0
    assert p.domain.points[:, 2].tolist() == [0.0, 0.0]


# ---------------------------------------------------------- data folder lookup


@pytest.mark.parametrize("name", list(EXPECTED))
def test_missing_file_message(tmp_path, name):
    file_name = MATERIALS_DATASETS[name].file_name
    with pytest.raises(FileNotFoundError) as info:
        load_materials_problem(name, data_dir=tmp_path / "nowhere")
    msg = str(info.value)
    assert file_name in msg
    assert str((tmp_path / "nowhere" / file_name).resolve()) in msg
    assert "--data-dir" in msg and "BUH_DATA_DIR" in msg


def test_env_var_honoured(tmp_path, monkeypatch):
    _write_crossed_barrel(tmp_path / "env", TINY_ROWS)
    monkeypatch.setenv("BUH_DATA_DIR", str(tmp_path / "env"))
    assert resolve_data_dir() == (tmp_path / "env").resolve()
    assert resolve_data_dir(None) == (tmp_path / "env").resolve()
    p = load_materials_problem("crossed-barrel")
    assert p.metadata["n_unique"] == 3
    # an explicit argument wins over the environment variable
    assert resolve_data_dir(tmp_path / "arg") == (tmp_path / "arg").resolve()
    assert resolve_data_dir(str(tmp_path / "arg")) == (tmp_path / "arg").resolve()
    p = load_materials_problem("crossed-barrel", data_dir=_real_data_dir())
    assert p.metadata["n_unique"] == 600
    # the env var also ends up in the missing-file message
    monkeypatch.setenv("BUH_DATA_DIR", str(tmp_path / "empty"))
    with pytest.raises(FileNotFoundError, match="empty"):
        load_materials_problem("agnp")


def test_default_data_dir(monkeypatch):
    monkeypatch.delenv("BUH_DATA_DIR", raising=False)
    assert resolve_data_dir() == _data_dir()
    assert resolve_data_dir(None) == _data_dir()


def test_unknown_materials_name():
    with pytest.raises(ValueError, match="agnp"):
        load_materials_problem("crossedbarrel")


@pytest.mark.parametrize("dtype", DTYPES)
def test_to_moves_values(dtype):
    p = load_materials_problem("crossed-barrel", data_dir=_real_data_dir()).to(dtype=dtype)
    assert p.domain.points.dtype == dtype and p.values.dtype == dtype
