"""Encryption at rest: record bodies and prompts sealed with AES-GCM in SQLite and Postgres;
ids, kinds, seqs and times in clear; replay, resume, export and the viewer work with the key,
and a missing or wrong key is a clear error (issue 33)."""

from __future__ import annotations

import asyncio
import base64
import os
import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest

from swarmkit import Agent, JournalError, SQLiteJournal, Swarm, tool
from swarmkit.cli import main
from swarmkit.journal import (
    AESGCMCipher,
    Journal,
    PostgresJournal,
    export_jsonl,
    generate_key,
    open_journal,
)
from swarmkit.testing import ScriptedModel, text, tool_call
from swarmkit.ui import Viewer

PROMPT = "refund invoice INV-SECRET-7"
K1 = {"k1": bytes(range(32))}
K2 = {"k2": bytes(range(32, 64))}


@tool
def lookup(order: str) -> str:
    """Look an order up."""
    return f"order {order}: card ending 4242-PRIVATE"


def _swarm(*turns: object) -> Swarm:
    model = ScriptedModel(*(turns or (tool_call("lookup", order="A-1"), text("Refunded."))))  # type: ignore[arg-type]
    return Swarm([Agent(name="billing", tools=[lookup])], "billing", model=model)


async def test_sqlite_seals_bodies_and_prompts_and_keeps_the_index_in_clear(
    tmp_path: Path,
) -> None:
    """The file holds no prompt or tool output; kinds, seqs and ids are plain columns, and
    with the key, reading, listing and replaying work."""
    path = tmp_path / "j.db"
    with SQLiteJournal(path, cipher=AESGCMCipher(K1)) as journal:
        await _swarm().run(PROMPT, session_id="s1", journal=journal)
        listed = await journal.sessions()
        records = await journal.read("s1")
        replayed = await _swarm().replay("s1", journal)

    raw = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    with sqlite3.connect(path) as conn:
        kinds = [row[0] for row in conn.execute("SELECT kind FROM records ORDER BY seq")]
    assert b"INV-SECRET" not in raw and b"PRIVATE" not in raw
    assert kinds[0] == "run_started" and kinds[-1] == "run_finished"
    assert listed[0].prompt == PROMPT
    assert records[0].data["prompt"] == PROMPT
    assert replayed.final_output == "Refunded."


async def test_a_missing_or_wrong_key_is_a_clear_error(tmp_path: Path) -> None:
    """Without a cipher the records say they are encrypted; with another key, that it does
    not open; the listing shows the prompt as encrypted, never garbage."""
    path = tmp_path / "j.db"
    with SQLiteJournal(path, cipher=AESGCMCipher(K1)) as journal:
        await _swarm().run(PROMPT, session_id="s1", journal=journal)

    with SQLiteJournal(path) as plain:
        with pytest.raises(JournalError, match="is encrypted: open the journal with cipher="):
            await plain.read("s1")
        listed = await plain.sessions()
    wrong = AESGCMCipher({"k1": bytes(32)})
    with (
        SQLiteJournal(path, cipher=wrong) as journal,
        pytest.raises(JournalError, match="does not open with key 'k1': the key is wrong"),
    ):
        await journal.read("s1")

    assert listed[0].session_id == "s1" and listed[0].prompt == "[encrypted]"


async def test_key_rotation_reads_old_records_with_the_old_key(tmp_path: Path) -> None:
    """A new current key seals new sessions; old ones open while the old key is kept, and
    dropping it says which key a record needs."""
    path = tmp_path / "j.db"
    with SQLiteJournal(path, cipher=AESGCMCipher(K1)) as journal:
        await _swarm().run(PROMPT, session_id="old", journal=journal)

    rotated = AESGCMCipher({**K2, **K1}, current="k2")
    with SQLiteJournal(path, cipher=rotated) as journal:
        await _swarm().run(PROMPT, session_id="new", journal=journal)
        both = [len(await journal.read(s)) for s in ("old", "new")]
        resumed_replay = await _swarm().replay("old", journal)
    with SQLiteJournal(path, cipher=AESGCMCipher(K2)) as journal:
        new = await journal.read("new")
        with pytest.raises(JournalError, match="sealed with key 'k1'"):
            await journal.read("old")

    assert both[0] == both[1] == len(new)
    assert resumed_replay.final_output == "Refunded."


