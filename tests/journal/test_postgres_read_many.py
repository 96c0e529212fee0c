"""Bulk reads of a Postgres journal: many sessions per statement, a sealed journal opened whole."""

from __future__ import annotations

import psycopg
import pytest

from swarmkit.exceptions import JournalError
from swarmkit.journal import AESGCMCipher, JournalRecord, PostgresJournal, read_many
from swarmkit.journal import _postgres as postgres

K1 = {"k1": bytes(range(32))}


def _step(session_id: str, *kinds: str) -> list[JournalRecord]:
    return [
        JournalRecord(session_id=session_id, seq=seq, kind=kind, data={"n": seq, "s": session_id})
        for seq, kind in enumerate(kinds)
    ]


async def test_read_many_spans_statements_and_equals_read(
    postgres_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Five sessions read two per statement: each session's kinds asked for, in seq order,
    equal to what ``read`` gives; an absent session left out."""
    monkeypatch.setattr(postgres, "_MANY_CHUNK", 2)
    journal = PostgresJournal(postgres_dsn)
    try:
        ids = [f"s{index}" for index in range(5)]
        for session_id in ids:
            await journal.append(_step(session_id, "run_started", "model_call", "handoff"))
        got = await read_many(
            journal, [*reversed(ids), "missing"], kinds=["handoff", "run_started"]
        )
        whole = await read_many(journal, ids)
        each = {session_id: await journal.read(session_id) for session_id in ids}
    finally:
        await journal.aclose()
    assert sorted(got) == ids
    for session_id in ids:
        assert [(r.seq, r.kind) for r in got[session_id]] == [(0, "run_started"), (2, "handoff")]
        assert got[session_id] == tuple(r for r in each[session_id] if r.seq != 1)
    assert whole == each


async def test_read_many_on_a_sealed_postgres_journal_opens_and_checks_each_session(
    postgres_dsn: str,
) -> None:
    """Sealed records are opened with the key; one tampered with in the table is refused, as
    ``read`` refuses it, and a reader without the key never gets the sealed text."""
    sealed = PostgresJournal(postgres_dsn, cipher=AESGCMCipher(K1))
    plain = PostgresJournal(postgres_dsn)
    try:
        await sealed.append(_step("s", "run_started", "shadow"))
        got = await read_many(sealed, ["s"], kinds=["shadow"])
        assert [(r.kind, r.data) for r in got["s"]] == [("shadow", {"n": 1, "s": "s"})]
        with pytest.raises(JournalError):
            await read_many(plain, ["s"], kinds=["shadow"])
        with psycopg.connect(postgres_dsn, autocommit=True) as conn:
            conn.execute("UPDATE swarmkit_records SET data = '{\"n\": 9}' WHERE seq = 1")
        with pytest.raises(JournalError):
            await read_many(sealed, ["s"], kinds=["shadow"])
    finally:
        await sealed.aclose()
        await plain.aclose()
