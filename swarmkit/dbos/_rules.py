"""A DBOS session's journal whose rules log is the shared one, read and written in steps.

A session's records go to its in-workflow journal (mirrored at pauses and at the end), but
an audited run reads the rules log's demotions at a rule's turn and appends its audits: those
go to the shared journal, each read and write one recorded step, so a recovered session gets
the same answers back and routes as it did, and every worker sees the same demotions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dbos import DBOS, StepOptions

from swarmkit.exceptions import JournalError
from swarmkit.journal import InMemoryJournal, Journal, JournalRecord, SessionInfo
from swarmkit.shadow import RULES_LOG

RULES_STEP = "swarmkit.rules-log"
"""The name of the steps that read and append the shared rules log."""


class SessionJournal:
    """The session's records in ``local``; the rules log in ``shared`` through DBOS steps."""

    def __init__(self, local: InMemoryJournal, shared: Journal | None) -> None:
        self.local = local
        self.shared = shared

    def _steps(self, session_id: str) -> Journal | None:
        return self.shared if session_id == RULES_LOG else None

    async def append(self, records: Sequence[JournalRecord]) -> None:
        """A session's step locally; a rules log record to the shared journal, as a step."""
        shared = self._steps(records[0].session_id) if records else None
        if shared is None:
            await self.local.append(records)
            return
        failure = await DBOS.run_step_async(_options(), _append, shared, list(records))
        if failure is not None:
            raise JournalError(failure)

    async def read(self, session_id: str) -> tuple[JournalRecord, ...]:
        """A session's records; the rules log's as a step's recorded answer."""
        shared = self._steps(session_id)
        if shared is None:
            return await self.local.read(session_id)
        rows = await DBOS.run_step_async(_options(), _read, shared)
        return tuple(_record(row) for row in rows)

    async def next_seq(self, session_id: str) -> int:
        """The next seq; the rules log's (its version) as a step's recorded answer."""
        shared = self._steps(session_id)
        if shared is None:
            return await self.local.next_seq(session_id)
        return int(await DBOS.run_step_async(_options(), shared.next_seq, RULES_LOG))

    async def sessions(self) -> tuple[SessionInfo, ...]:
        """The in-workflow sessions (what the mirror copies)."""
        return await self.local.sessions()

    async def delete(self, session_id: str) -> None:
        """Delete an in-workflow session."""
        await self.local.delete(session_id)

    async def acquire_lease(self, session_id: str, *, owner: str, ttl: float) -> None:
        """The in-workflow journal's lease."""
        await self.local.acquire_lease(session_id, owner=owner, ttl=ttl)

    async def release_lease(self, session_id: str, *, owner: str) -> None:
        """The in-workflow journal's lease."""
        await self.local.release_lease(session_id, owner=owner)


async def _append(journal: Journal, records: list[JournalRecord]) -> str | None:
    """The append step: None, or why the store refused it (a race, recorded as data)."""
    try:
        await journal.append(records)
    except JournalError as exc:
        return str(exc)
    return None


async def _read(journal: Journal) -> list[dict[str, Any]]:
    return [
        {"seq": r.seq, "kind": r.kind, "data": dict(r.data), "at": r.at}
        for r in await journal.read(RULES_LOG)
    ]


def _record(row: dict[str, Any]) -> JournalRecord:
    return JournalRecord(
        session_id=RULES_LOG, seq=row["seq"], kind=row["kind"], data=row["data"], at=row["at"]
    )


def _options() -> StepOptions:
    return {"name": RULES_STEP, "retries_allowed": False}
