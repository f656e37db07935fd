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
Cholesky factorisations (``torch.linalg.cholesky*`` calls, counted by ``cProfile``, whoever
makes them: the factor cache's full factorisations and update blocks, GPyTorch, BoTorch's
pathwise samples), the share spent in the rule's factor cache (updates included), the peak
memory (resident set on CPU, allocated on CUDA) and, at ``--loop-n``, the ratio of an iteration
of HE's joint argmax done as a loop of K BoTorch ``SingleTaskGP`` + ``optimize_acqf`` calls
(fresh models every round: what a plain BoTorch user would run) against the batched rule. Then
the exponent :math:`b` of :math:`t \propto n^b` fitted by least squares in log-log between
n = 1000 and the largest n.

Usage::

    python benchmarks/campaign_scaling.py --device cpu                    # n = 250 ... 4000
    python benchmarks/campaign_scaling.py --device cuda --n 1000 2000 4000 10000
    python benchmarks/campaign_scaling.py --device cpu --rules lb-gp-ucb --n 1000 2000
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

RULES = ("lb-gp-ucb", "he-gp-ucb", "ts-rsr")
CPU_N = (250, 500, 1000, 2000, 4000)
HE_K = 16
TS_RSR_Q = 10


def _make(rule: str, domain, seed: int, device):
    import torch

    from botorch_unknown_hypers.candidates import KernelCandidates
    from botorch_unknown_hypers.policies.registry import make_policy

    if rule == "he-gp-ucb":
        ls = torch.logspace(math.log10(0.05), 0.0, HE_K, dtype=torch.float64)
        return make_policy(rule, domain, seed=seed, device=device, candidates=KernelCandidates.from_lengthscales(ls, noise=1e-4))
    if rule == "ts-rsr":
        width = (domain.bounds[1] - domain.bounds[0]).tolist()
        spec = {"kernel": "matern52", "lengthscale": [0.2 * w for w in width], "outputscale": 1.0, "noise_variance": 1e-6}
        return make_policy(rule, domain, seed=seed, device=device, surrogate="paper", surrogate_spec=spec)
    return make_policy(rule, domain, seed=seed, device=device)


def _cholesky_seconds(profile: cProfile.Profile) -> float:
    stats = pstats.Stats(profile)
    return sum(v[2] for k, v in stats.stats.items() if "cholesky" in k[2] and k[0] == "~")


def measure(rule: str, n: int, iterations: int, device_name: str, seed: int) -> dict:
    r"""One (rule, n) in this process; returns the timings as a dict."""
    import torch

    from botorch_unknown_hypers.problems.registry import get_problem

    device = torch.device(device_name)
    problem = get_problem("michalewicz5").to(device=device)
    domain = problem.domain
    gen = torch.Generator().manual_seed(seed)
    X = domain.bounds[0] + (domain.bounds[1] - domain.bounds[0]) * torch.rand(n, domain.dim, generator=gen, dtype=torch.float64).to(device)
    Y = problem.evaluate(X)[0].reshape(-1, 1)
    policy = _make(rule, domain, seed, device)
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
    times, chol = [], 0.0
    for _ in range(iterations):
        profile = cProfile.Profile()
        start = time.perf_counter()
        profile.enable()
        X, Y = round_(X, Y)
        sync()
        profile.disable()
        times.append(time.perf_counter() - start)
        chol += _cholesky_seconds(profile)
    cache = sum(c.stats.seconds for c in policy.factor_caches.values()) - cache_before
    total = sum(times)
    peak = torch.cuda.max_memory_allocated() if device.type == "cuda" else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return {
        "rule": rule,
        "n": n,
        "median_s": statistics.median(times),
        "warmup_s": warmup,
        "cholesky_share": chol / total,
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

    from botorch_unknown_hypers.problems.registry import get_problem

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


def exponent(points: list[tuple[int, float]]) -> float:
    r"""Least-squares slope of log t against log n."""
    xs = [math.log(n) for n, _ in points]
    ys = [math.log(t) for _, t in points]
    mx, my = statistics.mean(xs), statistics.mean(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def _child(args: argparse.Namespace, payload: dict) -> dict:
    r"""Run one measurement in a fresh interpreter (isolated peak memory and caches)."""
    code = (
        "import json, sys, torch; sys.path.insert(0, 'benchmarks');"
        f"torch.set_num_threads({args.threads}) if {args.threads} > 0 else None;"
        "import campaign_scaling as c;"
        f"p = json.loads({json.dumps(json.dumps(payload))});"
        "f = getattr(c, p.pop('fn'));"
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
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default=None, help="also write the results to this file")
    args = parser.parse_args()
    ns = args.n or (list(CPU_N) if args.device == "cpu" else [250, 1000, 2000, 4000, 10000])
    import torch

    print(f"machine: {platform.machine()} {platform.processor()}, torch {torch.__version__}, device {args.device}, "
          f"threads {args.threads or torch.get_num_threads()}, float64, Michalewicz-5, {args.iterations} timed iterations")
    try:
        from tqdm import tqdm
    except ImportError:  # progress is optional
        tqdm = None
    jobs = [(rule, n) for rule in args.rules for n in ns]
    bar = tqdm(total=len(jobs) + len(args.loop_n), unit="measurement") if tqdm is not None else None
    results, started = [], time.perf_counter()
    for rule, n in jobs:
        results.append(_child(args, {"fn": "measure", "rule": rule, "n": n, "iterations": args.iterations, "device_name": args.device, "seed": args.seed}))
        if bar is not None:
            bar.update(1)
    loops = {}
    for n in args.loop_n:
        loops[n] = _child(args, {"fn": "loop_of_single_task_gps", "n": n, "device_name": args.device, "seed": args.seed})
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    print("\n| rule | n | s / iteration | warm-up s | Cholesky share | factor-cache share | peak GB |")
    print("|---|---|---|---|---|---|---|")
    for r in results:
        print(f"| {r['rule']} | {r['n']} | {r['median_s']:.3f} | {r['warmup_s']:.2f} | {100 * r['cholesky_share']:.1f}% | "
              f"{100 * r['cache_share']:.1f}% | {r['peak_gb']:.2f} |")
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
    print(f"\ntotal {time.perf_counter() - started:.0f} s")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"results": results, "loops": {str(k): v for k, v in loops.items()}}, fh, indent=1)


if __name__ == "__main__":
    main()
