"""A spend ledger whose reservations and settlements, inside a DBOS session, are recorded steps."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

from dbos import DBOS

from swarmkit.dbos._steps import current_session, step_options
from swarmkit.ledger import Ledger, Refused, Reservation
from swarmkit.models import Usage

RESERVE_STEP = "swarmkit.ledger.reserve"
SETTLE_STEP = "swarmkit.ledger.settle"


class StepLedger(Ledger):
    """The same ledger (store, budgets, prices, settings), each call a recorded step: a
    recovered session reads a finished reservation or settlement back and never charges it
    again. A step a crash cut short runs again: its first hold, if any, expires after
    ``hold_seconds``; a settlement already made is not made twice (it is keyed by the
    reservation's id)."""

    def __init__(self, ledger: Ledger) -> None:
        self.__dict__.update(ledger.__dict__)
        self.inner = ledger
        """The ledger it records the calls of."""

    async def reserve(
        self, *, session_id: str, facts: Mapping[str, str], estimate: Usage
    ) -> Reservation | Refused:
        """The reservation, as a step inside a session (in place outside one)."""
        if current_session() is None:
            return await self.inner.reserve(session_id=session_id, facts=facts, estimate=estimate)
        data = await DBOS.run_step_async(
            step_options(RESERVE_STEP), self._reserve, session_id, dict(facts), estimate
        )
        if data["kind"] == "refused":
            return Refused(**data["refused"])
        return Reservation.from_data(data["reservation"])

    async def settle(self, reservation: Reservation, usage: Usage) -> bool:
        """The settlement, as a step inside a session (in place outside one)."""
        if current_session() is None:
            return await self.inner.settle(reservation, usage)
        settled: bool = await DBOS.run_step_async(
            step_options(SETTLE_STEP), self.inner.settle, reservation, usage
        )
        return settled

    async def _reserve(
        self, session_id: str, facts: dict[str, str], estimate: Usage
    ) -> dict[str, Any]:
        outcome = await self.inner.reserve(session_id=session_id, facts=facts, estimate=estimate)
        if isinstance(outcome, Refused):
            return {"kind": "refused", "refused": asdict(outcome)}
        return {"kind": "reserved", "reservation": outcome.to_data()}
