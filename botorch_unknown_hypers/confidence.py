r"""Confidence widths of GP-UCB-type rules, and the tests built on them.

**Every** ``beta`` **of this module multiplies** :math:`\sigma` (it is not its square): the one UCB
formula of the package is :func:`upper_confidence_bound`, :math:`\mu + \beta\sigma`. Srinivas et al.
write :math:`\mu + \beta_t^{1/2}\sigma`; their quantities are returned already square-rooted, and
BoTorch's ``UpperConfidenceBound(beta=b)`` needs ``b = beta**2``. The exception is
:func:`pe_beta`, the prior-selection paper's :math:`\beta_t`, a square by that paper's convention.

- :func:`bayesian_beta_finite`, :func:`bayesian_beta_continuous`: Srinivas et al. (2010), Thms 1, 2,
  :math:`\sqrt{2\log(|X|t^2\pi^2/(6\delta))}` and the continuous form (a discretisation
  :math:`\tau_t = t^2 d b r\sqrt{\log(4da/\delta)}` per axis, at least 1);
- :func:`theorem_beta`: Thm 4.1's :math:`\beta_t` of LB-GP-UCB and HE-GP-UCB, :func:`frequentist_beta` at :math:`\delta/2`;
- :func:`frequentist_beta`: IGP-UCB (Chowdhury & Gopalan 2017, Thm 2),
  :math:`B + R\sqrt{2(I_{t-1} + 1 + \ln(1/\delta))}`;
- :func:`practical_beta`: the scaled-down Srinivas rate :math:`\sqrt{0.2\,d\log(2t)}` of
  Kandasamy et al. (2015), the acquisition width of the ``auto`` presets;
- :func:`xi` (:func:`xi_number` for Python numbers): the noise-concentration width
  :math:`\xi_t = 2R^2\log(|A|\pi^2t^2/(6\delta_B))` of the elimination tests (LB paper
  Lemma B.1, HE paper Lemma 5.1; :math:`\pi^2` and the parenthesisation of the lemmas, :math:`|A|`
  a count of candidates);
- :func:`balancing_keep` (hyperparameter balancing) and :func:`elimination_statistics`
  (hyperparameter and prior elimination): the tests themselves;
- :func:`pe_beta`, :func:`box_num_arms`: the prior-selection paper's Theorem 4.1 constants.

Callers split :math:`\delta` themselves (``delta / 2`` for :math:`\delta_A = \delta_B = \delta/2`).
Numbers or tensors broadcast; invalid values raise ``ValueError`` naming the argument. Information
gain, MIG rates and the suspected regret bounds are in :mod:`~botorch_unknown_hypers.regret_bounds`.
Derivations and every correction of a printed formula: ``docs/length-scale-balancing.md``.

References:
    N. Srinivas, A. Krause, S. Kakade, M. Seeger. Gaussian Process Optimization in the Bandit
    Setting: No Regret and Experimental Design. ICML 2010.
    S. R. Chowdhury, A. Gopalan. On Kernelized Multi-armed Bandits. ICML 2017.
    J. Ziomek, M. Adachi, M. A. Osborne. Bayesian Optimisation with Unknown Hyperparameters:
    Regret Bounds Logarithmically Closer to Optimal. NeurIPS 2024.
    K. Kandasamy, J. Schneider, B. Poczos. High Dimensional Bayesian Optimisation and Bandits
    via Additive Models. ICML 2015.
"""

from __future__ import annotations

import math
from typing import Any, Optional, Union

import torch
from torch import Tensor

from botorch_unknown_hypers.checks import (
    AT_LEAST_ONE,
    NONNEGATIVE,
    POSITIVE,
    PROBABILITY,
    check_all_entries,
    check_entries,
    check_int,
    check_number,
    check_probability,
    require,
)
from botorch_unknown_hypers.host import as_device_tensor

__all__ = [
    "Number",
    "theorem_beta",
    "upper_confidence_bound",
    "bayesian_beta_finite",
    "bayesian_beta_continuous",
    "frequentist_beta",
    "practical_beta",
    "xi",
    "xi_number",
    "balancing_keep",
    "elimination_statistics",
    "box_num_arms",
    "pe_beta",
]

#: A python number or a tensor (broadcast against the other arguments).
Number = Union[float, int, Tensor]

_PI_SQ = math.pi**2


# --------------------------------------------------------------------------- #
# argument conversion (shared with regret_bounds.py; the checks are in checks.py)
# --------------------------------------------------------------------------- #


