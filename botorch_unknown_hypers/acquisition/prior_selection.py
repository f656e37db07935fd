r"""Selection over (point, prior) pairs for prior selection, on arms or on a box.

The prior-selection rules (Sandberg & Haghir Chehreghani) keep K candidate GP priors, all
conditioned on all data, in one model: a
:class:`~botorch_unknown_hypers.models.tabular.TabularPriorGP` over a pool of arms or a
:class:`~botorch_unknown_hypers.models.box_priors.BoxPriors` on a box. Their selections:

- :func:`thompson_prior_argmax` (PE-GP-TS Alg. 1 lines 3-4 over the active priors; HP-GP-TS
  Alg. 2 lines 3-4 over the one sampled prior): one **independent** posterior sample
  :math:`\tilde f_p` per prior and :math:`(x_t, p_t) = \arg\max_{(x, p)} \tilde f_p(x)`. On arms a
  sample is a joint draw over all arms (one batched pathwise call; the consecutive block of
  priors from the first to the last requested one is drawn, as a view, and the others
  discarded); on a box it is a pathwise sample *path* per prior, all maximised by one batched
  multi-start L-BFGS-B (before any data: the priors' own paths);
- :func:`ucb_prior_argmax` (PE-GP-UCB): the doubly optimistic
  :math:`\arg\max_{(x, p)} \mu_{t,p}(x) + \sqrt{\beta_t}\,\sigma_{t,p}(x)` with the package's one
  UCB formula; exhaustive on arms, :func:`~botorch_unknown_hypers.acquisition.optimize.optimize_ucb_joint`
  on a box (before any data: every prior's prior UCB maximised on its own).

Exact ties of a joint argmax are broken uniformly at random with the rule's generator (the UCB
at :math:`t = 1`, where every stationary prior has :math:`\sigma = 1` at every arm, is all ties).
All randomness comes from the caller's generator.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import Tensor

from botorch_unknown_hypers.acquisition.multistart import maximize_per_candidate
from botorch_unknown_hypers.acquisition.optimize import optimize_ucb_joint, random_argmax
from botorch_unknown_hypers.acquisition.prior_sampling import (
    draw_candidate_prior_paths,
    path_chunk,
    sample_candidate_maxima,
)
from botorch_unknown_hypers.confidence import upper_confidence_bound
from botorch_unknown_hypers.models.box_priors import BoxPriors
from botorch_unknown_hypers.models.prior_model import PriorModel
from botorch_unknown_hypers.rng import draw_seed, forked_rng


def sample_generator(generator: torch.Generator, device: torch.device) -> torch.Generator:
    r"""``generator`` itself on the CPU; on another device a device generator seeded from it."""
    if device.type == "cpu":
        return generator
    return torch.Generator(device=device).manual_seed(draw_seed(generator))


def _box_path_maxima(
    model: BoxPriors,
    priors: Sequence[int],
    generator: torch.Generator,
    num_restarts: int,
    raw_samples: int,
    num_features: int,
) -> tuple[Tensor, Tensor]:
    r"""One independent posterior path per prior in ``priors``, each maximised on the box."""
    bounds = model.bounds
    gp = model.candidate_gp(priors)
    if gp is not None:
        return sample_candidate_maxima(
            gp, bounds, num_restarts, raw_samples, num_features=num_features, seed=draw_seed(generator)
        )
    with forked_rng(draw_seed(generator), bounds.device):  # no data yet: the priors' own paths
        candidates = model.candidates.subset(list(priors))
        paths = draw_candidate_prior_paths(candidates, model.dim, bounds, model.input_transform(), num_features)
    chunk = path_chunk(len(priors), num_features, 0)
    return maximize_per_candidate(
        paths, len(priors), bounds, num_restarts, raw_samples, seed=draw_seed(generator), chunk=chunk
    )


def thompson_prior_argmax(
    model: PriorModel,
    priors: Sequence[int],
    generator: torch.Generator,
    num_restarts: int = 10,
    raw_samples: int = 512,
    num_features: int = 1024,
) -> tuple[Tensor, int]:
    r"""The best (point, prior) pair of one independent posterior sample per prior in ``priors``.

    Args:
        model: The priors and data.
        priors: The priors to sample (ascending model indices).
        generator: The rule's CPU generator.
        num_restarts, raw_samples, num_features: Box only: multi-start settings of the path
            maximisations and random Fourier features per path.

    Returns:
        ``(x, local)``: the ``1 x d`` point and the position of its prior in ``priors``.
    """
    if isinstance(model, BoxPriors):
        X_best, values = _box_path_maxima(model, priors, generator, num_restarts, raw_samples, num_features)
        local = random_argmax(values, generator)
        return X_best[local : local + 1], local
    span = range(priors[0], priors[-1] + 1)  # a view of the model's factors; the rest is discarded
    samples = model.sample(1, generator=sample_generator(generator, model.priors.means.device), prior_indices=span)[0]
    wanted = set(priors)
    skipped = torch.tensor([p not in wanted for p in span], device=samples.device)
    samples = samples.masked_fill(skipped.unsqueeze(-1), -math.inf)
    row, arm = divmod(random_argmax(samples, generator), model.num_arms)
    return model.priors.arms[arm : arm + 1], list(priors).index(span.start + row)


def ucb_prior_argmax(
    model: PriorModel,
    priors: Sequence[int],
    sqrt_beta: float,
    generator: torch.Generator,
    num_restarts: int = 10,
    raw_samples: int = 512,
) -> tuple[Tensor, int]:
    r"""The doubly optimistic (point, prior) pair over the priors in ``priors``.

    Returns:
        ``(x, local)``: the ``1 x d`` point and the position of its prior in ``priors``.
    """
    if isinstance(model, BoxPriors):
        gp = model.candidate_gp(priors)
        if gp is not None:
            x, local, _ = optimize_ucb_joint(
                gp, sqrt_beta, model.bounds, num_restarts, raw_samples, seed=draw_seed(generator)
            )
            return x.unsqueeze(0), local
        # no data yet: each prior's UCB m_p(x) + sqrt(beta) sqrt(k_p(x, x)), maximised on its own
        mean_module, covar_module = model.prior_modules(priors)
        transform = model.input_transform()

        def prior_ucb(X: Tensor) -> Tensor:
            Z = transform(X)
            values = upper_confidence_bound(mean_module(Z), covar_module(Z, diag=True), sqrt_beta)
            # A zero mean and a stationary kernel give a constant without a graph: keep the
            # (zero) gradient that L-BFGS-B asks for.
            return values + 0.0 * Z.sum(-1)

        X_best, values = maximize_per_candidate(
            prior_ucb, len(priors), model.bounds, num_restarts, raw_samples, seed=draw_seed(generator)
        )
        local = random_argmax(values, generator)
        return X_best[local : local + 1], local
    mean, variance = model.mean_variance()  # K x N
    rows = torch.tensor(list(priors), device=mean.device)
    values = upper_confidence_bound(mean[rows], variance[rows], sqrt_beta)
    local, arm = divmod(random_argmax(values, generator), model.num_arms)
    return model.priors.arms[arm : arm + 1], local
