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
from array import array
from dataclasses import dataclass
from abc import ABC, abstractmethod
from typing import Any, ClassVar

import torch
from gpytorch.constraints import GreaterThan
from gpytorch.kernels import Kernel
from gpytorch.likelihoods import GaussianLikelihood, Likelihood
from gpytorch.means import ConstantMean, Mean, ZeroMean
from torch import Tensor

from botorch_unknown_hypers.host import as_device_tensor, host_tensor, host_values, to_device
from botorch_unknown_hypers.kernels import KERNELS, check_kernel, scale_kernel, set_constrained
from botorch_unknown_hypers.shared_constraints import ModuleConstraints


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
    def build(self, dim: int, constraints: ModuleConstraints | None = None) -> tuple[Mean, Kernel, Likelihood]:
        r"""Batched mean, kernel and likelihood modules (``batch_shape = (K,)``, all frozen) for
        ``dim``-dimensional inputs; ``constraints``: those of modules already built on the same
        device and dtype, shared instead of built again (:mod:`~botorch_unknown_hypers.shared_constraints`)."""

    @abstractmethod
    def to(self, device: torch.device | str | None = None, dtype: torch.dtype | None = None) -> CandidateSpec:
        r"""A copy on ``device`` with floating-point ``dtype``."""

    @abstractmethod
    def to_dict(self) -> dict[str, Any]:
        r"""JSON-safe representation with a ``"type"`` key (``ValueError`` if not serialisable)."""

    def noise_variances(self) -> Tensor:
        r"""The ``K`` observation-noise variances of the candidates."""
        raise ValueError(f"{type(self).__name__} does not state its noise variances.")

    def noise_values(self) -> list[float]:
        r"""The ``K`` noise variances as Python floats (:meth:`noise_variances` copied to the host;
        families that keep their values on the host give them without a read)."""
        return self.noise_variances().tolist()

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


def fixed_likelihood(noise: Tensor, host_noise: list[float] | None = None, constraint: GreaterThan | None = None) -> GaussianLikelihood:
    r"""A batched Gaussian likelihood with the ``K`` noise variances ``noise``, frozen.

    The noise constraint's lower bound is :data:`NOISE_LOWER_BOUND`: GPyTorch's default (1e-4)
    would reject the noise variance 1e-4 that the length-scale balancing paper's code fixes.
    ``host_noise``, the same values as Python floats when the caller holds them, is checked
    against the bound instead of ``noise`` (no read of the device). ``constraint``: a
    ``GreaterThan(NOISE_LOWER_BOUND)`` already built on ``noise``'s device and dtype, shared.
    """
    likelihood = GaussianLikelihood(
        batch_shape=torch.Size([noise.shape[0]]),
        noise_constraint=GreaterThan(NOISE_LOWER_BOUND) if constraint is None else constraint,
    )
    to_device(likelihood, noise)
    if host_noise is not None:
        low = not all(v >= NOISE_LOWER_BOUND for v in host_noise)
    else:
        low = not bool((noise >= NOISE_LOWER_BOUND).all())  # the constraint's bound, in one host read
    if low:
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
        mean = to_device(ConstantMean(batch_shape=batch_shape), like)
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


HOST_FIELDS = ("lengthscale", "outputscale", "noise", "mean_constant")
r"""The fields of :class:`KernelCandidates` whose values it may keep on the host as well."""


def host_rounded(values: list[float], dtype: torch.dtype) -> list[float] | None:
    r"""``values`` as a tensor of ``dtype`` holds them, as Python floats, computed on the host (the
    conversion rounds to nearest, as ``Tensor.to`` does); ``None`` for a dtype other than
    ``float32`` and ``float64``."""
    if dtype == torch.float64:
        return [float(v) for v in values]
    if dtype == torch.float32:
        return array("f", values).tolist()
    return None


def _rows(flat: list[float], width: int) -> list[list[float]]:
    r"""Row-major ``flat`` values as rows of ``width`` (the layout of a ``K x d`` length scale)."""
    return [flat[start : start + width] for start in range(0, len(flat), width)]


