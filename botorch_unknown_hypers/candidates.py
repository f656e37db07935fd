r"""Candidate hyperparameter sets: K fixed settings of a GP's hyperparameters.

All five papers in this package treat the GP hyperparameters as unknown and
keep a *finite* set of candidates :math:`\mathcal{U} = \{u_1, \dots, u_K\}`
(length scales, norms, kernels, priors). A rule then plays, balances,
eliminates or weighs the candidates; it never fits them. This module holds the
candidate *specifications*; :class:`~botorch_unknown_hypers.models.CandidateGP`
turns a specification into one batched GPyTorch model with
``batch_shape = (K,)``.

A specification implements the small :class:`CandidateSpec` protocol
(``len``, ``subset``, ``cat``, ``labels``, ``build``, ``to_dict``). The later
candidate families (periodic kernels, additive decompositions, prior means,
tabular priors) implement the same protocol, so a model and every acquisition
function see a K-wide object whatever the candidates are.

:class:`KernelCandidates` covers the stationary kernels used by every paper:

.. math::

    k_u(x, x') = s_u \, \kappa\big(\lVert (x - x') / \ell_u \rVert\big),
    \qquad y = f(x) + \varepsilon, \quad \varepsilon \sim \mathcal{N}(0, \sigma^2_u),

with :math:`\kappa` the Matern-1/2, 3/2, 5/2 or RBF correlation in GPyTorch's
convention (RBF: :math:`\exp(-r^2 / 2)`; the length-scale balancing paper
writes :math:`\exp(-\lVert x-x'\rVert^2/\theta^2)`, i.e.
:math:`\theta = \sqrt{2}\,\ell`), an isotropic (``K x 1``) or ARD (``K x d``)
length scale :math:`\ell_u`, output scale :math:`s_u` and noise variance
:math:`\sigma^2_u`.

:func:`geometric_ladder` builds the length-scale ladder
:math:`q(i) = \theta_0 r^{-i}` of the length-scale balancing paper
(Ziomek et al. 2024, Def. 3.1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from abc import ABC, abstractmethod
from typing import Any, ClassVar

import torch
from gpytorch.constraints import GreaterThan
from gpytorch.kernels import Kernel
from gpytorch.likelihoods import GaussianLikelihood, Likelihood
from gpytorch.means import ConstantMean, Mean, ZeroMean
from torch import Tensor

from botorch_unknown_hypers.host import host_values
from botorch_unknown_hypers.kernels import KERNELS, scale_kernel, set_constrained


NOISE_LOWER_BOUND = 1e-12
r"""Lower bound of every candidate likelihood's noise constraint."""


