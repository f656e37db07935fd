r"""Per-iteration cost of the rules against the number of observations n.

For each rule and each n, a fresh process conditions the rule on n random observations of
Michalewicz-5 (uniform in its box), runs one untimed round (the first factorisation of every
candidate, the warm-up of a campaign that already holds n points), then times the next
``--iterations`` rounds (``suggest`` + evaluate + ``observe``) and reports their median.
Rules:

- ``lb-gp-ucb`` (the authors'-code preset: its Matern-5/2 ladder below the initial MLE);
- ``he-gp-ucb`` with 16 Matern-5/2 candidates, length scales log-spaced in [0.05, 1];
- ``ts-rsr`` at q = 10 on a fixed-hyperparameter surrogate (Matern-5/2, length scale 0.2 of
  the unit cube, noise 1e-6), so no MLE fit enters the timing.

Per (rule, n) the script prints the median time per iteration, the share of it spent in
Cholesky factorisations (``torch.linalg.cholesky`` / ``cholesky_ex`` calls, counted by
``cProfile``, whoever makes them: the factor cache's full factorisations and update blocks,
GPyTorch, BoTorch's pathwise samples), apart from it the share in solves with an existing
factor (``torch.cholesky_solve``; versions before this column counted them as factorisation),
the share spent in the rule's factor cache (updates included), the peak
memory (resident set on CPU, allocated on CUDA) and, at ``--loop-n``, the ratio of an iteration
of HE's joint argmax done as a loop of K BoTorch ``SingleTaskGP`` + ``optimize_acqf`` calls
(fresh models every round: what a plain BoTorch user would run) against the batched rule. Then
the exponent :math:`b` of :math:`t \propto n^b` fitted by least squares in log-log between
n = 1000 and the largest n.

``--lb-k K`` starts LB with a ladder of exactly K length scales: the floor :math:`g_0` of
:math:`g(t) = \max(g_0, \sqrt t)` is set to :math:`r^{K - 1/2}` (r the ladder ratio), the ladder
a campaign reaches after about :math:`r^{2K - 1}` rounds. The next length scale enters only once
:math:`\sqrt{t + 1} > r^K` (after 23 rounds at K = 16 in d = 5), so none enters in the timed
rounds and the timing is the steady state of a K-candidate ladder. Without it
LB uses its preset ladder (5 length scales at round 1 in d = 5), which grows during the timed
rounds.

``--search torch`` refines the rules' box maximisations with the device search instead of the
package's default (the policies' ``search`` option).

``--p5-n n --p5-k K`` also measures the P5 ratio: the median HE iteration with K candidates at n
observations over its floor, the time of one batched :math:`(K, n, n)` Cholesky factorisation
plus the acquisition's matmuls (the cross-covariances of the ``raw_samples`` Sobol points with
the data, their triangular solve against the factors and the mean's product with
:math:`\alpha`), each the median of five synchronised calls on the same device.

On CUDA each timed row also reports the number of synchronising device calls (``.item()``,
device-to-host copies, ...) in one further round, counted with
``torch.cuda.set_sync_debug_mode("warn")``.

Usage::

    python benchmarks/campaign_scaling.py --device cpu                    # n = 250 ... 4000
    python benchmarks/campaign_scaling.py --device cuda --n 1000 2000 4000 10000
    python benchmarks/campaign_scaling.py --device cpu --rules lb-gp-ucb --n 1000 2000
    python benchmarks/campaign_scaling.py --device cuda --rules lb-gp-ucb he-gp-ucb --lb-k 16 \
        --n 1000 2000 4000 10000 --p5-n 2000 --p5-k 64
"""

from __future__ import annotations

import argparse
import cProfile
import json
import math
import platform
import pstats
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
import warnings
from dataclasses import replace

RULES = ("lb-gp-ucb", "he-gp-ucb", "ts-rsr")
CPU_N = (250, 500, 1000, 2000, 4000)
HE_K = 16
TS_RSR_Q = 10


