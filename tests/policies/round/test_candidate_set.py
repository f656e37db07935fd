import math

import pytest
import torch
from gpytorch.kernels import MaternKernel

from botorch_unknown_hypers.candidates import KernelCandidates
from botorch_unknown_hypers.domains import BoxDomain
from botorch_unknown_hypers.models.candidate_gp import CandidateGP
from botorch_unknown_hypers.policies.context import RoundContext, SearchOptions
from botorch_unknown_hypers.policies.round.candidate_set import CandidateSetBetas, FrequentistBetas

D = torch.float64


def _brute_force_beta(X: torch.Tensor, lengthscale: float, noise: float, B: float, R: float, delta: float) -> float:
    r"""Thm 4.1 by hand, IGP-UCB at :math:`\delta_A = \delta/2`: :math:`B + R\sqrt{2(I + 1 + \ln(1/\delta_A))}`,
    :math:`I = \tfrac12\log\det(I + K/\sigma^2)` with a Matern-5/2 Gram matrix of unit output scale."""
    kernel = MaternKernel(nu=2.5).to(D)
    kernel.lengthscale = lengthscale
    K = kernel(X).to_dense().detach()
    gain = 0.5 * torch.logdet(torch.eye(X.shape[0], dtype=D) + K / noise).item()
    delta_A = delta / 2
    return B + R * math.sqrt(2 * (gain + 1 + math.log(1 / delta_A)))


@pytest.mark.parametrize("beta", ["frequentist", 0.7])
def test_candidate_set_widths_are_thm_4_1_by_hand_and_the_shared_frequentist_piece(beta):
    domain = BoxDomain(torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=D))
    ctx = RoundContext(domain, torch.Generator().manual_seed(0), torch.device("cpu"), D, SearchOptions(10, 64, "scipy"))
    X = torch.rand(12, 2, generator=torch.Generator().manual_seed(1), dtype=D)
    Y = torch.sin(6 * X).sum(-1, keepdim=True)
    lengthscales, noise = [0.05, 0.3, 1.0], 0.01
    model = CandidateGP(X, Y, KernelCandidates.from_lengthscales(torch.tensor(lengthscales, dtype=D), noise=noise))
    B, R, delta = 2.0, 0.1, 0.1
    got = CandidateSetBetas(beta, B, R, delta)(ctx, None, model, None, 3, [0, 1, 2])
    assert got.shape == (3,) and got.dtype == D
    if beta == "frequentist":
        want = torch.tensor([_brute_force_beta(X, ell, noise, B, R, delta) for ell in lengthscales], dtype=D)
        torch.testing.assert_close(got, want, rtol=1e-7, atol=0.0)  # the factors' log-determinant, not torch.logdet
        shared = FrequentistBetas(B, R, delta)(ctx, None, model, None, 3, [0, 1, 2])
        assert torch.equal(got, shared)  # one formula: the candidate set's frequentist widths are the shared piece's
        assert got[0] > got[1] > got[2]  # a shorter length scale gains more information, so its width is wider
    else:
        assert torch.equal(got, torch.full((3,), 0.7, dtype=D))