class CandidateSpec(ABC):
    r"""K fixed settings of one GP structure: the interface every candidate family implements.

    :class:`~botorch_unknown_hypers.models.CandidateGP` turns a spec into one batched GPyTorch
    model with ``batch_shape = (K,)`` (:meth:`build`); rules subset, extend, label, move and
    save candidate sets through the methods below, whatever the family.

    Attributes:
        spec_type: The ``"type"`` tag of :meth:`to_dict`, which :meth:`from_dict` dispatches on.
    """

    spec_type: ClassVar[str] = ""

    @abstractmethod
    def __len__(self) -> int:
        r"""The number of candidates K."""

    @abstractmethod
    def subset(self, indices: Tensor | list[int]) -> CandidateSpec:
        r"""The candidates at ``indices`` (a non-empty list, in that order)."""

    def candidate_dicts(self) -> list[dict[str, Any]]:
        r"""``[self.subset([u]).to_dict() for each u]``: each candidate alone, JSON-safe (the factor
        cache's identity of a candidate). Families may compute them without building the subsets."""
        return [self.subset([u]).to_dict() for u in range(len(self))]

    @abstractmethod
    def cat(self, other: CandidateSpec) -> CandidateSpec:
        r"""These candidates followed by ``other``'s (same family and structure)."""

    @abstractmethod
    def labels(self) -> list[str]:
        r"""One text label per candidate (logged as ``selected``)."""

    @abstractmethod
    def build(self, dim: int) -> tuple[Mean, Kernel, Likelihood]:
        r"""Batched mean, kernel and likelihood modules (``batch_shape = (K,)``, all frozen) for
        ``dim``-dimensional inputs."""

    @abstractmethod
    def to(self, device: torch.device | str | None = None, dtype: torch.dtype | None = None) -> CandidateSpec:
        r"""A copy on ``device`` with floating-point ``dtype``."""

    @abstractmethod
    def to_dict(self) -> dict[str, Any]:
        r"""JSON-safe representation with a ``"type"`` key (``ValueError`` if not serialisable)."""

    def noise_variances(self) -> Tensor:
        r"""The ``K`` observation-noise variances of the candidates."""
        raise ValueError(f"{type(self).__name__} does not state its noise variances.")

    def with_noise(self, variance: float) -> CandidateSpec:
        r"""The same candidates with every noise variance set to ``variance``."""
        raise ValueError(f"cannot set the noise of {type(self).__name__}; build it with the noise you need.")

    @classmethod
    def from_dict(
        cls, state: dict[str, Any], dtype: torch.dtype = torch.float64, device: torch.device | str | None = None
    ) -> CandidateSpec:
        r"""Inverse of :meth:`to_dict`, dispatching on ``state["type"]`` to the family with that
        :attr:`spec_type`; ``ValueError`` on an unknown type or a malformed dict."""
        kind = state.get("type") if isinstance(state, dict) else None
        families = {sub.spec_type: sub for sub in _subclasses(CandidateSpec) if sub.spec_type}
        family = families.get(kind) if isinstance(kind, str) else None
        if family is None or family.from_dict.__func__ is CandidateSpec.from_dict.__func__:
            raise ValueError(f"state['type'] must be one of {sorted(families)}, got {kind!r}.")
        return family.from_dict(state, dtype=dtype, device=device)


def _subclasses(cls: type) -> list[type]:
    out = []
    for sub in cls.__subclasses__():
        out += [sub, *_subclasses(sub)]
    return out


def fixed_likelihood(noise: Tensor) -> GaussianLikelihood:
    r"""A batched Gaussian likelihood with the ``K`` noise variances ``noise``, frozen.

    The noise constraint's lower bound is :data:`NOISE_LOWER_BOUND`: GPyTorch's default (1e-4)
    would reject the noise variance 1e-4 that the length-scale balancing paper's code fixes.
    """
    likelihood = GaussianLikelihood(
        batch_shape=torch.Size([noise.shape[0]]), noise_constraint=GreaterThan(NOISE_LOWER_BOUND)
    )
    likelihood.to(noise)
    if not bool((noise >= NOISE_LOWER_BOUND).all()):  # the constraint's bound, in one host read
        raise ValueError(f"noise must be >= {NOISE_LOWER_BOUND} (the likelihood's bound), got {noise.tolist()}.")
    set_constrained(likelihood.noise_covar, "noise", noise.unsqueeze(-1))
    likelihood.requires_grad_(False)
    return likelihood


def fixed_mean(mean_constant: Tensor | None, num: int, like: Tensor) -> Mean:
    r"""A batched zero mean (``mean_constant=None``) or constant mean of ``K`` values, frozen."""
    batch_shape = torch.Size([num])
    if mean_constant is None:
        mean: Mean = ZeroMean(batch_shape=batch_shape)
    else:
        mean = ConstantMean(batch_shape=batch_shape).to(like)
        mean.constant = mean_constant
    mean.requires_grad_(False)
    return mean


def _as_vector(value: float | Tensor, num: int, like: Tensor) -> Tensor:
    t = torch.as_tensor(value, dtype=like.dtype, device=like.device)
    return t.expand(num).clone() if t.ndim == 0 else t


def candidate_vector(value: float | Tensor, name: str, num: int, like: Tensor, positive: bool = True) -> Tensor:
    r"""A scalar or ``K`` values as a ``K``-dim tensor like ``like``, finite (and positive).

    Raises:
        ValueError: naming ``name``, for a wrong shape, a non-finite or a non-positive value.
    """
    t = _as_vector(value, num, like)
    if t.shape != (num,) or not torch.isfinite(t).all() or (positive and (t <= 0).any()):
        kind = "positive finite" if positive else "finite"
        raise ValueError(f"{name} must be a {kind} scalar or {num} values, got {t.tolist()}.")
    return t


