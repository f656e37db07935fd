r"""What a benchmark problem may tell a rule about itself.

Some rules need facts about the task they run on that are not data: the candidate priors of a
prior-selection task (PE-GP-TS and HP-GP-TS select among them), the true prior :math:`p^*`
(the oracle baselines use it; every prior rule logs it), or the fixed GP hyperparameters of a
benchmark's surrogate (the TS-RSR paper's baselines run on them). A problem hands them over as
one :class:`TaskInfo` object through :meth:`~botorch_unknown_hypers.policies.base.Policy.bind_task`,
which :func:`~botorch_unknown_hypers.loop.run` calls once per run; rules never look a task up
by name, and the library never imports the benchmark problems.
"""

from __future__ import annotations

from dataclasses import dataclass

from botorch_unknown_hypers.models.fixed_gp import SurrogateSpec
from botorch_unknown_hypers.models.tabular_priors import TabularPriors


@dataclass(frozen=True)
class TaskInfo:
    r"""Facts a problem tells a rule; every field is optional.

    Attributes:
        name: The task's name (logged in saved states).
        priors: The candidate priors of a prior-selection task (``K`` priors over the pool).
        true_prior: Index of the prior the objective was drawn from, :math:`p^*`.
        surrogate: Fixed hyperparameters of the benchmark's surrogate GP.
    """

    name: str | None = None
    priors: TabularPriors | None = None
    true_prior: int | None = None
    surrogate: SurrogateSpec | None = None

    def __post_init__(self) -> None:
        if self.priors is not None and not isinstance(self.priors, TabularPriors):
            raise ValueError(f"priors must be TabularPriors or None, got {type(self.priors).__name__}.")
        if self.true_prior is not None:
            if type(self.true_prior) is not int or self.true_prior < 0:
                raise ValueError(f"true_prior must be a non-negative int or None, got {self.true_prior!r}.")
            if self.priors is not None and self.true_prior >= len(self.priors):
                raise ValueError(f"true_prior {self.true_prior} is not one of the {len(self.priors)} priors.")
        if self.surrogate is not None and not isinstance(self.surrogate, SurrogateSpec):
            raise ValueError(f"surrogate must be a SurrogateSpec or None, got {type(self.surrogate).__name__}.")
