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
from swarmkit.journal import InMemoryJournal, Journal, JournalRecord
from swarmkit.lowlevel import RulesLogElsewhere
from swarmkit.shadow import RULES_LOG

RULES_STEP = "swarmkit.rules-log"
"""The name of the steps that read and append the shared rules log."""


class SessionJournal(RulesLogElsewhere):
    """The session's records in ``local``; the rules log in ``shared`` through DBOS steps."""

    def __init__(self, local: InMemoryJournal, shared: Journal | None) -> None:
        super().__init__(local)
        self.shared = shared

    def keeps_elsewhere(self, session_id: str) -> bool:
        """The rules log's records, when there is a shared journal to keep them."""
        return self.shared is not None and super().keeps_elsewhere(session_id)

    async def append_rules_log(self, records: Sequence[JournalRecord]) -> None:
        """A rules log record to the shared journal, as a step."""
        assert self.shared is not None  # keeps_elsewhere says so
        failure = await DBOS.run_step_async(_options(), _append, self.shared, list(records))
        if failure is not None:
            raise JournalError(failure)

    async def read_rules_log(self) -> tuple[JournalRecord, ...]:
        """The rules log's records as a step's recorded answer."""
        assert self.shared is not None  # keeps_elsewhere says so
        rows = await DBOS.run_step_async(_options(), _read, self.shared)
        return tuple(_record(row) for row in rows)

    async def rules_log_next_seq(self) -> int:
        """The rules log's next seq (its version) as a step's recorded answer."""
        assert self.shared is not None  # keeps_elsewhere says so
        return int(await DBOS.run_step_async(_options(), self.shared.next_seq, RULES_LOG))


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
