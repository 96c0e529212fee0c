"""The journal mirror as a workflow sees it: what it holds, written and read by activities."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from temporalio.exceptions import ApplicationError

from swarmkit.journal import JournalRecord
from swarmkit.lowlevel import people_notes
from swarmkit.temporal._activities import MIRROR_ACTIVITY, MIRROR_READ_ACTIVITY
from swarmkit.temporal._data import (
    MirrorInput,
    MirrorReadInput,
    json_size,
    record_from_data,
    record_to_data,
)
from swarmkit.temporal._options import execute
from swarmkit.temporal._registry import Registry

_END = 2**62
"""A seq past any session's last record."""


class WorkflowMirror:
    """A session's records in the worker's journal, tracked by a cursor: each session's (and
    each delegated sub-run's) next seq the journal holds. A continued run carries the cursor
    instead of the records; a write sends only what the cursor does not cover yet."""

    def __init__(self, registry: Registry, cursor: Mapping[str, int]) -> None:
        self._registry = registry
        self.cursor = dict(cursor)

    async def write(self, records: Sequence[JournalRecord]) -> None:
        """Mirror the records past the cursor, in batches under the payload limit."""
        fresh = [r for r in records if r.seq >= self.cursor.get(r.session_id, 0)]
        for batch in batches(fresh, self._page_bytes):
            await execute(
                MIRROR_ACTIVITY,
                MirrorInput(records=batch),
                self._registry.tool_options,
                result_type=None,
            )
        for record in fresh:
            self.cursor[record.session_id] = record.seq + 1

    async def read(self) -> list[JournalRecord]:
        """The records before the cursor, read back from the journal page by page."""
        records: list[JournalRecord] = []
        for session_id, stop in sorted(self.cursor.items()):
            start = 0
            while start < stop:
                page = await self._page(session_id, start, stop)
                records.extend(page)
                start = page[-1].seq + 1
        return records

    async def notes(self, session_id: str) -> list[JournalRecord]:
        """The people's notes (claims, replies) the journal holds past the cursor: written
        there while the session waited for a person. The cursor moves past them."""
        found: list[JournalRecord] = []
        start = self.cursor.get(session_id, 0)
        while page := await self._page(session_id, start, _END, missing_ok=True):
            found.extend(page)
            start = page[-1].seq + 1
        notes = list(people_notes(found))
        if notes != found:
            raise ApplicationError(
                f"the journal mirror holds records of session {session_id!r} that its "
                "workflow did not write, besides people's notes; a session on Temporal goes "
                "on only in its workflow (send the hand-back with decide)",
                type="JournalError",
                non_retryable=True,
            )
        self.cursor[session_id] = start
        return notes

    @property
    def _page_bytes(self) -> int:
        return self._registry.max_payload_bytes // 2

    async def _page(
        self, session_id: str, start: int, stop: int, *, missing_ok: bool = False
    ) -> list[JournalRecord]:
        page = MirrorReadInput(
            session_id=session_id, start=start, stop=stop, max_bytes=self._page_bytes
        )
        found = await execute(
            MIRROR_READ_ACTIVITY, page, self._registry.tool_options, result_type=list
        )
        if not found and not missing_ok:
            raise ApplicationError(
                f"the journal mirror lacks records {start} to {stop - 1} of session "
                f"{session_id!r} that an earlier run of this session wrote to it; "
                "every worker must mirror to the same journal",
                type="JournalError",
                non_retryable=True,
            )
        return [record_from_data(data) for data in found]


def batches(records: Sequence[JournalRecord], budget: int) -> Iterator[list[dict[str, Any]]]:
    """The records as data, in batches of at most ``budget`` JSON bytes (or one record)."""
    batch: list[dict[str, Any]] = []
    size = 0
    for record in records:
        data = record_to_data(record)
        weight = json_size(data)
        if batch and size + weight > budget:
            yield batch
            batch, size = [], 0
        batch.append(data)
        size += weight
    if batch:
        yield batch