def _make(rule: str, domain, seed: int, device, lb_k: int | None = None, he_k: int = HE_K, search: str | None = None):
    import torch

    from botorch_unknown_hypers.candidates import KernelCandidates
    from botorch_unknown_hypers.acquisition.device_search import DEFAULT_SEARCH
    from botorch_unknown_hypers.policies.registry import make_policy

    options = {"search": search or DEFAULT_SEARCH}
    if rule == "he-gp-ucb":
        ls = torch.logspace(math.log10(0.05), 0.0, he_k, dtype=torch.float64)
        return make_policy(rule, domain, seed=seed, device=device, candidates=KernelCandidates.from_lengthscales(ls, noise=1e-4), **options)
    if rule == "lb-gp-ucb" and lb_k is not None:
        policy = make_policy(rule, domain, seed=seed, device=device, **options)
        constants = replace(policy.constants, g0=policy.constants.ratio ** (lb_k - 0.5))
        policy.family = replace(policy.family, constants=constants)
        policy.candidate_round = policy.balancing_round(policy.candidate_source())  # the pieces take the family when built
        return policy
    if rule == "ts-rsr":
        width = (domain.bounds[1] - domain.bounds[0]).tolist()
        spec = {"kernel": "matern52", "lengthscale": [0.2 * w for w in width], "outputscale": 1.0, "noise_variance": 1e-6}
        return make_policy(rule, domain, seed=seed, device=device, surrogate="paper", surrogate_spec=spec, **options)
    return make_policy(rule, domain, seed=seed, device=device, **options)


def _cholesky_seconds(profile: cProfile.Profile) -> tuple[float, float]:
    r"""Seconds in Cholesky factorisations and, apart, in solves with a factor (``cholesky_solve``)."""
    stats = pstats.Stats(profile)
    calls = [(k[2], v[2]) for k, v in stats.stats.items() if "cholesky" in k[2] and k[0] == "~"]
    return sum(t for name, t in calls if "solve" not in name), sum(t for name, t in calls if "solve" in name)


def _observations(n: int, device, seed: int):
    import torch

    from botorch_unknown_hypers.problems.problem_registry import get_problem

    problem = get_problem("michalewicz5").to(device=device)
    domain = problem.domain
    gen = torch.Generator().manual_seed(seed)
    X = domain.bounds[0] + (domain.bounds[1] - domain.bounds[0]) * torch.rand(n, domain.dim, generator=gen, dtype=torch.float64).to(device)
    return problem, X, problem.evaluate(X)[0].reshape(-1, 1)


def _count_syncs(fn) -> int:
    r"""Number of synchronising CUDA calls made by ``fn()`` (``set_sync_debug_mode("warn")``)."""
    import torch

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.cuda.set_sync_debug_mode("warn")
        try:
            fn()
        finally:
            torch.cuda.set_sync_debug_mode("default")
    return sum("synchroniz" in str(w.message).lower() for w in caught)