def dtype_device(values: tuple[Any, ...]) -> tuple[torch.dtype, torch.device]:
    """Result dtype/device: promoted floating dtype of the tensor inputs, else float64."""
    dtype: Optional[torch.dtype] = None
    device: Optional[torch.device] = None
    for v in values:
        if isinstance(v, Tensor):
            if device is None:
                device = v.device
            if v.is_floating_point():
                dtype = v.dtype if dtype is None else torch.promote_types(dtype, v.dtype)
    return (dtype or torch.float64), (device or torch.device("cpu"))


def as_tensors(_broadcast: bool = True, **named: Number) -> dict[str, Tensor]:
    """Convert the named numbers to tensors with a common dtype/device.

    With ``_broadcast`` (default) also check that their shapes broadcast.
    """
    dtype, device = dtype_device(tuple(named.values()))
    out: dict[str, Tensor] = {}
    for name, v in named.items():
        if isinstance(v, bool) or not isinstance(v, (int, float, Tensor)):
            raise ValueError(
                f"{name} must be a real number or a torch.Tensor, got {type(v).__name__}"
            )
        if isinstance(v, Tensor) and (v.is_complex() or v.dtype == torch.bool):
            raise ValueError(f"{name} must be a real-valued tensor, got dtype {v.dtype}")
        out[name] = as_device_tensor(v, dtype, device)  # a Python number: no wait for the device
    if not _broadcast:
        return out
    try:
        shapes = [t.shape for t in out.values()]
        torch.broadcast_shapes(*shapes)
    except RuntimeError as err:
        desc = ", ".join(f"{n}: {tuple(t.shape)}" for n, t in out.items())
        raise ValueError(f"arguments cannot be broadcast together ({desc})") from err
    return out


# --------------------------------------------------------------------------- #
# confidence multipliers (beta = MULTIPLIER OF SIGMA)
# --------------------------------------------------------------------------- #


def upper_confidence_bound(mean: Tensor, variance: Tensor, beta: float | Tensor) -> Tensor:
    r"""The one UCB formula of the package: :math:`\mu + \beta\sigma`, :math:`\sigma = \sqrt{\max(v, 0)}`.

    ``beta`` multiplies :math:`\sigma` directly (see the module docstring) and broadcasts
    against ``mean`` and ``variance``; a negative ``beta`` gives the lower confidence bound.
    """
    return mean + beta * variance.clamp_min(0).sqrt()


def bayesian_beta_finite(t: Number, num_points: Number, delta: Number) -> Tensor:
    r"""Srinivas et al. (2010), Thm 1: :math:`\sqrt{2\log(|X| t^2\pi^2/(6\delta))}`.

    Returns the **multiplier of sigma** (the square root of Srinivas' beta).

    Args:
        t: Iteration index(es), ``>= 1``.
        num_points: Size :math:`|X|` of the finite domain, ``>= 1``.
        delta: Failure probability in ``(0, 1)``. HE-GP-UCB uses
            :math:`\delta_A = \delta/2`: pass ``delta / 2``.

    Returns:
        Tensor of the broadcast shape of the inputs.
    """
    v = as_tensors(t=t, num_points=num_points, delta=delta)
    check_all_entries(
        ("t", v["t"], AT_LEAST_ONE),
        ("num_points", v["num_points"], AT_LEAST_ONE),
        ("delta", v["delta"], PROBABILITY),
    )
    arg = v["num_points"] * v["t"].square() * _PI_SQ / (6.0 * v["delta"])
    return torch.sqrt(2.0 * torch.log(arg))


