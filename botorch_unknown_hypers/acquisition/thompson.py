r"""Thompson samples and their maximisers, and the posterior-mean maximiser, on a box or a pool.

- On a box, a posterior sample is a *function*: BoTorch's pathwise (Matheron) sample path
  (Wilson et al. 2020), maximised by batched multi-start L-BFGS-B, all ``num`` paths in one run
  (:func:`thompson_maximizers_box`).
- On a pool of ``N`` points a sample is an exact joint draw
  :math:`\tilde f = \mu + U \Lambda^{1/2} z` from one eigendecomposition of the posterior
  covariance (:class:`PoolJointSampler`; eigenvalues clipped at 0, stable for near-duplicate
  points).

:func:`thompson_maximizers` and :func:`posterior_mean_maximizer` dispatch between the two, so
that a rule never branches on the domain. :func:`random_point_sampler` gives the TS-RSR authors'
finite set for sample maxima (uniform random points plus the posterior-mean maximiser).
Every box maximisation takes ``search``: SciPy's L-BFGS-B (``"scipy"``, the default) or the
batched projected L-BFGS on the model's device (``"torch"``,
:mod:`~botorch_unknown_hypers.acquisition.device_search`).

References:
    J. Wilson, V. Borovitskiy, A. Terenin, P. Mostowsky, M. Deisenroth. Efficiently sampling
    functions from Gaussian process posteriors. ICML 2020.
    K. Kandasamy, A. Krishnamurthy, J. Schneider, B. Poczos. Parallelised Bayesian
    optimisation via Thompson sampling. AISTATS 2018.
"""

from __future__ import annotations

import torch
from botorch.acquisition import PosteriorMean
from botorch.models.model import Model
from botorch.sampling.pathwise import draw_matheron_paths
from torch import Tensor

from botorch_unknown_hypers.acquisition.device_search import DEFAULT_SEARCH, LATE_CHECKS, check_search
from botorch_unknown_hypers.acquisition.multistart import maximize_acquisition, maximize_per_candidate
from botorch_unknown_hypers.domains import Domain, FiniteDomain, is_mixed
from botorch_unknown_hypers.host import at_argmax
from botorch_unknown_hypers.models.quiet_normal import quiet_paths
from botorch_unknown_hypers.rng import draw_seed, draw_seeds, forked_rng


def max_posterior_mean_box(
    model: Model, bounds: Tensor, train_X: Tensor, num_restarts: int, raw_samples: int, seed: int, search: str = DEFAULT_SEARCH
) -> tuple[float, Tensor]:
    r""":math:`\max_x \mu_t(x)` on a box: a multi-start maximisation of the posterior mean
    (:func:`~botorch_unknown_hypers.acquisition.multistart.maximize_acquisition` with ``search``),
    and the training inputs.

    Returns:
        ``(value, x)``: the maximum and a ``1 x d`` maximiser.
    """
    value, x = posterior_mean_argmax_box(model, bounds, train_X, num_restarts, raw_samples, seed, search)
    return float(value), x


def posterior_mean_argmax_box(
    model: Model, bounds: Tensor, train_X: Tensor, num_restarts: int, raw_samples: int, seed: int, search: str = DEFAULT_SEARCH
) -> tuple[Tensor, Tensor]:
    r""":func:`max_posterior_mean_box` on the device: ``(value, x)``, the maximum as a 0-dim tensor
    and the ``1 x d`` maximiser (a training input where its mean is strictly higher than the
    search's), chosen without reading either on the host."""
    x, val = maximize_acquisition(
        PosteriorMean(model), bounds, 1, num_restarts, raw_samples, seed, search=search, search_options=LATE_CHECKS
    )
    with torch.no_grad():  # each training input as its own q = 1 batch: the means, no joint covariance
        # with x appended: n + 1 points against the n training inputs, which a kernel knows to be
        # different sets from their shapes; n points would be compared (torch.equal, a host read)
        at_train = model.posterior(torch.cat([train_X, x.reshape(1, -1).to(train_X)]).unsqueeze(-2)).mean.reshape(-1)[:-1]
        _, top, x_data = at_argmax(at_train, train_X)
        from_data = top.reshape(()) > val.reshape(())
        value = torch.where(from_data, top.reshape(()), val.reshape(()))
        return value, torch.where(from_data, x_data, x).detach()


