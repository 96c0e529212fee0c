"""The `swarmkit` command on a Postgres journal, and moving sessions between stores."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog

from swarmkit import Agent, SQLiteJournal, Swarm
from swarmkit.cli import main
from swarmkit.journal import SessionInfo, open_journal
from swarmkit.testing import FixedRuntime, ScriptedModel, text

from .postgres_server import PostgresServer

REFUND = "Hi, I was charged twice for invoice INV-1042. Please refund the duplicate charge."

Capture = pytest.CaptureFixture[str]


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """Each test runs in its own folder, with no journal variable or logging set-up leaking."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "SWARMKIT_JOURNAL"):
        monkeypatch.delenv(name, raising=False)
    yield
    structlog.reset_defaults()


def test_every_journal_command_takes_a_postgres_url(capsys: Capture, postgres_dsn: str) -> None:
    """run, sessions, show, replay, export and draw work on a postgresql:// journal."""
    journal = ["--journal", postgres_dsn]
    assert main(["run", "tests.cli_app:swarm", REFUND, "--session-id", "r1", *journal]) == 0
    out = capsys.readouterr().out
    assert "answer: Done: refund RF-" in out
    assert "postgres:***@127.0.0.1" in out and "swarmkit-test" not in out
    assert main(["sessions", *journal]) == 0
    assert "r1" in capsys.readouterr().out
    assert main(["show", "r1", *journal]) == 0
    assert main(["replay", "r1", "--swarm", "tests.cli_app:swarm", *journal]) == 0
    assert "0 model calls" in capsys.readouterr().out
    assert main(["draw", "--session", "r1", *journal]) == 0
    assert main(["export", "r1", *journal]) == 0
    assert '"swarmkit_journal"' in capsys.readouterr().out


def test_the_demo_journals_into_postgres_and_replays_from_it(
    capsys: Capture, postgres_dsn: str
) -> None:
    """`swarmkit demo --journal postgresql://...` runs, journals and replays offline."""
    assert main(["demo", "--journal", postgres_dsn]) == 0
    out = capsys.readouterr().out
    assert "journal: postgresql://postgres:***@127.0.0.1" in out
    assert main(["sessions", "--journal", postgres_dsn]) == 0
    assert "demo-" in capsys.readouterr().out


def test_export_and_import_move_a_session_from_sqlite_to_postgres_and_back(
    capsys: Capture, postgres_dsn: str, tmp_path: Path
) -> None:
    """A session exported from one store and imported into the other exports identically."""
    assert main(["run", "tests.cli_app:swarm", REFUND, "--session-id", "r1"]) == 0
    capsys.readouterr()
    assert main(["export", "r1"]) == 0
    exported = capsys.readouterr().out
    (tmp_path / "r1.jsonl").write_text(exported)

    assert main(["import", "r1.jsonl", "--journal", postgres_dsn]) == 0
    assert "imported r1 (" in capsys.readouterr().out
    assert main(["export", "r1", "--journal", postgres_dsn]) == 0
    assert capsys.readouterr().out == exported

    assert main(["import", "r1.jsonl", "--journal", "back.sqlite"]) == 0
    capsys.readouterr()
    assert main(["replay", "r1", "--swarm", "tests.cli_app:swarm", "--journal", "back.sqlite"]) == 0


def test_importing_a_session_the_journal_holds_is_refused(
    capsys: Capture, postgres_dsn: str, tmp_path: Path
) -> None:
    """An import never writes into an existing session."""
    assert main(["run", "tests.cli_app:swarm", REFUND, "--session-id", "r1"]) == 0
    capsys.readouterr()
    assert main(["export", "r1"]) == 0
    (tmp_path / "r1.jsonl").write_text(capsys.readouterr().out)
    assert main(["import", "r1.jsonl", "--journal", postgres_dsn]) == 0
    assert main(["import", "r1.jsonl", "--journal", postgres_dsn]) == 2
    assert "already in" in capsys.readouterr().err


def test_an_unreachable_postgres_journal_is_one_line_not_a_traceback(
    capsys: Capture, postgres_server: PostgresServer
) -> None:
    """A wrong password exits 2 with one line that says what to check."""
    dsn = postgres_server.dsn.replace("swarmkit-test", "wrong")
    assert main(["sessions", "--journal", dsn]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "check the user and password" in err


async def _sessions(location: str) -> tuple[SessionInfo, ...]:
    async with open_journal(location) as journal:
        return await journal.sessions()


def _export_a_session_started_long_ago(tmp_path: Path, capsys: Capture) -> Path:
    """An export of session "old", whose run's clock read 2001-09-09 (Unix second 10^9)."""
    runtime = FixedRuntime(start=1_000_000_000.0).runtime()
    swarm = Swarm([Agent(name="a")], "a", model=ScriptedModel(text("done")), runtime=runtime)
    with SQLiteJournal(tmp_path / "old.sqlite") as journal:
        swarm.run_sync("hi", session_id="old", journal=journal)
    assert main(["export", "old", "--journal", "old.sqlite"]) == 0
    exported = tmp_path / "old.jsonl"
    exported.write_text(capsys.readouterr().out)
    return exported


@pytest.mark.parametrize("store", ["sqlite", "postgres"])
def test_an_imported_session_keeps_when_it_started(
    capsys: Capture, tmp_path: Path, store: str, request: pytest.FixtureRequest
) -> None:
    """`swarmkit import` lists the session as started when its first record was written, not
    when it was imported."""
    exported = _export_a_session_started_long_ago(tmp_path, capsys)
    target = "new.sqlite" if store == "sqlite" else request.getfixturevalue("postgres_dsn")

    assert main(["import", str(exported), "--journal", target]) == 0
    (info,) = asyncio.run(_sessions(target))
    capsys.readouterr()
    assert main(["sessions", "--journal", target]) == 0

    assert info.started_at == 1_000_000_000.0
    started = time.strftime("%Y-%m-%d", time.localtime(1_000_000_000))
    assert started in capsys.readouterr().out