@dataclass(frozen=True)
class KernelCandidates(CandidateSpec):
    r"""K settings of (length scale, output scale, noise, constant mean) for one kernel.

    Args:
        lengthscale: ``K x 1`` (isotropic) or ``K x d`` (ARD) positive length
            scales; a ``K``-dim tensor is read as isotropic.
        outputscale: ``K``-dim positive output scales :math:`s_u` (or a scalar).
        noise: ``K``-dim positive noise variances :math:`\sigma_u^2` (or a scalar).
        kernel: One of ``matern12``, ``matern32``, ``matern52``, ``rbf``.
        mean_constant: Optional ``K``-dim constant prior means; ``None`` is the
            zero mean all papers use.

    Example:
        >>> cands = KernelCandidates.from_lengthscales(torch.tensor([0.5, 0.2, 0.1]))
        >>> len(cands), cands.labels()
        (3, ['0.5', '0.2', '0.1'])
    """

    spec_type: ClassVar[str] = "kernel"

    lengthscale: Tensor
    outputscale: Tensor
    noise: Tensor
    kernel: str = "matern52"
    mean_constant: Tensor | None = None

    def __post_init__(self) -> None:
        ls = torch.as_tensor(self.lengthscale)
        if not ls.is_floating_point():
            ls = ls.to(torch.get_default_dtype())
        if ls.ndim == 1:
            ls = ls.unsqueeze(-1)
        if ls.ndim != 2:
            raise ValueError(
                f"lengthscale must be K x 1 or K x d, got shape {tuple(ls.shape)}."
            )
        num = ls.shape[0]
        if num == 0:
            raise ValueError("lengthscale: the candidate set is empty (K = 0).")
        if self.kernel not in KERNELS:
            raise ValueError(
                f"kernel must be one of {sorted(KERNELS)}, got {self.kernel!r}."
            )
        fields = {name: _as_vector(getattr(self, name), num, ls) for name in ("outputscale", "noise")}
        mean = None if self.mean_constant is None else _as_vector(self.mean_constant, num, ls)
        shapes_ok = all(t.shape == (num,) for t in (*fields.values(), *([mean] if mean is not None else [])))
        valid = None
        if shapes_ok:  # every value check in one device read
            positive = torch.cat([ls.reshape(-1), fields["outputscale"], fields["noise"]])
            valid = torch.isfinite(positive).all() & (positive > 0).all()
            if mean is not None:
                valid = valid & torch.isfinite(mean).all()
        if valid is None or not bool(valid):  # find the culprit, for the message
            if not torch.isfinite(ls).all() or (ls <= 0).any():
                raise ValueError("lengthscale must be finite and strictly positive.")
            for name, value in (*fields.items(), ("mean_constant", mean)):
                if value is not None:
                    candidate_vector(value, name, num, ls, positive=name != "mean_constant")
        object.__setattr__(self, "lengthscale", ls)
        object.__setattr__(self, "outputscale", fields["outputscale"])
        object.__setattr__(self, "noise", fields["noise"])
        object.__setattr__(self, "mean_constant", mean)

    @classmethod
    def from_lengthscales(
        cls,
        lengthscale: Tensor,
        kernel: str = "matern52",
        outputscale: float | Tensor = 1.0,
        noise: float | Tensor = 1e-4,
        mean_constant: float | Tensor | None = None,
    ) -> KernelCandidates:
        r"""Candidates that differ in length scale only (the length-scale papers' setting)."""
        return cls(
            lengthscale=lengthscale,
            outputscale=outputscale,
            noise=noise,
            kernel=kernel,
            mean_constant=mean_constant,
        )

    def __len__(self) -> int:
        return self.lengthscale.shape[0]

    @property
    def ard(self) -> bool:
        return self.lengthscale.shape[-1] > 1

    @property
    def nu(self) -> float | None:
        return KERNELS[self.kernel]

    def to(self, device: torch.device | str | None = None, dtype: torch.dtype | None = None) -> KernelCandidates:
        r"""These candidates on ``device`` in ``dtype``; ``self`` when nothing moves (as ``Tensor.to``),
        without checking the values again."""
        def mv(t: Tensor | None) -> Tensor | None:
            return None if t is None else t.to(device=device, dtype=dtype)

        here = self.lengthscale
        if (dtype is None or dtype == here.dtype) and (device is None or torch.device(device) == here.device):
            return self
        return KernelCandidates(
            lengthscale=mv(self.lengthscale),
            outputscale=mv(self.outputscale),
            noise=mv(self.noise),
            kernel=self.kernel,
            mean_constant=mv(self.mean_constant),
        )

    def subset(self, indices: Tensor | list[int]) -> KernelCandidates:
        r"""The candidates at ``indices`` (in that order)."""
        idx = torch.as_tensor(indices, dtype=torch.long, device=self.lengthscale.device)
        if idx.ndim != 1 or idx.numel() == 0:
            raise ValueError("indices must be a non-empty 1-d list of candidate indices.")
        if isinstance(indices, (list, tuple)):  # checked on the host, no device read
            out_of_range = not all(0 <= int(i) < len(self) for i in indices)
        else:
            out_of_range = bool(((idx < 0) | (idx >= len(self))).any())
        if out_of_range:
            raise ValueError(f"indices must lie in [0, {len(self) - 1}], got {idx.tolist()}.")
        # rows of checked candidates are valid: built without __post_init__'s host read
        out = object.__new__(KernelCandidates)
        for name in ("lengthscale", "outputscale", "noise", "mean_constant"):
            value = getattr(self, name)
            object.__setattr__(out, name, None if value is None else value[idx])
        object.__setattr__(out, "kernel", self.kernel)
        return out

    def cat(self, other: CandidateSpec) -> KernelCandidates:
        r"""These candidates followed by ``other``'s (same kernel and length-scale layout)."""
        if not isinstance(other, KernelCandidates):
            raise ValueError(
                f"other must be KernelCandidates to share one batched model, got {type(other).__name__}; "
                "group different structures with GroupedCandidateModel."
            )
        if other.kernel != self.kernel:
            raise ValueError(f"other.kernel {other.kernel!r} differs from {self.kernel!r}.")
        if other.lengthscale.shape[-1] != self.lengthscale.shape[-1]:
            raise ValueError("other's length scales must have the same number of columns.")
        if (self.mean_constant is None) != (other.mean_constant is None):
            raise ValueError("either both or neither candidate sets must set mean_constant.")
        other = other.to(device=self.lengthscale.device, dtype=self.lengthscale.dtype)
        return KernelCandidates(
            lengthscale=torch.cat([self.lengthscale, other.lengthscale]),
            outputscale=torch.cat([self.outputscale, other.outputscale]),
            noise=torch.cat([self.noise, other.noise]),
            kernel=self.kernel,
            mean_constant=(
                None
                if self.mean_constant is None
                else torch.cat([self.mean_constant, other.mean_constant])
            ),
        )

    def labels(self) -> list[str]:
        r"""Text label per candidate: the length scale (``;``-joined when ARD)."""
        return [";".join(f"{v:.6g}" for v in row) for row in self.lengthscale.tolist()]

    def build(self, dim: int) -> tuple[Mean, Kernel, Likelihood]:
        r"""Batched GPyTorch mean, kernel and likelihood with these fixed hyperparameters.

        Args:
            dim: Input dimension ``d`` (checked against ARD length scales).

        Returns:
            ``(mean_module, covar_module, likelihood)``, each with ``batch_shape = (K,)``
            and with every hyperparameter frozen (``requires_grad = False``).
        """
        if self.ard and self.lengthscale.shape[-1] != dim:
            raise ValueError(
                f"lengthscale has {self.lengthscale.shape[-1]} columns but the inputs have d = {dim}."
            )
        covar = scale_kernel(self.kernel, dim if self.ard else None, torch.Size([len(self)]))
        covar.to(self.lengthscale)
        set_constrained(covar.base_kernel, "lengthscale", self.lengthscale.unsqueeze(-2))  # checked positive
        set_constrained(covar, "outputscale", self.outputscale)
        covar.requires_grad_(False)
        return fixed_mean(self.mean_constant, len(self), self.lengthscale), covar, fixed_likelihood(self.noise)

    def noise_variances(self) -> Tensor:
        return self.noise

    def with_noise(self, variance: float) -> KernelCandidates:
        return replace(self, noise=torch.full_like(self.noise, float(variance)))

    def candidate_dicts(self) -> list[dict[str, Any]]:
        r"""Each candidate's :meth:`to_dict` alone, from one copy of the values to the host (the
        same dicts as ``subset([u]).to_dict()``, without building K sets)."""
        whole = self.to_dict()
        fields = ("lengthscale", "outputscale", "noise") + (("mean_constant",) if self.mean_constant is not None else ())
        return [{**whole, **{name: [whole[name][u]] for name in fields}} for u in range(len(self))]

    def to_dict(self) -> dict[str, Any]:
        r"""JSON-safe representation (lists of floats), from one copy of the values to the host."""
        parts = [self.lengthscale, self.outputscale, self.noise] + ([] if self.mean_constant is None else [self.mean_constant])
        lengthscale, *rest = host_values(*parts)
        K, width = len(self), (self.lengthscale.shape[-1] if self.lengthscale.ndim == 2 else 1)
        if self.lengthscale.ndim == 2:
            lengthscale = [lengthscale[u * width : (u + 1) * width] for u in range(K)]
        return {
            "type": "kernel",
            "kernel": self.kernel,
            "lengthscale": lengthscale,
            "outputscale": rest[0],
            "noise": rest[1],
            "mean_constant": rest[2] if self.mean_constant is not None else None,
        }

    @classmethod
    def from_dict(cls, state: dict[str, Any], dtype: torch.dtype = torch.float64, device: torch.device | str | None = None) -> KernelCandidates:
        r"""Inverse of :meth:`to_dict`; raises ``ValueError`` on a malformed dict."""
        if not isinstance(state, dict) or state.get("type") != cls.spec_type:
            raise ValueError("state is not a KernelCandidates dict (missing type='kernel').")
        if "kernel" not in state:
            raise ValueError("state is missing the key 'kernel'.")
        tensors = tensor_fields(state, ("lengthscale", "outputscale", "noise"), dtype, device)
        tensors.update(tensor_fields(state, ("mean_constant",), dtype, device, optional=True))
        return cls(kernel=str(state["kernel"]), **tensors)