def measure(rule: str, n: int, iterations: int, device_name: str, seed: int, lb_k: int | None = None, he_k: int = HE_K,
            search: str | None = None) -> dict:
    r"""One (rule, n) in this process; returns the timings as a dict."""
    import torch

    device = torch.device(device_name)
    problem, X, Y = _observations(n, device, seed)
    domain = problem.domain
    policy = _make(rule, domain, seed, device, lb_k=lb_k, he_k=he_k, search=search)
    q = TS_RSR_Q if rule == "ts-rsr" else 1

    def sync() -> None:
        if device.type == "cuda":
            torch.cuda.synchronize()

    def round_(X, Y):
        x = policy.suggest(X, Y, q=q)
        y = problem.evaluate(x)[0].reshape(-1, 1)
        policy.observe(x, y)
        return torch.cat([X, x]), torch.cat([Y, y])

    start = time.perf_counter()
    X, Y = round_(X, Y)
    sync()
    warmup = time.perf_counter() - start
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats()
    cache_before = sum(c.stats.seconds for c in policy.factor_caches.values())
    times, chol, chol_solve, profiles = [], 0.0, 0.0, []
    for _ in range(iterations):
        profile = cProfile.Profile()
        start = time.perf_counter()
        profile.enable()
        X, Y = round_(X, Y)
        sync()
        profile.disable()
        times.append(time.perf_counter() - start)
        factorise, solve = _cholesky_seconds(profile)
        chol, chol_solve = chol + factorise, chol_solve + solve
        profiles.append(profile)
    cache = sum(c.stats.seconds for c in policy.factor_caches.values()) - cache_before
    total = sum(times)
    peak = torch.cuda.max_memory_allocated() if device.type == "cuda" else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    syncs = _count_syncs(lambda: round_(X, Y)) if device.type == "cuda" else None  # one further, untimed round
    stats = pstats.Stats(*profiles)
    top = sorted(stats.stats.items(), key=lambda kv: -kv[1][2])[:15]
    flags = getattr(policy.state, "active", None) or getattr(policy.state, "alive", None)
    return {
        "rule": rule,
        "n": n,
        "candidates": None if flags is None else int(sum(bool(f) for f in flags)),
        "syncs_per_round": syncs,
        "top_tottime": [[f"{k[0].split('/')[-1]}:{k[2]}", v[1], v[2] / total] for k, v in top],
        "median_s": statistics.median(times),
        "warmup_s": warmup,
        "cholesky_share": chol / total,
        "cholesky_solve_share": chol_solve / total,
        "cache_share": cache / total,
        "peak_gb": peak / 1e9,
    }


def loop_of_single_task_gps(n: int, device_name: str, seed: int, num_restarts: int = 10, raw_samples: int = 512) -> float:
    r"""Seconds of one HE-style joint argmax done with K fresh ``SingleTaskGP``\ s and ``optimize_acqf``."""
    import torch
    from botorch.acquisition import UpperConfidenceBound
    from botorch.models import SingleTaskGP
    from botorch.models.transforms import Normalize
    from botorch.optim import optimize_acqf
    from gpytorch.kernels import MaternKernel, ScaleKernel
    from gpytorch.likelihoods import GaussianLikelihood

    from botorch_unknown_hypers.problems.problem_registry import get_problem

    device = torch.device(device_name)
    problem = get_problem("michalewicz5").to(device=device)
    bounds = problem.domain.bounds
    gen = torch.Generator().manual_seed(seed)
    X = bounds[0] + (bounds[1] - bounds[0]) * torch.rand(n, 5, generator=gen, dtype=torch.float64).to(device)
    Y = problem.evaluate(X)[0].reshape(-1, 1)
    torch.manual_seed(seed)
    start = time.perf_counter()
    best = -math.inf
    for ls in torch.logspace(math.log10(0.05), 0.0, HE_K, dtype=torch.float64).tolist():
        covar = ScaleKernel(MaternKernel(nu=2.5))
        covar.base_kernel.lengthscale = ls
        covar.outputscale = 1.0
        likelihood = GaussianLikelihood()
        likelihood.noise = 1e-4
        model = SingleTaskGP(X, Y, likelihood=likelihood, covar_module=covar, input_transform=Normalize(5, bounds=bounds)).to(X).eval()
        _, value = optimize_acqf(UpperConfidenceBound(model, beta=4.0), bounds, q=1, num_restarts=num_restarts, raw_samples=raw_samples)
        best = max(best, float(value))
    if device.type == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter() - start


