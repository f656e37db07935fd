"""Tests of the search domains, their checks and their sampling (botorch_unknown_hypers.domains)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from botorch.utils.sampling import draw_sobol_samples

from botorch_unknown_hypers.domains import (
    BoxDomain,
    FiniteDomain,
    check_domain,
    check_observations,
    check_points,
    check_training_data,
)

DTYPES = [torch.float32, torch.float64]
BOUNDS = torch.tensor([[0.0, -1.0], [1.0, 2.0]], dtype=torch.float64)


# ----------------------------------------------------------------- BoxDomain


@pytest.mark.parametrize(
    "bounds",
    [
        torch.zeros(3),  # 1-d
        torch.zeros(3, 2),  # 3 x d
        torch.zeros(2, 2, 2),  # 3-d
    ],
)
def test_box_bad_shape(bounds):
    with pytest.raises(ValueError, match="2 x d"):
        BoxDomain(bounds)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_box_non_finite(bad):
    with pytest.raises(ValueError, match="finite"):
        BoxDomain(torch.tensor([[0.0, 0.0], [1.0, bad]]))


@pytest.mark.parametrize("upper", [0.5, 0.2])
def test_box_upper_not_above_lower(upper):
    with pytest.raises(ValueError, match="upper"):
        BoxDomain(torch.tensor([[0.0, 0.5], [1.0, upper]]))


def test_a_valid_box_is_checked_in_one_host_read():
    from torch.profiler import ProfilerActivity, profile

    bounds = torch.tensor([[0.0, -1.0], [1.0, 2.0]], dtype=torch.float64)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        BoxDomain(bounds)
    assert sum(e.name == "aten::_local_scalar_dense" for e in prof.events()) == 1
    with pytest.raises(ValueError, match="finite"):  # NaN bounds name finiteness, not the order
        BoxDomain(torch.tensor([[0.0, math.nan], [1.0, 0.5]]))


@pytest.mark.parametrize("dtype", DTYPES)
def test_box_contains(dtype):
    box = BoxDomain(torch.tensor([[0.0, -1.0], [1.0, 2.0]], dtype=torch.float64))
    assert box.dim == 2
    X = torch.tensor(
        [
            [0.5, 0.0],  # inside
            [0.0, -1.0],  # corner
            [1.0, 2.0],  # corner
            [1.0 + 1e-12, 2.0],  # within atol
            [1.1, 0.0],  # outside
            [0.5, -1.5],  # outside
        ],
        dtype=dtype,
    )
    expected = torch.tensor([True, True, True, True, False, False])
    assert torch.equal(box.contains(X), expected)
    # batch shapes are kept
    assert box.contains(X.reshape(2, 3, 2)).shape == (2, 3)
    assert torch.equal(box.contains(X.reshape(2, 3, 2)).reshape(-1), expected)


def test_box_to():
    box = BoxDomain(torch.tensor([[0.0], [1.0]], dtype=torch.float64)).to(dtype=torch.float32)
    assert box.bounds.dtype == torch.float32


def test_box_bounds_must_be_a_floating_point_tensor():
    with pytest.raises(ValueError, match="bounds must be a 2 x d tensor"):
        BoxDomain([[0.0], [1.0]])
    with pytest.raises(ValueError, match="bounds must be a floating-point tensor"):
        BoxDomain(torch.tensor([[0], [1]]))
    with pytest.raises(ValueError, match="dtype must be a floating-point dtype"):
        BoxDomain(BOUNDS).to(dtype=torch.int64)


def test_box_size_device_neutral_point_and_discretization_size():
    box = BoxDomain(BOUNDS)
    assert box.size == math.inf and box.device == torch.device("cpu")
    assert box.neutral_point().tolist() == [[0.5, 0.5]]  # the centre
    assert box.discretization_size(37) == 37


def test_box_sample_is_seeded_sobol_and_discretize_is_the_same():
    box = BoxDomain(BOUNDS)
    X = box.sample(8, seed=3)
    assert X.shape == (8, 2) and X.dtype == torch.float64 and box.contains(X).all()
    assert torch.equal(X, draw_sobol_samples(bounds=BOUNDS, n=8, q=1, seed=3).squeeze(-2))
    assert torch.equal(box.discretize(8, seed=3), X)
    assert not torch.equal(box.sample(8, seed=4), X)


@pytest.mark.parametrize("dim", [1, 3])
def test_sobol_points_are_botorchs_draws_without_a_host_read(dim):
    # draw_sobol_samples reads a tensor of its batch shape to size the batch; sobol_points draws
    # the same points (q = 1 dropped) from SobolEngine without that read, batched or not.
    from botorch_unknown_hypers.domains import sobol_points
    from tests.host_reads import profiled_reads

    bounds = torch.stack([-torch.arange(1.0, dim + 1), torch.arange(2.0, dim + 2)]).to(torch.float64)
    for seed in (0, 7):
        assert torch.equal(sobol_points(bounds, 16, seed), draw_sobol_samples(bounds=bounds, n=16, q=1, seed=seed).squeeze(-2))
        batched = draw_sobol_samples(bounds=bounds, n=16, q=1, batch_shape=torch.Size([3]), seed=seed).squeeze(-2)
        assert torch.equal(sobol_points(bounds, 16, seed, batch=3), batched)  # 16 x 3 x d
    assert sobol_points(bounds.float(), 4, 0).dtype == torch.float32
    assert profiled_reads(lambda: sobol_points(bounds, 16, 0, batch=3)) == []


def test_box_sample_uniform_replays_the_generator():
    box = BoxDomain(BOUNDS)
    rng = torch.get_rng_state()
    X = box.sample_uniform(500, torch.Generator().manual_seed(1))
    assert torch.equal(torch.get_rng_state(), rng)
    u = torch.rand(500, 2, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    torch.testing.assert_close(X, BOUNDS[0] + (BOUNDS[1] - BOUNDS[0]) * u, rtol=0, atol=0)
    assert box.contains(X).all()
    # uniform: the sample mean is near the centre (5 standard errors of a uniform coordinate)
    se = (BOUNDS[1] - BOUNDS[0]) / math.sqrt(12 * 500)
    assert bool(((X.mean(0) - box.neutral_point()[0]).abs() < 5 * se).all())


def test_box_unique_points_and_no_neighbourhoods():
    box = BoxDomain(BOUNDS)
    X = torch.tensor([[0.5, 0.0], [0.1, 1.0], [0.5, 0.0], [0.1, 1.0], [0.9, -1.0]], dtype=torch.float64)
    unique, inverse = box.unique_points(X)
    assert unique.tolist() == [[0.1, 1.0], [0.5, 0.0], [0.9, -1.0]]  # lexicographic
    assert torch.equal(unique[inverse], X)
    empty, groups = box.unique_points(X[:0])
    assert empty.shape == (0, 2) and groups.shape == (0,) and groups.dtype == torch.long
    with pytest.raises(ValueError, match="domain: epsilon-neighbourhoods need a finite pool"):
        box.neighbourhoods(0.1)


# -------------------------------------------------------------- FiniteDomain


@pytest.mark.parametrize("points", [torch.zeros(0, 2), torch.zeros(3), torch.zeros(2, 2, 2)])
def test_finite_bad_shape(points):
    with pytest.raises(ValueError, match="non-empty"):
        FiniteDomain(points)


def test_finite_non_finite():
    with pytest.raises(ValueError, match="finite"):
        FiniteDomain(torch.tensor([[0.0, 1.0], [math.nan, 0.0]]))
    with pytest.raises(ValueError, match="finite"):
        FiniteDomain(torch.tensor([[0.0, 1.0], [math.inf, 0.0]]))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [5, 200])
def test_finite_index_of_matches_brute_force(dtype, n):
    # n = 200 exceeds the size above which torch.cdist switches by default to the
    # inexact matrix-product formula; exact pool points must still be found.
    g = torch.Generator().manual_seed(0)
    points = torch.rand(n, 3, generator=g, dtype=dtype)
    dom = FiniteDomain(points)
    assert dom.dim == 3
    perm = torch.randperm(n, generator=g)
    assert torch.equal(dom.index_of(points[perm]), perm)
    assert torch.equal(dom.index_of(points), torch.arange(n))
    # a single query, and a few queries
    assert dom.index_of(points[n - 1 :]).tolist() == [n - 1]
    assert torch.equal(dom.index_of(points[perm[:7]]), perm[:7])


@pytest.mark.parametrize("dtype", DTYPES)
def test_finite_index_of_and_contains(dtype):
    points = torch.tensor([[0.0, 0.0], [1.0, 0.0], [0.5, 1.0]], dtype=dtype)
    dom = FiniteDomain(points)
    X = torch.tensor([[0.5, 1.0], [0.5, 0.5], [0.0, 0.0], [1.0, 1e-3]], dtype=dtype)
    assert dom.index_of(X).tolist() == [2, -1, 0, -1]
    assert dom.contains(X).tolist() == [True, False, True, False]
    assert dom.contains(X.reshape(2, 2, 2)).shape == (2, 2)
    assert torch.equal(dom.bounds, torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=dtype))


def test_finite_to():
    dom = FiniteDomain(torch.eye(3, dtype=torch.float64)).to(dtype=torch.float32)
    assert dom.points.dtype == torch.float32


def test_finite_points_must_be_a_floating_point_tensor():
    with pytest.raises(ValueError, match="points must be an N x d tensor"):
        FiniteDomain([[0.0, 1.0]])
    with pytest.raises(ValueError, match="points must be a floating-point tensor"):
        FiniteDomain(torch.tensor([[0, 1]]))
    with pytest.raises(ValueError, match="dtype must be a floating-point dtype"):
        FiniteDomain(torch.eye(2, dtype=torch.float64)).to(dtype=torch.int32)


def test_finite_size_neutral_point_discretize_and_discretization_size():
    points = torch.tensor([[0.3, 0.1], [0.0, 0.5], [0.9, 0.9]], dtype=torch.float64)
    pool = FiniteDomain(points)
    assert pool.size == 3.0 and pool.discretization_size(1000) == 3
    assert torch.equal(pool.neutral_point(), points[:1])
    assert pool.discretize(1000, seed=5) is points


def test_finite_sample_is_without_replacement_and_seeded():
    points = torch.arange(20, dtype=torch.float64).unsqueeze(-1)
    pool = FiniteDomain(points)
    X = pool.sample(20, seed=2)
    assert sorted(X[:, 0].tolist()) == list(range(20))  # every point once
    idx = torch.randperm(20, generator=torch.Generator().manual_seed(2))[:6]
    assert torch.equal(pool.sample(6, seed=2), points[idx])
    assert not torch.equal(pool.sample(6, seed=3), pool.sample(6, seed=2))
    with pytest.raises(ValueError, match="n = 21 exceeds the pool size 20"):
        pool.sample(21, seed=0)


def test_finite_sample_uniform_is_with_replacement_from_the_generator():
    points = torch.arange(4, dtype=torch.float64).unsqueeze(-1)
    pool = FiniteDomain(points)
    rng = torch.get_rng_state()
    X = pool.sample_uniform(4000, torch.Generator().manual_seed(0))
    assert torch.equal(torch.get_rng_state(), rng)
    idx = torch.randint(0, 4, (4000,), generator=torch.Generator().manual_seed(0))
    assert torch.equal(X, points[idx])
    counts = torch.bincount(X[:, 0].long(), minlength=4).double()
    chi2 = float(((counts - 1000) ** 2 / 1000).sum())
    assert chi2 < 25.0  # 3 degrees of freedom: P(chi2 > 25) ~ 2e-5


def test_finite_unique_points_in_pool_order():
    points = torch.tensor([[0.3], [0.1], [0.7]], dtype=torch.float64)
    pool = FiniteDomain(points)
    X = points[[2, 0, 2, 2]]
    unique, inverse = pool.unique_points(X)
    assert unique.tolist() == [[0.3], [0.7]] and inverse.tolist() == [1, 0, 1, 1]
    assert torch.equal(unique[inverse], X)
    empty, groups = pool.unique_points(X[:0])
    assert empty.shape == (0, 1) and groups.shape == (0,)


@pytest.mark.parametrize("kind, p", [("box", float("inf")), ("ball", 2.0)])
def test_finite_neighbourhoods_match_brute_force_distances(kind, p):
    points = torch.rand(25, 2, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    mask = FiniteDomain(points).neighbourhoods(0.3, kind)
    expected = [[float(torch.dist(a, b, p=p)) <= 0.3 for b in points] for a in points]
    assert mask.tolist() == expected
    assert bool(mask.diagonal().all()) and torch.equal(mask, mask.T)
    # epsilon = 0: each point is its own only neighbour
    assert torch.equal(FiniteDomain(points).neighbourhoods(0.0, kind), torch.eye(25, dtype=torch.bool))


def test_finite_neighbourhood_radius_includes_its_boundary():
    points = torch.tensor([[0.0], [0.25], [0.5]], dtype=torch.float64)
    mask = FiniteDomain(points).neighbourhoods(0.25)
    assert mask.tolist() == [[True, True, False], [True, True, True], [False, True, True]]


@pytest.mark.parametrize("epsilon", [-0.1, math.inf, math.nan, "0.1", None])
def test_finite_neighbourhoods_refuse_a_bad_radius(epsilon):
    with pytest.raises(ValueError, match="epsilon must be a finite number >= 0"):
        FiniteDomain(torch.eye(2, dtype=torch.float64)).neighbourhoods(epsilon)


def test_finite_neighbourhoods_refuse_an_unknown_shape():
    with pytest.raises(ValueError, match=r"perturbation must be one of \('box', 'ball'\)"):
        FiniteDomain(torch.eye(2, dtype=torch.float64)).neighbourhoods(0.1, "diamond")


# ------------------------------------------------------------------ checks


def test_check_domain():
    box = BoxDomain(BOUNDS)
    assert check_domain(box) is box
    for bad in (BOUNDS, None, "box"):
        with pytest.raises(ValueError, match="^domain must be a BoxDomain, a FiniteDomain or a MixedDomain"):
            check_domain(bad)
    with pytest.raises(ValueError, match="^search_space must be"):
        check_domain(None, name="search_space")


def test_check_points_accepts_points_of_the_domain_and_names_the_argument():
    box = BoxDomain(BOUNDS)
    X = torch.tensor([[0.0, -1.0], [1.0, 2.0]], dtype=torch.float64)
    assert torch.equal(check_points(box, X), X)
    cases = [
        (torch.zeros(2, dtype=torch.float64), r"X_next must be q x d with d = 2, got shape \(2,\)"),
        (torch.zeros(1, 3, dtype=torch.float64), "X_next must be q x d with d = 2"),
        (torch.zeros(0, 2, dtype=torch.float64), "X_next must hold at least one point"),
        (torch.tensor([[math.nan, 0.0]], dtype=torch.float64), r"X_next must be finite, got NaN or inf in rows \[0\]"),
        (torch.tensor([[0.5, 0.0], [1.5, 0.0], [0.5, 9.0]], dtype=torch.float64),
         r"X_next must lie in the box .*; rows \[1, 2\] do not"),
        (torch.tensor([[2, 0]]), r"X_next must lie in the box"),  # integers are not cast the other way
    ]
    for bad, message in cases:
        with pytest.raises(ValueError, match=message):
            check_points(box, bad, name="X_next")
    pool = FiniteDomain(X)
    with pytest.raises(ValueError, match=r"X must be points of the pool; rows \[0\] are not .*nearest pool point is \[0.0, -1.0\]"):
        check_points(pool, torch.tensor([[0.5, -0.5]], dtype=torch.float64))


def test_check_points_converts_what_it_accepts_and_refuses_the_rest():
    box = BoxDomain(BOUNDS)
    expected = torch.tensor([[0.5, 0.0]], dtype=torch.float64)
    for given in ([[0.5, 0.0]], ((0.5, 0.0),), np.array([[0.5, 0.0]]), expected.float()):
        got = check_points(box, given)
        assert got.dtype == torch.float64 and torch.equal(got, expected)
    assert torch.equal(check_points(box, torch.tensor([[1, 2]])), torch.tensor([[1.0, 2.0]], dtype=torch.float64))
    for bad, message in (
        (torch.tensor([[True, False]]), "X must hold real numbers, got dtype torch.bool"),
        (np.array([["a", "b"]]), "X must hold real numbers"),
        ([[0.5], [0.1, 0.2]], "X must be a rectangular array"),
        ("0.5, 0.1", "X must be a torch tensor, a numpy array or a list of floats, got str"),
        (torch.tensor([[1j, 0j]]), "X must hold real numbers, got dtype torch.complex"),
    ):
        with pytest.raises(TypeError, match=message):
            check_points(box, bad)


def test_a_lower_precision_copy_of_a_pool_point_is_that_point():
    points = torch.rand(30, 3, generator=torch.Generator().manual_seed(0), dtype=torch.float64) * 7.3
    pool = FiniteDomain(points)
    got = check_points(pool, points[[4, 11]].float())
    assert got.dtype == torch.float64
    assert torch.equal(pool.index_of(got, atol=1e-5), torch.tensor([4, 11]))


def test_check_observations_returns_converted_points_and_q_by_1_targets():
    box = BoxDomain(BOUNDS)
    X = torch.tensor([[0.5, 0.0], [0.2, 1.0]], dtype=torch.float64)
    X_out, Y_out = check_observations(box, X, torch.tensor([1.0, 2.0]))
    assert torch.equal(X_out, X) and Y_out.shape == (2, 1) and Y_out.dtype == torch.float64
    _, Y_list = check_observations(box, X.tolist(), [1, 2])
    assert torch.equal(Y_list, torch.tensor([[1.0], [2.0]], dtype=torch.float64))
    with pytest.raises(TypeError, match="Y must hold real numbers"):
        check_observations(box, X, torch.tensor([True, False]))
    with pytest.raises(ValueError, match=r"^train_Y must have shape \(2,\) or \(2, 1\) to match train_X"):
        check_observations(box, X, torch.zeros(3), "train_X", "train_Y")
    with pytest.raises(ValueError, match="train_Y must have shape"):
        check_observations(box, X, torch.zeros(2, 2), "train_X", "train_Y")
    with pytest.raises(ValueError, match="Y must be finite"):
        check_observations(box, X, torch.tensor([1.0, math.inf]))
    with pytest.raises(ValueError, match="train_X must lie in the box"):
        check_observations(box, X + 5, torch.zeros(2), "train_X", "train_Y")
    with pytest.raises(ValueError, match="X must hold at least one point"):
        check_observations(box, X[:0], torch.zeros(0))
    X_empty, Y_empty = check_observations(box, X[:0], torch.zeros(0), allow_empty=True)
    assert X_empty.shape == (0, 2) and Y_empty.shape == (0, 1)


def test_observation_checks_convert_without_a_read_and_flag_what_check_observations_refuses(monkeypatch):
    from botorch_unknown_hypers.domains import observation_checks
    from tests.host_reads import record_reads

    box = BoxDomain(BOUNDS)
    X = torch.tensor([[0.5, 0.0], [0.2, 1.0]], dtype=torch.float64)
    cases = [(X, [1.0, 2.0]), (X + 5, [1.0, 2.0]), (X, [1.0, math.nan]), (X, torch.zeros(3))]
    reads = record_reads(monkeypatch)
    flags = [observation_checks(box, x, y)[2] for x, y in cases]
    assert reads == []
    monkeypatch.undo()
    assert bool(flags[0]) and not bool(flags[1]) and not bool(flags[2]) and flags[3] is None
    X_out, Y_out, _ = observation_checks(box, X.tolist(), [1, 2])
    assert torch.equal(X_out, X) and torch.equal(Y_out, torch.tensor([[1.0], [2.0]], dtype=torch.float64))
    for (x, y), match in zip(cases[1:], ("X must lie in the box", "Y must be finite", "Y must have shape")):
        with pytest.raises(ValueError, match=match):
            check_observations(box, x, y)


def test_check_observations_reads_the_device_once_and_refuses_x_before_y():
    from torch.profiler import ProfilerActivity, profile

    box = BoxDomain(BOUNDS)
    X = torch.tensor([[0.5, 0.0], [0.2, 1.0]], dtype=torch.float64)
    Y = torch.tensor([1.0, 2.0], dtype=torch.float64)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        check_observations(box, X, Y)
    assert sum(e.name == "aten::_local_scalar_dense" for e in prof.events()) == 1  # where every read of a value ends
    bad_X = X.clone()
    bad_X[1, 0] = math.nan
    for bad_Y in (torch.tensor([True, False]), torch.zeros(3), torch.tensor([1.0, math.inf])):  # X's error wins
        with pytest.raises(ValueError, match=r"X must be finite, got NaN or inf in rows \[1\]"):
            check_observations(box, bad_X, bad_Y)
        with pytest.raises(ValueError, match="X must lie in the box"):
            check_observations(box, X + 5, bad_Y)


def test_check_training_data():
    X = torch.rand(4, 2, dtype=torch.float64)
    assert check_training_data(X, torch.zeros(4, dtype=torch.float64)).shape == (4, 1)
    cases = [
        ((X, [0.0] * 4), "train_X and train_Y must be torch tensors"),
        ((X[0], torch.zeros(4, dtype=torch.float64)), "train_X must be n x d"),
        ((X, torch.zeros(4, 2, dtype=torch.float64)), "train_Y must be n or n x 1"),
        ((X, torch.zeros(3, dtype=torch.float64)), "train_X has 4 rows but train_Y has 3"),
        ((X[:0], torch.zeros(0, dtype=torch.float64)), "train_X is empty"),
        ((X * math.nan, torch.zeros(4, dtype=torch.float64)), "train_X contains NaN or inf"),
        ((X, torch.full((4,), math.inf, dtype=torch.float64)), "train_Y contains NaN or inf"),
        ((X, torch.zeros(4, dtype=torch.float32)), "train_X and train_Y must share dtype and device"),
    ]
    for args, message in cases:
        with pytest.raises(ValueError, match=message):
            check_training_data(*args)


def test_a_float32_copy_of_a_pool_point_is_that_point_for_checks_and_every_pool_rule():
    from botorch_unknown_hypers import make_policy
    from botorch_unknown_hypers.domains import check_observations, check_points

    points = torch.rand(40, 3, generator=torch.Generator().manual_seed(0), dtype=torch.float64) * 7.0 - 3.0
    pool = FiniteDomain(points)
    copy32 = points[[3, 17, 5]].to(torch.float32)
    assert not torch.equal(copy32.double(), points[[3, 17, 5]])  # the copy differs from the point ...
    assert torch.equal(check_points(pool, copy32), points[[3, 17, 5]])  # ... and is taken as the point, bit for bit
    X, Y = check_observations(pool, copy32, torch.ones(3, dtype=torch.float32))
    assert torch.equal(X, points[[3, 17, 5]]) and Y.dtype == torch.float64
    with pytest.raises(ValueError, match="must be points of the pool"):
        check_points(pool, copy32 + 1e-3)  # beyond the float32 rounding: still refused
    X64 = points[:8]
    Y64 = -(X64 - 0.5).square().sum(-1, keepdim=True)
    for name in ("he-gp-ucb", "lb-gp-ucb", "lb-gp-ucb-auto", "he-gp-ucb-auto", "mle-gp-ucb", "random"):
        a = make_policy(name, pool, seed=0, num_restarts=2, raw_samples=16)
        b = make_policy(name, pool, seed=0, num_restarts=2, raw_samples=16)
        x = a.suggest(X64.to(torch.float32), Y64.to(torch.float32))
        assert torch.equal(x, b.suggest(X64, Y64)), name
        a.observe(x.to(torch.float32), torch.zeros(1, dtype=torch.float32))  # observe accepts the copy too


def test_a_nan_row_is_refused_on_a_pool_whose_corner_is_a_point():
    from botorch_unknown_hypers.domains import check_observations, check_points

    grid = torch.stack(torch.meshgrid(torch.linspace(0, 1, 3), torch.linspace(0, 1, 3), indexing="ij"), -1).reshape(-1, 2)
    pool = FiniteDomain(grid.double())  # its bounding box's lower corner (0, 0) is a pool point
    bad = torch.tensor([[float("nan"), 0.0], [0.5, 0.5]], dtype=torch.float64)
    with pytest.raises(ValueError, match=r"X must be finite, got NaN or inf in rows \[0\]"):
        check_points(pool, bad)
    with pytest.raises(ValueError, match=r"train_X must be finite"):
        check_observations(pool, bad, torch.zeros(2, dtype=torch.float64), "train_X", "train_Y")


# --------------------------------------------------------------------------- mixed domains
from botorch_unknown_hypers.domains import CategoricalParameter, FloatParameter, IntParameter, MixedDomain  # noqa: E402


def mixed_domain() -> MixedDomain:
    return MixedDomain(
        (
            FloatParameter("lr", 1e-5, 1e-1, log=True),
            IntParameter("layers", 1, 6),
            CategoricalParameter("act", ("relu", "tanh", "gelu")),
            FloatParameter("dropout", 0.0, 0.5, step=0.1),
            IntParameter("batch", 8, 512, log=True),
        )
    )


def test_mixed_domain_columns_and_bounds():
    d = mixed_domain()
    assert d.dim == 7 and not d.is_box and d.size == math.inf
    expected = [[math.log(1e-5), 1, 0, 0, 0, 0.0, math.log(8)], [math.log(1e-1), 6, 1, 1, 1, 0.5, math.log(512)]]
    assert torch.allclose(d.bounds, torch.tensor(expected, dtype=torch.float64))
    bounds, discrete, categorical = d.code_layout()
    assert bounds.shape == (2, 5) and categorical == {2: [0.0, 1.0, 2.0]}
    assert discrete[1] == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0] and len(discrete[3]) == 6 and len(discrete[4]) == 505
    assert MixedDomain((IntParameter("a", 0, 3), CategoricalParameter("b", (True, None)))).size == 8.0
    assert MixedDomain((FloatParameter("a", 0.0, 1.0),)).is_box


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: FloatParameter("a", 1.0, 1.0), "'a': upper must exceed lower"),
        (lambda: FloatParameter("a", 0.0, 1.0, log=True), "'a': a log-scale parameter needs lower > 0"),
        (lambda: FloatParameter("a", 0.0, 1.0, step=2.0), "'a': step 2.0 leaves one value"),
        (lambda: IntParameter("n", 1, 5, step=0), "'n': needs step >= 1"),
        (lambda: IntParameter("n", 1.0, 5), "'n': lower must be an int"),
        (lambda: IntParameter("n", 0, 5, log=True), "'n': a log-scale integer needs lower >= 1"),
        (lambda: CategoricalParameter("c", ("x",)), "'c': choices must be a tuple of at least two"),
        (lambda: CategoricalParameter("c", ("x", "x")), "'c': choices must be distinct"),
        (lambda: CategoricalParameter("c", ("x", [1])), "'c': choices must be str, int, float, bool or None"),
        (lambda: MixedDomain((IntParameter("n", 1, 3), IntParameter("n", 1, 4))), "names must be distinct"),
        (lambda: MixedDomain(()), "parameters must be a non-empty tuple"),
    ],
)
def test_mixed_domain_refuses_bad_parameters_by_name(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_mixed_points_are_checked_and_snapped_exactly():
    d = mixed_domain()
    X = d.sample(16, seed=0)
    assert bool(d.contains(X).all())
    snapped = check_points(d, X.float())
    grid = [1, 2, 3, 4, 5, 6]  # a float32 copy is on the grid and the choices bit for bit
    assert torch.equal(snapped[:, grid], X[:, grid])
    assert torch.allclose(snapped[:, 0], X[:, 0], rtol=1e-6)  # a continuous column: converted, as a box's
    integral = MixedDomain((IntParameter("n", 1, 6), CategoricalParameter("c", ("a", "b"))))
    assert torch.equal(check_points(integral, torch.tensor([[2, 0, 1]])), torch.tensor([[2.0, 0.0, 1.0]], dtype=torch.float64))
    bad = X.clone()
    bad[3, 1] = 2.5
    with pytest.raises(ValueError, match=r"rows \[3\].*parameter 'layers' \(column 1\) must be an integer in \[1, 6\]"):
        check_points(d, bad)
    bad = X.clone()
    bad[0, 2:5] = torch.tensor([1.0, 1.0, 0.0], dtype=torch.float64)
    with pytest.raises(ValueError, match=r"parameter 'act' \(columns 2..4\) must be one-hot"):
        check_points(d, bad)
    bad = X.clone()
    bad[1, 5] = 0.25
    with pytest.raises(ValueError, match=r"parameter 'dropout' \(column 5\) must be on the grid"):
        check_points(d, bad)
    bad = X.clone()
    bad[2, 0] = 0.0
    with pytest.raises(ValueError, match=r"parameter 'lr' \(column 0\) must lie in"):
        check_points(d, bad)


def test_named_values_round_trip_exactly():
    d = mixed_domain()
    for x in d.sample(32, seed=1):
        values = d.to_values(x)
        assert isinstance(values["layers"], int) and isinstance(values["batch"], int)
        assert values["act"] in ("relu", "tanh", "gelu") and 1e-5 <= values["lr"] <= 1e-1
        assert torch.equal(torch.tensor(d.to_row(values), dtype=torch.float64), x)
        assert d.to_values(torch.tensor(d.to_row(values), dtype=torch.float64)) == values
    with pytest.raises(ValueError, match="'layers' must be an integer"):
        d.to_row({"lr": 1e-3, "layers": 2.5, "act": "relu", "dropout": 0.1, "batch": 8})
    with pytest.raises(ValueError, match=r"'act' must be one of \['relu', 'tanh', 'gelu'\], got 'elu'"):
        d.to_row({"lr": 1e-3, "layers": 2, "act": "elu", "dropout": 0.1, "batch": 8})
    with pytest.raises(ValueError, match="'dropout' must be on its grid"):
        d.to_row({"lr": 1e-3, "layers": 2, "act": "relu", "dropout": 0.15, "batch": 8})
    with pytest.raises(ValueError, match=r"parameters \['batch'\] are missing"):
        d.to_row({"lr": 1e-3, "layers": 2, "act": "relu", "dropout": 0.1})
    assert MixedDomain.from_description(d.describe()) == d


def test_round_is_the_nearest_point_by_brute_force():
    d = MixedDomain((IntParameter("n", 1, 9, step=2), IntParameter("m", 1, 40, log=True), CategoricalParameter("c", ("a", "b", "c"))))
    X = torch.rand(200, d.dim, generator=torch.Generator().manual_seed(0), dtype=torch.float64) * 12 - 1
    X[:, 1] = torch.rand(200, generator=torch.Generator().manual_seed(1), dtype=torch.float64) * 4
    R = d.round(X)
    assert bool(d.contains(R).all())
    ns = torch.tensor([1.0, 3.0, 5.0, 7.0, 9.0], dtype=torch.float64)
    ms = torch.arange(1, 41, dtype=torch.float64).log()
    for x, r in zip(X, R):
        assert r[0] == ns[(ns - x[0].clamp(1, 9)).abs().argmin()]
        assert r[1] == ms[(ms - x[1].clamp(0, math.log(40))).abs().argmin()]
        assert int(r[2:].argmax()) == int(x[2:].argmax()) and r[2:].sum() == 1


def test_mixed_sampling_is_seeded_and_uniform_over_choices():
    d = mixed_domain()
    assert torch.equal(d.sample(64, seed=3), d.sample(64, seed=3))
    X = d.sample_uniform(3000, torch.Generator().manual_seed(0))
    assert bool(d.contains(X).all())
    shares = X[:, 2:5].mean(dim=0)
    assert torch.allclose(shares, torch.full((3,), 1 / 3, dtype=torch.float64), atol=0.03)
    layers = torch.bincount(X[:, 1].long(), minlength=7)[1:].double() / 3000.0
    assert torch.allclose(layers, torch.full((6,), 1 / 6, dtype=torch.float64), atol=0.03)
    assert bool(d.contains(d.neutral_point()).all())
    with pytest.raises(ValueError, match="need a finite pool"):
        d.neighbourhoods(0.1)


def test_extreme_points_of_each_domain():
    box = BoxDomain(BOUNDS)
    points, what = box.extreme_points()
    assert torch.equal(points, BOUNDS) and what == "box corners"
    pool = FiniteDomain(torch.tensor([[0.1, 0.2], [0.3, 0.4], [0.5, 0.0]], dtype=torch.float64))
    points, what = pool.extreme_points()
    assert torch.equal(points, pool.points) and what == "pool points"
    d = mixed_domain()
    points, what = d.extreme_points()
    assert what == "lowest and highest points" and bool(d.contains(points).all())
    low, high = d.to_values(points[0]), d.to_values(points[1])
    assert low == {"lr": pytest.approx(1e-5), "layers": 1, "act": "relu", "dropout": 0.0, "batch": 8}
    assert high == {"lr": pytest.approx(1e-1), "layers": 6, "act": "gelu", "dropout": 0.5, "batch": 512}
