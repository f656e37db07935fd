r"""Per-round wall time of one method on one problem, for before/after comparisons of a change.

Runs ``--method`` on ``--problem`` for ``--iterations`` rounds per seed through the public
``run`` loop and prints, per seed, the total time of the ``suggest`` calls (the history's
``wall_time_s`` column), the mean per round and the final simple regret (equal regrets show
that two versions made the same choices), then the median over seeds.

It imports only the package's public API, so the same file times another checkout of the
package when that checkout comes first on ``PYTHONPATH``. Run the two versions back to back,
alternating, with one thread each (``--search torch`` times a rule's device search on the CPU)::

    for i in 1 2; do
      PYTHONPATH=../old python benchmarks/round_time.py --method lb-gp-ucb --problem michalewicz5 --iterations 250
      PYTHONPATH=.      python benchmarks/round_time.py --method lb-gp-ucb --problem michalewicz5 --iterations 250
    done
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

import botorch_unknown_hypers
from botorch_unknown_hypers import get_problem, make_policy, run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--method", default="lb-gp-ucb")
    parser.add_argument("--problem", default="michalewicz5")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--iterations", type=int, default=250)
    parser.add_argument("--n-init", type=int, default=None, help="initial design size (default: the problem's)")
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
    parser.add_argument("--search", choices=("scipy", "torch"), default=None,
                        help="the rule's refinement of its maximisations (default: the rule's own)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    print(
        f"{botorch_unknown_hypers.__file__}: {args.method} on {args.problem}, T = {args.iterations}, "
        f"torch {torch.__version__}, threads {torch.get_num_threads()}, search {args.search or 'default'}"
    )
    per_round = []
    for seed in args.seeds:
        problem = get_problem(args.problem)
        options = {} if args.search is None else {"search": args.search}
        policy = make_policy(args.method, problem.domain, seed=seed, **options)
        start = time.perf_counter()
        history = run(problem, policy, iterations=args.iterations, seed=seed, n_init=args.n_init)
        total = time.perf_counter() - start
        suggest = float(history.loc[history["iteration"] > 0, "wall_time_s"].sum())
        per_round.append(suggest / args.iterations)
        print(
            f"seed {seed}: run {total:.2f} s, suggest {suggest:.2f} s, {1e3 * suggest / args.iterations:.1f} ms/round, "
            f"final simple regret {history['simple_regret'].iloc[-1]:.10g}"
        )
    print(f"median per round: {1e3 * statistics.median(per_round):.1f} ms")


if __name__ == "__main__":
    main()