def _number(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{name} must hold numbers, got {value!r}.")
    return float(value)


def _host_vector(value: Any, name: str, num: int, dtype: torch.dtype, positive: bool = True) -> list[float]:
    r"""A scalar or ``num`` numbers as ``num`` floats rounded to ``dtype``, checked finite (and
    positive) on the host, with :func:`candidate_vector`'s message."""
    values = [_number(value, name)] * num if not isinstance(value, (list, tuple)) else [_number(v, name) for v in value]
    rounded = host_rounded(values, dtype)
    if len(values) != num or not all(math.isfinite(v) and (v > 0 or not positive) for v in rounded):
        kind = "positive finite" if positive else "finite"
        raise ValueError(f"{name} must be a {kind} scalar or {num} values, got {values}.")
    return rounded


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

    A set also keeps its values on the host, as Python floats, once they are known there: given
    as numbers (:meth:`from_values`), carried through :meth:`subset`, :meth:`cat`, :meth:`to` and
    :meth:`with_noise`, or copied once on the first :meth:`to_dict`. :meth:`to_dict`,
    :meth:`labels` and :meth:`noise_values` then read no device value (each read is a
    synchronisation on CUDA). The tensors are never written, so the two stay equal.

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
        check_kernel(self.kernel)
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

    @classmethod
    def from_values(
        cls,
        lengthscale: list[float] | list[list[float]],
        kernel: str = "matern52",
        outputscale: float | list[float] = 1.0,
        noise: float | list[float] = 1e-4,
        mean_constant: float | list[float] | None = None,
        *,
        dtype: torch.dtype = torch.float64,
        device: torch.device | str | None = None,
    ) -> KernelCandidates:
        r"""Candidates from Python numbers, checked on the host (no read of the device): ``K``
        length scales (isotropic) or ``K`` rows of ``d`` (ARD), and scalars or ``K`` values of the
        rest, as :class:`KernelCandidates` would take them as tensors of ``dtype`` on ``device``."""
        if host_rounded([], dtype) is None:  # a dtype whose rounding is not computed on the host
            tensor = lambda v: None if v is None else torch.tensor(v, dtype=dtype, device=device)
            return cls(tensor(lengthscale), tensor(outputscale), tensor(noise), kernel, tensor(mean_constant))
        if not isinstance(lengthscale, (list, tuple)) or not lengthscale:
            raise ValueError(f"lengthscale must be a non-empty list of K values or K rows, got {lengthscale!r}.")
        rows = [list(r) if isinstance(r, (list, tuple)) else [r] for r in lengthscale]
        if len({len(r) for r in rows}) != 1 or not rows[0]:
            raise ValueError(f"lengthscale must be K x 1 or K x d, got rows of lengths {[len(r) for r in rows]}.")
        check_kernel(kernel)
        flat = host_rounded([_number(v, "lengthscale") for r in rows for v in r], dtype)
        if not all(math.isfinite(v) and v > 0 for v in flat):
            raise ValueError("lengthscale must be finite and strictly positive.")
        num, width = len(rows), len(rows[0])
        host = {
            "lengthscale": _rows(flat, width),
            "outputscale": _host_vector(outputscale, "outputscale", num, dtype),
            "noise": _host_vector(noise, "noise", num, dtype),
            "mean_constant": None if mean_constant is None else _host_vector(mean_constant, "mean_constant", num, dtype, positive=False),
        }
        tensors = {name: None if v is None else host_tensor(v, dtype, device) for name, v in host.items()}
        return cls._assemble(kernel, tensors, host)

    @classmethod
    def _assemble(cls, kernel: str, tensors: dict[str, Tensor | None], host: dict[str, Any] | None) -> KernelCandidates:
        r"""A set of values already checked, without :meth:`__post_init__`'s device read, keeping
        ``host`` (the values of :data:`HOST_FIELDS` as Python floats, or ``None``)."""
        out = object.__new__(cls)
        for name in HOST_FIELDS:
            object.__setattr__(out, name, tensors[name])
        object.__setattr__(out, "kernel", kernel)
        object.__setattr__(out, "_host", host)
        return out

    def _host_values(self) -> dict[str, Any]:
        r"""The values of :data:`HOST_FIELDS` on the host: kept, or copied once (and kept)."""
        host = self.__dict__.get("_host")
        if host is None:
            parts = [self.lengthscale, self.outputscale, self.noise] + ([] if self.mean_constant is None else [self.mean_constant])
            flat, outputscale, noise, *mean = host_values(*parts)
            width = self.lengthscale.shape[-1]
            host = {
                "lengthscale": _rows(flat, width),
                "outputscale": outputscale,
                "noise": noise,
                "mean_constant": mean[0] if mean else None,
            }
            object.__setattr__(self, "_host", host)
        return host

    def _moved_host(self, dtype: torch.dtype) -> dict[str, Any] | None:
        host = self.__dict__.get("_host")
        if host is None or host_rounded([], dtype) is None:
            return None
        rounded = {name: None if v is None else host_rounded(v, dtype) for name, v in host.items() if name != "lengthscale"}
        width = self.lengthscale.shape[-1]
        flat = host_rounded([v for row in host["lengthscale"] for v in row], dtype)
        return {"lengthscale": _rows(flat, width), **rounded}

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
        tensors = {name: mv(getattr(self, name)) for name in HOST_FIELDS}
        if not (dtype is None or dtype == here.dtype or (here.dtype, dtype) == (torch.float32, torch.float64)):
            # a narrowing cast may overflow or underflow: check the values again
            return KernelCandidates(kernel=self.kernel, **tensors)
        return self._assemble(self.kernel, tensors, self._moved_host(dtype or here.dtype))

    def subset(self, indices: Tensor | list[int]) -> KernelCandidates:
        r"""The candidates at ``indices`` (in that order)."""
        idx = as_device_tensor(indices, torch.long, self.lengthscale.device)
        if idx.ndim != 1 or idx.numel() == 0:
            raise ValueError("indices must be a non-empty 1-d list of candidate indices.")
        if isinstance(indices, (list, tuple)):  # checked on the host, no device read
            out_of_range = not all(0 <= int(i) < len(self) for i in indices)
        else:
            out_of_range = bool(((idx < 0) | (idx >= len(self))).any())
        if out_of_range:
            raise ValueError(f"indices must lie in [0, {len(self) - 1}], got {idx.tolist()}.")
        # rows of checked candidates are valid: built without __post_init__'s host read
        tensors = {name: None if (value := getattr(self, name)) is None else value[idx] for name in HOST_FIELDS}
        host = self.__dict__.get("_host")
        if host is not None and isinstance(indices, (list, tuple)):
            host = {name: None if v is None else [v[int(i)] for i in indices] for name, v in host.items()}
        else:
            host = None
        return self._assemble(self.kernel, tensors, host)

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
        # both sets were checked, and a cast that could break a value checks it again in ``to``
        tensors = {
            name: None if getattr(self, name) is None else torch.cat([getattr(self, name), getattr(other, name)])
            for name in HOST_FIELDS
        }
        mine, theirs = self.__dict__.get("_host"), other.__dict__.get("_host")
        host = None
        if mine is not None and theirs is not None:
            host = {name: None if v is None else v + theirs[name] for name, v in mine.items()}
        return self._assemble(self.kernel, tensors, host)

    def labels(self) -> list[str]:
        r"""Text label per candidate: the length scale (``;``-joined when ARD)."""
        return [";".join(f"{v:.6g}" for v in row) for row in self._host_values()["lengthscale"]]

    def build(self, dim: int, constraints: ModuleConstraints | None = None) -> tuple[Mean, Kernel, Likelihood]:
        r"""Batched GPyTorch mean, kernel and likelihood with these fixed hyperparameters.

        Args:
            dim: Input dimension ``d`` (checked against ARD length scales).
            constraints: Constraints of modules already built on this device and dtype, shared.

        Returns:
            ``(mean_module, covar_module, likelihood)``, each with ``batch_shape = (K,)``
            and with every hyperparameter frozen (``requires_grad = False``).
        """
        if self.ard and self.lengthscale.shape[-1] != dim:
            raise ValueError(
                f"lengthscale has {self.lengthscale.shape[-1]} columns but the inputs have d = {dim}."
            )
        positive, bound = (None, None) if constraints is None else constraints
        covar = scale_kernel(self.kernel, dim if self.ard else None, torch.Size([len(self)]), positive)
        to_device(covar, self.lengthscale)
        set_constrained(covar.base_kernel, "lengthscale", self.lengthscale.unsqueeze(-2))  # checked positive
        set_constrained(covar, "outputscale", self.outputscale)
        covar.requires_grad_(False)
        host = self.__dict__.get("_host")
        likelihood = fixed_likelihood(self.noise, None if host is None else host["noise"], bound)
        return fixed_mean(self.mean_constant, len(self), self.lengthscale), covar, likelihood

    def noise_variances(self) -> Tensor:
        return self.noise

    def noise_values(self) -> list[float]:
        return list(self._host_values()["noise"])

    def with_noise(self, variance: float) -> KernelCandidates:
        dtype = self.noise.dtype
        if host_rounded([], dtype) is None:
            return KernelCandidates(self.lengthscale, self.outputscale, torch.full_like(self.noise, float(variance)), self.kernel, self.mean_constant)
        noise = _host_vector(variance, "noise", len(self), dtype)
        tensors = {name: getattr(self, name) for name in HOST_FIELDS}
        tensors["noise"] = torch.full_like(self.noise, noise[0])
        host = self.__dict__.get("_host")
        return self._assemble(self.kernel, tensors, None if host is None else {**host, "noise": noise})

    def candidate_dicts(self) -> list[dict[str, Any]]:
        r"""Each candidate's :meth:`to_dict` alone, from one copy of the values to the host (the
        same dicts as ``subset([u]).to_dict()``, without building K sets)."""
        whole = self.to_dict()
        fields = ("lengthscale", "outputscale", "noise") + (("mean_constant",) if self.mean_constant is not None else ())
        return [{**whole, **{name: [whole[name][u]] for name in fields}} for u in range(len(self))]

    def to_dict(self) -> dict[str, Any]:
        r"""JSON-safe representation (lists of floats): the values kept on the host, or one copy."""
        host = self._host_values()
        mean = host["mean_constant"]
        return {
            "type": "kernel",
            "kernel": self.kernel,
            "lengthscale": [list(row) for row in host["lengthscale"]],
            "outputscale": list(host["outputscale"]),
            "noise": list(host["noise"]),
            "mean_constant": None if mean is None else list(mean),
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
