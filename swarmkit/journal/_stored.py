"""A session's records as its store read them, each decoded only when a replay reaches it."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Protocol, overload, runtime_checkable

from swarmkit.journal._records import Journal, JournalRecord, decode_record

_DECODE = json.JSONDecoder().raw_decode

StoredRow = tuple[int, str, object, object]
"""A record as stored: its seq, kind, data as JSON text, and time."""


class StoredRecords(Sequence[JournalRecord]):
    """A session's stored rows read as records, each decoded when it is read and not kept.

    A strict replay walks its records once, in order: holding their text (which the garbage
    collector never scans) instead of thousands of decoded dicts keeps a long replay's heap
    small, and each record is decoded while it is used. Reading a record twice decodes it
    twice; a record that cannot be decoded raises ``JournalError`` when it is read.
    """

    __slots__ = ("_rows", "_session_id")

    def __init__(self, session_id: str, rows: Sequence[StoredRow]) -> None:
        self._session_id = session_id
        self._rows = rows

    def __len__(self) -> int:
        return len(self._rows)

    @overload
    def __getitem__(self, index: int) -> JournalRecord: ...

    @overload
    def __getitem__(self, index: slice) -> StoredRecords: ...

    def __getitem__(self, index: int | slice) -> JournalRecord | StoredRecords:
        if isinstance(index, slice):
            return StoredRecords(self._session_id, self._rows[index])
        seq, kind, text, at = self._rows[index]
        if type(text) is str and type(at) is float:
            # What our encoder wrote (a JSON object, nothing around it) is read in one step;
            # anything else goes through ``decode_record``, its checks and its errors.
            try:
                data, end = _DECODE(text)
            except (ValueError, RecursionError):
                end = -1
            if end == len(text) and type(data) is dict:
                return JournalRecord(
                    session_id=self._session_id, seq=seq, kind=kind, data=data, at=at
                )
        return decode_record(self._session_id, seq, kind, text, at)

    def kind(self, index: int) -> str:
        """The kind of the record at ``index``, read without decoding it."""
        return self._rows[index][1]

    def kinds(self) -> list[str]:
        """Every record's kind, in order, read without decoding any."""
        return [row[1] for row in self._rows]

    def only(self, indices: Iterable[int]) -> StoredRecords:
        """The records at ``indices``, in that order, still undecoded."""
        rows = self._rows
        return StoredRecords(self._session_id, [rows[index] for index in indices])


@runtime_checkable
class StoredReader(Protocol):
    """A store that can hand a session's records over undecoded (SQLite's)."""

    async def read_stored(self, session_id: str) -> StoredRecords:
        """Every record of the session in seq order, each decoded when it is read."""
        ...


async def read_for_replay(store: Journal, session_id: str) -> Sequence[JournalRecord]:
    """A session's records for a strict replay: undecoded where the store can hand them over
    so (each is decoded as the replay reaches it), else as ``read`` returns them."""
    if isinstance(store, StoredReader):
        return await store.read_stored(session_id)
    return await store.read(session_id)


def kinds_of(records: Sequence[JournalRecord]) -> Sequence[str]:
    """Each record's kind, in order, without decoding stored records."""
    if isinstance(records, StoredRecords):
        return records.kinds()
    return [record.kind for record in records]


def records_at(records: Sequence[JournalRecord], indices: Sequence[int]) -> Sequence[JournalRecord]:
    """The records at ``indices`` (all of them: ``records`` itself), stored ones undecoded."""
    if len(indices) == len(records):
        return records
    if isinstance(records, StoredRecords):
        return records.only(indices)
    return tuple(records[index] for index in indices)
