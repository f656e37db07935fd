r"""Per-round wall time of LB-GP-UCB on Michalewicz-5 (the length-scale paper's main task).

Runs ``lb-gp-ucb`` for ``--iterations`` rounds (default 250, the paper's T) on
``michalewicz5`` for each seed and prints, per seed, the total time of the
``suggest`` calls (the ``wall_time_s`` column of the history), the mean per round
and the final simple regret, then the median over seeds. The regret column lets a
before/after comparison check that the runs are the same.

Usage::

    python benchmarks/lb_round_time.py --seeds 0 1 2 --threads 1
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from botorch_unknown_hypers import get_problem, make_policy, run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--iterations", type=int, default=250)
    parser.add_argument("--threads", type=int, default=None, help="torch intra-op threads (default: torch's)")
    args = parser.parse_args()
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}, T = {args.iterations}")
    per_round = []
    for seed in args.seeds:
        problem = get_problem("michalewicz5")
        policy = make_policy("lb-gp-ucb", problem.domain, seed=seed)
        start = time.perf_counter()
        history = run(problem, policy, iterations=args.iterations, seed=seed)
        total = time.perf_counter() - start
        rounds = history[history["iteration"] > 0]
        suggest = float(rounds["wall_time_s"].sum())
        per_round.append(suggest / args.iterations)
        print(
            f"seed {seed}: run {total:.2f} s, suggest {suggest:.2f} s, "
            f"{1e3 * suggest / args.iterations:.1f} ms/round, final regret {history['simple_regret'].iloc[-1]:.6g}"
        )
    print(f"median per round: {1e3 * statistics.median(per_round):.1f} ms")


if __name__ == "__main__":
    main()
