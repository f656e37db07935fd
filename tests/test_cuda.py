r"""CUDA checks: the same code on the GPU gives the CPU's numbers and keeps tensors on the device.

Skipped without a CUDA device (CI has none); run on a GPU machine with ``python -m pytest tests/test_cuda.py``.
"""

from __future__ import annotations

import pytest
import torch

from botorch_unknown_hypers.acquisition import CandidateUCB, optimize_ucb_per_candidate
from botorch_unknown_hypers.candidates import KernelCandidates
from botorch_unknown_hypers.loop import run
from botorch_unknown_hypers.models import CandidateGP
from botorch_unknown_hypers.policies import make_policy
from botorch_unknown_hypers.problems import get_problem

pytestmark = [
    pytest.mark.cuda,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
]


def _data(device: torch.device) -> tuple[torch.Tensor, torch.Tensor, KernelCandidates]:
    gen = torch.Generator().manual_seed(0)
    X = torch.rand(40, 3, generator=gen, dtype=torch.float64)
    Y = torch.sin(5 * X).sum(-1, keepdim=True)
    cands = KernelCandidates.from_lengthscales(torch.tensor([0.6, 0.3, 0.15, 0.07], dtype=torch.float64))
    return X.to(device), Y.to(device), cands.to(device=device)


def test_a_rule_on_cuda_searches_on_the_device_by_default() -> None:
    problem = get_problem("branin").to(device="cuda")
    for name in ("auto", "lb-gp-ucb-auto", "he-gp-ucb", "ts-rsr"):
        assert make_policy(name, problem.domain).search == "torch"
        assert make_policy(name, problem.domain, search="scipy").search == "scipy"


