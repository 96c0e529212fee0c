"""A Temporal session's journal whose rules log is the worker journal's, through an activity.

The session's records live in the workflow (mirrored at pauses and at the end), but an
audited run reads the rules log's demotions at a rule's turn and appends its audits there:
each of those reads and writes is one activity, whose answer the workflow's history keeps,
so a replayed workflow reads the same answers and routes as it did, and every worker sees
the same demotions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from swarmkit.exceptions import JournalError
from swarmkit.journal import InMemoryJournal, Journal, JournalRecord
from swarmkit.lowlevel import RulesLogElsewhere
from swarmkit.shadow import RULES_LOG
from swarmkit.temporal._data import record_from_data, record_to_data
from swarmkit.temporal._options import ActivityOptions, execute

RULES_LOG_ACTIVITY = "swarmkit.rules_log"
"""The activity that reads or appends to the worker journal's rules log."""


async def rules_log_answer(journal: Journal, request: dict[str, Any]) -> dict[str, Any]:
    """What the activity answers: ``{"op": "next_seq"}`` the log's length, ``{"op": "read"}``
    its records, ``{"op": "append", "records": [...]}`` None or why the store refused it."""
    op = request.get("op")
    if op == "next_seq":
        return {"seq": await journal.next_seq(RULES_LOG)}
    if op == "read":
        return {"records": [record_to_data(r) for r in await journal.read(RULES_LOG)]}
    records = [record_from_data(data) for data in request.get("records", [])]
    if op != "append" or any(r.session_id != RULES_LOG for r in records):
        return {"refused": "the rules log activity only reads and appends to the rules log"}
    try:
        await journal.append(records)
    except JournalError as exc:
        return {"refused": str(exc)}
    return {"refused": None}


class SessionJournal(RulesLogElsewhere):
    """The session's records in ``local``; the rules log in the worker's journal, through
    the rules log activity."""

    def __init__(self, local: InMemoryJournal, options: ActivityOptions) -> None:
        super().__init__(local)
        self.options = options

    async def _ask(self, request: dict[str, Any]) -> dict[str, Any]:
        answer: dict[str, Any] = await execute(RULES_LOG_ACTIVITY, request, self.options)
        return answer

    async def append_rules_log(self, records: Sequence[JournalRecord]) -> None:
        """A rules log record to the worker's journal."""
        answer = await self._ask({"op": "append", "records": [record_to_data(r) for r in records]})
        if answer.get("refused"):
            raise JournalError(str(answer["refused"]))

    async def read_rules_log(self) -> tuple[JournalRecord, ...]:
        """The rules log's records as the activity's answer."""
        answer = await self._ask({"op": "read"})
        return tuple(record_from_data(data) for data in answer["records"])

    async def rules_log_next_seq(self) -> int:
        """The rules log's next seq (its version) as the activity's answer."""
        return int((await self._ask({"op": "next_seq"}))["seq"])
