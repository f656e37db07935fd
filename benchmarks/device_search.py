r"""The device search against SciPy's L-BFGS-B on acquisition problems recorded from real rounds.

Every box refinement of a multi-start maximisation of the package goes through
``botorch_unknown_hypers.acquisition.multistart.refine_indexed`` (BoTorch's parallel L-BFGS-B:
``maximize_per_candidate`` and the joint (point, candidate) UCB maximisation of the elimination
rules). This script wraps that function **in this process only** and runs
real campaigns; at each call, from the SAME starts on the SAME objectives, it also runs

- ``torch``: the batched projected L-BFGS of
  :func:`~botorch_unknown_hypers.acquisition.device_search.refine_indexed_batched` (same
  ``maxiter``), and
- ``adam``: BoTorch's ``gen_candidates_torch`` (Adam with clamping) with its default options,

and records, per candidate holding a start (one *problem*), the best value each found. The
campaigns follow SciPy's result, so the recorded problems are those of the default rules.

Campaigns: the golden-trace cases on a box (``tests/golden/cases.py``: every method on ``bird2``
and ``he-gp-ucb`` on ``additive3d``, both seeds, their rounds) and the practical suite's box
problems (``benchmarks/practical_suite.py``) under ``he-gp-ucb``, ``mle-gp-ts`` and ``ts-rsr``
(q = 4), ``--rounds`` rounds after 10 initial points, seed 0. Golden cases whose rules do not
reach ``refine_indexed`` (the balancing rules and the ``auto`` presets use ``optimize_acqf`` on one
acquisition) run too and record nothing.

Printed per search: problems and calls, the relative gap
:math:`(v_\text{scipy} - v)/\max(|v_\text{scipy}|, 10^{-12})` (positive: worse than SciPy):
median, 90th / 99th percentile and worst; the fraction with gap :math:`\le 10^{-6}`; and the
summed time of each refinement.

With ``--syncs`` it counts instead, as ``benchmarks/round_profile.py`` does (``torch.profiler``;
``aten::_local_scalar_dense``, ``aten::item``, ``aten::equal``, ``aten::is_nonzero``), the
synchronising operations of one ``maximize_per_candidate`` call, in all and within its
refinement, and its objective evaluations (on 16 HE-like candidates' UCBs: Matern-5/2, length
scales log-spaced in [0.05, 1], noise 1e-4, ``--n`` uniform points of Michalewicz-5 in the unit cube, 10 restarts from 512 raw samples) with
``search="scipy"`` and ``search="torch"``, after one unprofiled call of each.

Usage::

    OMP_NUM_THREADS=1 python benchmarks/device_search.py
    python benchmarks/device_search.py --quick          # two campaigns, two rounds: a smoke test
    python benchmarks/device_search.py --device cuda
    OMP_NUM_THREADS=1 python benchmarks/device_search.py --mean-start  # the posterior mean's checks
    OMP_NUM_THREADS=1 python benchmarks/device_search.py --syncs --n 500
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SUITE_METHODS = {"he-gp-ucb": 1, "mle-gp-ts": 1, "ts-rsr": 4}
r"""Rules of the practical-suite campaigns whose box maximisers go through ``refine_indexed``, and
their batch sizes (the balancing rules and the ``auto`` presets maximise one acquisition with
BoTorch's ``optimize_acqf`` instead)."""
SEARCHES = ("torch", "adam")
TINY = 1e-12
AS_GOOD = 1e-6


class Recorder:
    r"""A stand-in for ``refine_indexed`` that returns SciPy's result and records, from the same
    starts, the torch search's and Adam's per-candidate best values and every refinement's time."""

    def __init__(self, original, device: str) -> None:
        self.original = original
        self.device = device
        self.rows: list[dict] = []
        self.calls = 0
        self.seconds = {"scipy": 0.0, **{s: 0.0 for s in SEARCHES}}
        self.source = ""

    def timed(self, name: str, fn):
        import torch

        start = time.perf_counter()
        out = fn()
        if self.device == "cuda":
            torch.cuda.synchronize()
        self.seconds[name] += time.perf_counter() - start
        return out

    def __call__(self, values, num_candidates, bounds, starts, cand, options):
        import torch

        from botorch_unknown_hypers.acquisition.device_search import refine_indexed_batched

        X, v = self.timed("scipy", lambda: self.original(values, num_candidates, bounds, starts, cand, options))
        found = {"scipy": v.detach()}
        torch_options = {"maxiter": options.get("maxiter", 200)}
        found["torch"] = self.timed(
            "torch", lambda: refine_indexed_batched(values, num_candidates, bounds, starts, cand, torch_options)[1]
        )
        found["adam"] = self.timed("adam", lambda: adam_refine(values, num_candidates, bounds, starts, cand))
        self.calls += 1
        idx = cand.round().long()
        for k in torch.unique(idx).tolist():
            mask = idx == k
            self.rows.append({"source": self.source, **{name: float(val[mask].max()) for name, val in found.items()}})
        return X, v


def adam_refine(values, num_candidates, bounds, starts, cand):
    r"""BoTorch's ``gen_candidates_torch`` (default options) from the same starts, on the same
    ``K x w`` grid as the torch search; the ``m`` values."""
    from botorch.generation.gen import gen_candidates_torch

    from botorch_unknown_hypers.acquisition.device_search import grid_slots
    from botorch_unknown_hypers.acquisition.multistart import GridCandidateValues

    idx = cand.round().long()
    slot, counts = grid_slots(idx, num_candidates)
    width = int(counts.max())
    grid = ((bounds[0] + bounds[1]) / 2).expand(num_candidates, width, -1).clone()
    grid[idx, slot] = starts.detach()
    _, v = gen_candidates_torch(
        initial_conditions=grid.reshape(-1, 1, grid.shape[-1]),
        acquisition_function=GridCandidateValues(values, num_candidates, width),
        lower_bounds=bounds[0],
        upper_bounds=bounds[1],
    )
    return v.detach().reshape(num_candidates, width)[idx, slot]


def campaigns(rounds: int, quick: bool, device: str = "cpu") -> list[tuple[str, object]]:
    r"""``(label, thunk)`` per campaign; each thunk runs one campaign with the public ``run``."""
    import runpy

    from botorch_unknown_hypers import make_policy, run
    from botorch_unknown_hypers.benchmarks.practical_suite import N_INIT, PROBLEMS
    from botorch_unknown_hypers.domains import BoxDomain
    from botorch_unknown_hypers.problems.problem_registry import get_problem

    golden_cases = runpy.run_path(str(ROOT / "tests" / "golden" / "cases.py"))  # the golden traces' cases, read as data
    CASES, ROUNDS, SEEDS = golden_cases["CASES"], golden_cases["ROUNDS"], golden_cases["SEEDS"]

    out = []
    golden = [c for c in CASES if not c.pool and (not quick or c.key == "he-gp-ucb@bird2")]
    for case in golden:
        for seed in SEEDS[:1] if quick else SEEDS:
            def golden_run(case=case, seed=seed):
                problem = case.make_problem().to(device=device)
                policy = make_policy(case.method, problem.domain, seed=seed, device=device, **case.make_options())
                run(problem, policy, iterations=2 if quick else ROUNDS, seed=seed, batch_size=case.q, n_init=case.n_init)
            out.append((f"golden {case.key} seed {seed}", golden_run))
    suite = [p for p in PROBLEMS if isinstance(get_problem(p).domain, BoxDomain)]
    for name in suite[:1] if quick else suite:
        for method, q in list(SUITE_METHODS.items())[:1] if quick else SUITE_METHODS.items():
            def suite_run(name=name, method=method, q=q):
                problem = get_problem(name).to(device=device)
                policy = make_policy(method, problem.domain, seed=0, device=device)
                run(problem, policy, iterations=2 if quick else rounds, seed=0, batch_size=q, n_init=N_INIT)
            out.append((f"suite {method}@{name}", suite_run))
    return out


def quantile(sorted_values: list[float], p: float) -> float:
    r"""The ``p`` quantile of ``sorted_values`` by linear interpolation (as ``numpy.quantile``)."""
    pos = p * (len(sorted_values) - 1)
    lo, hi = math.floor(pos), math.ceil(pos)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def summary(rows: list[dict], search: str) -> dict:
    r"""Relative gaps of ``search`` against SciPy over ``rows`` (see the module docstring)."""
    gaps = sorted((r["scipy"] - r[search]) / max(abs(r["scipy"]), TINY) for r in rows)
    if not gaps:
        return {"problems": 0}
    return {
        "problems": len(gaps),
        "median": quantile(gaps, 0.5),
        "p90": quantile(gaps, 0.9),
        "p99": quantile(gaps, 0.99),
        "worst": gaps[-1],
        "as_good": sum(g <= AS_GOOD for g in gaps) / len(gaps),
    }


def inside(event, label: str) -> bool:
    r"""Whether a profiler ``event`` runs within a ``record_function(label)`` block."""
    parent = event.cpu_parent
    while parent is not None and parent.name != label:
        parent = parent.cpu_parent
    return parent is not None


def count_call_syncs(n: int, device: str, seed: int = 0) -> list[dict]:
    r"""Synchronising ops, evaluations and seconds of one ``maximize_per_candidate`` call per
    search, in all and within the refinement (the call of ``refine_indexed`` or
    ``maximize_batched``, wrapped here in a ``record_function`` block)."""
    from functools import partial

    import torch
    from torch.profiler import ProfilerActivity, profile, record_function

    import runpy

    profile_helpers = runpy.run_path(str(ROOT / "benchmarks" / "round_profile.py"))
    count_syncs, he_lengthscales = profile_helpers["count_syncs"], profile_helpers["he_lengthscales"]

    from botorch_unknown_hypers.acquisition import multistart
    from botorch_unknown_hypers.acquisition.ucb import as_beta, candidate_ucb_at
    from botorch_unknown_hypers.candidates import KernelCandidates
    from botorch_unknown_hypers.models.candidate_gp import CandidateGP
    from botorch_unknown_hypers.problems.problem_registry import get_problem

    problem = get_problem("michalewicz5").to(device=device)
    gen = torch.Generator().manual_seed(seed)
    unit = torch.rand(n, 5, generator=gen, dtype=torch.float64).to(device)
    lower, upper = problem.domain.bounds
    Y = problem.evaluate(lower + (upper - lower) * unit)[0].reshape(-1, 1)
    candidates = KernelCandidates.from_lengthscales(he_lengthscales(16).to(device), noise=1e-4)
    model = CandidateGP(unit, (Y - Y.mean()) / Y.std(), candidates)
    bounds = torch.stack([torch.zeros(5), torch.ones(5)]).to(unit)
    ucb = partial(candidate_ucb_at, model, as_beta(2.0, 16, unit))
    evaluations = {"all": 0, "refine": 0}
    refining = [False]

    def values(X):
        evaluations["all"] += 1
        evaluations["refine"] += refining[0]
        return ucb(X)

    def labelled(fn):
        def wrapper(*args, **kwargs):
            refining[0] = True
            try:
                with record_function("refine"):
                    return fn(*args, **kwargs)
            finally:
                refining[0] = False
        return wrapper

    originals = multistart.refine_indexed, multistart.maximize_batched
    multistart.refine_indexed, multistart.maximize_batched = map(labelled, originals)  # this process only
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
    rows = []
    try:
        for search in ("scipy", "torch"):
            multistart.maximize_per_candidate(values, 16, bounds, seed=seed, search=search)  # warm: the factorisation
            evaluations.update(all=0, refine=0)
            start = time.perf_counter()
            with profile(activities=activities) as prof:
                multistart.maximize_per_candidate(values, 16, bounds, seed=seed + 1, search=search)
                if device == "cuda":
                    torch.cuda.synchronize()
            seconds = time.perf_counter() - start
            events = list(prof.events())
            rows.append({"search": search, "seconds": seconds, **evaluations, **count_syncs(events),
                         "refine_syncs": count_syncs([e for e in events if inside(e, "refine")])})
    finally:
        multistart.refine_indexed, multistart.maximize_batched = originals
    return rows


def mean_start_checks(n: int, device: str, seed: int = 0, pairs: int = 3) -> list[dict]:
    r"""The posterior mean's maximiser with the device search's default checks and with
    :data:`~botorch_unknown_hypers.acquisition.device_search.LATE_CHECKS`, on each of 16 HE-like
    candidates' means (the ``--syncs`` model), ``pairs`` times each in alternating order: per
    candidate, the seconds of each schedule (summed over the pairs), the host reads of one call
    (``tolist`` copies) and the largest coordinate difference of the two maximisers."""
    import torch
    from botorch.acquisition import PosteriorMean

    import runpy

    he_lengthscales = runpy.run_path(str(ROOT / "benchmarks" / "round_profile.py"))["he_lengthscales"]
    from botorch_unknown_hypers.acquisition.multistart import maximize_acquisition
    from botorch_unknown_hypers.acquisition.device_search import LATE_CHECKS
    from botorch_unknown_hypers.candidates import KernelCandidates
    from botorch_unknown_hypers.models.candidate_gp import CandidateGP
    from botorch_unknown_hypers.problems.problem_registry import get_problem

    problem = get_problem("michalewicz5").to(device=device)
    gen = torch.Generator().manual_seed(seed)
    unit = torch.rand(n, 5, generator=gen, dtype=torch.float64).to(device)
    lower, upper = problem.domain.bounds
    Y = problem.evaluate(lower + (upper - lower) * unit)[0].reshape(-1, 1)
    model = CandidateGP(unit, (Y - Y.mean()) / Y.std(), KernelCandidates.from_lengthscales(he_lengthscales(16).to(device), noise=1e-4))
    bounds = torch.stack([torch.zeros(5), torch.ones(5)]).to(unit)
    schedules = {"default": None, "mean start": LATE_CHECKS}
    copies = [0]
    to_list = torch.Tensor.tolist

    def counted(self, *args, **kwargs):
        copies[0] += 1
        return to_list(self, *args, **kwargs)

    rows = []
    for k in range(model.num_candidates):
        acqf = PosteriorMean(model.select(k))
        maximize_acquisition(acqf, bounds, 1, 10, 512, seed, search="torch")  # warm
        row: dict = {"candidate": k, **{f"{name} s": 0.0 for name in schedules}}
        found = {}
        for pair in range(pairs):
            for name in (list(schedules) if pair % 2 == 0 else list(schedules)[::-1]):
                copies[0] = 0
                torch.Tensor.tolist = counted  # this process only; restored below
                start = time.perf_counter()
                try:
                    x, _ = maximize_acquisition(acqf, bounds, 1, 10, 512, seed, search="torch", search_options=schedules[name])
                    if device == "cuda":
                        torch.cuda.synchronize()
                finally:
                    torch.Tensor.tolist = to_list
                row[f"{name} s"] += time.perf_counter() - start
                row[f"{name} reads"] = copies[0]
                found[name] = x
        row["max |dx|"] = float((found["default"] - found["mean start"]).abs().max())
        rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--rounds", type=int, default=4, help="rounds of each practical-suite campaign")
    parser.add_argument("--quick", action="store_true", help="one golden and one suite campaign, two rounds each")
    parser.add_argument("--json", default=None, help="also write the records and the summary to this file")
    parser.add_argument("--syncs", action="store_true", help="count the synchronising ops of one call per search instead")
    parser.add_argument("--n", type=int, default=500, help="observations of the --syncs model")
    parser.add_argument("--mean-start", action="store_true",
                        help="time and count the posterior mean's maximiser under the default checks and MEAN_START_CHECKS instead")
    args = parser.parse_args()
    if args.rounds < 1 or args.n < 2:
        parser.error(f"--rounds must be >= 1 and --n >= 2, got {args.rounds} and {args.n}.")
    import torch

    if args.mean_start:
        rows = mean_start_checks(args.n, args.device)
        print(f"machine: {platform.machine()} {platform.processor()}, torch {torch.__version__}, device {args.device}, "
              f"threads {torch.get_num_threads()}; the posterior mean's maximiser (10 restarts of 512 raw samples), "
              f"16 candidates' means, n = {args.n}, d = 5, three alternating pairs each")
        print("| candidate | s default | s mean start | reads default | reads mean start | max abs dx |")
        print("|---|---|---|---|---|---|")
        for row in rows:
            print(f"| {row['candidate']} | {row['default s']:.3f} | {row['mean start s']:.3f} | {row['default reads']} "
                  f"| {row['mean start reads']} | {row['max |dx|']:.1e} |")
        total = {name: sum(r[f"{name} s"] for r in rows) for name in ("default", "mean start")}
        reads = {name: sum(r[f"{name} reads"] for r in rows) for name in ("default", "mean start")}
        print(f"all: {total['mean start'] / total['default']:.2f}x the default's time "
              f"({total['mean start']:.2f} s against {total['default']:.2f} s); reads {reads['mean start']} against {reads['default']}")
        return
    if args.syncs:
        print(f"machine: {platform.machine()} {platform.processor()}, torch {torch.__version__}, device {args.device}, "
              f"threads {torch.get_num_threads()}; one maximize_per_candidate call, K = 16, n = {args.n}, d = 5")
        print("| search | s / call | evaluations (refinement) | _local_scalar_dense | item | equal | is_nonzero | sum | outer "
              "| refinement: _local_scalar_dense | equal | is_nonzero | sum | outer |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for row in count_call_syncs(args.n, args.device):
            ref = row["refine_syncs"]
            cells = [row["search"], f"{row['seconds']:.2f}", f"{row['all']} ({row['refine']})",
                     *(str(row[k]) for k in ("aten::_local_scalar_dense", "aten::item", "aten::equal", "aten::is_nonzero", "sum", "outer")),
                     *(str(ref[k]) for k in ("aten::_local_scalar_dense", "aten::equal", "aten::is_nonzero", "sum", "outer"))]
            print("| " + " | ".join(cells) + " |")
        return

    from botorch_unknown_hypers.acquisition import multistart

    recorder = Recorder(multistart.refine_indexed, args.device)
    multistart.refine_indexed = recorder  # this process only; restored below
    load = open("/proc/loadavg").read().split()[:3] if sys.platform.startswith("linux") else ["?"] * 3
    print(f"machine: {platform.machine()} {platform.processor()}, torch {torch.__version__}, device {args.device}, "
          f"threads {torch.get_num_threads()}, load average {' '.join(load)}")
    start = time.perf_counter()
    try:
        for label, thunk in campaigns(args.rounds, args.quick, args.device):
            recorder.source = label
            before = len(recorder.rows)
            thunk()
            print(f"{label}: {len(recorder.rows) - before} problems", flush=True)
    finally:
        multistart.refine_indexed = recorder.original
    print(f"\n{len(recorder.rows)} problems (candidate maximisations) in {recorder.calls} calls; "
          f"{time.perf_counter() - start:.0f} s in all")
    print("relative gap (v_scipy - v) / max(|v_scipy|, 1e-12); positive: worse than SciPy's L-BFGS-B")
    print("| search | problems | median | p90 | p99 | worst | as good (gap <= 1e-6) | refinement time (s) |")
    print("|---|---|---|---|---|---|---|---|")
    results = {}
    for search in SEARCHES:
        row = results[search] = summary(recorder.rows, search)
        if row["problems"]:
            print(f"| {search} | {row['problems']} | {row['median']:.2e} | {row['p90']:.2e} | {row['p99']:.2e} | "
                  f"{row['worst']:.2e} | {row['as_good']:.3f} | {recorder.seconds[search]:.1f} |")
    print(f"| scipy | {len(recorder.rows)} | 0 | 0 | 0 | 0 | 1.000 | {recorder.seconds['scipy']:.1f} |")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"args": vars(args), "load": load, "calls": recorder.calls, "seconds": recorder.seconds,
                       "summary": results, "rows": recorder.rows}, fh, indent=1)


if __name__ == "__main__":
    main()
