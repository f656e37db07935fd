r"""Robot pushing, the real-world benchmarks of the TS-RSR paper (Ren & Li [Ren2024]_, Sec. 6).

A rectangular robot hand pushes a circular object on a table, simulated with Box2D;
the task is to choose the push so that the object stops as close as possible to a goal
:math:`g`, drawn per seed uniformly from :math:`[-5, 5]^2`. The set-up is Wang &
Jegelka's [Wang2017]_ (the paper cites the wrong reference; the authors' code adapts
Wang's Max-value Entropy Search repository), reconstructed from its description, not
copied. The hand starts at :math:`(r_x, r_y)` with angle :math:`\theta` and is driven
towards the object's initial position for :math:`\lfloor 10\, t_r \rfloor` steps of
0.01 s with the commanded velocity :math:`v = 5\, (-r) / \|r\| + \eta`,
:math:`\eta \sim \mathcal{N}(0, 0.1^2 I_2)` drawn once per push (the paper's objective
is stochastic); then the world runs 100 more steps so that the object comes to rest.
In maximisation form,

.. math::

    f(r_x, r_y, t_r[, \theta]) = -\|g - p_{\text{final}}(r_x, r_y, t_r, \theta)\|,
    \qquad f^* = 0

(the paper's assumption; an upper bound, since a goal need not be exactly reachable).

- ``robot-push3``: :math:`(r_x, r_y, t_r) \in [-5, 5]^2 \times [1, 30]`, hand angle
  :math:`\theta = \operatorname{atan2}(r_y, r_x)`;
- ``robot-push4``: adds :math:`\theta \in [0, 2\pi]`, the paper's box (Table 7).

:meth:`RobotPushProblem.evaluate_true` is the noise-free push (:math:`\eta = 0`, the
``f`` column) and :meth:`RobotPushProblem.evaluate` the noisy one for ``y``. Box2D is an
optional dependency: ``pip install "botorch-unknown-hypers[robot]"``. The world's
physical constants, the paper's settings and the deviations from Wang's and the
authors' code are in ``docs/ts-rsr.md``.

References:

.. [Ren2024]
    Z. Ren, N. Li. TS-RSR: A provably efficient approach for batch Bayesian
    optimization. arXiv:2403.04764, 2024.

.. [Wang2017]
    Z. Wang, S. Jegelka. Max-value entropy search for efficient Bayesian
    optimization. ICML 2017.
"""

from __future__ import annotations

import math
from types import ModuleType

import torch
from torch import Tensor

from botorch_unknown_hypers.checks import check_int, check_nonnegative, check_positive
from botorch_unknown_hypers.problems.problem import Problem
from botorch_unknown_hypers.domains import BoxDomain
from botorch_unknown_hypers.problems.batch_benchmarks import (
    GPYTORCH_DEFAULT,
    PAPER_N_INIT,
    paper_metadata,
    paper_surrogate,
)

# Physics of the push world (Wang & Jegelka's settings; see docs/ts-rsr.md).
TIME_STEP = 0.01
VELOCITY_ITERATIONS = 10
POSITION_ITERATIONS = 10
TABLE_HALF_EXTENT = 500.0
OBJECT_RADIUS = 1.0
OBJECT_DENSITY = 0.05
OBJECT_FRICTION = 0.01
OBJECT_JOINT_MAX_FORCE = 5.0
OBJECT_JOINT_MAX_TORQUE = 2.0
HAND_HALF_EXTENTS = (0.3, 1.0)
HAND_DENSITY = 0.1
HAND_FRICTION = 0.1
HAND_JOINT_MAX_FORCE = 2.0
HAND_JOINT_MAX_TORQUE = 2.0
CONTROL_GAIN = 30.0
STEPS_PER_TIME_UNIT = 10
SETTLE_STEPS = 100
PUSH_SPEED = 5.0
VELOCITY_NOISE_STD = 0.1

INSTALL_HINT = 'Robot pushing needs Box2D: pip install "botorch-unknown-hypers[robot]".'

_SEED_OFFSETS = {3: 70_001, 4: 70_019}
r"""Per-dimension offset of the goal generator's seed."""


def import_box2d() -> ModuleType:
    r"""Import Box2D, or raise an ``ImportError`` that says how to install it."""
    try:
        import Box2D
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ImportError(INSTALL_HINT) from err
    return Box2D


