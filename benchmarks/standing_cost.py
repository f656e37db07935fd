r"""What the auto presets' ``standing`` option costs: one MAP fit of BoTorch's default model per round.

Runs each ``auto`` preset twice per seed on one registered problem through the public ``run``
loop, with its defaults and with ``--option``'s (default ``standing=true shrink=[1.0]``, the
variant V2 of ``docs/bbob.md``), alternating, and prints per run the wall time, the process CPU
time (the cost on an idle core when the machine is shared), the time of the ``suggest`` calls
and the final simple regret, then per preset the ratios option / defaults. It also times the
refit itself: BoTorch's default model (ARD) fitted by the package's fit on each round's data
``D_{t-1}`` of the standing run, which is the work the option adds per round::

    OMP_NUM_THREADS=1 python benchmarks/standing_cost.py --problem branin --n-init 10 --iterations 20
"""

from __future__ import annotations

import argparse
import time

import torch

import botorch_unknown_hypers
from botorch_unknown_hypers import get_problem, make_policy, run
from botorch_unknown_hypers.cli import parse_options
from botorch_unknown_hypers.models.fitted import fit_default_single_task_gp

METHODS = ("lb-gp-ucb-auto", "he-gp-ucb-auto")


def one_run(method: str, problem_name: str, seed: int, iterations: int, n_init: int, options: dict[str, object]) -> dict[str, object]:
    problem = get_problem(problem_name)
    policy = make_policy(method, problem.domain, seed=seed, **options)
    wall, cpu = time.perf_counter(), time.process_time()
    history = run(problem, policy, iterations=iterations, seed=seed, n_init=n_init)
    return {
        "wall": time.perf_counter() - wall,
        "cpu": time.process_time() - cpu,
        "suggest": float(history.loc[history["iteration"] > 0, "wall_time_s"].sum()),
        "regret": float(history["simple_regret"].iloc[-1]),
        "history": history,
        "problem": problem,
    }


def refit_seconds(history, problem, n_init: int) -> tuple[float, float]:
    r"""Wall and CPU seconds of one default-model fit on each round's data (the standing refits)."""
    X = torch.tensor([[float(v) for v in x.split(";")] for x in history["x"]], dtype=torch.float64)  # 10 digits
    Y = torch.tensor(history["y"].to_numpy(), dtype=torch.float64).unsqueeze(-1)
    bounds = problem.domain.bounds.to(X)
    wall, cpu = time.perf_counter(), time.process_time()
    for n in range(n_init, X.shape[0]):
        with torch.random.fork_rng():
            fit_default_single_task_gp(X[:n], Y[:n], bounds)
    return time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--problem", default="branin")
    parser.add_argument("--methods", nargs="+", default=list(METHODS))
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--n-init", type=int, default=10)
    parser.add_argument("--option", action="append", help="KEY=VALUE (JSON) of the compared variant")
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    options = parse_options(args.option or ["standing=true", "shrink=[1.0]"])
    print(
        f"{botorch_unknown_hypers.__file__}: {args.problem}, {args.n_init} initial + {args.iterations} rounds, "
        f"variant {options}, torch {torch.__version__}, threads {torch.get_num_threads()}"
    )
    for method in args.methods:
        totals = {"defaults": {"wall": 0.0, "cpu": 0.0, "suggest": 0.0}, "variant": {"wall": 0.0, "cpu": 0.0, "suggest": 0.0}}
        for seed in args.seeds:
            for label, opts in (("defaults", {}), ("variant", options)):
                r = one_run(method, args.problem, seed, args.iterations, args.n_init, opts)
                for key in totals[label]:
                    totals[label][key] += r[key]
                print(
                    f"{method} seed {seed} {label:8s}: wall {r['wall']:7.2f} s, cpu {r['cpu']:7.2f} s, "
                    f"suggest {r['suggest']:7.2f} s, final simple regret {r['regret']:.6g}"
                )
                if label == "variant":
                    fit_wall, fit_cpu = refit_seconds(r["history"], r["problem"], args.n_init)
                    print(
                        f"{method} seed {seed} refits  : {args.iterations} default-model fits on D_(t-1): "
                        f"wall {fit_wall:.2f} s, cpu {fit_cpu:.2f} s ({1e3 * fit_cpu / args.iterations:.0f} ms cpu per round)"
                    )
        d, v = totals["defaults"], totals["variant"]
        print(
            f"{method}: variant / defaults over seeds {args.seeds}: wall {v['wall'] / d['wall']:.2f}x, "
            f"cpu {v['cpu'] / d['cpu']:.2f}x, suggest {v['suggest'] / d['suggest']:.2f}x"
        )


if __name__ == "__main__":
    main()
