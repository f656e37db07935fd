r"""Diagnosis on development problems: does the fitted noise variance tell noise from misfit?

H16 (``auto[acquisition=lognei-if-noisy]``, the fourteenth round of ``docs/bbob.md``) plays
qLogNEI in a round where the acquired candidate's noise variance :math:`\sigma^2_u`
(standardised units) exceeds :math:`\tau = 10^{-4}`, and the plug-in LogEI otherwise. This
script runs H16 and reads, in every round, the :math:`\sigma^2_u` that the switch compared
with :math:`\tau` (the arguments of
:func:`~botorch_unknown_hypers.policies.presets.auto.acquired`, watched with
``unittest.mock``; no value changes), then prints its quartiles per run and the fraction of
rounds above :math:`\tau`. Beside it, a difference-based check of the same :math:`\sigma^2_u`
from the nearest observed pairs (:func:`nearest_pairs`): with :math:`k_u` the candidate's kernel
(standardised units) and :math:`g_{ij} = \tfrac12(k_u(x_i, x_i) + k_u(x_j, x_j)) - k_u(x_i, x_j)`
its signal semivariance, take greedily the :math:`m = \max(1, \lfloor n/6 \rfloor)` disjoint pairs
of least :math:`g_{ij}` and :math:`T = \sum (y_i - y_j)^2 / (2\sigma^2_u)` over them. Were
:math:`\sigma^2_u` noise, :math:`T \ge \chi^2_m` stochastically (the signal adds to it); a
:math:`T` below the 5 % quantile of :math:`\chi^2_m` says the nearest pairs agree better than that
noise allows. It prints, over each run's second half of rounds, the median of :math:`T/m` and
the share of rounds with :math:`T` below the quantile:

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
from typing import cast
from unittest import mock

import torch
from scipy.stats import chi2
from torch import Tensor

from botorch_unknown_hypers.models.candidate_gp import CandidateGP
from botorch_unknown_hypers.policies.presets import auto as auto_module
from botorch_unknown_hypers.policies.presets.auto import AutoSettings

H16 = "auto[acquisition=lognei-if-noisy]"


def nearest_pairs(model: CandidateGP, u: int) -> tuple[int, float, float]:
    r"""For candidate ``u`` of ``model`` (observed inputs and standardised outputs as the model
    holds them): :math:`m`, :math:`T/m` and :math:`P(\chi^2_m \le T)` of the module docstring."""
    X = cast(tuple[Tensor, ...], model.train_inputs)[0]
    y = cast(Tensor, model.train_targets)
    X, y = (X[u] if X.dim() == 3 else X), (y[u] if y.dim() == 2 else y)
    with torch.no_grad():
        K: Tensor = model.covar_module(X).to_dense()  # type: ignore[operator]
    K = K[u] if K.dim() == 3 else K  # n x n
    n, noise = int(y.shape[-1]), model.candidates.noise_values()[u]
    diag = K.diagonal()
    rows, cols = torch.triu_indices(n, n, 1)
    g = (diag[rows] + diag[cols]) / 2 - K[rows, cols]
    used: set[int] = set()
    pairs: list[tuple[int, int]] = []
    for k in torch.argsort(g).tolist():
        i, j = int(rows[k]), int(cols[k])
        if i not in used and j not in used:
            used.update((i, j))
            pairs.append((i, j))
            if len(pairs) == max(1, n // 6):
                break
    T = sum(float((y[i] - y[j]) ** 2) for i, j in pairs) / (2 * noise)
    return len(pairs), T / len(pairs), float(chi2.cdf(T, len(pairs)))


def watched(run: Callable[[], str]) -> tuple[str, list[float], list[tuple[int, float, float]]]:
    r"""``run()``'s result, the :math:`\sigma^2_u` of each round's switch, in order (the
    acquired candidate's, or the largest over the candidates for a joint argmax), and that
    candidate's :func:`nearest_pairs` in each round."""
    levels: list[float] = []
    pairs: list[tuple[int, float, float]] = []
    acquired = auto_module.acquired

    def spy(model: CandidateGP, settings: AutoSettings, index: int | None = None) -> str:
        u = auto_module.noisiest(model, index)
        levels.append(auto_module.noise_level(model, u))
        pairs.append(nearest_pairs(model, u))
        return acquired(model, settings, index)

    with mock.patch.object(auto_module, "acquired", spy):
        result = run()
    return result, levels, pairs


def describe_pairs(pairs: list[tuple[int, float, float]], alpha: float = 0.05) -> str:
    r"""Over the second half of the rounds: the median :math:`T/m` and the share of rounds with
    :math:`P(\chi^2_m \le T) < \alpha`."""
    late = pairs[len(pairs) // 2:]
    ratios = sorted(r for _, r, _ in late)
    return (f"nearest pairs (m {late[0][0]}-{late[-1][0]}): median T/m {ratios[len(ratios) // 2]:.2g}, "
            f"below the chi2 {alpha:g} quantile in {sum(1 for _, _, p in late if p < alpha) / len(late):.0%}")


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
            result, levels, pairs = watched(run)
        print(f"{name}: {result}; noise variance {describe(levels)}; {describe_pairs(pairs)}", flush=True)


if __name__ == "__main__":
    main()
