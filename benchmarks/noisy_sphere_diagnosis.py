r"""Diagnosis on development instances: which part of ``auto`` (H14) costs on a noisy BBOB function.

Runs ``auto`` with the options of each variant on BBOB function ``--function`` with 1 % noise,
development instances 1-5, seed 0, the report's budget (:math:`2d` Sobol points, then
``--rounds`` rounds of q = 1), and prints each run's final true simple regret (of the best
evaluated point by its noise-free value) and the variants' means. It records nothing and chooses
nothing (``docs/bbob.md``, "The noisy sphere at d = 5").

Usage::

    OMP_NUM_THREADS=1 python benchmarks/noisy_sphere_diagnosis.py --function 1 --dim 5 --rounds 50
"""

from __future__ import annotations

import argparse
import json

import torch

from botorch_unknown_hypers.policies import make_policy
from botorch_unknown_hypers.problems.bbob_problems import BBOBProblem

VARIANTS: dict[str, dict[str, object]] = {
    "H14 (auto)": {},
    "H13: qLogNEI in place of the plug-in LogEI": {"acquisition": "lognei"},
    "LogEI at the best observation": {"acquisition": "logei"},
    "BoTorch's noise prior": {"noise_prior": "lognormal"},
    "BoTorch's kernel and length-scale prior": {"kernel": "rbf", "lengthscale_prior": "dim-scaled"},
    "H6 (all four of BoTorch's)": {"acquisition": "lognei", "kernel": "rbf", "lengthscale_prior": "dim-scaled", "noise_prior": "lognormal"},
}


def final_regret(
    function: int, instance: int, dim: int, options: dict[str, object], rounds: int, seed: int = 0, noisy: bool = True
) -> float:
    r"""The true simple regret :math:`f^* - \max_i f(x_i)` after ``rounds`` rounds of ``auto``
    (on the 1 %-noise variant of the function, or on the noise-free one when ``noisy`` is false)."""
    problem = BBOBProblem(function, instance, dim, noisy=noisy)
    policy = make_policy("auto", problem.domain, seed=seed, **options)
    noise = torch.Generator().manual_seed(seed)

    def observe(x: torch.Tensor) -> torch.Tensor:
        f = problem.evaluate_true(x).unsqueeze(-1)
        return f + problem.noise_std * torch.randn(f.shape, generator=noise, dtype=f.dtype) if noisy else f

    X = problem.domain.sample(2 * dim, seed=seed)
    Y = observe(X)
    for _ in range(rounds):
        x = policy.suggest(X, Y)
        X, Y = torch.cat([X, x]), torch.cat([Y, observe(x)])
    return float(problem.optimal_value - problem.evaluate_true(X).max())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--function", type=int, default=1, help="BBOB function id (default 1, the sphere)")
    parser.add_argument("--dim", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--variants", type=json.loads, default=None, help="JSON object name -> auto's options (default: VARIANTS)")
    args = parser.parse_args(argv)
    for name, options in (args.variants or VARIANTS).items():
        finals = [final_regret(args.function, instance, args.dim, options, args.rounds) for instance in range(1, 6)]
        print(f"{name}: " + " ".join(f"{v:.3g}" for v in finals) + f"  mean {sum(finals) / len(finals):.3g}", flush=True)


if __name__ == "__main__":
    main()