def thompson_maximizers_box(
    model: Model,
    bounds: Tensor,
    num: int,
    num_restarts: int,
    raw_samples: int,
    seed: int,
    extra_starts: Tensor | None = None,
    search: str = DEFAULT_SEARCH,
) -> tuple[Tensor, Tensor]:
    r"""Maximisers and maxima of ``num`` independent pathwise posterior samples, one batched L-BFGS-B.

    Uses BoTorch's ``draw_matheron_paths`` (global RNG: fork and seed it around the
    call) and :func:`maximize_per_candidate` (each path gets its own raw samples and
    restarts, plus ``extra_starts``, ``e x d``, for every path). Shared by TS-RSR (the maxima)
    and the Thompson baselines (the maximisers).

    Args:
        model: The posterior model.
        bounds: ``2 x d`` box.
        num: Number of sample paths.
        num_restarts, raw_samples, seed: Multi-start settings of the path maximisations.
        extra_starts: Optional ``e x d`` extra starts of every path.
        search: The refinement of the restarts, ``"scipy"`` or ``"torch"`` (see
            :func:`~botorch_unknown_hypers.acquisition.multistart.maximize_per_candidate`).

    Returns:
        ``(X, maxima)``: ``num x d`` and ``num``.
    """
    paths = quiet_paths(draw_matheron_paths(model, sample_shape=torch.Size([num])), model.num_outputs)
    # A model with hidden singleton batch dimensions (e.g. CandidateGP.select(k)) has
    # paths of batch shape num x 1 x ...: probe once and give the points matching ones.
    with torch.no_grad():
        probe = paths(bounds[:1])  # num x (1 x ...) x 1
    extra = probe.ndim - 2

    def values(X: Tensor) -> Tensor:  # num x m x d -> num x m
        Xb = X.reshape(X.shape[0], *([1] * extra), *X.shape[1:])
        return paths(Xb).reshape(X.shape[:-1])

    return maximize_per_candidate(
        values, num, bounds, num_restarts=num_restarts, raw_samples=raw_samples, seed=seed, extra_starts=extra_starts,
        search=search,
    )


class PoolJointSampler:
    r"""Exact joint posterior samples over a pool of ``N`` points.

    :math:`\tilde f = \mu + U \Lambda^{1/2} z`, :math:`z \sim N(0, I)`, from one
    eigendecomposition of the ``N x N`` posterior covariance with eigenvalues clipped
    at 0 (stable for near-duplicate points). Shared by TS-RSR and the Thompson baselines.

    Attributes:
        mean: ``N`` posterior means; cov: ``N x N`` posterior covariance.
    """

    def __init__(self, model: Model, points: Tensor) -> None:
        with torch.no_grad():
            post = model.posterior(points)
            self.mean = post.mean.squeeze(-1)
            self.cov = post.mvn.covariance_matrix
        evals, evecs = torch.linalg.eigh(self.cov)
        self.root = evecs * evals.clamp_min(0.0).sqrt().unsqueeze(-2)

    def draw(self, num: int, generator: torch.Generator) -> Tensor:
        r"""``N x num`` samples; the normals come from the CPU ``generator``."""
        z = torch.randn(self.mean.shape[0], num, generator=generator, dtype=self.cov.dtype).to(self.cov.device)
        return self.mean.unsqueeze(-1) + self.root @ z