async def test_a_crashed_encrypted_run_resumes(tmp_path: Path) -> None:
    """resume() reads the sealed steps back and goes on."""
    journal = SQLiteJournal(tmp_path / "j.db", cipher=AESGCMCipher(K1))
    with pytest.raises(AssertionError):  # the script ends after the tool: the run dies
        await _swarm(tool_call("lookup", order="A-1")).run(PROMPT, session_id="s", journal=journal)

    resumed = await _swarm(text("Refunded.")).resume("s", journal)

    assert resumed.final_output == "Refunded."
    journal.close()


async def test_postgres_seals_bodies_and_refuses_a_wrong_key(postgres_dsn: str) -> None:
    """The same on Postgres: the data column holds no prompt; the key reads; another fails."""
    import psycopg  # noqa: PLC0415 - the postgres extra

    journal = PostgresJournal(postgres_dsn, cipher=AESGCMCipher(K1))
    other = PostgresJournal(postgres_dsn, cipher=AESGCMCipher({"k1": bytes(32)}))
    try:
        await _swarm().run(PROMPT, session_id="s1", journal=journal)
        records = await journal.read("s1")
        listed = await journal.sessions()
        with pytest.raises(JournalError, match="does not open with key 'k1'"):
            await other.read("s1")
    finally:
        await journal.aclose()
        await other.aclose()
    with psycopg.connect(postgres_dsn) as conn:
        stored = " ".join(row[0] for row in conn.execute("SELECT data FROM swarmkit_records"))
        prompts = [row[0] for row in conn.execute("SELECT prompt FROM swarmkit_sessions")]

    assert "INV-SECRET" not in stored and "PRIVATE" not in stored
    assert "INV-SECRET" not in str(prompts)
    assert records[0].data["prompt"] == PROMPT and listed[0].prompt == PROMPT


async def test_the_viewer_and_export_read_an_encrypted_journal(tmp_path: Path) -> None:
    """The viewer over a journal with the key shows the steps; export decrypts with it."""
    journal: Journal
    with SQLiteJournal(tmp_path / "j.db", cipher=AESGCMCipher(K1)) as journal:
        await _swarm().run(PROMPT, session_id="s1", journal=journal)
        reply = await Viewer(journal).api("GET", "/api/sessions/s1", {})
        exported = export_jsonl(await journal.read("s1"))

    assert reply.status == 200 and reply.body["steps"][0]["data"]["prompt"] == PROMPT
    assert PROMPT in exported


def test_the_commands_take_the_keys_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`swarmkit export` decrypts with $SWARMKIT_JOURNAL_KEYS; without it, says what to set."""
    path = tmp_path / "j.db"
    key = generate_key()
    cipher = AESGCMCipher({"main": base64.b64decode(key)})
    with SQLiteJournal(path, cipher=cipher) as journal:
        asyncio.run(_swarm().run(PROMPT, session_id="s1", journal=journal))

    monkeypatch.delenv("SWARMKIT_JOURNAL_KEYS", raising=False)
    refused = main(["export", "s1", "--journal", str(path)])
    error = capsys.readouterr().err
    monkeypatch.setenv("SWARMKIT_JOURNAL_KEYS", f"main:{key}")
    exported = main(["export", "s1", "--journal", str(path)])
    out = capsys.readouterr().out

    assert refused != 0 and "SWARMKIT_JOURNAL_KEYS" in error
    assert exported == 0 and PROMPT in out


def _keyed(monkeypatch: pytest.MonkeyPatch) -> AESGCMCipher:
    """Set $SWARMKIT_JOURNAL_KEYS to a new key; the cipher of that key."""
    key = generate_key()
    monkeypatch.setenv("SWARMKIT_JOURNAL_KEYS", f"main:{key}")
    return AESGCMCipher({"main": base64.b64decode(key)})


def _clear_records(path: Path) -> int:
    """How many records of the file are not sealed in a chain."""
    with sqlite3.connect(path) as conn:
        row = conn.execute("SELECT count(*) FROM records WHERE data NOT LIKE '{\"chained\":%'")
        return int(row.fetchone()[0])


def test_show_export_and_the_viewer_refuse_a_record_forged_in_clear(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A plain run_finished slipped into an encrypted journal is an error naming it, everywhere."""
    path = tmp_path / "j.db"
    cipher = _keyed(monkeypatch)
    with SQLiteJournal(path, cipher=cipher) as journal:
        asyncio.run(_swarm().run(PROMPT, session_id="s1", journal=journal))
        count = len(asyncio.run(journal.read("s1")))
    with sqlite3.connect(path) as conn:
        forged = '{"stop_reason":"final_output","final_output":"FORGED"}'
        conn.execute(
            "INSERT INTO records (session_id, seq, kind, data, written_at)"
            " VALUES ('s1', ?, 'run_finished', ?, 0)",
            (count, forged),
        )
        conn.execute("UPDATE sessions SET records = records + 1")
    capsys.readouterr()

    shown = main(["show", "s1", "--journal", str(path)])
    show = capsys.readouterr()
    exported = main(["export", "s1", "--journal", str(path)])
    export = capsys.readouterr()
    with SQLiteJournal(path, read_only=True, cipher=cipher) as journal:
        reply = asyncio.run(Viewer(journal).api("GET", "/api/sessions/s1", {}))

    where = f"record {count} ('run_finished') of session 's1'"
    assert shown != 0 and where in show.err and "FORGED" not in show.out + show.err
    assert exported != 0 and where in export.err and "FORGED" not in export.out + export.err
    assert reply.status == 409 and where in reply.body["error"]
    assert "FORGED" not in str(reply.body)


