"""Reading many sessions at once, only the record kinds asked for (the rules' bulk reads)."""

from __future__ import annotations

import gc
from collections.abc import Collection, Sequence
from dataclasses import replace
from typing import Any

from swarmkit.exceptions import SessionNotFoundError
from swarmkit.journal._records import (
    Journal,
    JournalRecord,
    Leading,
    decode_leading,
    decode_record,
    leading_heads,
)


async def read_many(
    journal: Journal,
    session_ids: Sequence[str],
    *,
    kinds: Collection[str] | None = None,
    leading: Leading = None,
) -> dict[str, tuple[JournalRecord, ...]]:
    """Each listed session's records (only ``kinds``, when given) in seq order; a session the
    journal lacks is left out. A store with a ``read_many`` method (SQLite, Postgres, memory)
    answers in bulk and decodes only the kinds asked for; any other reads session by session.

    ``leading`` (record kind -> member names, ``{"model_call": ("shadow", "agent")}``) reads
    the records of those kinds too, for their leading members alone where the first is the
    first named: their data holds those named that follow in that order, and those that
    start with another member are left out. A store answering in bulk parses just those
    members of the stored text; a journal read whole (sealed, or another store) drops the
    rest after decoding it all."""
    if kinds is not None and not kinds and not leading:
        return {}
    bulk = getattr(journal, "read_many", None)
    if bulk is not None:
        found: dict[str, tuple[JournalRecord, ...]] = await (
            bulk(session_ids, kinds=kinds)
            if leading is None
            else bulk(session_ids, kinds=kinds, leading=leading)
        )
        return found
    return await read_each(journal, session_ids, kinds, leading)


async def read_each(
    journal: Journal,
    session_ids: Sequence[str],
    kinds: Collection[str] | None,
    leading: Leading = None,
) -> dict[str, tuple[JournalRecord, ...]]:
    """``read_many`` one session at a time, through ``Journal.read``."""
    wanted = None if kinds is None else frozenset({*kinds, *(leading or ())})
    found: dict[str, tuple[JournalRecord, ...]] = {}
    for session_id in dict.fromkeys(session_ids):
        try:
            records = await journal.read(session_id)
        except SessionNotFoundError:
            continue
        if wanted is not None:
            records = tuple(r for r in records if r.kind in wanted)
        found[session_id] = records if not leading else _led(records, leading)
    return found


def _led(records: Sequence[JournalRecord], leading: Leading) -> tuple[JournalRecord, ...]:
    """Decoded records as ``leading`` reads them: those of its kinds cut to their member."""
    assert leading is not None
    kept: list[JournalRecord] = []
    for record in records:
        names = leading.get(record.kind)
        if names is None:
            kept.append(record)
        elif next(iter(record.data), None) == names[0]:
            data: dict[str, Any] = {}
            for name, key in zip(names, record.data, strict=False):
                if name != key:
                    break
                data[name] = record.data[name]
            kept.append(replace(record, data=data))
    return tuple(kept)


def decode_many(
    rows: Sequence[tuple[Any, ...]], leading: Leading = None
) -> dict[str, tuple[JournalRecord, ...]]:
    """Rows of (session id, seq, kind, data text, time), ordered by session, decoded with the
    cyclic collector paused (see ``decode_records``); those of a ``leading`` kind read for
    their member alone (see ``read_many``)."""
    grouped: dict[str, list[JournalRecord]] = {}
    heads = {kind: leading_heads(names) for kind, names in (leading or {}).items()}
    paused = gc.isenabled()
    gc.disable()
    try:
        for session_id, seq, kind, text, at in rows:
            led = heads.get(kind) if heads else None
            if led is None:
                record = decode_record(session_id, seq, kind, text, at)
            else:
                found = decode_leading(session_id, seq, kind, text, at, heads=led)
                if found is None:
                    continue
                record = found
            grouped.setdefault(session_id, []).append(record)
    finally:
        if paused:
            gc.enable()
    return {session_id: tuple(records) for session_id, records in grouped.items()}