def test_candidate_gp_cuda_matches_cpu() -> None:
    Xc, Yc, cc = _data(torch.device("cpu"))
    Xg, Yg, cg = _data(torch.device("cuda"))
    test = torch.rand(7, 3, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    mc, vc = CandidateGP(Xc, Yc, cc).marginal_mean_variance(test.unsqueeze(0))
    mg, vg = CandidateGP(Xg, Yg, cg).marginal_mean_variance(test.cuda().unsqueeze(0))
    assert mg.device.type == "cuda" and vg.device.type == "cuda"
    torch.testing.assert_close(mg.cpu(), mc, rtol=1e-9, atol=1e-12)
    torch.testing.assert_close(vg.cpu(), vc, rtol=1e-9, atol=1e-12)


def test_per_candidate_optimiser_on_cuda() -> None:
    X, Y, cands = _data(torch.device("cuda"))
    model = CandidateGP(X, Y, cands)
    bounds = torch.stack([torch.zeros(3), torch.ones(3)]).to(X)
    X_best, values = optimize_ucb_per_candidate(model, 2.0, bounds, num_restarts=4, raw_samples=64, seed=0)
    assert X_best.device.type == "cuda" and X_best.shape == (4, 3)
    acqf = CandidateUCB(model, beta=2.0, reduction="max")
    direct = acqf.candidate_values(X_best).diagonal()
    torch.testing.assert_close(direct, values)


@pytest.mark.parametrize(
    "method", ["random", "mle-gp-ucb", "gp-ts", "lb-gp-ucb", "lnb-gp-ucb", "a-gp-ucb", "hb-gp-ucb", "nuts-gp-ucb"]
)
def test_run_on_cuda(method: str) -> None:
    problem = get_problem("berkenkamp", device="cuda")
    options = {"num_samples": 20, "warmup_steps": 20} if method == "nuts-gp-ucb" else {}
    policy = make_policy(method, problem.domain, seed=0, device="cuda", **options)
    history = run(problem, policy, iterations=3, seed=0)
    assert len(history) == problem.n_init + 3
    assert (history["simple_regret"] >= -1e-12).all()


def test_cached_predictive_cuda_matches_cpu() -> None:
    from botorch_unknown_hypers.models.cached_predictive import CachedExactPredictive
    from botorch_unknown_hypers.models.fixed_gp import SurrogateSpec, fixed_hyperparameter_gp

    spec = SurrogateSpec(kernel="matern52", lengthscale=(0.3,), noise_variance=1e-4)
    Xc, Yc, _ = _data(torch.device("cpu"))
    test = torch.rand(9, 1, 3, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    out = {}
    for dev in ("cpu", "cuda"):
        X, Y = Xc.to(dev), Yc.to(dev)
        pred = CachedExactPredictive.from_model(fixed_hyperparameter_gp(X, Y, spec)).condition(X[:3] * 0.5)
        out[dev] = pred.mean_and_variance(test.to(dev))
        assert out[dev][1].device.type == dev
    for a, b in zip(out["cpu"], out["cuda"]):
        torch.testing.assert_close(b.cpu(), a, rtol=1e-9, atol=1e-12)


def test_factor_cache_on_cuda_matches_cpu_and_stays_on_the_device() -> None:
    from botorch_unknown_hypers.models.factor_cache import FactorCache

    Xc, Yc, cc = _data(torch.device("cpu"))
    Xg, Yg, cg = _data(torch.device("cuda"))
    cpu, gpu = FactorCache(), FactorCache()
    for m in (20, 21, 40):
        fc, fg = cpu.factor(cc, Xc[:m]), gpu.factor(cg, Xg[:m])
    assert fg.L.device.type == "cuda" and fg.jitter.device.type == "cuda"
    torch.testing.assert_close(fg.L.cpu(), fc.L, rtol=1e-9, atol=1e-12)
    model = CandidateGP(Xg, Yg, cg, factor=fg)
    mean, var = model.marginal_mean_variance(torch.rand(5, 3, dtype=torch.float64, device="cuda").unsqueeze(0))
    assert mean.device.type == "cuda" and var.device.type == "cuda"


def test_balancing_and_elimination_keep_their_factors_on_cuda() -> None:
    problem = get_problem("berkenkamp").to(device=torch.device("cuda"))
    for method in ("lb-gp-ucb", "he-gp-ucb"):
        policy = make_policy(method, problem.domain, seed=0, device="cuda", num_restarts=2, raw_samples=32)
        run(problem, policy, iterations=3, seed=0)
        for cache in policy.factor_caches.values():
            assert cache.stats.full + cache.stats.rows > 0


@pytest.mark.parametrize(
    "method", ["lb-gp-ucb", "hb-gp-ucb", "lnb-gp-ucb", "he-gp-ucb", "lb-gp-ucb-auto", "he-gp-ucb-auto", "pe-gp-ts", "hp-gp-ts"]
)
def test_batches_with_pending_points_stay_on_cuda(method: str) -> None:
    from botorch_unknown_hypers.acquisition.optimize import EXCLUDE_TOL
    from botorch_unknown_hypers.domains import BoxDomain

    device = torch.device("cuda")
    domain = BoxDomain(torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64, device=device))
    gen = torch.Generator().manual_seed(1)
    X = torch.rand(8, 2, generator=gen, dtype=torch.float64).to(device)
    pending = torch.rand(3, 2, generator=gen, dtype=torch.float64).to(device)

    def f(Z: torch.Tensor) -> torch.Tensor:
        return (torch.sin(5 * Z[:, 0]) + 0.5 * torch.cos(3 * Z[:, 1])).unsqueeze(-1)

    options = {"num_restarts": 2, "raw_samples": 64}
    if method in ("pe-gp-ts", "hp-gp-ts"):
        options["priors"] = KernelCandidates.from_lengthscales(torch.tensor([0.4, 0.1], dtype=torch.float64), noise=1e-2).to(device=device)
    policy = make_policy(method, domain, seed=0, device="cuda", **options)
    Y = f(X)
    for _ in range(2):  # the second round advances the cached factors on the device
        batch = policy.suggest(X, Y, q=3, X_pending=pending)
        assert batch.device.type == "cuda" and batch.shape == (3, 2)
        assert float(torch.cdist(batch, pending).min()) >= EXCLUDE_TOL and float(torch.pdist(batch).min()) >= EXCLUDE_TOL
        policy.observe(batch.flip(0), f(batch.flip(0)))
        X, Y = torch.cat([X, batch.flip(0)]), torch.cat([Y, f(batch.flip(0))])
    assert policy.state.pending == []


def test_candidate_factor_solve_on_cuda_matches_cpu() -> None:
    from botorch_unknown_hypers.models.factor_cache import FactorCache

    Xc, Yc, cc = _data(torch.device("cpu"))
    Xg, Yg, cg = _data(torch.device("cuda"))
    rhs = torch.randn(4, 40, 3, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    fc, fg = FactorCache().factor(cc, Xc), FactorCache().factor(cg, Xg)
    for b in (rhs, rhs[..., :1], Yc.expand(4, -1, -1)):  # several and one right-hand side, expanded
        out = fg.solve(b.cuda())
        assert out.device.type == "cuda"
        torch.testing.assert_close(out.cpu(), fc.solve(b), rtol=1e-8, atol=1e-10)


def test_fixed_point_moments_on_cuda_match_cpu() -> None:
    from botorch_unknown_hypers.models.factor_cache import FactorCache

    R = torch.rand(64, 3, generator=torch.Generator().manual_seed(4), dtype=torch.float64)
    moments = []
    for device in (torch.device("cpu"), torch.device("cuda")):
        X, Y, cands = _data(device)
        cache = FactorCache()
        cache.set_points(R.to(device))
        cache.factor(cands, X[:30])
        model = CandidateGP(X, Y, cands, factor=cache.factor(cands, X))  # 10 rows appended to the solves
        mean, var = model.fixed_point_moments(R.to(device))
        assert mean.device.type == device.type
        moments.append((mean.cpu(), var.cpu()))
    for a, b in zip(*moments):
        torch.testing.assert_close(a, b, rtol=1e-8, atol=1e-10)


def test_device_search_on_cuda_matches_cpu_and_stays_on_the_device() -> None:
    from functools import partial

    from botorch_unknown_hypers.acquisition.device_search import maximize_batched
    from botorch_unknown_hypers.acquisition.ucb import CandidateUCBValues, as_beta, candidate_ucb_at
    from botorch_unknown_hypers.models.factor_cache import FactorCache

    starts = torch.rand(4, 5, 3, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    found = {}
    for device in ("cpu", "cuda"):
        X, Y, cands = _data(torch.device(device))
        model = CandidateGP(X, Y, cands)
        bounds = torch.stack([torch.zeros(3), torch.ones(3)]).to(X)
        found[device] = maximize_batched(partial(candidate_ucb_at, model, as_beta(2.0, 4, X)), bounds, starts.to(X))
        # with rows set aside as their problems stop (the objectives' subset, on cached factors)
        cached = CandidateGP(X, Y, cands, factor=FactorCache().factor(cands, X))
        found[device, "rows"] = maximize_batched(CandidateUCBValues(cached, as_beta(2.0, 4, X)), bounds, starts.to(X))
    for key in ("cuda", ("cuda", "rows")):
        X_gpu, v_gpu = found[key]
        X_cpu, v_cpu = found["cpu" if key == "cuda" else ("cpu", "rows")]
        assert X_gpu.device.type == "cuda" and v_gpu.device.type == "cuda"
        torch.testing.assert_close(X_gpu.cpu(), X_cpu, rtol=0, atol=1e-5)
        torch.testing.assert_close(v_gpu.cpu(), v_cpu, rtol=1e-7, atol=1e-9)
    torch.testing.assert_close(found["cpu", "rows"][1], found["cpu"][1], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("method", ["lb-gp-ucb", "he-gp-ucb", "lb-gp-ucb-auto", "he-gp-ucb-auto"])
def test_device_search_policies_choose_alike_on_cuda_and_cpu(method: str) -> None:
    r"""With ``search="torch"`` a rule's first choice on CUDA is the CPU's, up to floating point,
    and stays on the device, with several restarts: the package's Boltzmann selection of restarts
    draws on the CPU's generator whatever the device."""
    from botorch_unknown_hypers.domains import BoxDomain

    chosen = {}
    for device in ("cpu", "cuda"):
        X, Y, _ = _data(torch.device(device))
        domain = BoxDomain(torch.stack([torch.zeros(3), torch.ones(3)]).to(X))
        policy = make_policy(method, domain, seed=0, device=device, search="torch", num_restarts=4, raw_samples=64)
        chosen[device] = policy.suggest(X, Y)
    assert chosen["cuda"].device.type == "cuda"
    torch.testing.assert_close(chosen["cuda"].cpu(), chosen["cpu"], rtol=0, atol=1e-4)


def test_restart_selection_on_cuda_is_the_cpus_and_leaves_the_gpu_generator_alone() -> None:
    from botorch_unknown_hypers.acquisition.multistart import select_restarts

    values = torch.randn(5, 80, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    torch.cuda.manual_seed(7)
    before = torch.cuda.get_rng_state()
    on_gpu = select_restarts(values.cuda(), 6, 2.0, 3)
    assert on_gpu.device.type == "cuda" and torch.equal(torch.cuda.get_rng_state(), before)
    assert torch.equal(on_gpu.cpu(), select_restarts(values, 6, 2.0, 3))


def test_candidate_sets_and_their_modules_reach_the_device_without_a_wait() -> None:
    r"""Values known on the host (a candidate set from numbers, its subset by a list, its GPyTorch
    modules, numbers given to the confidence widths) go to the device with non-blocking copies:
    under ``set_sync_debug_mode("error")`` none of these steps synchronises, and the values are
    the CPU's."""
    from botorch_unknown_hypers.confidence import as_tensors

    like = torch.zeros(1, dtype=torch.float64, device="cuda")
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        cands = KernelCandidates.from_values([0.5, 0.25, 0.125], noise=1e-4, dtype=torch.float64, device="cuda")
        part = cands.subset([2, 0])
        mean, covar, likelihood = part.build(3)
        widths = as_tensors(a=2.0, b=like)
    finally:
        torch.cuda.set_sync_debug_mode(0)
    assert covar.base_kernel.raw_lengthscale.device.type == "cuda" and likelihood.noise.device.type == "cuda"
    cpu = KernelCandidates.from_values([0.5, 0.25, 0.125], noise=1e-4, dtype=torch.float64).subset([2, 0])
    torch.testing.assert_close(covar.base_kernel.lengthscale.cpu(), cpu.build(3)[1].base_kernel.lengthscale, rtol=0, atol=0)
    # the noise passes through the constraint's softplus and its inverse, whose last bit differs
    # between the devices' kernels (a relative 1.4e-16 seen on an H200)
    torch.testing.assert_close(likelihood.noise.cpu(), cpu.build(3)[2].noise, rtol=1e-14, atol=0)
    assert widths["a"].device.type == "cuda" and float(widths["a"]) == 2.0


def test_grid_slots_counts_the_starts_without_a_wait() -> None:
    r"""The device search's grid of (candidate, slot) places counts the starts by ``index_add_``
    (``bincount`` reads the largest index on the host): no synchronisation."""
    from botorch_unknown_hypers.acquisition.device_search import grid_slots

    cand = torch.tensor([2, 0, 2, 2], device="cuda")
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        slot, counts = grid_slots(cand, 3)
    finally:
        torch.cuda.set_sync_debug_mode(0)
    assert slot.tolist() == [0, 0, 1, 2] and counts.tolist() == [1, 0, 3]


def test_restarts_sobol_points_uniform_points_and_the_best_outside_make_no_wait() -> None:
    r"""The restart selection (BoTorch's Boltzmann draws computed on the values' device), the
    Sobol points, a box's and a pool's uniform points and the best optimum outside an excluded
    set do not synchronise (``set_sync_debug_mode("error")``) and give the CPU's values."""
    from botorch_unknown_hypers.acquisition.multistart import select_restarts
    from botorch_unknown_hypers.acquisition.optimize import best_outside
    from botorch_unknown_hypers.domains import BoxDomain, FiniteDomain, sobol_points

    gen = torch.Generator().manual_seed(3)
    values = torch.randn(4, 300, generator=gen, dtype=torch.float64)
    bounds = torch.tensor([[0.0, -1.0, 2.0], [1.0, 1.0, 5.0]], dtype=torch.float64)
    X, v = torch.rand(6, 3, generator=gen, dtype=torch.float64), torch.randn(6, generator=gen, dtype=torch.float64)
    pool = torch.rand(20, 3, generator=gen, dtype=torch.float64)

    def compute(device: str) -> list[torch.Tensor]:
        box, finite = BoxDomain(bounds.to(device)), FiniteDomain(pool.to(device))
        Xd, vd = X.to(device), v.to(device)
        fallback = torch.full((1, 3), 0.5, dtype=torch.float64, device=device)
        on_device = values.to(device)  # the test's own copy to the device, before the watch starts
        if device == "cuda":
            torch.cuda.synchronize()
            torch.cuda.set_sync_debug_mode("error")
        try:
            out = [
                select_restarts(on_device, 8, 2.0, 5),
                sobol_points(box.bounds, 16, seed=4),
                sobol_points(box.bounds, 4, seed=4, batch=3),
                box.sample_uniform(5, torch.Generator().manual_seed(1)),
                finite.sample_uniform(5, torch.Generator().manual_seed(1)),
                finite.sample(4, seed=2),
                *best_outside(Xd, vd, Xd[v.argmax().item() : v.argmax().item() + 1], fallback),
                *best_outside(Xd, vd, Xd, fallback),  # every optimum excluded: the fallback
            ]
        finally:
            if device == "cuda":
                torch.cuda.set_sync_debug_mode(0)
        return out

    on_gpu, on_cpu = compute("cuda"), compute("cpu")
    for a, b in zip(on_gpu, on_cpu):
        assert a.device.type == "cuda"
        torch.testing.assert_close(a.cpu(), b, rtol=1e-15, atol=1e-15)  # indices and flags exactly


@pytest.mark.parametrize("method", ["lb-gp-ucb", "he-gp-ucb-auto"])
def test_refused_data_leave_a_cuda_rule_as_it_was(method: str) -> None:
    r"""On CUDA a rule reads its data check before its round: it refuses NaN data by name with its
    state and generator unchanged, proposes a resumed twin's point next, and starts its caches
    again on data that do not extend the last round's (a fresh rule's point)."""
    import json
    import math

    from botorch_unknown_hypers.domains import BoxDomain

    X, Y, _ = _data(torch.device("cuda"))
    domain = BoxDomain(torch.stack([torch.zeros(3), torch.ones(3)]).to(X))

    def make():
        return make_policy(method, domain, seed=0, device="cuda", search="torch", num_restarts=2, raw_samples=32)

    policy = make()
    x = policy.suggest(X[:30], Y[:30])
    policy.observe(x, Y[:1])
    data = (torch.cat([X[:30], x]), torch.cat([Y[:30], Y[:1]]))
    saved, drawn = json.dumps(policy.state_dict(), sort_keys=True), policy.generator.get_state()
    with pytest.raises(ValueError, match=r"^train_Y must be finite"):
        policy.suggest(data[0], torch.cat([data[1][:-1], torch.full_like(data[1][:1], math.nan)]))
    assert json.dumps(policy.state_dict(), sort_keys=True) == saved and torch.equal(policy.generator.get_state(), drawn)
    twin = make()
    twin.load_state_dict(json.loads(saved))
    point = policy.suggest(*data)
    assert point.device.type == "cuda"
    torch.testing.assert_close(point, twin.suggest(*data), rtol=0, atol=0)
    policy.load_state_dict(json.loads(saved))
    moved = data[0].clone()
    moved[0, 0] = (moved[0, 0] + 0.1) % 1.0
    fresh = make()
    fresh.load_state_dict(json.loads(saved))
    torch.testing.assert_close(policy.suggest(moved, data[1]), fresh.suggest(moved, data[1]), rtol=0, atol=0)