def bayesian_beta_continuous(
    t: Number, dim: int, delta: Number, a: Number, b: Number, r: Number
) -> Tensor:
    r"""Srinivas et al. (2010), Thm 2, as a **multiplier of sigma**.

    .. math::

        \beta_t = \sqrt{2\log(2t^2\pi^2/(3\delta))
            + 2d\log\max\big(t^2 d b r\sqrt{\log(4da/\delta)},\, 1\big)}

    (the ``max(., 1)`` only matters when the analysis discretisation would
    have fewer than one point per axis; see the module docstring).

    Args:
        t: Iteration index(es), ``>= 1``.
        dim: Input dimension :math:`d \ge 1`.
        delta: Failure probability in ``(0, 1)`` (HE-GP-UCB: pass ``delta / 2``).
        a: Constant of the derivative tail bound
            :math:`P(\sup|\partial f/\partial x_j| > L) \le a e^{-L^2/b^2}`,
            positive, with ``4 * dim * a / delta > 1``.
        b: Scale of the derivative tail bound, positive.
        r: Side length of the domain :math:`[0, r]^d`, positive.

    Returns:
        Tensor of the broadcast shape of the inputs.
    """
    d = check_int("dim", dim, 1)
    v = as_tensors(t=t, delta=delta, a=a, b=b, r=r)
    check_all_entries(
        ("t", v["t"], AT_LEAST_ONE),
        ("delta", v["delta"], PROBABILITY),
        *((name, v[name], POSITIVE) for name in ("a", "b", "r")),
    )
    inner = 4.0 * d * v["a"] / v["delta"]
    require("a", inner > 1, "large enough that 4 * dim * a / delta > 1", v["a"])
    first = 2.0 * torch.log(2.0 * v["t"].square() * _PI_SQ / (3.0 * v["delta"]))
    tau = v["t"].square() * d * v["b"] * v["r"] * torch.sqrt(torch.log(inner))
    second = 2.0 * d * torch.log(torch.clamp(tau, min=1.0))
    return torch.sqrt(first + second)


def frequentist_beta(information_gain: Number, B: Number, R: Number, delta: Number, checked: bool = True) -> Tensor:
    r"""IGP-UCB, Chowdhury & Gopalan (2017) Thm 2: :math:`B + R\sqrt{2(I_{t-1} + 1 + \ln(1/\delta))}`.

    Returns the **multiplier of sigma**. HE-GP-UCB (Thm 4.1) and LB-GP-UCB
    (Thm 4.1) use :math:`\delta_A = \delta/2`, i.e. :math:`\ln(2/\delta)`:
    callers pass ``delta / 2`` themselves.

    Args:
        information_gain: :math:`I_{t-1}` (or :math:`\gamma_{t-1}`), the
            information gain of the first :math:`t-1` observations, ``>= 0``
            (0 at :math:`t = 1`).
        B: RKHS-norm bound, ``>= 0``.
        R: Sub-Gaussian noise scale (standard deviation, not variance), ``>= 0``.
        delta: Failure probability in ``(0, 1)``.
        checked: ``False`` skips the entry checks (no host read) for a caller that vouches for the
            arguments and checks the result itself, as the candidate-set round does.

    Returns:
        Tensor of the broadcast shape of the inputs.
    """
    v = as_tensors(information_gain=information_gain, B=B, R=R, delta=delta)
    check_all_entries(
        ("information_gain", v["information_gain"], NONNEGATIVE),
        ("B", v["B"], NONNEGATIVE),
        ("R", v["R"], NONNEGATIVE),
        ("delta", v["delta"], PROBABILITY),
        checked=checked,
    )
    log_term = torch.log(1.0 / v["delta"])
    return v["B"] + v["R"] * torch.sqrt(2.0 * (v["information_gain"] + 1.0 + log_term))


def theorem_beta(information_gain: Number, B: Number, R: Number, delta: Number, checked: bool = True) -> Tensor:
    r""":math:`\beta_t` of Thm 4.1 of both Ziomek et al. papers (LB-GP-UCB and HE-GP-UCB): the
    IGP-UCB width (:func:`frequentist_beta`) at :math:`\delta_A = \delta/2`,
    :math:`B + R\sqrt{2(I_{t-1} + 1 + \ln(2/\delta))}`; the other half of :math:`\delta` is the
    candidate test's. Arguments and checks as :func:`frequentist_beta` (``delta`` the rule's
    whole :math:`\delta`)."""
    if isinstance(delta, (int, float)):  # the rule's delta, before it is halved: checked on the host, no read
        if isinstance(delta, bool) or not 0 < delta < 1:
            raise ValueError(f"delta must be in (0, 1), got {delta!r}.")
        return frequentist_beta(information_gain, B=B, R=R, delta=delta / 2, checked=checked)
    v = as_tensors(delta=delta)
    check_all_entries(("delta", v["delta"], PROBABILITY), checked=checked)
    return frequentist_beta(information_gain, B=B, R=R, delta=v["delta"] / 2, checked=checked)


