"""Reading many sessions at once, only the record kinds asked for (the rules' bulk reads)."""

from __future__ import annotations

import gc
from collections.abc import Collection, Sequence
from typing import Any

from swarmkit.exceptions import SessionNotFoundError
from swarmkit.journal._records import Journal, JournalRecord, decode_record


async def read_many(
    journal: Journal, session_ids: Sequence[str], *, kinds: Collection[str] | None = None
) -> dict[str, tuple[JournalRecord, ...]]:
    """Each listed session's records (only ``kinds``, when given) in seq order; a session the
    journal lacks is left out. A store with a ``read_many`` method (SQLite, memory) answers
    in bulk and decodes only the kinds asked for; any other reads session by session."""
    if kinds is not None and not kinds:
        return {}
    bulk = getattr(journal, "read_many", None)
    if bulk is not None:
        found: dict[str, tuple[JournalRecord, ...]] = await bulk(session_ids, kinds=kinds)
        return found
    return await read_each(journal, session_ids, kinds)


async def read_each(
    journal: Journal, session_ids: Sequence[str], kinds: Collection[str] | None
) -> dict[str, tuple[JournalRecord, ...]]:
    """``read_many`` one session at a time, through ``Journal.read``."""
    wanted = None if kinds is None else frozenset(kinds)
    found: dict[str, tuple[JournalRecord, ...]] = {}
    for session_id in dict.fromkeys(session_ids):
        try:
            records = await journal.read(session_id)
        except SessionNotFoundError:
            continue
        found[session_id] = (
            records if wanted is None else tuple(r for r in records if r.kind in wanted)
        )
    return found


def decode_many(rows: Sequence[tuple[Any, ...]]) -> dict[str, tuple[JournalRecord, ...]]:
    """Rows of (session id, seq, kind, data text, time), ordered by session, decoded with the
    cyclic collector paused (see ``decode_records``)."""
    grouped: dict[str, list[JournalRecord]] = {}
    paused = gc.isenabled()
    gc.disable()
    try:
        for session_id, seq, kind, text, at in rows:
            grouped.setdefault(session_id, []).append(
                decode_record(session_id, seq, kind, text, at)
            )
    finally:
        if paused:
            gc.enable()
    return {session_id: tuple(records) for session_id, records in grouped.items()}
