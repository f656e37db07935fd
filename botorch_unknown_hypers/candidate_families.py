r"""Candidate families beyond length scales: periods, additive decompositions, prior means.

Hyperparameter elimination (Ziomek, Adachi, Osborne, "Beyond Lengthscales", Sec. 2
and 7) treats *any* hyperparameter as a member of a finite set :math:`U`. Each
family below implements the :class:`~botorch_unknown_hypers.candidates.CandidateSpec`
protocol and builds **one** batched GPyTorch model over its K members, so a
candidate set of one structure costs one batched posterior call; sets of
different structure sit behind :class:`~botorch_unknown_hypers.models.GroupedCandidateModel`.

- :class:`PeriodicCandidates`: GPyTorch's periodic kernel
  :math:`k(x, x') = s\exp\big(-2\sum_i \sin^2(\pi|x_i - x'_i|/p)/\ell\big)` with a
  per-candidate period :math:`p` and length scale :math:`\ell` (unit-cube units).
- :class:`AdditiveCandidates`: a partition :math:`g` of the input dimensions per
  candidate, :math:`k_g(x, x') = \frac{s}{|g|}\sum_{c \in g} \kappa(\lVert x_c - x'_c\rVert/\ell)`
  with :math:`\kappa` a Matern or RBF correlation. Dividing by the number of groups
  keeps :math:`k(x, x) = s`, the :math:`k \le 1` assumption of the analysis
  (the paper does not say how the groups are weighted; ``normalize=False`` gives the plain sum). All partitions are
  batched through a ``K x d x G`` dimension-to-group mask.
- :class:`MeanFunctionCandidates`: any candidate set with a per-candidate prior mean
  :math:`\mu_0^u(x)` from a batched function (posterior
  :math:`\mu^u_t(x) = \mu^u_0(x) + k^\top(K + \sigma^2 I)^{-1}(y - \mu^u_0(X))`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, ClassVar

import torch
from gpytorch.constraints import Positive
from gpytorch.kernels import Kernel, PeriodicKernel, ScaleKernel
from gpytorch.likelihoods import Likelihood
from gpytorch.means import Mean
from torch import Tensor

from botorch_unknown_hypers.candidates import (
    CandidateSpec,
    candidate_vector,
    fixed_likelihood,
    fixed_mean,
    tensor_fields,
)
from botorch_unknown_hypers.kernels import KERNELS, check_kernel, correlation
from botorch_unknown_hypers.shared_constraints import ModuleConstraints

@dataclass(frozen=True)
class PeriodicCandidates(CandidateSpec):
    r"""K settings of (period, length scale, output scale, noise) of a periodic kernel.

    Args:
        period: ``K`` positive periods :math:`p` (unit-cube units).
        lengthscale: ``K`` positive length scales (scalar broadcasts).
        outputscale, noise: ``K`` positive values (scalars broadcast).
        mean_constant: Optional ``K`` constant prior means.
    """

    spec_type: ClassVar[str] = "periodic"

    period: Tensor
    lengthscale: float | Tensor = 1.0
    outputscale: float | Tensor = 1.0
    noise: float | Tensor = 1e-4
    mean_constant: Tensor | None = None

    def __post_init__(self) -> None:
        period = torch.as_tensor(self.period)
        if not period.is_floating_point():
            period = period.to(torch.get_default_dtype())
        period = period.reshape(-1)
        num = period.shape[0]
        if num == 0:
            raise ValueError("period: the candidate set is empty (K = 0).")
        object.__setattr__(self, "period", candidate_vector(period, "period", num, period))
        for name in ("lengthscale", "outputscale", "noise"):
            object.__setattr__(self, name, candidate_vector(getattr(self, name), name, num, period))
        if self.mean_constant is not None:
            object.__setattr__(
                self, "mean_constant", candidate_vector(self.mean_constant, "mean_constant", num, period, positive=False)
            )

    def __len__(self) -> int:
        return self.period.shape[0]

    def _fields(self) -> dict[str, Tensor | None]:
        return {
            "period": self.period,
            "lengthscale": self.lengthscale,
            "outputscale": self.outputscale,
            "noise": self.noise,
            "mean_constant": self.mean_constant,
        }

    def to(self, device: torch.device | str | None = None, dtype: torch.dtype | None = None) -> PeriodicCandidates:
        return PeriodicCandidates(
            **{k: None if v is None else v.to(device=device, dtype=dtype) for k, v in self._fields().items()}
        )

    def subset(self, indices: Tensor | list[int]) -> PeriodicCandidates:
        idx = torch.as_tensor(indices, dtype=torch.long, device=self.period.device)
        if idx.ndim != 1 or idx.numel() == 0 or (idx < 0).any() or (idx >= len(self)).any():
            raise ValueError(f"indices must be a non-empty list in [0, {len(self) - 1}], got {idx.tolist()}.")
        return PeriodicCandidates(**{k: None if v is None else v[idx] for k, v in self._fields().items()})

    def cat(self, other: CandidateSpec) -> PeriodicCandidates:
        if not isinstance(other, PeriodicCandidates):
            raise ValueError(f"other must be PeriodicCandidates, got {type(other).__name__}.")
        if (self.mean_constant is None) != (other.mean_constant is None):
            raise ValueError("either both or neither candidate sets must set mean_constant.")
        o = other.to(device=self.period.device, dtype=self.period.dtype)._fields()
        return PeriodicCandidates(
            **{k: None if v is None else torch.cat([v, o[k]]) for k, v in self._fields().items()}
        )

    def labels(self) -> list[str]:
        return [f"p={p:.4g};l={ls:.4g}" for p, ls in zip(self.period.tolist(), self.lengthscale.tolist())]

    def build(self, dim: int, constraints: ModuleConstraints | None = None) -> tuple[Mean, Kernel, Likelihood]:
        batch_shape = torch.Size([len(self)])
        positive, bound = (Positive(), None) if constraints is None else constraints
        base = PeriodicKernel(batch_shape=batch_shape, lengthscale_constraint=positive, period_length_constraint=positive)
        covar = ScaleKernel(base, batch_shape=batch_shape, outputscale_constraint=positive).to(self.period)
        base.lengthscale = self.lengthscale.view(-1, 1, 1)
        base.period_length = self.period.view(-1, 1, 1)
        covar.outputscale = self.outputscale
        covar.requires_grad_(False)
        return fixed_mean(self.mean_constant, len(self), self.period), covar, fixed_likelihood(self.noise, constraint=bound)

    def noise_variances(self) -> Tensor:
        return self.noise

    def with_noise(self, variance: float) -> PeriodicCandidates:
        return replace(self, noise=torch.full_like(self.noise, float(variance)))

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.spec_type, **{k: None if v is None else v.tolist() for k, v in self._fields().items()}}

    @classmethod
    def from_dict(
        cls, state: dict[str, Any], dtype: torch.dtype = torch.float64, device: torch.device | str | None = None
    ) -> PeriodicCandidates:
        r"""Inverse of :meth:`to_dict`; ``ValueError`` on a malformed dict."""
        if not isinstance(state, dict) or state.get("type") != cls.spec_type:
            raise ValueError("state is not a PeriodicCandidates dict (missing type='periodic').")
        tensors = tensor_fields(state, ("period", "lengthscale", "outputscale", "noise"), dtype, device)
        return cls(**tensors, **tensor_fields(state, ("mean_constant",), dtype, device, optional=True))


class AdditiveDecompositionKernel(Kernel):
    r"""Batched additive kernel: candidate :math:`k` sums a base correlation over its groups.

    .. math::

        k_k(x, x') = \frac{1}{G_k}\sum_{g=1}^{G_k} \kappa\Big(\sqrt{\textstyle\sum_i M_{kig}(x_i - x'_i)^2}/\ell_k\Big)

    with :math:`M_k` the ``d x G`` dimension-to-group mask of candidate :math:`k` and
    :math:`G_k` its number of (non-empty) groups (the factor :math:`1/G_k` only when
    ``normalize``).
    """

    has_lengthscale = False

    def __init__(self, masks: Tensor, lengthscale: Tensor, nu: float | None, normalize: bool = True) -> None:
        super().__init__(batch_shape=torch.Size([masks.shape[0]]))
        self.register_buffer("masks", masks)  # K x d x G
        self.register_buffer("group_active", (masks.sum(-2) > 0).to(masks))  # K x G
        self.register_buffer("fixed_lengthscale", lengthscale)  # K
        self.nu = nu
        self.normalize = normalize

    def forward(self, x1: Tensor, x2: Tensor, diag: bool = False, **params: Any) -> Tensor:
        ls = self.fixed_lengthscale
        active = self.group_active
        if diag:
            value = active.sum(-1) / active.sum(-1) if self.normalize else active.sum(-1)
            shape = torch.broadcast_shapes(x1.shape[:-1], ls.shape + (1,))
            return value.unsqueeze(-1).expand(shape).to(x1)
        diff2 = (x1.unsqueeze(-2) - x2.unsqueeze(-3)).square()  # ... x n x m x d
        # batch dims of x (..., K) align with the candidate dim of the masks
        sq = torch.einsum("...nmd,...dg->...nmg", diff2, self.masks) / ls.square().view(-1, 1, 1, 1)
        k = (correlation(sq, self.nu) * active.unsqueeze(-2).unsqueeze(-2)).sum(-1)
        if self.normalize:
            k = k / active.sum(-1).view(-1, 1, 1)
        return k


def _partition_masks(partitions: list[list[list[int]]], dim: int, like: Tensor) -> Tensor:
    G = max(len(p) for p in partitions)
    masks = torch.zeros(len(partitions), dim, G, dtype=like.dtype, device=like.device)
    for k, partition in enumerate(partitions):
        seen: list[int] = []
        for g, group in enumerate(partition):
            for i in group:
                if not 0 <= int(i) < dim:
                    raise ValueError(f"partitions[{k}]: dimension {i} is outside [0, {dim - 1}].")
                masks[k, int(i), g] = 1.0
                seen.append(int(i))
        if len(seen) != len(set(seen)):
            raise ValueError(f"partitions[{k}] uses a dimension twice: {partition}.")
    return masks


@dataclass(frozen=True)
class AdditiveCandidates(CandidateSpec):
    r"""K additive decompositions (partitions of the input dimensions) of one base kernel.

    Args:
        partitions: ``K`` partitions, each a list of groups of dimension indices, e.g.
            ``[[[0], [1], [2]], [[0, 1], [2]]]``. Dimensions left out are ignored.
        lengthscale, outputscale, noise: ``K`` positive values (scalars broadcast).
        kernel: Base correlation ``matern12``, ``matern32``, ``matern52`` or ``rbf``.
        normalize: Divide by the number of groups so that :math:`k(x, x) = s`.
    """

    spec_type: ClassVar[str] = "additive"

    partitions: list[list[list[int]]]
    lengthscale: float | Tensor = 0.2
    outputscale: float | Tensor = 1.0
    noise: float | Tensor = 1e-4
    kernel: str = "rbf"
    normalize: bool = True
    _like: Tensor = field(default_factory=lambda: torch.zeros((), dtype=torch.float64), repr=False)

    def __post_init__(self) -> None:
        parts = [[sorted(int(i) for i in group) for group in p if len(group)] for p in self.partitions]
        if not parts or any(not p for p in parts):
            raise ValueError("partitions must hold at least one non-empty partition per candidate.")
        check_kernel(self.kernel)
        object.__setattr__(self, "partitions", parts)
        like = torch.as_tensor(self.lengthscale)
        like = self._like if not like.is_floating_point() else like
        for name in ("lengthscale", "outputscale", "noise"):
            object.__setattr__(self, name, candidate_vector(getattr(self, name), name, len(parts), like))
        object.__setattr__(self, "_like", self.lengthscale.new_zeros(()))

    def __len__(self) -> int:
        return len(self.partitions)

    def _kw(self) -> dict[str, Any]:
        return {"kernel": self.kernel, "normalize": self.normalize}

    def to(self, device: torch.device | str | None = None, dtype: torch.dtype | None = None) -> AdditiveCandidates:
        mv = lambda t: t.to(device=device, dtype=dtype)  # noqa: E731
        return AdditiveCandidates(
            self.partitions, mv(self.lengthscale), mv(self.outputscale), mv(self.noise), **self._kw()
        )

    def subset(self, indices: Tensor | list[int]) -> AdditiveCandidates:
        idx = [int(i) for i in torch.as_tensor(indices).reshape(-1).tolist()]
        if not idx or any(not 0 <= i < len(self) for i in idx):
            raise ValueError(f"indices must be a non-empty list in [0, {len(self) - 1}], got {idx}.")
        t = torch.tensor(idx, dtype=torch.long, device=self.lengthscale.device)
        return AdditiveCandidates(
            [self.partitions[i] for i in idx], self.lengthscale[t], self.outputscale[t], self.noise[t], **self._kw()
        )

    def cat(self, other: CandidateSpec) -> AdditiveCandidates:
        if not isinstance(other, AdditiveCandidates) or other._kw() != self._kw():
            raise ValueError("other must be AdditiveCandidates with the same kernel and normalisation.")
        o = other.to(device=self.lengthscale.device, dtype=self.lengthscale.dtype)
        return AdditiveCandidates(
            self.partitions + o.partitions,
            torch.cat([self.lengthscale, o.lengthscale]),
            torch.cat([self.outputscale, o.outputscale]),
            torch.cat([self.noise, o.noise]),
            **self._kw(),
        )

    def labels(self) -> list[str]:
        return ["".join("(" + ",".join(str(i + 1) for i in g) + ")" for g in p) for p in self.partitions]

    def build(self, dim: int, constraints: ModuleConstraints | None = None) -> tuple[Mean, Kernel, Likelihood]:
        like = self.lengthscale
        masks = _partition_masks(self.partitions, dim, like)
        base = AdditiveDecompositionKernel(masks, self.lengthscale, KERNELS[self.kernel], self.normalize)
        positive, bound = (Positive(), None) if constraints is None else constraints
        covar = ScaleKernel(base, batch_shape=torch.Size([len(self)]), outputscale_constraint=positive).to(like)
        covar.outputscale = self.outputscale
        covar.requires_grad_(False)
        return fixed_mean(None, len(self), like), covar, fixed_likelihood(self.noise, constraint=bound)

    def noise_variances(self) -> Tensor:
        return self.noise

    def with_noise(self, variance: float) -> AdditiveCandidates:
        return replace(self, noise=torch.full_like(self.noise, float(variance)))

    @classmethod
    def from_dict(
        cls, state: dict[str, Any], dtype: torch.dtype = torch.float64, device: torch.device | str | None = None
    ) -> AdditiveCandidates:
        r"""Inverse of :meth:`to_dict`; ``ValueError`` on a malformed dict."""
        if not isinstance(state, dict) or state.get("type") != cls.spec_type:
            raise ValueError("state is not an AdditiveCandidates dict (missing type='additive').")
        partitions = state.get("partitions")
        if not isinstance(partitions, list) or not all(
            isinstance(p, list) and all(isinstance(g, list) and all(type(i) is int for i in g) for g in p)
            for p in partitions
        ):
            raise ValueError("state['partitions'] must be a list of partitions (lists of lists of ints).")
        kernel, normalize = state.get("kernel", "rbf"), state.get("normalize", True)
        if not isinstance(kernel, str) or not isinstance(normalize, bool):
            raise ValueError("state['kernel'] must be a str and state['normalize'] a bool.")
        tensors = tensor_fields(state, ("lengthscale", "outputscale", "noise"), dtype, device)
        return cls(partitions, kernel=kernel, normalize=normalize, **tensors)

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": self.spec_type,
            "partitions": self.partitions,
            "lengthscale": self.lengthscale.tolist(),
            "outputscale": self.outputscale.tolist(),
            "noise": self.noise.tolist(),
            **self._kw(),
        }


class FunctionMean(Mean):
    r"""Batched prior mean :math:`\mu_0^u(x)` from ``fn(X) -> ... x K_all x n``; candidate k is row ``index[k]``."""

    def __init__(self, fn: Callable[[Tensor], Tensor], index: Tensor) -> None:
        super().__init__()
        self.fn = fn
        self.register_buffer("index", index)

    def forward(self, x: Tensor) -> Tensor:
        values = self.fn(x)  # x: ... x n x d -> ... x K_all x n
        K = self.index.numel()
        batch = x.shape[:-2]
        if len(batch) >= 1 and batch[-1] == K:  # candidate k evaluated at its own inputs
            idx = self.index.view(*([1] * (len(batch) - 1)), K, 1, 1).expand(*batch, 1, values.shape[-1])
            return values.gather(-2, idx).squeeze(-2)
        return values.index_select(-2, self.index)  # shared inputs: every candidate's mean


@dataclass(frozen=True)
class MeanFunctionCandidates(CandidateSpec):
    r"""A candidate set with a per-candidate prior mean function.

    Args:
        base: The kernels, output scales and noise (any spec with a zero mean).
        mean_fn: ``mean_fn(X) -> ... x K_all x n`` for ``X`` of shape ``... x n x d``:
            the prior means of **all** ``K_all`` candidates, in the model's input space
            (the unit cube when the model normalises inputs); it must broadcast over
            leading batch dimensions.
        index: Which rows of ``mean_fn``'s output these candidates are (default all).
        names: Optional labels of the ``K_all`` means.
    """

    base: CandidateSpec
    mean_fn: Callable[[Tensor], Tensor]
    index: list[int] | None = None
    names: list[str] | None = None

    def __post_init__(self) -> None:
        index = list(range(len(self.base))) if self.index is None else [int(i) for i in self.index]
        if len(index) != len(self.base):
            raise ValueError(f"index must have {len(self.base)} entries (one per base candidate), got {len(index)}.")
        object.__setattr__(self, "index", index)

    def __len__(self) -> int:
        return len(self.base)

    def to(self, device: torch.device | str | None = None, dtype: torch.dtype | None = None) -> MeanFunctionCandidates:
        return MeanFunctionCandidates(self.base.to(device=device, dtype=dtype), self.mean_fn, self.index, self.names)

    def noise_variances(self) -> Tensor:
        return self.base.noise_variances()

    def with_noise(self, variance: float) -> MeanFunctionCandidates:
        return replace(self, base=self.base.with_noise(variance))

    def subset(self, indices: Tensor | list[int]) -> MeanFunctionCandidates:
        idx = [int(i) for i in torch.as_tensor(indices).reshape(-1).tolist()]
        return MeanFunctionCandidates(self.base.subset(idx), self.mean_fn, [self.index[i] for i in idx], self.names)

    def cat(self, other: CandidateSpec) -> MeanFunctionCandidates:
        if not isinstance(other, MeanFunctionCandidates) or other.mean_fn is not self.mean_fn:
            raise ValueError("other must be MeanFunctionCandidates with the same mean_fn.")
        return MeanFunctionCandidates(self.base.cat(other.base), self.mean_fn, self.index + other.index, self.names)

    def labels(self) -> list[str]:
        if self.names is not None:
            return [self.names[i] for i in self.index]
        return [f"mean{i}|{label}" for i, label in zip(self.index, self.base.labels())]

    def build(self, dim: int, constraints: ModuleConstraints | None = None) -> tuple[Mean, Kernel, Likelihood]:
        _, covar, likelihood = self.base.build(dim, constraints)
        like = next(iter(covar.buffers()), None)
        device = like.device if like is not None else None
        mean = FunctionMean(self.mean_fn, torch.tensor(self.index, dtype=torch.long, device=device))
        return mean, covar, likelihood

    def to_dict(self) -> dict[str, Any]:
        raise ValueError("MeanFunctionCandidates hold a Python function and are not serialisable; rebuild them.")
