r"""Cost of one HE-GP-UCB iteration against the number of candidates |U|.

An iteration of :class:`~botorch_unknown_hypers.policies.elimination.he_gp_ucb.HEGPUCB` (batched
posterior over the surviving candidates on their cached factors, the joint (x, u) argmax in one
batched L-BFGS-B, frequentist beta with each candidate's information gain, the observation and
the elimination test) on ``n`` random points in ``[0, 1]^d``, for |U| = 1 and |U| = 11
Matern-5/2 length scales. A campaign's iteration: one untimed round on the ``n`` points (the
first factorisation of every candidate), then the median of ``--repeats`` timed rounds
(``suggest`` + ``observe``). The cold column is the first round of a fresh policy (factorisation
included). Target: |U| = 11 costs at most 3x |U| = 1 per iteration with one thread.

Usage::

    python benchmarks/he_iteration_cost.py --n 250 --repeats 15   # d = 1 and 3, one thread
    python benchmarks/he_iteration_cost.py --n 100 --dims 1 --repeats 5 --device cuda
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time

import torch

from botorch_unknown_hypers.candidates import KernelCandidates
from botorch_unknown_hypers.policies.elimination.he_gp_ucb import HEGPUCB
from botorch_unknown_hypers.domains import BoxDomain


def time_iterations(num: int, n: int, dim: int, repeats: int, device: torch.device) -> tuple[float, float]:
    r"""(median warm iteration, cold first round) in seconds."""
    gen = torch.Generator().manual_seed(0)
    X = torch.rand(n, dim, generator=gen, dtype=torch.float64).to(device)

    def f(Z: torch.Tensor) -> torch.Tensor:
        return torch.sin(6 * Z).sum(-1, keepdim=True)

    Y = f(X)
    ls = torch.logspace(-1.3, 0, num, dtype=torch.float64) if num > 1 else torch.tensor([0.3], dtype=torch.float64)
    cands = KernelCandidates.from_lengthscales(ls, noise=1e-4)
    bounds = torch.stack([torch.zeros(dim), torch.ones(dim)]).to(device=device, dtype=torch.float64)
    policy = HEGPUCB(BoxDomain(bounds), seed=0, candidates=cands, device=device)
    times = []
    for r in range(repeats + 1):
        if device.type == "cuda":
            torch.cuda.synchronize()
        start = time.perf_counter()
        x = policy.suggest(X, Y)
        policy.observe(x, f(x))
        if device.type == "cuda":
            torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
        X, Y = torch.cat([X, x]), torch.cat([Y, f(x)])
    return statistics.median(times[1:]), times[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--dims", type=int, nargs="+", default=[1, 3])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads (the target is stated for 1)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    print(f"machine: {platform.processor() or platform.machine()}, {torch.get_num_threads()} threads, "
          f"torch {torch.__version__}, device {device}")
    for dim in args.dims:
        (w1, c1), (w11, c11) = (time_iterations(k, args.n, dim, args.repeats, device) for k in (1, 11))
        print(f"n={args.n} d={dim}: iteration |U|=1 {w1 * 1e3:.0f} ms, |U|=11 {w11 * 1e3:.0f} ms, ratio {w11 / w1:.2f}x; "
              f"cold first round {c1 * 1e3:.0f} / {c11 * 1e3:.0f} ms ({c11 / c1:.2f}x)")


if __name__ == "__main__":
    main()
