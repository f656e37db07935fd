r"""Cost of one PE-GP-TS iteration: one batched call over the priors against a loop over them.

Setting: the kernel task (6 priors, 500 arms), after ``--n`` observations (100 by
default) of the seed-0 function at random arms. One iteration is

1. select (Alg. 1 lines 3-4 and 7-8): one joint posterior sample over all arms per
   active prior, the joint argmax over (prior, arm), and the recorded mean and sigma;
2. observe: condition every prior on the new observation.

*Batched* does this the way
:class:`~botorch_unknown_hypers.policies.prior_selection.prior_selection_policy.PEGPTS` does: one
``TabularPriorGP`` over the K priors, one batched pathwise ``sample`` and one
batched ``condition``. *Loop* keeps one single-prior ``TabularPriorGP`` per prior
(built once, factors cached, the same data) and calls ``sample`` /
``mean_variance`` / ``conditioned`` prior by prior in a Python loop: what an
implementation with one GP object per prior does. Conditioning is timed with the
functional ``conditioned`` so that every repeat starts at the same ``n``. For
reference, the last line times the policy's whole ``suggest`` (input validation
and the data check included) and ``observe``-equivalent.

One warm-up, then the median of ``--repeats`` timed calls per variant.

Usage::

    python benchmarks/prior_selection_speed.py                    # CPU, and CUDA when present
    python benchmarks/prior_selection_speed.py --n 400 --repeats 50 --devices cpu
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time
from collections.abc import Callable

import torch

from botorch_unknown_hypers.models.tabular import TabularPriorGP
from botorch_unknown_hypers.policies.prior_selection.prior_elimination import PEGPTS
from botorch_unknown_hypers.acquisition.optimize import random_argmax
from botorch_unknown_hypers.problems.prior_selection_problems import PriorSelectionProblem


def median_time(call: Callable[[], object], repeats: int, device: torch.device) -> float:
    times = []
    for r in range(repeats + 1):
        if device.type == "cuda":
            torch.cuda.synchronize()
        start = time.perf_counter()
        call()
        if device.type == "cuda":
            torch.cuda.synchronize()
        if r > 0:
            times.append(time.perf_counter() - start)
    return statistics.median(times)


def setting(n: int, device: torch.device):
    r"""The seed-0 kernel task on ``device`` and ``n`` noisy observations at random arms."""
    problem = PriorSelectionProblem("gp-kernel", seed=0)
    gen = torch.Generator().manual_seed(1)
    indices = torch.randint(problem.priors.num_arms, (n,), generator=gen)
    X = problem.domain.points[indices]
    Y = problem.evaluate_true(X) + problem.noise_std * torch.randn(n, generator=gen, dtype=torch.float64)
    return problem.to(device=device), indices.to(device), X.to(device), Y.unsqueeze(-1).to(device)


def conditioned_model(priors, indices, Y) -> TabularPriorGP:
    r"""A model conditioned one observation at a time, as in a run (the batch constructor's
    column-major Cholesky factors would make the timed ``conditioned`` ~1.5x slower)."""
    model = TabularPriorGP(priors)
    for index, y in zip(indices.tolist(), Y):
        model.condition(index, y)
    model.prior_factor()
    return model


def batched_iteration(problem, indices, Y, device, repeats):
    model = conditioned_model(problem.priors, indices, Y)
    generator = torch.Generator(device=device).manual_seed(0)
    tie_breaker = torch.Generator().manual_seed(0)
    active = torch.arange(len(problem.priors), device=device)

    def select() -> tuple[int, int, float, float]:
        mean, variance = model.mean_variance()
        samples = model.sample(1, generator=generator, prior_indices=active)[0]  # K x N, one call
        prior, arm = divmod(random_argmax(samples, tie_breaker), model.num_arms)
        return prior, arm, float(mean[prior, arm]), float(variance[prior, arm].sqrt())

    select_time = median_time(select, repeats, device)
    arm = select()[1]
    observe_time = median_time(lambda: model.conditioned(arm, 0.1), repeats, device)
    return select_time, observe_time


def loop_iteration(problem, indices, Y, device, repeats):
    models = [conditioned_model(problem.priors.subset([p]), indices, Y) for p in range(len(problem.priors))]
    generator = torch.Generator(device=device).manual_seed(0)
    tie_breaker = torch.Generator().manual_seed(0)

    def select() -> tuple[int, int, float, float]:
        best, choice = -float("inf"), (0, 0, 0.0, 0.0)
        for p, model in enumerate(models):  # one GP object per prior
            mean, variance = model.mean_variance()
            sample = model.sample(1, generator=generator)[0, 0]
            arm = random_argmax(sample, tie_breaker)
            value = float(sample[arm])
            if value > best:  # the recorded mean and sigma of the best (prior, arm) so far
                best, choice = value, (p, arm, float(mean[0, arm]), float(variance[0, arm].sqrt()))
        return choice

    select_time = median_time(select, repeats, device)
    arm = select()[1]
    observe_time = median_time(lambda: [model.conditioned(arm, 0.1) for model in models], repeats, device)
    return select_time, observe_time


def policy_iteration(problem, X, Y, device, repeats):
    policy = PEGPTS(problem.domain, priors=problem.priors, seed=0, device=device)
    policy.suggest(X, Y)  # conditions on the n observations (not timed) and computes the factors
    select_time = median_time(lambda: policy.suggest(X, Y), repeats, device)
    arm = policy.pending["arm"]
    observe_time = median_time(lambda: policy.model.conditioned(arm, 0.1), repeats, device)
    return select_time, observe_time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100, help="observations before the timed iteration")
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--devices", nargs="+", default=["cpu"] + (["cuda"] if torch.cuda.is_available() else []))
    args = parser.parse_args()
    print(f"machine: {platform.processor() or platform.machine()}, {torch.get_num_threads()} threads, "
          f"torch {torch.__version__}; kernel task, 6 priors, 500 arms, n = {args.n}")
    for name in args.devices:
        device = torch.device(name)
        problem, indices, X, Y = setting(args.n, device)
        rows = {
            "batched": batched_iteration(problem, indices, Y.reshape(-1), device, args.repeats),
            "loop": loop_iteration(problem, indices, Y.reshape(-1), device, args.repeats),
            "pe-gp-ts policy": policy_iteration(problem, X, Y, device, args.repeats),
        }
        for label, (select, observe) in rows.items():
            print(f"[{name}] {label:16s} select {select * 1e3:6.2f} ms + observe {observe * 1e3:6.2f} ms "
                  f"= {(select + observe) * 1e3:6.2f} ms")
        (b_select, b_observe), (l_select, l_observe) = rows["batched"], rows["loop"]
        print(f"[{name}] loop / batched: select {l_select / b_select:.2f}x, observe {l_observe / b_observe:.2f}x, "
              f"iteration {(l_select + l_observe) / (b_select + b_observe):.2f}x")

if __name__ == "__main__":
    main()