def simulate_push(
    rx: float,
    ry: float,
    duration: float,
    angle: float,
    velocity_noise: tuple[float, float] = (0.0, 0.0),
    push_speed: float = PUSH_SPEED,
) -> tuple[float, float]:
    r"""One push in a fresh world; the object's final position.

    Args:
        rx, ry: The hand's initial position.
        duration: Push duration :math:`t_r`; the hand is driven for
            ``int(10 * duration)`` steps of 0.01 s.
        angle: The hand's initial angle :math:`\theta` (radians).
        velocity_noise: :math:`\eta`, added to the commanded velocity.
        push_speed: Speed of the commanded push towards the object.

    Returns:
        ``(x, y)`` of the object after the push and 100 settling steps.
    """
    Box2D = import_box2d()
    world = Box2D.b2World(gravity=(0.0, 0.0), doSleep=True)
    table = world.CreateStaticBody(
        position=(0.0, 0.0), shapes=Box2D.b2PolygonShape(box=(TABLE_HALF_EXTENT, TABLE_HALF_EXTENT))
    )
    thing = world.CreateDynamicBody(position=(0.0, 0.0))
    thing.CreateFixture(
        shape=Box2D.b2CircleShape(radius=OBJECT_RADIUS), density=OBJECT_DENSITY, friction=OBJECT_FRICTION
    )
    # Joints to the table give planar friction; jointed bodies do not collide with the table.
    world.CreateFrictionJoint(
        bodyA=table, bodyB=thing, maxForce=OBJECT_JOINT_MAX_FORCE, maxTorque=OBJECT_JOINT_MAX_TORQUE
    )
    hand = world.CreateDynamicBody(position=(float(rx), float(ry)), angle=float(angle))
    hand.CreateFixture(shape=Box2D.b2PolygonShape(box=HAND_HALF_EXTENTS), density=HAND_DENSITY, friction=HAND_FRICTION)
    world.CreateFrictionJoint(bodyA=table, bodyB=hand, maxForce=HAND_JOINT_MAX_FORCE, maxTorque=HAND_JOINT_MAX_TORQUE)

    dx, dy = thing.position.x - hand.position.x, thing.position.y - hand.position.y
    distance = math.hypot(dx, dy)
    # A hand started at the object's centre has no push direction: it only gets the noise.
    unit_x, unit_y = (dx / distance, dy / distance) if distance > 0 else (0.0, 0.0)
    target_vx = push_speed * unit_x + float(velocity_noise[0])
    target_vy = push_speed * unit_y + float(velocity_noise[1])
    push_steps = int(STEPS_PER_TIME_UNIT * float(duration))
    mass = hand.mass
    # Box2D steps one world at a time: this loop over time steps is the simulation.
    for step in range(push_steps + SETTLE_STEPS):
        if step < push_steps:
            hand.ApplyTorque(-CONTROL_GAIN * mass * hand.angularVelocity, True)
            velocity = hand.linearVelocity
            force = (CONTROL_GAIN * mass * (target_vx - velocity.x), CONTROL_GAIN * mass * (target_vy - velocity.y))
            hand.ApplyForce(force, hand.position, True)
        world.Step(TIME_STEP, VELOCITY_ITERATIONS, POSITION_ITERATIONS)
    return float(thing.position.x), float(thing.position.y)