def practical_beta(t: Number, dim: int) -> Tensor:
    r"""The practical GP-UCB multiplier :math:`\beta_t = \sqrt{0.2\, d \log(2t)}`.

    Kandasamy, Schneider, Poczos (2015, Sec. 5) scale Srinivas' continuous rate, whose
    :math:`\log t^2` growth is kept, down by the factor 0.2 that they found to work across
    problems; it assumes standardised outputs. Returns the **multiplier of sigma**.

    Args:
        t: The 1-based round, ``>= 1``.
        dim: The input dimension :math:`d`.
    """
    d = check_int("dim", dim, 1)
    v = as_tensors(t=t)
    check_entries("t", v["t"], AT_LEAST_ONE)
    return torch.sqrt(0.2 * d * torch.log(2.0 * v["t"]))


def xi(t: Number, num_candidates: Number, R: Number, delta: Number, validate_args: bool = True) -> Tensor:
    r"""Noise-concentration width :math:`\xi_t = 2R^2\log(|A|\pi^2t^2/(6\delta_B))`.

    LB paper Lemma B.1 / HE paper Lemma 5.1 (with the parenthesisation and the
    :math:`\pi^2` of the lemmas, see the module docstring). With the usual
    split :math:`\delta_B = \delta/2` pass ``delta = delta / 2`` to obtain
    :math:`2R^2\log(|A|\pi^2t^2/(3\delta))`.

    Args:
        t: Current global iteration(s), ``>= 1``.
        num_candidates: Number :math:`|A|` of candidate hyperparameters, ``>= 1``.
        R: Sub-Gaussian noise scale, ``>= 0`` (``R = 0`` gives :math:`\xi_t = 0`).
        delta: :math:`\delta_B`, the failure probability of the noise event,
            in ``(0, 1)``.
        validate_args: Check the arguments (one host read); ``False`` for a caller that has
            checked them as Python numbers (as ``torch.distributions``' flag).

    Returns:
        Tensor of the broadcast shape of the inputs.
    """
    v = as_tensors(t=t, num_candidates=num_candidates, R=R, delta=delta)
    if validate_args:
        check_all_entries(
            ("t", v["t"], AT_LEAST_ONE),
            ("num_candidates", v["num_candidates"], AT_LEAST_ONE),
            ("R", v["R"], NONNEGATIVE),
            ("delta", v["delta"], PROBABILITY),
        )
    return _xi_formula(v["t"], v["num_candidates"], v["R"], v["delta"], torch.log)


def xi_number(t: int, num_candidates: int, R: float, delta: float) -> float:
    r""":func:`xi` of Python numbers as a Python float, computed on the host with ``math``: the
    same float64 operations in the same order, so the same value bit for bit, with no tensor
    to read back. The caller checks the numbers (:func:`xi` raises the named errors)."""
    return _xi_formula(float(t), float(num_candidates), float(R), float(delta), math.log)


def _xi_formula(t: Any, num_candidates: Any, R: Any, delta: Any, log: Any) -> Any:
    r"""The one expression of :math:`\xi_t`, for tensors (``torch.log``) or floats (``math.log``)."""
    return 2.0 * (R * R) * log(num_candidates * _PI_SQ * (t * t) / (6.0 * delta))


# --------------------------------------------------------------------------- #
# elimination tests and the constants of prior elimination
# --------------------------------------------------------------------------- #


def balancing_keep(
    reward_sum: Tensor, counts: Tensor, width_sum: Tensor, xi_t: float, width_factor: float
) -> tuple[Tensor, Tensor]:
    r"""The elimination test of hyperparameter balancing (LB paper, Alg. 1/2 lines 9-11).

    For candidates that were all played, with :math:`\bar y_u` the mean (standardised) reward
    and :math:`L(u) = \bar y_u - \sqrt{\xi_t/|S^u|}`, candidate :math:`u` is kept iff

    .. math::

        \bar y_u + \sqrt{\xi_t/|S^u|} + \frac{c}{|S^u|}\sum_{\tau \in S^u} w_\tau \ge \max_{u'} L(u')

    (the sign of :math:`\sqrt\xi` on the left is the one the proof of Lemma B.2 supports).

    Args:
        reward_sum: ``K`` sums of rewards per candidate.
        counts: ``K`` play counts, all ``>= 1``.
        width_sum: ``K`` sums of recorded widths :math:`\beta_\tau\sigma_{\tau-1}(x_\tau)`.
        xi_t: :math:`\xi_t`.
        width_factor: :math:`c` (2 in the paper, 1 in the authors' code).

    Returns:
        ``(keep, L)``: ``K`` booleans and the lower bounds :math:`L(u)`.
    """
    mean = reward_sum / counts
    conf = torch.sqrt(xi_t / counts)
    lower = mean - conf
    upper = mean + conf + width_factor * width_sum / counts
    return upper >= lower.max(), lower