def tensor_fields(
    state: dict[str, Any],
    keys: tuple[str, ...],
    dtype: torch.dtype,
    device: torch.device | str | None,
    optional: bool = False,
) -> dict[str, Tensor]:
    r"""``state[key]`` (nested lists of numbers) as tensors, for the ``from_dict`` of candidate sets.

    ``optional`` keys may be missing or ``None`` (then left out). ``ValueError`` names a missing
    or malformed key.
    """
    out = {}
    for key in keys:
        value = state.get(key)
        if value is None:
            if optional:
                continue
            raise ValueError(f"state is missing the key {key!r}.")
        # torch.tensor raises TypeError on strings and ValueError on ragged lists.
        try:
            out[key] = torch.tensor(value, dtype=dtype, device=device)
        except (TypeError, ValueError, RuntimeError) as e:
            raise ValueError(f"state[{key!r}] is not a (nested) list of numbers: {e}") from None
    return out


def geometric_ladder(theta0: float, ratio: float, num: int, *, dtype: torch.dtype = torch.float64, device: torch.device | str | None = None) -> Tensor:
    r"""The ladder :math:`q(i) = \theta_0 r^{-i}`, :math:`i = 0, \dots, num - 1`.

    Ziomek et al. 2024, Def. 3.1 use :math:`r = e^{1/d}`; the authors' code uses
    :math:`r = e^{1/(d + 2\nu)}` for Matern-:math:`\nu`.

    Args:
        theta0: The largest length scale :math:`\theta_0 > 0`.
        ratio: :math:`r > 1`.
        num: Number of rungs, at least 1.

    Returns:
        A ``num``-dim decreasing tensor.
    """
    if not (theta0 > 0 and math.isfinite(theta0)):
        raise ValueError(f"theta0 must be positive and finite, got {theta0}.")
    if not (ratio > 1 and math.isfinite(ratio)):
        raise ValueError(f"ratio must be finite and > 1, got {ratio}.")
    if num < 1:
        raise ValueError(f"num must be at least 1, got {num}.")
    i = torch.arange(num, dtype=dtype, device=device)
    return theta0 * torch.as_tensor(ratio, dtype=dtype, device=device).pow(-i)
