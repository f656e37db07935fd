r"""Wall time to build one batch: ts-rsr against BoTorch's qLogNEI (issue 6, "Speed").

Setting: d = 6 on [0, 1]^6 (Hartmann-6), n = 200 observations, the paper's fixed
surrogate (Matern-5/2, length scale 0.2, as the authors' Hartmann run) for both
methods, the same multi-start settings (``--restarts``, ``--raw``), q in {5, 10, 20}.
Each timing is ``policy.suggest(train_X, train_Y, q)``: model build, all samples,
every optimisation. Prints the median of ``--repeats`` runs and the ratio
ts-rsr / qlognei (the goal: <= 0.5 at q = 10).

    python benchmarks/ts_rsr_speed.py [--device cuda] [--q 5 10 20] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from botorch.test_functions import Hartmann

from botorch_unknown_hypers.policies.registry import make_policy
from botorch_unknown_hypers.domains import BoxDomain

SPEC = {"kernel": "matern52", "lengthscale": 0.2, "outputscale": 0.6931, "noise_variance": 1e-6}


def time_batch(method: str, X: torch.Tensor, Y: torch.Tensor, q: int, args: argparse.Namespace, rep: int) -> float:
    domain = BoxDomain(torch.stack([torch.zeros(6), torch.ones(6)]).to(X))
    policy = make_policy(
        method,
        domain,
        seed=rep,
        device=X.device,
        surrogate="paper",
        surrogate_spec=SPEC,
        num_restarts=args.restarts,
        raw_samples=args.raw,
    )
    if X.is_cuda:
        torch.cuda.synchronize()
    start = time.perf_counter()
    policy.suggest(X, Y, q=q)
    if X.is_cuda:
        torch.cuda.synchronize()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--q", type=int, nargs="+", default=[5, 10, 20])
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--restarts", type=int, default=10)
    parser.add_argument("--raw", type=int, default=512)
    args = parser.parse_args()
    device = torch.device(args.device)
    g = torch.Generator().manual_seed(0)
    X = torch.rand(args.n, 6, generator=g, dtype=torch.float64).to(device)
    Y = Hartmann(dim=6, negate=True).to(X)(X).unsqueeze(-1)
    print(f"device={device} threads={torch.get_num_threads()} n={args.n} d=6 restarts={args.restarts} raw={args.raw}")
    print("| q | ts-rsr (s) | qlognei (s) | ratio |")
    print("|---|---|---|---|")
    for q in args.q:
        times = {}
        for method in ("ts-rsr", "qlognei"):
            times[method] = statistics.median(time_batch(method, X, Y, q, args, rep) for rep in range(args.repeats))
        print(f"| {q} | {times['ts-rsr']:.2f} | {times['qlognei']:.2f} | {times['ts-rsr'] / times['qlognei']:.2f} |")


if __name__ == "__main__":
    main()
