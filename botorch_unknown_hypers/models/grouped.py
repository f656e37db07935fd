r"""Candidates of different kernel structure behind one K-wide interface.

Candidates that share a structure (same kernel family and input layout) live in
one batched :class:`~botorch_unknown_hypers.models.CandidateGP`; candidates of
*different* structure (a periodic kernel next to Matern ones, an additive
decomposition, a prior with a non-zero mean function) cannot share one GPyTorch
module. :class:`GroupedCandidateModel` stacks several such groups, each one
batched, and presents them as a single K-wide candidate model with
:math:`K = \sum_g K_g`: its posteriors concatenate the groups' along the
candidate dimension (``-3``), so acquisition functions written against
:class:`~botorch_unknown_hypers.models.CandidateModel` never loop over
candidates, only over the (few) groups.

The groups must share the training data (the rules all compare candidates on
one data set); a permutation keeps any candidate order asked for by
:meth:`GroupedCandidateModel.subset`.
"""

from __future__ import annotations


import torch
from botorch.acquisition.objective import PosteriorTransform
from botorch.posteriors.gpytorch import GPyTorchPosterior
from torch import Tensor

from botorch_unknown_hypers.models.candidate_gp import CANDIDATE_DIM, CandidateModel
from botorch_unknown_hypers.models.quiet_normal import QuietMultivariateNormal


