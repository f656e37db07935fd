r"""Paired proposal times on a mixed domain: the package's rules against BoTorch's mixed qLogNEI.

On each mixed problem (``ackley-mixed``, d = 8: 5 binary and 3 float parameters; ``labs``,
d = 16 binary), for each size ``n``, every method proposes one point after ``n`` observations of
the problem (a seeded Sobol design over the codes). A method's proposal is timed *warm*, as in a
campaign: it first proposes and observes at ``n - 1`` points (building whatever it keeps across
rounds), then its proposal at ``n`` is timed. Methods are timed one after another within a
repeat, in a rotated order, so that each pair is measured side by side under the same load;
the script prints per (problem, n) the median time over repeats and the median of the per-repeat
ratio to ``mixed-qlognei`` (BoTorch's ``MixedSingleTaskGP`` + qLogNEI +
``optimize_acqf_mixed_alternating`` with BoTorch's defaults, 20 restarts from 1024 raw codes).
``mixed-qlognei[num_restarts=10&raw_samples=512]`` runs BoTorch's recipe at the package's search
size, for a comparison at equal search effort.

Usage::

    OMP_NUM_THREADS=1 python benchmarks/mixed_proposal_time.py --sizes 20,60 --repeats 3
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

import torch

from botorch_unknown_hypers import get_problem, make_policy
from botorch_unknown_hypers.integrations.peers import PEERS
from botorch_unknown_hypers.policies.registry import parse_method_spec

METHODS = (
    "auto",
    "lb-gp-ucb-auto",
    "he-gp-ucb-auto",
    "qlognei[surrogate=\"fitted\"]",
    "mixed-qlognei",
    "mixed-qlognei[num_restarts=10&raw_samples=512]",
)
REFERENCE = "mixed-qlognei"


def proposal_time(method: str, problem_name: str, n: int, seed: int) -> float:
    r"""Seconds of ``method``'s proposal at ``n`` observations, after one at ``n - 1`` (module docstring)."""
    name, options = parse_method_spec(method)
    problem = get_problem(problem_name)
    domain = problem.domain
    policy = PEERS[name](domain, seed=seed, **options) if name in PEERS else make_policy(name, domain, seed=seed, **options)
    X = domain.sample(n, seed=seed)
    Y = problem.evaluate_true(X).reshape(-1, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        policy.suggest(X[:-1], Y[:-1])
        policy.observe(X[-1:], Y[-1:])
        start = time.perf_counter()
        policy.suggest(X, Y)
        return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--problems", default="ackley-mixed,labs")
    parser.add_argument("--sizes", default="20,60")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--methods", default=";".join(METHODS), help="';'-separated method specs")
    args = parser.parse_args()
    methods = [m for m in args.methods.split(";") if m]
    if REFERENCE not in methods:
        raise SystemExit(f"--methods must include the reference {REFERENCE!r}.")
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}; warm proposal times, median over {args.repeats} repeats")
    for problem in args.problems.split(","):
        for n in (int(v) for v in args.sizes.split(",")):
            times: dict[str, list[float]] = {m: [] for m in methods}
            for r in range(args.repeats):
                order = methods[r % len(methods):] + methods[: r % len(methods)]  # rotated: no method always first
                for m in order:
                    times[m].append(proposal_time(m, problem, n, seed=r))
            print(f"\n{problem}, n = {n}")
            print("| method | median s | median ratio to mixed-qlognei |")
            print("|---|---|---|")
            for m in methods:
                ratios = [a / b for a, b in zip(times[m], times[REFERENCE])]
                print(f"| {m} | {statistics.median(times[m]):.2f} | {statistics.median(ratios):.2f} |")


if __name__ == "__main__":
    main()
