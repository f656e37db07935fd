import pytest
import torch

from botorch_unknown_hypers.models.jitter import JITTER_TRIES, jittered_cholesky

D = torch.float64


def test_no_jitter_unless_needed_and_the_smallest_of_the_ladder_that_works():
    A = torch.tensor([[2.0, 1.0], [1.0, 2.0]], dtype=D)
    L, jitter = jittered_cholesky(A)
    assert jitter == 0.0 and torch.equal(L, torch.linalg.cholesky(A))
    L, jitter = jittered_cholesky(A, 0.5)  # a jitter asked for is kept
    assert jitter == 0.5
    torch.testing.assert_close(L @ L.T, A + 0.5 * torch.eye(2, dtype=D))
    # smallest eigenvalue -1e-7 (mean diagonal 1): the ladder 1e-8, 1e-7, 1e-6, ... of the mean diagonal
    Q = torch.linalg.qr(torch.randn(5, 5, dtype=D, generator=torch.Generator().manual_seed(0)))[0]
    eig = torch.tensor([-1e-7, 0.5, 1.0, 1.5, 2.0], dtype=D)  # mean diagonal (trace / 5) about 1
    A = Q @ torch.diag(eig) @ Q.T
    A = (A + A.T) / 2
    scale = float(A.diagonal().mean())
    L, jitter = jittered_cholesky(A)
    ladder = [1e-8 * 10.0**a * scale for a in range(JITTER_TRIES)]
    brute = next(j for j in ladder if bool(torch.linalg.cholesky_ex(A + j * torch.eye(5, dtype=D))[1] == 0))
    assert jitter == brute and jitter > 1e-7
    torch.testing.assert_close(L @ L.T, A + jitter * torch.eye(5, dtype=D))


def test_a_matrix_no_jitter_of_the_ladder_rescues_is_refused():
    A = -torch.eye(3, dtype=D)  # mean diagonal magnitude 1: the largest jitter tried is 1e-3
    with pytest.raises(ValueError, match="not positive definite even with jitter"):
        jittered_cholesky(A)