def random_point_sampler(
    model: Model, bounds: Tensor, num_points: int, x_mean_max: Tensor, generator: torch.Generator
) -> PoolJointSampler:
    r"""The authors' code's set for :math:`\tilde f^*` : exact joint
    posterior samples over ``num_points`` uniform random points plus the posterior-mean maximiser
    ``x_mean_max`` (``1 x d``). Built once per round; every draw and redraw of the round uses it
    (the code redraws "a whole joint sample on the candidate set").
    """
    u = torch.rand(num_points, bounds.shape[-1], generator=generator, dtype=bounds.dtype).to(bounds.device)
    points = torch.cat([bounds[0] + (bounds[1] - bounds[0]) * u, x_mean_max.to(bounds)], dim=0)
    return PoolJointSampler(model, points)




def thompson_maximizers(
    model: Model,
    domain: Domain,
    num: int,
    generator: torch.Generator,
    num_restarts: int = 10,
    raw_samples: int = 512,
    extra_starts: Tensor | None = None,
    search: str = DEFAULT_SEARCH,
) -> tuple[Tensor, Tensor]:
    r"""Maximisers and maxima of ``num`` independent posterior samples over ``domain``.

    Pool: exact joint samples (:class:`PoolJointSampler`, normals from ``generator``). Box:
    pathwise samples maximised by :func:`thompson_maximizers_box`, the paths drawn with the
    global RNG forked and seeded from ``generator``; ``extra_starts`` (``e x d``) are extra
    L-BFGS-B starts of every path.

    Args:
        model, domain, num, generator: The posterior model, the domain, the number of samples
            and the rule's CPU generator.
        num_restarts, raw_samples, extra_starts: Box only, as :func:`thompson_maximizers_box`.
        search: Box only: ``"scipy"`` or ``"torch"``, the refinement of the restarts
            (:func:`thompson_maximizers_box`); checked on a pool too.

    Returns:
        ``(X, maxima)``: ``num x d`` and ``num``.
    """
    check_search(search)
    if isinstance(domain, FiniteDomain) or is_mixed(domain):
        points = stand_in_points(domain, raw_samples, generator)
        maxima, idx = PoolJointSampler(model, points).draw(num, generator).max(dim=0)
        return points[idx], maxima
    fork, seed = draw_seeds(generator, 2)  # one host copy for both
    with forked_rng(fork, domain.device):
        return thompson_maximizers_box(model, domain.bounds, num, num_restarts, raw_samples, seed, extra_starts, search)


def posterior_mean_maximizer(
    model: Model,
    domain: Domain,
    train_X: Tensor,
    generator: torch.Generator,
    num_restarts: int = 10,
    raw_samples: int = 512,
    search: str = DEFAULT_SEARCH,
) -> Tensor | None:
    r"""A ``1 x d`` maximiser of the posterior mean on a box (an extra start for the box
    optimisers of batch rules); ``None`` on a pool, where every maximisation is exhaustive and
    needs no start. Seeded from ``generator``; ``search`` as :func:`max_posterior_mean_box`."""
    if isinstance(domain, FiniteDomain) or is_mixed(domain):
        return None
    fork, seed = draw_seeds(generator, 2)  # one host copy for both
    with forked_rng(fork, domain.device):
        return posterior_mean_argmax_box(model, domain.bounds, train_X, num_restarts, raw_samples, seed, search)[1]


def stand_in_points(domain: Domain, raw_samples: int, generator: torch.Generator) -> Tensor:
    r"""The points a sample is maximised over exactly: a pool's own, or on a mixed domain the
    distinct points of ``raw_samples`` scrambled Sobol draws of its codes seeded from
    ``generator`` (pathwise samples on its continuous relaxation would be maximised off the
    domain's grid and choices)."""
    if isinstance(domain, FiniteDomain):
        return domain.points
    return domain.discretize(raw_samples, draw_seed(generator))


def candidate_set(domain: Domain, num_points: int, generator: torch.Generator) -> Tensor:
    r"""A finite candidate set for rules defined on one (stochastic policies): the pool itself,
    or ``num_points`` scrambled Sobol points of a box seeded from ``generator``."""
    if isinstance(domain, FiniteDomain):
        return domain.points
    return domain.discretize(num_points, draw_seed(generator))