def _median_seconds(fn, sync, repeats: int = 5) -> float:
    fn()
    sync()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def p5_ratio(n: int, k: int, iterations: int, device_name: str, seed: int, search: str | None = None) -> dict:
    r"""HE's iteration with ``k`` candidates at ``n`` observations against its floor (see the module doc)."""
    import torch
    from gpytorch.kernels import MaternKernel
    from torch.quasirandom import SobolEngine

    device = torch.device(device_name)
    iteration = measure("he-gp-ucb", n, iterations, device_name, seed, he_k=k, search=search)

    def sync() -> None:
        if device.type == "cuda":
            torch.cuda.synchronize()

    gen = torch.Generator().manual_seed(seed)
    X = torch.rand(n, 5, generator=gen, dtype=torch.float64).to(device)
    y = torch.randn(n, 1, generator=gen, dtype=torch.float64).to(device)
    raw = SobolEngine(5, scramble=True, seed=seed).draw(512, dtype=torch.float64).to(device)
    kernel = MaternKernel(nu=2.5, batch_shape=torch.Size([k])).to(X)
    kernel.lengthscale = torch.logspace(math.log10(0.05), 0.0, k, dtype=torch.float64, device=device).view(k, 1, 1)
    with torch.no_grad():
        A = kernel(X).to_dense() + 1e-4 * torch.eye(n, dtype=X.dtype, device=device)
        L = torch.linalg.cholesky(A)
        alpha = torch.cholesky_solve(y.expand(k, n, 1), L)
        chol = _median_seconds(lambda: torch.linalg.cholesky(A), sync)

        def acquisition() -> tuple:
            cross = kernel(X, raw).to_dense()  # k x n x 512
            V = torch.linalg.solve_triangular(L, cross, upper=False)
            mean = cross.transpose(-1, -2) @ alpha
            var = 1.0 - V.pow(2).sum(-2)
            return mean, var

        matmuls = _median_seconds(acquisition, sync)
    floor = chol + matmuls
    return {**iteration, "k": k, "cholesky_s": chol, "matmuls_s": matmuls, "floor_s": floor, "p5": iteration["median_s"] / floor}


