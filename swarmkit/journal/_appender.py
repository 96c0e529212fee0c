"""The appender: numbers a live run's new records and writes them a step at a time, under the
session's lease."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from swarmkit.exceptions import JournalError
from swarmkit.journal._records import Journal, JournalRecord, RecordSink


@dataclass(frozen=True, kw_only=True, slots=True)
class LeaseTerms:
    """The lease a writing run holds on its session."""

    owner: str
    """This writer's name, shown to a refused second writer."""
    ttl: float
    """Seconds the lease lasts unless renewed; renewed at writes once half of it has passed."""
    clock: Callable[[], float]
    """The run's clock, to know when to renew (expiry itself is the journal's clock)."""


class Appender:
    """Holds a run's new records until their step is written, in one transaction.

    A write that fails is never dropped: the error goes up and the appender writes nothing
    more, so a run that lost its session cannot write into it later.
    """

    __slots__ = (
        "_clock",
        "_lease",
        "_leased_at",
        "_next_seq",
        "_pending",
        "_session_id",
        "_sink",
        "broken",
        "holds_costly",
    )

    def __init__(
        self,
        sink: RecordSink,
        session_id: str,
        *,
        next_seq: int,
        lease: tuple[Journal, LeaseTerms] | None,
        clock: Callable[[], float] | None,
    ) -> None:
        self._sink = sink
        self._session_id = session_id
        self._next_seq = next_seq
        self._lease = lease
        self._leased_at: float | None = None
        self._clock = clock
        self._pending: list[JournalRecord] = []
        self.holds_costly = False
        """Whether a model or tool call's record waits to be written (what a crash must never
        make the run repeat)."""
        self.broken = False
        """Whether a write failed (nothing more is written)."""

    def add(self, kind: str, data: Mapping[str, Any]) -> JournalRecord:
        """A new record, numbered next and held until the step is written."""
        at = None if self._clock is None else self._clock()
        record = JournalRecord(
            session_id=self._session_id, seq=self._next_seq, kind=kind, data=data, at=at
        )
        self._pending.append(record)
        self._next_seq += 1
        if kind in _COSTLY:
            self.holds_costly = True
        return record

    async def open(self, copied: Sequence[JournalRecord] = ()) -> None:
        """Take the session's lease before the first write (``SessionBusyError`` if held),
        then write the ``copied`` records a fork starts with."""
        if self._lease is not None:
            await self._renew(*self._lease)
        if copied:
            try:
                await self._sink.append(copied)
            except BaseException:
                await self.release()
                raise

    async def flush(self) -> None:
        """Write the pending records as one transaction (one step)."""
        if not self._pending or self.broken:
            return
        records, self._pending, self.holds_costly = self._pending, [], False
        try:
            if self._lease is not None and self._lease_due(self._lease[1]):
                await self._renew(*self._lease)
            await self._sink.append(records)
        except BaseException as exc:
            self.broken = True
            if isinstance(exc, JournalError) or not isinstance(exc, Exception):
                raise
            raise JournalError(
                f"cannot write step {records[0].seq} of session {self._session_id!r}: {exc}"
            ) from exc

    async def release(self) -> None:
        """Give up the session's lease (a run that ended, paused or crashed in this process)."""
        if self._lease is not None and self._leased_at is not None:
            self._leased_at = None
            journal, terms = self._lease
            await journal.release_lease(self._session_id, owner=terms.owner)

    async def _renew(self, journal: Journal, terms: LeaseTerms) -> None:
        await journal.acquire_lease(self._session_id, owner=terms.owner, ttl=terms.ttl)
        self._leased_at = terms.clock()

    def _lease_due(self, terms: LeaseTerms) -> bool:
        return self._leased_at is None or terms.clock() - self._leased_at > terms.ttl / 2


_COSTLY = frozenset({"model_call", "tool_call"})
