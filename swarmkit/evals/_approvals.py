"""The simulated supervisor who answers a task's pauses for approval, and the swarm under
evaluation with it as the decision source, derived once per answer rather than per trial."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from swarmkit.evals._tasks import Task
from swarmkit.interrupts import Decision, PendingDecision, approve, reject
from swarmkit.swarm import Swarm

SwarmSource = Swarm | Callable[[Task, int], Swarm]
"""The swarm under evaluation, or a function (task, trial number) -> Swarm for a fresh one per
trial (a scripted model per trial, say)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Approver:
    """The simulated human who answers a task's pauses for approval."""

    answer: Literal["approve", "reject"]
    """What they answer every time."""

    async def decide(self, pending: PendingDecision) -> Decision | None:
        """Approve, or reject with a reason, as the task says."""
        return approve() if self.answer == "approve" else reject("the approver declined")


class ApprovingSwarms:
    """The swarm each trial runs: the source's, answering pauses as the trial's task says.

    One swarm is derived once per answer and shared by every trial (a derived swarm holds
    its own sessions and redactor, which cost more to build than a short dialogue to run); a
    source that builds a swarm per trial gets its approver per trial.
    """

    def __init__(self, source: SwarmSource) -> None:
        self._source = source
        self._derived: dict[str, Swarm] = {}

    def for_trial(self, task: Task, number: int) -> Swarm:
        """The approving swarm for trial ``number`` of ``task``."""
        source = self._source
        if not isinstance(source, Swarm):
            return source(task, number).with_seams(decisions=Approver(answer=task.approvals))
        derived = self._derived.get(task.approvals)
        if derived is None:
            derived = source.with_seams(decisions=Approver(answer=task.approvals))
            self._derived[task.approvals] = derived
        return derived