def exponent(points: list[tuple[int, float]]) -> float:
    r"""Least-squares slope of log t against log n."""
    xs = [math.log(n) for n, _ in points]
    ys = [math.log(t) for _, t in points]
    mx, my = statistics.mean(xs), statistics.mean(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def _child(args: argparse.Namespace, payload: dict) -> dict:
    r"""Run one measurement in a fresh interpreter (isolated peak memory and caches)."""
    code = (
        "import json, runpy, torch;"
        f"torch.set_num_threads({args.threads}) if {args.threads} > 0 else None;"
        f"c = runpy.run_path({json.dumps(str(Path(__file__).resolve()))});"
        f"p = json.loads({json.dumps(json.dumps(payload))});"
        "f = c[p.pop('fn')];"
        "print('RESULT ' + json.dumps(f(**p)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    for line in out.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT ") :])
    raise RuntimeError(f"measurement {payload} failed:\n{out.stderr[-3000:]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--n", type=int, nargs="+", default=None, help="observation counts (default 250 ... 4000 on CPU, up to 10000 on CUDA)")
    parser.add_argument("--rules", nargs="+", default=list(RULES), choices=RULES)
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("--loop-n", type=int, nargs="*", default=[2000], help="n at which the loop of SingleTaskGPs is timed")
    parser.add_argument("--threads", type=int, default=0, help="torch threads per measurement (0: torch's default)")
    parser.add_argument("--lb-k", type=int, default=None, help="start LB with a ladder of this many length scales (default: the preset's)")
    parser.add_argument("--p5-n", type=int, default=None, help="n of the P5 ratio (HE iteration over its Cholesky + matmul floor)")
    parser.add_argument("--p5-k", type=int, default=64, help="candidates of the P5 ratio")
    parser.add_argument("--search", default=None, choices=["scipy", "torch"],
                        help="refinement of the rules' box maximisations (the policies' search option; default: the package's)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default=None, help="also write the results to this file")
    args = parser.parse_args()
    ns = args.n or (list(CPU_N) if args.device == "cpu" else [250, 1000, 2000, 4000, 10000])
    import torch

    print(f"machine: {platform.machine()} {platform.processor()}, torch {torch.__version__}, device {args.device}, "
          f"threads {args.threads or torch.get_num_threads()}, float64, Michalewicz-5, {args.iterations} timed iterations, "
          f"search {args.search or 'default'}")
    try:
        from tqdm import tqdm
    except ImportError:  # progress is optional
        tqdm = None
    jobs = [(rule, n) for n in sorted(ns) for rule in args.rules]  # the largest n last: a cut-off run keeps the rest
    bar = tqdm(total=len(jobs) + len(args.loop_n) + (args.p5_n is not None), unit="measurement") if tqdm is not None else None
    results, loops, p5, started = [], {}, None, time.perf_counter()

    def save() -> None:
        if args.json:
            with open(args.json, "w") as fh:
                json.dump({"results": results, "loops": {str(k): v for k, v in loops.items()}, "p5": p5}, fh, indent=1)

    def done(line: str) -> None:
        if bar is not None:
            bar.update(1)
            bar.write(line)
        else:
            print(line, flush=True)
        save()

    if args.p5_n is not None:
        p5 = _child(args, {"fn": "p5_ratio", "n": args.p5_n, "k": args.p5_k, "iterations": args.iterations, "device_name": args.device, "seed": args.seed,
                               "search": args.search})
        done(f"P5 n={args.p5_n} K={args.p5_k}: {p5['p5']:.2f}x")
    for n in args.loop_n:
        loops[n] = _child(args, {"fn": "loop_of_single_task_gps", "n": n, "device_name": args.device, "seed": args.seed})
        done(f"loop of {HE_K} SingleTaskGPs n={n}: {loops[n]:.2f} s")
    for rule, n in jobs:
        payload = {"fn": "measure", "rule": rule, "n": n, "iterations": args.iterations, "device_name": args.device, "seed": args.seed,
                   "search": args.search}
        if rule == "lb-gp-ucb" and args.lb_k is not None:
            payload["lb_k"] = args.lb_k
        results.append(_child(args, payload))
        done(f"{rule} n={n}: {results[-1]['median_s']:.3f} s / iteration")
    if bar is not None:
        bar.close()
    print("\n| rule | n | candidates | s / iteration | warm-up s | Cholesky share | cholesky_solve share | factor-cache share | peak GB | syncs / round |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in sorted(results, key=lambda r: (args.rules.index(r["rule"]), r["n"])):
        print(f"| {r['rule']} | {r['n']} | {r['candidates']} | {r['median_s']:.3f} | {r['warmup_s']:.2f} | {100 * r['cholesky_share']:.1f}% | {100 * r['cholesky_solve_share']:.1f}% | "
              f"{100 * r['cache_share']:.1f}% | {r['peak_gb']:.2f} | {'-' if r['syncs_per_round'] is None else r['syncs_per_round']} |")
    print()
    for rule in args.rules:
        pts = [(r["n"], r["median_s"]) for r in results if r["rule"] == rule]
        big = [p for p in pts if p[0] >= 1000]
        slope_all = exponent(pts) if len(pts) > 1 else float("nan")
        slope_big = exponent(big) if len(big) > 1 else float("nan")
        print(f"{rule}: time ~ n^{slope_big:.2f} for n >= 1000 (n^{slope_all:.2f} over all n)")
    for n, loop in loops.items():
        he = [r for r in results if r["rule"] == "he-gp-ucb" and r["n"] == n]
        if he:
            print(f"n = {n}, K = {HE_K}: loop of K SingleTaskGP + optimize_acqf {loop:.2f} s, batched HE iteration "
                  f"{he[0]['median_s']:.2f} s: batched is {loop / he[0]['median_s']:.1f}x faster")
        else:
            print(f"n = {n}, K = {HE_K}: loop of K SingleTaskGP + optimize_acqf {loop:.2f} s (he-gp-ucb not measured at this n)")
    if p5 is not None:
        print("\nP5 iteration, functions by own time (calls, share of the iteration):")
        for name, calls, share in p5["top_tottime"][:12]:
            print(f"  {100 * share:5.1f}%  {calls:6d}  {name}")
        print(f"P5, n = {p5['n']}, K = {p5['k']}: HE iteration {p5['median_s']:.3f} s; floor {p5['floor_s']:.3f} s "
              f"(batched Cholesky {p5['cholesky_s']:.3f} s + acquisition matmuls {p5['matmuls_s']:.3f} s): ratio {p5['p5']:.2f}x")
    print(f"\ntotal {time.perf_counter() - started:.0f} s")
    save()


if __name__ == "__main__":
    main()