class RobotPushProblem(Problem):
    r"""Push an object to a goal drawn per seed (``robot-push3`` / ``robot-push4``).

    Args:
        dim: 3 (:math:`r_x, r_y, t_r`) or 4 (adds the hand angle :math:`\theta`).
        seed: The run's seed; the goal is uniform on :math:`[-5, 5]^2` given it.
        goal: An explicit goal ``(g_x, g_y)`` instead of the seeded one
            (:meth:`instance` always draws the seeded goal).
        angle_upper: Upper bound of :math:`\theta` (4-d only): :math:`2\pi` as in the
            paper's table; the authors' code used :math:`\pi`.
        push_speed: Speed of the push.
        velocity_noise_std: Standard deviation of :math:`\eta` in :meth:`evaluate`.
        noise_std: Extra Gaussian observation noise on ``y`` (0 in the paper).
        name: Registered name (default ``robot-push{dim}``).
        n_init: Initial design size.
        dtype: dtype of the domain's bounds.

    Attributes:
        goal: The goal, a tuple of two floats (also ``metadata["goal"]``).

    Example:
        >>> problem = RobotPushProblem(3).instance(2)
        >>> X = torch.tensor([[-3.0, 0.0, 10.0]], dtype=torch.float64)
        >>> y, f = problem.evaluate(X, generator=torch.Generator().manual_seed(0))
    """

    def __init__(
        self,
        dim: int = 3,
        seed: int = 0,
        goal: tuple[float, float] | None = None,
        angle_upper: float = 2.0 * math.pi,
        push_speed: float = PUSH_SPEED,
        velocity_noise_std: float = VELOCITY_NOISE_STD,
        noise_std: float = 0.0,
        name: str | None = None,
        n_init: int = PAPER_N_INIT,
        dtype: torch.dtype = torch.float64,
    ) -> None:
        import_box2d()
        if isinstance(dim, bool) or dim not in (3, 4):
            raise ValueError(f"dim must be 3 or 4, got {dim!r}.")
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise ValueError(f"seed must be an int, got {seed!r}.")
        check_positive("angle_upper", angle_upper)
        check_positive("push_speed", push_speed)
        check_nonnegative("velocity_noise_std", velocity_noise_std)
        check_nonnegative("noise_std", noise_std)
        check_int("n_init", n_init, 0)
        if goal is None:
            gen = torch.Generator().manual_seed(_SEED_OFFSETS[dim] + seed)
            goal_tensor = 10.0 * torch.rand(2, generator=gen, dtype=torch.float64) - 5.0
            goal = (float(goal_tensor[0]), float(goal_tensor[1]))
        else:
            if len(goal) != 2 or not all(math.isfinite(float(g)) for g in goal):
                raise ValueError(f"goal must be two finite numbers, got {goal!r}.")
            goal = (float(goal[0]), float(goal[1]))
        lower = [-5.0, -5.0, 1.0] + ([0.0] if dim == 4 else [])
        upper = [5.0, 5.0, 30.0] + ([float(angle_upper)] if dim == 4 else [])
        if dim == 3:
            surrogate = paper_surrogate("matern52", [1.0, 1.0, 0.1], 0.2)  # the authors' code override
        else:
            surrogate = paper_surrogate("matern52", GPYTORCH_DEFAULT, GPYTORCH_DEFAULT)
        super().__init__(
            name=name or f"robot-push{dim}",
            domain=BoxDomain(torch.tensor([lower, upper], dtype=dtype)),
            optimal_value=0.0,
            noise_std=float(noise_std),
            n_init=n_init,
            metadata=paper_metadata(
                5,
                30,
                runs=10,
                surrogate=surrogate,
                seed=seed,
                goal=goal,
                inputs=("r_x", "r_y", "t_r") + (("angle",) if dim == 4 else ()),
                **({"paper_angle_box": (0.0, 2.0 * math.pi), "code_angle_box": (0.0, math.pi)} if dim == 4 else {}),
            ),
        )
        self.seed = seed
        self.goal = goal
        self.angle_upper = float(angle_upper)
        self.push_speed = float(push_speed)
        self.velocity_noise_std = float(velocity_noise_std)

    def instance(self, seed: int) -> RobotPushProblem:
        bounds = self.domain.bounds
        return RobotPushProblem(
            self.dim,
            seed=seed,
            angle_upper=self.angle_upper,
            push_speed=self.push_speed,
            velocity_noise_std=self.velocity_noise_std,
            noise_std=self.noise_std,
            name=self.name,
            n_init=self.n_init,
            dtype=bounds.dtype,
        ).to(device=bounds.device)

    def _final_distances(self, X: Tensor, velocity_noise: Tensor | None) -> Tensor:
        r"""``||goal - final object position||`` for each row of ``X`` (``batch_shape x d``)."""
        rows = X.detach().reshape(-1, self.dim).to(device="cpu", dtype=torch.float64).tolist()
        noise = [(0.0, 0.0)] * len(rows) if velocity_noise is None else velocity_noise.reshape(-1, 2).tolist()
        gx, gy = self.goal
        distances = []
        # One independent Box2D world per point (a serial engine; no batched call exists).
        for (rx, ry, duration, *rest), eta in zip(rows, noise):
            angle = rest[0] if rest else math.atan2(ry, rx)
            x, y = simulate_push(rx, ry, duration, angle, velocity_noise=eta, push_speed=self.push_speed)
            distances.append(math.hypot(gx - x, gy - y))
        return torch.tensor(distances, dtype=X.dtype, device=X.device).reshape(X.shape[:-1])

    def evaluate_true(self, X: Tensor) -> Tensor:
        r"""The noise-free push (:math:`\eta = 0`): minus the final distance to the goal.

        Args:
            X: A ``batch_shape x d``-dim tensor of ``(r_x, r_y, t_r[, angle])``.

        Returns:
            A ``batch_shape``-dim tensor of :math:`f(x) \le 0`.
        """
        return -self._final_distances(X, None)

    def evaluate(self, X: Tensor, generator: torch.Generator | None = None) -> tuple[Tensor, Tensor]:
        r"""The noisy push for ``y`` and the noise-free push for ``f``.

        Args:
            X: A ``batch_shape x d``-dim tensor.
            generator: Random generator of the velocity noise :math:`\eta` (and of the
                observation noise when ``noise_std > 0``), on any device.

        Returns:
            ``(y, f)``, each ``batch_shape``-dim.
        """
        if X.shape[-1] != self.dim:
            raise ValueError(f"X must have {self.dim} columns, got {X.shape[-1]}.")
        if not self.domain.contains(X).all():
            raise ValueError(f"X has points outside the domain of problem {self.name!r}.")
        device = generator.device if generator is not None else X.device
        eta = self.velocity_noise_std * torch.randn(
            *X.shape[:-1], 2, generator=generator, device=device, dtype=torch.float64
        )
        y = -self._final_distances(X, eta.cpu())
        f = self.evaluate_true(X)
        if self.noise_std > 0:
            eps = torch.randn(y.shape, generator=generator, device=device, dtype=y.dtype).to(y.device)
            y = y + self.noise_std * eps
        return y, f


def robot_push3(seed: int = 0) -> RobotPushProblem:
    r"""``robot-push3``: :math:`(r_x, r_y, t_r) \in [-5, 5]^2 \times [1, 30]`, goal drawn per seed."""
    return RobotPushProblem(3, seed=seed)


def robot_push4(seed: int = 0) -> RobotPushProblem:
    r"""``robot-push4``: adds the hand angle :math:`\theta \in [0, 2\pi]` (the paper's box)."""
    return RobotPushProblem(4, seed=seed)
