import math
from types import SimpleNamespace

import torch
from gpytorch.kernels import MaternKernel

from botorch_unknown_hypers.candidates import KernelCandidates
from botorch_unknown_hypers.domains import BoxDomain
from botorch_unknown_hypers.models.candidate_gp import CandidateGP
from botorch_unknown_hypers.policies.balancing.balancing_pieces import BalancingBetas
from botorch_unknown_hypers.policies.context import RoundContext, SearchOptions

D = torch.float64


def test_balancing_widths_are_thm_2_1_by_hand_with_each_candidates_norm_bound():
    r""":math:`\beta^u_t = B^u + \sigma_N\sqrt{2(I^u + 1 + \ln(1/\delta_A))}`, :math:`\delta_A = \delta/2`,
    :math:`I^u = \tfrac12\log\det(I + K^u/s)` at the piece's noise variance :math:`s`, for the
    candidates the round chose (their norm bounds taken from the state by index)."""
    domain = BoxDomain(torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=D))
    ctx = RoundContext(domain, torch.Generator().manual_seed(0), torch.device("cpu"), D, SearchOptions(10, 64, "scipy"))
    X = torch.rand(10, 2, generator=torch.Generator().manual_seed(2), dtype=D)
    Y = torch.cos(5 * X).sum(-1, keepdim=True)
    chosen, lengthscales = [3, 1], [0.1, 0.6]  # candidates 3 and 1 of the balancing set, in the round's order
    state = SimpleNamespace(norms=torch.tensor([1.0, 2.5, 4.0, 0.5], dtype=D))
    model = CandidateGP(X, Y, KernelCandidates.from_lengthscales(torch.tensor(lengthscales, dtype=D), noise=1e-4))
    R, delta, noise = 0.05, 0.1, 0.01
    got = BalancingBetas(R, delta, noise=noise)(ctx, state, model, None, 4, chosen)
    want = []
    for u, ell in zip(chosen, lengthscales):
        kernel = MaternKernel(nu=2.5).to(D)
        kernel.lengthscale = ell
        K = kernel(X).to_dense().detach()
        gain = 0.5 * torch.logdet(torch.eye(10, dtype=D) + K / noise).item()
        want.append(float(state.norms[u]) + R * math.sqrt(2 * (gain + 1 + math.log(1 / (delta / 2)))))
    torch.testing.assert_close(got, torch.tensor(want, dtype=D), rtol=1e-7, atol=0.0)
