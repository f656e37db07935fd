r"""Mixed search spaces through Optuna: the package's rules (``PolicySampler``) against Optuna's
``GPSampler``, TPE and random search, with compact records under ``benchmarks/results/mixed-optuna``.

Problems (each minimised, optimum 0, so the best value found is the simple regret):

- ``four``: the four-parameter objective of a learning-rate / depth / activation / dropout
  search, :math:`(\log_{10} lr + 3)^2 + 0.3 (n - 3)^2 + c(act) + (p - 0.1)^2` with ``lr``
  log-scale in :math:`[10^{-5}, 10^{-1}]`, ``n`` an integer in 1..6, ``act`` one of relu (0),
  tanh (0.5), gelu (0.2), ``p`` in :math:`[0, 0.5]`.

A rule is named as on the benchmarks' other command lines, with options in brackets
(``auto[fitted_mean=true]``). Each run is one Optuna study of ``--trials`` trials (10 random start trials for every sampler
that has a start: the rules and ``GPSampler``); a record keeps the best-so-far value per trial and
the wall and CPU time. A rerun reads the records and runs only what is missing.

The summary prints, per sampler, the mean final regret with its standard error, and against the
reference sampler (``--reference``, ``gp``) the paired difference of :math:`\log_{10}` of the final
regrets (floored at :math:`10^{-12}`) with its standard error, and which side of 2 SE it falls on.

Usage::

    OMP_NUM_THREADS=1 python benchmarks/mixed_optuna.py --seeds 0-9 \
        --samplers lb-gp-ucb-auto,he-gp-ucb-auto,auto,qlognei,gp,tpe,random
    python benchmarks/mixed_optuna.py --seeds 0-9 --summary-only
"""

from __future__ import annotations

import argparse
import math
import resource
import statistics
import time
import warnings
from pathlib import Path

from botorch_unknown_hypers.benchmarks.records import RecordStore

ROOT = Path(__file__).resolve().parent / "results" / "mixed-optuna"
KEY_FIELDS = ("problem", "sampler", "seed", "trials")
FLOOR = 1e-12
ACTIVATION = {"relu": 0.0, "tanh": 0.5, "gelu": 0.2}


def four(trial) -> float:
    r"""The four-parameter objective (module docstring)."""
    lr = trial.suggest_float("lr", 1e-5, 1e-1, log=True)
    layers = trial.suggest_int("layers", 1, 6)
    act = trial.suggest_categorical("act", ["relu", "tanh", "gelu"])
    dropout = trial.suggest_float("dropout", 0.0, 0.5)
    return (math.log10(lr) + 3) ** 2 + 0.3 * (layers - 3) ** 2 + ACTIVATION[act] + (dropout - 0.1) ** 2


PROBLEMS = {"four": four}


def make_sampler(name: str, seed: int):
    import optuna

    if name == "gp":
        return optuna.samplers.GPSampler(seed=seed, n_startup_trials=10)
    if name == "tpe":
        return optuna.samplers.TPESampler(seed=seed)
    if name == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    from botorch_unknown_hypers.integrations.optuna import PolicySampler
    from botorch_unknown_hypers.policies.registry import parse_method_spec

    rule, options = parse_method_spec(name)  # a rule with options: "auto[fitted_mean=true]"
    return PolicySampler(rule, n_startup_trials=10, seed=seed, **options)


def run_one(problem: str, sampler: str, seed: int, trials: int) -> dict:
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    start, cpu = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        study = optuna.create_study(sampler=make_sampler(sampler, seed))
        study.optimize(PROBLEMS[problem], n_trials=trials)
    end = resource.getrusage(resource.RUSAGE_SELF)
    best, regret = math.inf, []
    for t in study.trials:
        best = min(best, t.value)
        regret.append(best)
    return {
        "config": {"problem": problem, "sampler": sampler, "seed": seed, "trials": trials},
        "simple_regret": regret,
        "wall_s": time.perf_counter() - start,
        "cpu_s": (end.ru_utime + end.ru_stime) - (cpu.ru_utime + cpu.ru_stime),
        "best_params": study.best_params,
    }


def parse_range(text: str) -> list[int]:
    out: list[int] = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out += list(range(int(lo), int(hi or lo) + 1))
    return out


def summary(store: RecordStore, problem: str, samplers: list[str], seeds: list[int], trials: int, reference: str) -> str:
    final: dict[str, dict[int, float]] = {}
    times: dict[str, list[float]] = {}
    for r in store.records():
        c = r["config"]
        if c["problem"] == problem and c["trials"] == trials and c["seed"] in seeds:
            final.setdefault(c["sampler"], {})[c["seed"]] = r["simple_regret"][-1]
            times.setdefault(c["sampler"], []).append(r["wall_s"])
    lines = [
        f"problem {problem}, {trials} trials, seeds {min(seeds)}-{max(seeds)}; paired against {reference}: "
        "mean of log10(regret) - log10(reference regret) +- 1 SE",
        "",
        "| sampler | runs | mean final regret +- SE | median wall s | paired log10 difference | verdict |",
        "|---|---|---|---|---|---|",
    ]
    ref = final.get(reference, {})
    for name in samplers:
        values = final.get(name, {})
        if not values:
            continue
        v = list(values.values())
        se = statistics.stdev(v) / math.sqrt(len(v)) if len(v) > 1 else 0.0
        common = sorted(set(values) & set(ref))
        diff = [math.log10(max(values[s], FLOOR)) - math.log10(max(ref[s], FLOOR)) for s in common]
        if name == reference or len(diff) < 2:
            paired, verdict = "", ""
        else:
            m, e = statistics.mean(diff), statistics.stdev(diff) / math.sqrt(len(diff))
            paired = f"{m:+.2f} +- {e:.2f} ({len(diff)})"
            verdict = "worse" if m > 2 * e else "better" if m < -2 * e else "level"
        lines.append(
            f"| {name} | {len(v)} | {statistics.mean(v):.3g} +- {se:.2g} | {statistics.median(times[name]):.1f} | {paired} | {verdict} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--problems", default="four")
    parser.add_argument("--samplers", default="lb-gp-ucb-auto,he-gp-ucb-auto,auto,qlognei,gp,tpe,random")
    parser.add_argument("--seeds", default="0-9")
    parser.add_argument("--trials", type=int, default=30)
    parser.add_argument("--reference", default="gp")
    parser.add_argument("--records", type=Path, default=ROOT)
    parser.add_argument("--summary-only", action="store_true")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args()
    store = RecordStore(args.records, KEY_FIELDS)
    problems, samplers, seeds = args.problems.split(","), args.samplers.split(","), parse_range(args.seeds)
    for name in problems:
        if name not in PROBLEMS:
            raise SystemExit(f"--problems: unknown problem {name!r}; known: {sorted(PROBLEMS)}")
    todo = [
        (p, s, seed)
        for p in problems
        for seed in seeds
        for s in samplers
        if not store.has(p, s, {"problem": p, "sampler": s, "seed": seed, "trials": args.trials})
    ]
    if not args.summary_only and todo:
        bar = None
        if not args.no_progress:
            try:
                from tqdm import tqdm

                bar = tqdm(total=len(todo), unit="run")
            except ImportError:
                bar = None
        for p, s, seed in todo:
            store.add(p, s, run_one(p, s, seed, args.trials))
            if bar is not None:
                bar.update(1)
        if bar is not None:
            bar.close()
    for p in problems:
        print(summary(store, p, samplers, seeds, args.trials, args.reference))
        print()


if __name__ == "__main__":
    main()
