"""Sealed sessions as a chain, on SQLite and Postgres: a record forged in clear, records removed
from the end or the middle, records put in another order, and a writer without the key are
each refused with an error naming the session (and the record)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from swarmkit import Agent, JournalError, SQLiteJournal, Swarm, tool
from swarmkit.journal import AESGCMCipher, Journal, JournalCipher, JournalRecord, PostgresJournal
from swarmkit.testing import ScriptedModel, text, tool_call

KEY = AESGCMCipher({"k1": bytes(range(32))})
CHAINED = '{"chained":%'
"""A LIKE pattern of a sealed record's stored data."""
FORGED = {"stop_reason": "final_output", "final_output": "FORGED", "agent": "billing"}


@tool
def lookup(order: str) -> str:
    """Look an order up."""
    return f"order {order}: shipped"


def _swarm() -> Swarm:
    model = ScriptedModel(tool_call("lookup", order="A-1"), text("Shipped."))
    return Swarm([Agent(name="billing", tools=[lookup])], "billing", model=model)


@dataclass(frozen=True, kw_only=True)
class Store:
    """A journal location and a way to change its tables behind the journal's back."""

    kind: str
    location: str

    def journal(self, cipher: JournalCipher | None) -> Journal:
        """The journal at the location, with ``cipher`` (None: in clear)."""
        if self.kind == "sqlite":
            return SQLiteJournal(self.location, cipher=cipher)
        return PostgresJournal(self.location, cipher=cipher)

    def sql(self, statement: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run one statement (``{records}`` and ``{sessions}`` name the tables, ``?`` the
        parameters) as someone with access to the database but not to the key would."""
        if self.kind == "sqlite":
            tables = {"records": "records", "sessions": "sessions"}
            with sqlite3.connect(self.location) as conn:
                return conn.execute(statement.format(**tables), params).fetchall()
        import psycopg  # noqa: PLC0415 - the postgres extra

        tables = {"records": "swarmkit_records", "sessions": "swarmkit_sessions"}
        query = statement.format(**tables).replace("?", "%s")
        with psycopg.connect(self.location) as conn:
            cursor = conn.execute(query, params)
            return cursor.fetchall() if cursor.description else []


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    """An empty journal location, in an SQLite file and in a Postgres schema."""
    if request.param == "sqlite":
        return Store(kind="sqlite", location=str(tmp_path / "j.db"))
    return Store(kind="postgres", location=request.getfixturevalue("postgres_dsn"))


@asynccontextmanager
async def _opened(store: Store, cipher: JournalCipher | None = KEY) -> AsyncIterator[Journal]:
    journal = store.journal(cipher)
    try:
        yield journal
    finally:
        if isinstance(journal, PostgresJournal):
            await journal.aclose()
        else:
            journal.close()  # type: ignore[attr-defined]


async def _sealed_session(store: Store, session_id: str = "s1") -> int:
    """Run a session into the store with the key; how many records it wrote."""
    async with _opened(store) as journal:
        await _swarm().run("where is A-1?", session_id=session_id, journal=journal)
        return len(await journal.read(session_id))


async def _read_error(store: Store, session_id: str = "s1") -> str:
    async with _opened(store) as journal:
        with pytest.raises(JournalError) as caught:
            await journal.read(session_id)
    return str(caught.value)


async def test_a_record_forged_in_clear_is_refused_naming_it(store: Store) -> None:
    """A plain run_finished added to a sealed session is an error naming the record."""
    count = await _sealed_session(store)
    store.sql(
        "INSERT INTO {records} (session_id, seq, kind, data, written_at)"
        " VALUES ('s1', ?, 'run_finished', ?, 0)",
        (count, json.dumps(FORGED)),
    )
    store.sql("UPDATE {sessions} SET records = records + 1")

    error = await _read_error(store)

    assert f"record {count} ('run_finished') of session 's1'" in error
    assert "forged" in error and "FORGED" not in error


async def test_every_cut_of_the_end_of_a_session_is_detected(store: Store) -> None:
    """Records removed from the end, one after another down to none, never read as whole."""
    count = await _sealed_session(store)
    errors = []
    for seq in reversed(range(count)):
        store.sql("DELETE FROM {records} WHERE seq = ?", (seq,))
        store.sql("UPDATE {sessions} SET records = ?", (seq,))
        errors.append(await _read_error(store))

    assert all("its seal counts" in error and "removed" in error for error in errors), errors
    assert f"session 's1' holds {count - 1} records but its seal counts {count}" in errors[0]


async def test_a_record_removed_from_the_middle_is_detected(store: Store) -> None:
    """The record after the gap no longer follows the one before it."""
    await _sealed_session(store)
    store.sql("DELETE FROM {records} WHERE seq = 2")

    error = await _read_error(store)

    assert "record 3 ('tool_call') of session 's1' does not follow record 2" in error
    assert "removed, reordered or altered" in error


async def test_two_records_put_in_each_others_place_are_detected(store: Store) -> None:
    """Swapping two records (their seqs) is an error naming the first moved one."""
    await _sealed_session(store)
    store.sql("UPDATE {records} SET seq = -1 WHERE seq = 2")
    store.sql("UPDATE {records} SET seq = 2 WHERE seq = 3")
    store.sql("UPDATE {records} SET seq = 3 WHERE seq = -1")

    error = await _read_error(store)

    assert "record 2 ('tool_call') of session 's1'" in error
    assert "removed, reordered or altered" in error


async def test_a_writer_without_the_key_is_refused_and_writes_nothing(store: Store) -> None:
    """A keyless writer adds no session or step to a sealed journal; the error says what to set."""
    count = await _sealed_session(store)
    step = [JournalRecord(session_id="s1", seq=count, kind="note", data={"said": "clear"})]
    async with _opened(store, cipher=None) as plain:
        with pytest.raises(JournalError) as new_session:
            await _swarm().run("where is A-2?", session_id="s2", journal=plain)
        with pytest.raises(JournalError) as next_step:
            await plain.append(step)
        listed = [info.session_id for info in await plain.sessions()]
        next_seq = await plain.next_seq("s1")

    assert "session 's2' cannot be written in clear" in str(new_session.value)
    assert "session 's1' cannot be written in clear" in str(next_step.value)
    assert "SWARMKIT_JOURNAL_KEYS" in str(next_step.value)
    assert listed == ["s1"] and next_seq == count
    assert store.sql("SELECT count(*) FROM {records} WHERE data NOT LIKE ?", (CHAINED,)) == [(0,)]


async def test_a_session_forged_in_clear_is_refused_but_older_clear_ones_read(
    store: Store,
) -> None:
    """Sessions in clear from before encryption still read; one added in clear later does not."""
    async with _opened(store, cipher=None) as plain:
        await _swarm().run("where is A-0?", session_id="old", journal=plain)
    await _sealed_session(store, "new")
    store.sql(
        "INSERT INTO {sessions} (session_id, records, started_at, updated_at, finished,"
        " stop_reason, prompt, agents) SELECT 'evil', records, started_at, updated_at,"
        " finished, stop_reason, prompt, agents FROM {sessions} WHERE session_id = 'old'"
    )
    store.sql(
        "INSERT INTO {records} (session_id, seq, kind, data, written_at) SELECT 'evil', seq,"
        " kind, data, written_at FROM {records} WHERE session_id = 'old'"
    )

    async with _opened(store) as journal:
        old = await journal.read("old")
        new = await journal.read("new")
    error = await _read_error(store, "evil")

    assert old[-1].data["final_output"] == new[-1].data["final_output"] == "Shipped."
    assert "record 0 ('run_started') of session 'evil' is not chained" in error


async def test_a_journal_sealed_before_chains_reads_and_goes_on_chained(store: Store) -> None:
    """Records sealed without a chain still open; a step added with the key is chained."""
    async with _opened(store, cipher=None) as plain:
        await _swarm().run("where is A-1?", session_id="s1", journal=plain)
    for seq, kind, data in store.sql("SELECT seq, kind, data FROM {records}"):
        sealed = KEY.seal(data, context=f"s1\x1f{seq}\x1f{kind}")
        store.sql(
            "UPDATE {records} SET data = ? WHERE seq = ?",
            (json.dumps({"sealed": sealed}, separators=(",", ":")), seq),
        )

    async with _opened(store) as journal:
        before = await journal.read("s1")
        step = JournalRecord(session_id="s1", seq=len(before), kind="note", data={"n": 1})
        await journal.append([step])
        after = await journal.read("s1")
    stored = store.sql("SELECT data FROM {records} WHERE seq = ?", (len(before),))
    store.sql("DELETE FROM {records} WHERE seq = ?", (len(before),))

    assert before[-1].data["final_output"] == "Shipped."
    assert after[-1].data == {"n": 1} and stored[0][0].startswith('{"chained":')
    assert "its seal counts" in await _read_error(store)