def test_the_command_without_the_key_cannot_write_into_an_encrypted_journal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`swarmkit import` without the key is refused, naming the session; with it, goes in sealed."""
    path = tmp_path / "j.db"
    export = tmp_path / "s2.jsonl"
    with SQLiteJournal(path, cipher=_keyed(monkeypatch)) as journal:
        asyncio.run(_swarm().run(PROMPT, session_id="s1", journal=journal))
        records = asyncio.run(journal.read("s1"))
    export.write_text(export_jsonl([replace(r, session_id="s2") for r in records]))
    keys = os.environ["SWARMKIT_JOURNAL_KEYS"]

    monkeypatch.delenv("SWARMKIT_JOURNAL_KEYS")
    refused = main(["import", str(export), "--journal", str(path)])
    error = capsys.readouterr().err
    monkeypatch.setenv("SWARMKIT_JOURNAL_KEYS", keys)
    imported = main(["import", str(export), "--journal", str(path)])

    assert refused == 2 and "session 's2' cannot be written in clear" in error
    assert "SWARMKIT_JOURNAL_KEYS" in error
    assert imported == 0 and _clear_records(path) == 0


def test_the_demo_seals_every_record_with_the_keys_in_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`swarmkit demo --journal J` with keys set writes no record in clear, and shows them."""
    _keyed(monkeypatch)
    path = tmp_path / "demo.sqlite"

    assert main(["demo", "--offline", "--journal", str(path)]) == 0

    assert _clear_records(path) == 0
    assert main(["show", "demo-refund-1", "--journal", str(path)]) == 0


async def test_open_journal_seals_with_the_keys_in_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """open_journal applies the keys by default; with cipher=None a sealed journal refuses it."""
    cipher = _keyed(monkeypatch)
    path = tmp_path / "j.db"
    with open_journal(path) as journal:
        await _swarm().run(PROMPT, session_id="s1", journal=journal)
    with SQLiteJournal(path, cipher=cipher) as journal:
        records = await journal.read("s1")
    with (
        open_journal(path, cipher=None) as plain,
        pytest.raises(JournalError, match="cannot be written in clear"),
    ):
        await _swarm().run(PROMPT, session_id="s2", journal=plain)

    assert _clear_records(path) == 0 and records[0].data["prompt"] == PROMPT


async def test_read_many_on_a_sealed_journal_opens_and_checks_each_session(tmp_path: Path) -> None:
    """A sealed journal's bulk read gives the opened records of the kinds asked for, and a
    record tampered with in the file is refused as by ``read``."""
    from swarmkit.journal import JournalRecord, read_many  # noqa: PLC0415

    path = tmp_path / "sealed.sqlite3"
    with SQLiteJournal(path, cipher=AESGCMCipher(K1)) as journal:
        await journal.append(
            [
                JournalRecord(session_id="s", seq=0, kind="run_started", data={"prompt": "hi"}),
                JournalRecord(session_id="s", seq=1, kind="shadow", data={"verdicts": []}),
            ]
        )
        got = await read_many(journal, ["s"], kinds=["shadow"])
        assert [(r.kind, r.data) for r in got["s"]] == [("shadow", {"verdicts": []})]
        call = {"shadow": {"fired": [1]}, "agent": "a"}
        await journal.append([JournalRecord(session_id="s", seq=2, kind="model_call", data=call)])
        led = await read_many(journal, ["s"], kinds=[], leading={"model_call": ("shadow",)})
        assert [(r.kind, r.data) for r in led["s"]] == [("model_call", {"shadow": {"fired": [1]}})]
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE records SET data = '{\"verdicts\": [1]}' WHERE seq = 1")
    with SQLiteJournal(path, cipher=AESGCMCipher(K1)) as journal, pytest.raises(JournalError):
        await read_many(journal, ["s"], kinds=["shadow"])
