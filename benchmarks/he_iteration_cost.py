r"""Cost of one HE-GP-UCB iteration against the number of candidates |U|.

One ``suggest`` of :class:`~botorch_unknown_hypers.policies.elimination.HEGPUCB`
(batched posterior over the surviving candidates, every candidate's own UCB
maximiser in one batched L-BFGS-B, frequentist beta with each candidate's
information gain) on ``n`` random points in ``[0, 1]^d``, for |U| = 1 and |U| = 11
Matern-5/2 length scales. One warm-up call, then the median of ``--repeats``
timed calls. The issue's target: |U| = 11 costs at most 3x |U| = 1 on CPU.

Usage::

    python benchmarks/he_iteration_cost.py                 # n = 100, d = 1 and 3
    python benchmarks/he_iteration_cost.py --n 100 --dims 1 --repeats 5 --device cuda
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time

import torch

from botorch_unknown_hypers.candidates import KernelCandidates
from botorch_unknown_hypers.policies.elimination import HEGPUCB
from botorch_unknown_hypers.domains import BoxDomain


def time_suggest(num: int, n: int, dim: int, repeats: int, device: torch.device) -> float:
    gen = torch.Generator().manual_seed(0)
    X = torch.rand(n, dim, generator=gen, dtype=torch.float64).to(device)
    Y = torch.sin(6 * X).sum(-1, keepdim=True)
    ls = torch.logspace(-1.3, 0, num, dtype=torch.float64) if num > 1 else torch.tensor([0.3], dtype=torch.float64)
    cands = KernelCandidates.from_lengthscales(ls, noise=1e-4)
    bounds = torch.stack([torch.zeros(dim), torch.ones(dim)]).to(device=device, dtype=torch.float64)
    times = []
    for r in range(repeats + 1):
        policy = HEGPUCB(BoxDomain(bounds), seed=r, candidates=cands, device=device)
        if device.type == "cuda":
            torch.cuda.synchronize()
        start = time.perf_counter()
        policy.suggest(X, Y)
        if device.type == "cuda":
            torch.cuda.synchronize()
        if r > 0:
            times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--dims", type=int, nargs="+", default=[1, 3])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = parser.parse_args()
    device = torch.device(args.device)
    print(f"machine: {platform.processor() or platform.machine()}, {torch.get_num_threads()} threads, "
          f"torch {torch.__version__}, device {device}")
    for dim in args.dims:
        t1 = time_suggest(1, args.n, dim, args.repeats, device)
        t11 = time_suggest(11, args.n, dim, args.repeats, device)
        print(f"n={args.n} d={dim}: |U|=1 {t1 * 1e3:.0f} ms, |U|=11 {t11 * 1e3:.0f} ms, ratio {t11 / t1:.2f}x")


if __name__ == "__main__":
    main()