def elimination_statistics(
    played: list[int], residual: list[float], width: list[float], num_candidates: int, xi_t: float
) -> tuple[list[float], list[float]]:
    r"""The prequential test of hyperparameter and prior elimination, for every candidate.

    Candidate :math:`u` with plays :math:`S^u` fails (HE paper Alg. 1 line 12; prior-selection
    paper Alg. 1 lines 9-10) iff the statistic exceeds the threshold,

    .. math::

        \Big|\sum_{i \in S^u} \eta_i\Big| > \sqrt{\xi_t |S^u|} + \sum_{i \in S^u} w_i,

    with :math:`\eta_i` the prequential residuals and :math:`w_i` the widths recorded at
    selection time.

    Args:
        played: The candidate of each recorded round.
        residual: :math:`\eta_i` of each round.
        width: :math:`w_i` of each round.
        num_candidates: K.
        xi_t: :math:`\xi_t`.

    Returns:
        ``(statistic, threshold)``, ``K`` Python floats each: the records are Python floats on
        the host, summed there in the order of the rounds (no tensor, so no read back).
    """
    if not all(0 <= u < num_candidates for u in played):
        raise ValueError(f"played must hold candidate indices in [0, {num_candidates}), got {played}.")
    counts, eta_sum, width_sum = [0.0] * num_candidates, [0.0] * num_candidates, [0.0] * num_candidates
    for u, eta, w in zip(played, residual, width, strict=True):
        counts[u] += 1.0
        eta_sum[u] += eta
        width_sum[u] += w
    return [abs(e) for e in eta_sum], [math.sqrt(xi_t * c) + w for c, w in zip(counts, width_sum)]


def box_num_arms(t: int, dim: int, delta: float, a: float = 1.0, b: float = 1.0, r: float = 1.0) -> float:
    r"""A finite stand-in for :math:`|\mathcal{X}|` on a box: Srinivas et al.'s discretisation size.

    Srinivas et al. (2010), Thm 2, cover :math:`[0, r]^d` at round :math:`t` by a grid of
    :math:`\tau_t^d` points, :math:`\tau_t = d\, t^2\, b\, r \sqrt{\log(4 d a / \delta)}` (at least
    1), fine enough that :math:`|f(x) - f([x]_t)| \le 1/t^2` when
    :math:`P(\sup|\partial f/\partial x_j| > L) \le a e^{-L^2/b^2}`. In :func:`pe_beta` with one
    prior it gives exactly Srinivas' Thm 2 width (:func:`bayesian_beta_continuous` squared).

    Example:
        >>> round(box_num_arms(1, 1, 0.05), 3)  # d = 1, a = b = r = 1
        2.093
    """
    check_int("t", t, 1)
    check_int("dim", dim, 1)
    check_probability("delta", delta)
    for name, value in (("a", a), ("b", b), ("r", r)):
        check_number(name, value, POSITIVE)
    if not 4.0 * dim * a / delta > 1:
        raise ValueError(f"a must be large enough that 4 * dim * a / delta > 1, got a = {a} (dim = {dim}, delta = {delta}).")
    tau = dim * t**2 * b * r * math.sqrt(math.log(4.0 * dim * a / delta))
    return max(tau, 1.0) ** dim


def pe_beta(t: int, num_arms: float, num_priors: int, delta: float) -> float:
    r"""The prior-selection paper's Theorem 4.1 :math:`\beta_t = 2\log(2|\mathcal{X}||\mathcal{P}|\pi^2t^2/(3\delta))`.

    This is the *square* of the multiplier of :math:`\sigma` (the width is
    :math:`\sqrt{\beta_t}\sigma`), unlike the other betas of this module. It equals
    ``bayesian_beta_finite(t, num_arms * num_priors, delta / 4) ** 2``: Srinivas' finite-domain
    width over the (arm, prior) pairs, :math:`\delta` split between the function's and the
    samples' concentration events and halved again for the noise event of :math:`\xi_t`.

    Example:
        >>> round(pe_beta(1, 500, 6, 0.05), 2)  # the kernel task at t = 1
        25.77
    """
    check_int("t", t, 1)
    check_number("num_arms", num_arms, AT_LEAST_ONE)
    check_int("num_priors", num_priors, 1)
    check_probability("delta", delta)
    return 2.0 * math.log(2.0 * num_arms * num_priors * math.pi**2 * t**2 / (3.0 * delta))
