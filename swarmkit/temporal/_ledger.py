"""A spend ledger whose reservations and settlements, inside a workflow, are activities."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict

from temporalio import workflow

from swarmkit.ledger import Ledger, Refused, Reservation
from swarmkit.models import Usage
from swarmkit.temporal._activities import RESERVE_ACTIVITY, SETTLE_ACTIVITY
from swarmkit.temporal._data import LedgerCallInput
from swarmkit.temporal._options import execute
from swarmkit.temporal._registry import active


class ActivityLedger(Ledger):
    """The same ledger (budgets, prices, settings), each call an activity on the worker's
    own ledger: a replayed workflow reads the activity's result from its history and never
    reserves or charges again; a retried settlement charges once (keyed by the
    reservation's id)."""

    def __init__(self, ledger: Ledger, swarm: str) -> None:
        self.__dict__.update(ledger.__dict__)
        self.inner = ledger
        """The ledger it reaches through activities."""
        self.swarm = swarm
        """The swarm's name in the workers' registry."""

    async def reserve(
        self, *, session_id: str, facts: Mapping[str, str], estimate: Usage
    ) -> Reservation | Refused:
        """The reservation, as an activity inside a workflow (in place outside one)."""
        if not workflow.in_workflow():
            return await self.inner.reserve(session_id=session_id, facts=facts, estimate=estimate)
        call = LedgerCallInput(
            swarm=self.swarm, session_id=session_id, facts=dict(facts), usage=asdict(estimate)
        )
        data = await execute(
            RESERVE_ACTIVITY, call, active(workflow.info().task_queue).model_options
        )
        if data["kind"] == "refused":
            return Refused(**data["refused"])
        return Reservation.from_data(data["reservation"])

    async def settle(self, reservation: Reservation, usage: Usage) -> bool:
        """The settlement, as an activity inside a workflow (in place outside one)."""
        if not workflow.in_workflow():
            return await self.inner.settle(reservation, usage)
        call = LedgerCallInput(
            swarm=self.swarm, reservation=reservation.to_data(), usage=asdict(usage)
        )
        data = await execute(
            SETTLE_ACTIVITY, call, active(workflow.info().task_queue).model_options
        )
        return bool(data["settled"])
