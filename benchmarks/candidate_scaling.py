r"""Per-candidate UCB maximisation: one batched CandidateGP against a loop of K models.

For K fixed Matern-5/2 length-scale candidates on n data points in d = 5, time
finding *every* candidate's own UCB maximiser

- **batched**: one ``CandidateGP`` + :func:`optimize_ucb_per_candidate` (one
  parallel L-BFGS-B over all K x restarts problems);
- **loop**: K separate BoTorch ``SingleTaskGP`` models with the same fixed
  hyperparameters, each with ``optimize_acqf(UpperConfidenceBound)``.

Both use the same restarts, raw samples and ``maxiter``; model construction is
timed on both sides; one warm-up call per configuration is excluded; the
figure is the median of ``--repeats`` timed calls. The ratio is loop / batched
(> 1 means the batched path is faster). Runs on CUDA when present (or
``--device``).

Usage::

    python benchmarks/candidate_scaling.py                 # K in 1 4 16 64, n in 100 500
    python benchmarks/candidate_scaling.py --ks 16 --ns 100 --repeats 1
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time

import torch
from botorch.acquisition import UpperConfidenceBound
from botorch.models import SingleTaskGP
from botorch.optim import optimize_acqf
from gpytorch.constraints import GreaterThan, Positive
from gpytorch.kernels import MaternKernel, ScaleKernel
from gpytorch.likelihoods import GaussianLikelihood
from gpytorch.means import ZeroMean

from botorch_unknown_hypers.acquisition.optimize import optimize_ucb_per_candidate
from botorch_unknown_hypers.candidates import KernelCandidates
from botorch_unknown_hypers.models.candidate_gp import CandidateGP

NOISE = 1e-4
BETA = 2.0


def make_data(n: int, d: int, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(n)
    X = torch.rand(n, d, generator=gen, dtype=torch.float64)
    Y = torch.sin(6 * X).sum(-1, keepdim=True) + 0.5 * torch.cos(11 * X[:, :2]).prod(-1, keepdim=True)
    Y = (Y - Y.mean()) / Y.std()
    return X.to(device), Y.to(device)


def lengthscales(K: int, device: torch.device) -> torch.Tensor:
    if K == 1:
        return torch.tensor([0.3], dtype=torch.float64, device=device)
    return torch.logspace(torch.log10(torch.tensor(0.8)), torch.log10(torch.tensor(0.1)), K, dtype=torch.float64).to(device)


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def batched(X, Y, ls, bounds, restarts, raw, maxiter, seed):
    model = CandidateGP(X, Y, KernelCandidates.from_lengthscales(ls, noise=NOISE))
    _, values = optimize_ucb_per_candidate(
        model, BETA, bounds, num_restarts=restarts, raw_samples=raw, options={"maxiter": maxiter}, seed=seed
    )
    return values


def single_model(X, Y, lengthscale: float) -> SingleTaskGP:
    covar = ScaleKernel(MaternKernel(nu=2.5, lengthscale_constraint=Positive()), outputscale_constraint=Positive())
    covar.base_kernel.lengthscale = lengthscale
    covar.outputscale = 1.0
    likelihood = GaussianLikelihood(noise_constraint=GreaterThan(1e-12))
    likelihood.noise = NOISE
    model = SingleTaskGP(X, Y, covar_module=covar, mean_module=ZeroMean(), likelihood=likelihood, outcome_transform=None)
    return model.to(X).eval()


def loop(X, Y, ls, bounds, restarts, raw, maxiter, seed):
    values = []
    for k, lengthscale in enumerate(ls.tolist()):
        model = single_model(X, Y, lengthscale)
        _, v = optimize_acqf(
            UpperConfidenceBound(model, beta=BETA**2),
            bounds,
            q=1,
            num_restarts=restarts,
            raw_samples=raw,
            options={"maxiter": maxiter, "seed": seed + k},
        )
        values.append(v)
    return torch.stack(values)


def timed(fn, device, repeats, *args):
    out = fn(*args)  # warm-up, excluded
    times = []
    for _ in range(repeats):
        sync(device)
        start = time.perf_counter()
        out = fn(*args)
        sync(device)
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ks", type=int, nargs="+", default=[1, 4, 16, 64])
    parser.add_argument("--ns", type=int, nargs="+", default=[100, 500])
    parser.add_argument("--dim", type=int, default=5)
    parser.add_argument("--restarts", type=int, default=10)
    parser.add_argument("--raw-samples", type=int, default=512)
    parser.add_argument("--maxiter", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = parser.parse_args()
    device = torch.device(args.device)
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else platform.processor() or platform.machine()
    print(
        f"device={device} ({name}), torch {torch.__version__}, threads={torch.get_num_threads()}, "
        f"d={args.dim}, restarts={args.restarts}, raw_samples={args.raw_samples}, maxiter={args.maxiter}, "
        f"median of {args.repeats} after 1 warm-up"
    )
    print(f"{'K':>4} {'n':>5} {'batched_s':>10} {'loop_s':>9} {'ratio':>7} {'ucb_gap':>10}")
    bounds = torch.stack([torch.zeros(args.dim), torch.ones(args.dim)]).to(device=device, dtype=torch.float64)
    for n in args.ns:
        X, Y = make_data(n, args.dim, device)
        for K in args.ks:
            ls = lengthscales(K, device)
            common = (X, Y, ls, bounds, args.restarts, args.raw_samples, args.maxiter, 0)
            t_b, v_b = timed(batched, device, args.repeats, *common)
            t_l, v_l = timed(loop, device, args.repeats, *common)
            # ucb_gap: mean over candidates of (batched best UCB - loop best UCB); >= 0 means no worse.
            gap = float((v_b - v_l).mean())
            print(f"{K:>4} {n:>5} {t_b:>10.3f} {t_l:>9.3f} {t_l / t_b:>7.2f} {gap:>10.2e}", flush=True)


if __name__ == "__main__":
    main()
