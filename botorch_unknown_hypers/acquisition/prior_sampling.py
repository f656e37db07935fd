r"""One independent posterior sample path per candidate prior, maximised jointly on a box.

Thompson sampling over K candidate GP priors (Sandberg & Haghir Chehreghani, Alg. 1 line 3 and
Alg. 2 line 3) needs an **independent** draw :math:`\tilde f_p \sim GP(\mu_{t,p}, k_{t,p})` per prior and
its maximiser. On a box a draw is a function: BoTorch's pathwise sampling (Wilson et al. 2020), a
random-Fourier-feature prior draw corrected by Matheron's rule,

.. math::

    (\tilde f_p \mid y)(\cdot) = \tilde f_p(\cdot) + k_p(\cdot, X)(K_p + \sigma_p^2 I)^{-1}
        \big(y - \tilde f_p(X) - \varepsilon\big),

which can be evaluated and differentiated anywhere. The K priors live in one K-wide
:class:`~botorch_unknown_hypers.models.candidate_gp.CandidateGP`; ``draw_matheron_paths`` returns K
paths of it at once (:func:`draw_candidate_paths`). BoTorch draws the feature weights of all batch
members as the rows of one scrambled Sobol sequence, which anti-correlates the paths of
neighbouring candidates (a correlation of -0.6 measured between candidates 0 and 1), so i.i.d.
Gaussian weights are passed instead: each path is then an unbiased independent draw. A model on
cached factors hands its Cholesky factor of :math:`K_p + \sigma_p^2 I` to BoTorch's update
(``gaussian_update(scale_tril=...)``) instead of having it factorised again. Before any
data, :func:`draw_candidate_prior_paths` draws the priors' own paths. The K paths are maximised
together by :func:`~botorch_unknown_hypers.acquisition.multistart.maximize_per_candidate`
(:func:`sample_candidate_maxima`). Kernels need BoTorch random features (RBF, Matérn and their
``ScaleKernel``); others raise ``UnsupportedError`` (:func:`check_pathwise_kernel`).

Example:
    >>> cands = KernelCandidates.from_lengthscales(torch.tensor([0.1, 0.2, 0.4]), noise=1e-2)
    >>> model = CandidateGP(train_X, train_Y, cands)
    >>> X_best, f_best = sample_candidate_maxima(model, bounds, seed=0)  # 3 x d, 3

References:
    J. Sandberg, M. Haghir Chehreghani. Efficient Prior Selection in Gaussian Process Bandits
    with Thompson Sampling. arXiv:2502.01226 v1, 2025.
    J. Wilson, V. Borovitskiy, A. Terenin, P. Mostowsky, M. Deisenroth. Efficiently Sampling
    Functions from Gaussian Process Posteriors. ICML 2020.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import torch
from botorch.exceptions.errors import UnsupportedError
from botorch.models.transforms.input import InputTransform
from botorch.sampling.pathwise import (
    GeneralizedLinearPath,
    MatheronPath,
    draw_kernel_feature_paths,
    draw_matheron_paths,
    gaussian_update,
    gen_kernel_features,
)
from gpytorch.kernels import Kernel
from torch import Tensor

from botorch_unknown_hypers.acquisition.device_search import DEFAULT_SEARCH, check_search
from botorch_unknown_hypers.acquisition.multistart import maximize_per_candidate
from botorch_unknown_hypers.candidates import CandidateSpec
from botorch_unknown_hypers.domains import BoxDomain
from botorch_unknown_hypers.models.candidate_gp import CandidateGP
from botorch_unknown_hypers.models.quiet_normal import quiet_paths
from botorch_unknown_hypers.rng import forked_rng

# Raw points per path and call when scoring raw samples: bounds the K x m x (features + n)
# feature matrices to about 2**22 entries.
_MAX_FEATURE_ENTRIES = 2**22


def check_pathwise_kernel(kernel: Kernel, dim: int) -> None:
    r"""Raise ``UnsupportedError`` unless BoTorch has random features for ``kernel``.

    Args:
        kernel: A (batched) GPyTorch kernel, e.g. the ``covar_module`` of a spec's ``build``.
        dim: Input dimension ``d``.
    """
    parameter = next(iter(kernel.parameters()), None)
    devices = [parameter.device] if parameter is not None and parameter.device.type == "cuda" else []
    try:
        with torch.random.fork_rng(devices=devices):  # a trial feature map: leave the global RNG alone
            gen_kernel_features(kernel, num_inputs=dim, num_outputs=2)
    except (NotImplementedError, UnsupportedError) as e:
        raise _unsupported(kernel, e) from None


def _unsupported(kernel: Kernel, error: Exception) -> UnsupportedError:
    return UnsupportedError(
        f"pathwise sampling needs random Fourier features of the kernel, which BoTorch has "
        f"for RBF, Matern and their ScaleKernel only; got {type(kernel).__name__} ({error})."
    )


def _iid_normal(shape: torch.Size, like: Tensor) -> Tensor:
    return torch.randn(shape, device=like.device, dtype=like.dtype)


def draw_candidate_paths(model: CandidateGP, num_features: int = 1024) -> MatheronPath:
    r"""One independent posterior sample path per candidate of a K-wide ``CandidateGP``.

    Args:
        model: A :class:`~botorch_unknown_hypers.models.candidate_gp.CandidateGP` with
            ``batch_shape = (K,)``.
        num_features: Random Fourier features of each prior path (even).

    Returns:
        A ``MatheronPath``: ``paths(X)`` with ``X`` of shape ``K x m x d`` (candidate
        ``k`` at ``X[k]``) or ``m x d`` (shared points) returns ``K x m`` values,
        differentiable in ``X``. Its randomness comes from the global RNG (fork and seed
        it, e.g. with :meth:`Policy.seeded`, for reproducible draws).
    """
    if not isinstance(model, CandidateGP) or model.batch_shape != torch.Size([model.num_candidates]):
        raise ValueError("model must be a K-wide CandidateGP (not a squeezed single-candidate view).")
    like = model.raw_train_X
    prior_sampler = partial(
        draw_kernel_feature_paths, num_features=num_features, weight_generator=partial(_iid_normal, like=like)
    )
    factor = model.factor  # the model's own Cholesky factors, when it has them: not factorised again
    update = gaussian_update if factor is None else partial(gaussian_update, scale_tril=factor.L)
    try:  # the draw itself refuses a kernel without random features (no trial draw: it reads the device)
        with torch.no_grad():
            paths = draw_matheron_paths(model, sample_shape=torch.Size(), prior_sampler=prior_sampler, update_strategy=update)
    except (NotImplementedError, UnsupportedError) as e:
        raise _unsupported(model.covar_module, e) from None
    return quiet_paths(paths, model.num_outputs)


def draw_candidate_prior_paths(
    candidates: CandidateSpec,
    dim: int,
    like: Tensor,
    input_transform: InputTransform | None = None,
    num_features: int = 1024,
) -> GeneralizedLinearPath:
    r"""One independent *prior* sample path per candidate (before any data).

    The construction of BoTorch's ``draw_kernel_feature_paths`` without a model:
    :math:`\tilde f_k(x) = m_k(z) + \phi_k(z)^\top w_k`, :math:`z` the transformed
    input, :math:`\phi_k` the random Fourier features of candidate ``k``'s kernel and
    :math:`w_k \sim \mathcal{N}(0, I)` i.i.d. across candidates.

    Args:
        candidates: The K candidates (a :class:`~botorch_unknown_hypers.candidates.CandidateSpec`).
        dim: Input dimension ``d``.
        like: A tensor with the paths' device and dtype.
        input_transform: Optional transform applied to the inputs (e.g. ``Normalize``), as
            a ``CandidateGP`` with that transform would.
        num_features: Random Fourier features per path (even).

    Returns:
        A path with the calling convention of :func:`draw_candidate_paths`.
    """
    mean_module, covar_module, _ = candidates.build(dim)
    check_pathwise_kernel(covar_module, dim)
    if input_transform is not None:
        input_transform.eval()
    with torch.no_grad():
        feature_map = gen_kernel_features(covar_module, num_inputs=dim, num_outputs=num_features)
        weight = _iid_normal(covar_module.batch_shape + torch.Size([feature_map.num_outputs]), like)
    return GeneralizedLinearPath(
        feature_map=feature_map, weight=weight, bias_module=mean_module, input_transform=input_transform
    )


def path_chunk(num_candidates: int, num_features: int, num_train: int) -> int:
    r"""Raw points per path and call that keep the ``K x m x (features + n)`` feature
    matrices of one call near ``2**22`` entries."""
    return max(1, _MAX_FEATURE_ENTRIES // max(1, num_candidates * (num_features + num_train)))


def sample_candidate_maxima(
    model: CandidateGP,
    bounds: Tensor | BoxDomain,
    num_restarts: int = 10,
    raw_samples: int = 512,
    num_features: int = 1024,
    options: dict[str, Any] | None = None,
    seed: int | None = None,
    search: str = DEFAULT_SEARCH,
) -> tuple[Tensor, Tensor]:
    r"""Draw one independent posterior path per candidate and maximise all K on the box.

    :func:`draw_candidate_paths` followed by
    :func:`~botorch_unknown_hypers.acquisition.optimize.maximize_per_candidate`.

    Args:
        model: A K-wide :class:`~botorch_unknown_hypers.models.candidate_gp.CandidateGP`.
        bounds: ``2 x d`` box, or a :class:`~botorch_unknown_hypers.domains.BoxDomain` (checked at
            its construction, so not again here).
        num_restarts, raw_samples, options: As
            :func:`~botorch_unknown_hypers.acquisition.optimize.maximize_per_candidate`.
        num_features: Random Fourier features of each prior path.
        seed: Makes the result deterministic: the paths are drawn with the global RNG
            forked and seeded by it, the raw points and restarts seeded by it. ``None``:
            the global RNG as it is.
        search: The refinement of the restarts, ``"scipy"`` or ``"torch"`` (as
            :func:`~botorch_unknown_hypers.acquisition.multistart.maximize_per_candidate`;
            with ``"torch"``, SciPy-only ``options`` keys are refused by name).

    Returns:
        ``(X, values)``: the ``K x d`` maximiser of each candidate's path and the ``K``
        maxima :math:`\max_x \tilde f_k(x)`.
    """
    like = model.raw_train_X
    if isinstance(bounds, BoxDomain):
        if bounds.dim != like.shape[-1]:
            raise ValueError(f"bounds must be a box of dimension {like.shape[-1]}, got {bounds.dim}.")
        bounds = bounds.bounds.to(like)
    else:
        bounds = torch.as_tensor(bounds).to(like)
        if bounds.shape != (2, like.shape[-1]) or (bounds[1] <= bounds[0]).any():
            raise ValueError(f"bounds must be 2 x {like.shape[-1]} with upper > lower.")
    check_search(search)
    if seed is None:
        paths = draw_candidate_paths(model, num_features)
    else:
        with forked_rng(seed, like.device):
            paths = draw_candidate_paths(model, num_features)
    chunk = path_chunk(model.num_candidates, num_features, like.shape[0])
    return maximize_per_candidate(
        paths, model.num_candidates, bounds, num_restarts, raw_samples, options, seed, chunk, search=search
    )