class GroupedCandidateModel(CandidateModel):
    r"""Several K_g-wide candidate models presented as one K-wide model.

    Example:
        >>> matern = CandidateGP(X, Y, KernelCandidates.from_lengthscales(ls, kernel="matern52"))
        >>> rbf = CandidateGP(X, Y, KernelCandidates.from_lengthscales(ls, kernel="rbf"))
        >>> model = GroupedCandidateModel([matern, rbf])     # K = 2 * len(ls)
        >>> model.posterior(X_test).mean.shape                # batch x K x q x 1
    """

    def __init__(self, groups: list[CandidateModel], order: Tensor | None = None) -> None:
        r"""
        Args:
            groups: Candidate models sharing the same training data.
            order: Optional permutation of ``range(K)``: candidate ``i`` of this
                model is candidate ``order[i]`` of the concatenated groups.
        """
        super().__init__()
        if not groups:
            raise ValueError("groups is empty: at least one candidate group is needed.")
        ref = groups[0].raw_train_X
        for g in groups[1:]:
            other = g.raw_train_X
            if other.shape != ref.shape or other.device != ref.device or not torch.equal(other, ref):
                raise ValueError("groups must share the same training inputs.")
        self.groups = torch.nn.ModuleList(groups)
        self.sizes = [g.num_candidates for g in groups]
        self.num_candidates = sum(self.sizes)
        if order is not None:
            order = torch.as_tensor(order, dtype=torch.long, device=ref.device)
            if order.shape != (self.num_candidates,) or not torch.equal(
                order.sort().values, torch.arange(self.num_candidates, device=ref.device)
            ):
                raise ValueError(f"order must be a permutation of range({self.num_candidates}).")
        self.order = order

    # ------------------------------------------------------------------ basics
    @property
    def raw_train_X(self) -> Tensor:
        return self.groups[0].raw_train_X

    @property
    def raw_train_Y(self) -> Tensor:
        return self.groups[0].raw_train_Y

    @property
    def num_outputs(self) -> int:
        return 1

    @property
    def batch_shape(self) -> torch.Size:
        return torch.Size([self.num_candidates])

    def labels(self) -> list[str]:
        flat = [label for g in self.groups for label in g.labels()]
        return flat if self.order is None else [flat[i] for i in self.order.tolist()]

    def _split(self, X: Tensor) -> list[Tensor]:
        r"""Per-group inputs: split a K-wide candidate dimension, share a size-1 one."""
        self._check_candidate_X(X)
        if X.shape[CANDIDATE_DIM] == 1:
            return [X] * len(self.groups)
        if self.order is not None:
            inverse = torch.empty_like(self.order)
            inverse[self.order] = torch.arange(self.num_candidates, device=self.order.device)
            X = X.index_select(CANDIDATE_DIM % X.ndim, inverse)
        return list(X.split(self.sizes, dim=CANDIDATE_DIM))

    def _reorder(self, values: Tensor, dim: int) -> Tensor:
        return values if self.order is None else values.index_select(dim % values.ndim, self.order)

    # -------------------------------------------------------------- posteriors
    def marginal_mean_variance(self, X: Tensor, observation_noise: bool = False) -> tuple[Tensor, Tensor]:
        r"""``(mean, variance)``, each ``batch_shape x K x q``; see :class:`CandidateModel`."""
        parts = [g.marginal_mean_variance(x, observation_noise) for g, x in zip(self.groups, self._split(X))]
        mean = torch.cat([m for m, _ in parts], dim=-2)
        variance = torch.cat([v for _, v in parts], dim=-2)
        return self._reorder(mean, -2), self._reorder(variance, -2)

    def candidate_posterior(
        self,
        X: Tensor,
        observation_noise: bool = False,
        posterior_transform: PosteriorTransform | None = None,
    ) -> GPyTorchPosterior:
        r"""Posterior of shape ``batch_shape x K x q x 1``, candidate ``k`` at ``X[..., k, :, :]``.

        The groups' covariances are concatenated densely (``K x q x q``).
        """
        posts = [g.candidate_posterior(x, observation_noise) for g, x in zip(self.groups, self._split(X))]
        shapes = [p.distribution.mean.shape[:-2] for p in posts]
        batch = torch.broadcast_shapes(*shapes)
        means = [p.distribution.mean.expand(*batch, *p.distribution.mean.shape[-2:]) for p in posts]
        covs = [
            p.distribution.covariance_matrix.expand(*batch, *p.distribution.covariance_matrix.shape[-3:])
            for p in posts
        ]
        mean = self._reorder(torch.cat(means, dim=-2), -2)
        cov = self._reorder(torch.cat(covs, dim=-3), -3)
        posterior = GPyTorchPosterior(QuietMultivariateNormal(mean, cov))
        if posterior_transform is not None:
            return posterior_transform(posterior=posterior, X=X)
        return posterior

    # ------------------------------------------------------------------- views
    def _locate(self, index: int) -> tuple[int, int]:
        flat = int(self.order[index]) if self.order is not None else int(index)
        for g, size in enumerate(self.sizes):
            if flat < size:
                return g, flat
            flat -= size
        raise AssertionError("unreachable")

    def subset(self, indices: Tensor | list[int]) -> CandidateModel:
        r"""The candidates at ``indices``, in that order."""
        idx = torch.as_tensor(indices, dtype=torch.long).flatten().tolist()
        if not idx or any(not 0 <= i < self.num_candidates for i in idx):
            raise ValueError(f"indices must be a non-empty list in [0, {self.num_candidates - 1}].")
        located = [self._locate(i) for i in idx]
        new_groups, position = [], {}
        for g in range(len(self.groups)):
            local = [loc for grp, loc in located if grp == g]
            if local:
                for j, loc in enumerate(local):
                    position.setdefault((g, loc), []).append(sum(m.num_candidates for m in new_groups) + j)
                new_groups.append(self.groups[g].subset(local))
        order = [position[key].pop(0) for key in located]
        if len(new_groups) == 1:
            base = new_groups[0]
            return base if order == sorted(order) else base.subset(order)
        return GroupedCandidateModel(new_groups, order=torch.tensor(order))

    def select(self, index: int):
        r"""Candidate ``index`` as a plain single-output BoTorch model."""
        if not 0 <= int(index) < self.num_candidates:
            raise ValueError(f"index must lie in [0, {self.num_candidates - 1}], got {index}.")
        g, local = self._locate(int(index))
        return self.groups[g].select(local)
