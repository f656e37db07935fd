r"""Diagnosis on development problems: does the fitted noise variance tell noise from misfit?

H16 (``auto[acquisition=lognei-if-noisy]``, the fourteenth round of ``docs/bbob.md``) plays
qLogNEI in a round where the acquired candidate's noise variance :math:`\sigma^2_u`
(standardised units) exceeds :math:`\tau = 10^{-4}`, and the plug-in LogEI otherwise. This
script runs H16 and reads, in every round, the :math:`\sigma^2_u` that the switch compared
with :math:`\tau` (the arguments of
:func:`~botorch_unknown_hypers.policies.presets.auto.acquired`, watched with
``unittest.mock``; no value changes), then prints its quartiles per run and the fraction of
rounds above :math:`\tau`:

- ``four``: the deterministic four-parameter objective through Optuna's ``PolicySampler``
  (``mixed_optuna.py``), development seeds 100-104, ``--trials`` trials;
- ``bbob``: BBOB functions at d = 5, development instance 1, seed 0, :math:`2d` Sobol points
  and ``--rounds`` rounds; a function id with a trailing ``n`` (``1n``) is its 1 %-noise
  variant.

It records nothing and chooses nothing (``docs/bbob.md``, "Does the fitted noise tell noise
from misfit?").

Usage::

    OMP_NUM_THREADS=1 python benchmarks/noise_level_probe.py four --trials 30
    OMP_NUM_THREADS=1 python benchmarks/noise_level_probe.py bbob 1n 6n 7n 9n 1 4 10 --rounds 50
"""

from __future__ import annotations

import argparse
import warnings
from collections.abc import Callable
from unittest import mock

from botorch_unknown_hypers.policies.presets import auto as auto_module

H16 = "auto[acquisition=lognei-if-noisy]"


def watched(run: Callable[[], str]) -> tuple[str, list[float]]:
    r"""``run()``'s result and the :math:`\sigma^2_u` of each round's switch, in order (the
    acquired candidate's, or the largest over the candidates for a joint argmax)."""
    with mock.patch.object(auto_module, "acquired", wraps=auto_module.acquired) as spy:
        result = run()
    levels = []
    for call in spy.call_args_list:
        model, index = call.args[0], call.args[2] if len(call.args) > 2 else call.kwargs.get("index")
        noise = model.candidates.noise_values()
        levels.append(float(max(noise) if index is None else noise[index]))
    return result, levels


def describe(levels: list[float], tau: float = 1e-4) -> str:
    r"""Quartiles of ``levels`` and the fraction above ``tau``."""
    v = sorted(levels)
    n = len(v)
    quartiles = " ".join(f"{name} {v[min(n - 1, int(p * n))]:.2g}" for name, p in
                         (("min", 0), ("q25", 0.25), ("median", 0.5), ("q75", 0.75), ("max", 1)))
    return f"{n} rounds: {quartiles}; above {tau:g} in {sum(x > tau for x in v) / n:.0%}"


def four_run(seed: int, trials: int) -> str:
    r"""One Optuna study of H16 on the four-parameter objective; its best value."""
    import mixed_optuna  # beside this script: run it as ``python benchmarks/noise_level_probe.py``
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(sampler=mixed_optuna.make_sampler(H16, seed))
    study.optimize(mixed_optuna.four, n_trials=trials)
    return f"final regret {study.best_value:.3g}"


def bbob_run(spec: str, rounds: int, dim: int = 5) -> str:
    r"""One H16 run on BBOB function ``spec`` (``"6"`` or ``"6n"``), instance 1; its final true
    simple regret."""
    import noisy_sphere_diagnosis  # beside this script, as ``mixed_optuna``

    regret = noisy_sphere_diagnosis.final_regret(int(spec.rstrip("n")), 1, dim, {"acquisition": "lognei-if-noisy"}, rounds,
                                                 noisy=spec.endswith("n"))
    return f"final regret {regret:.3g}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("study", choices=("four", "bbob"))
    parser.add_argument("functions", nargs="*", default=["1n", "6n", "7n", "9n", "1", "4", "10"],
                        help="with bbob: function ids, a trailing n for the noisy variant")
    parser.add_argument("--trials", type=int, default=30, help="with four: trials per study (10 start trials)")
    parser.add_argument("--rounds", type=int, default=50, help="with bbob: rounds after the 2d Sobol points")
    args = parser.parse_args(argv)
    runs = ([(f"four seed {s}", lambda s=s: four_run(s, args.trials)) for s in range(100, 105)] if args.study == "four"
            else [(f"bbob f{f} d=5 instance 1", lambda f=f: bbob_run(f, args.rounds)) for f in args.functions])
    for name, run in runs:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result, levels = watched(run)
        print(f"{name}: {result}; noise variance {describe(levels)}", flush=True)


if __name__ == "__main__":
    main()
