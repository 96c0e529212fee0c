"""`swarmkit sessions` without the key lists a journal holding sealed sessions, marking them,
as the viewer does, instead of failing on the first one it cannot read."""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path

import pytest

from swarmkit import Agent, SQLiteJournal, Swarm, tool
from swarmkit.cli import main
from swarmkit.journal import AESGCMCipher
from swarmkit.testing import ScriptedModel, text, tool_call

KEY = bytes(range(32))


@tool(needs_approval=True)
def refund() -> str:
    """Refund the order."""
    return "refunded"


def _journal(path: Path) -> None:
    """A finished and a waiting session sealed with KEY, and one in clear."""

    async def write() -> None:
        # The session in clear first: once a journal holds sealed records, none is in clear.
        with SQLiteJournal(path) as clear:
            plain = Swarm([Agent(name="a")], "a", model=ScriptedModel(text("ok")))
            await plain.run("in clear", journal=clear, session_id="plain")
        with SQLiteJournal(path, cipher=AESGCMCipher({"k1": KEY})) as sealed:
            done = Swarm([Agent(name="a")], "a", model=ScriptedModel(text("done")))
            await done.run("a secret question", journal=sealed, session_id="done")
            paused = Swarm(
                [Agent(name="a", tools=[refund])], "a", model=ScriptedModel(tool_call("refund"))
            )
            await paused.run("refund me", journal=sealed, session_id="paused")

    asyncio.run(write())


@pytest.mark.parametrize(
    "keys", [None, "k9:" + base64.b64encode(bytes(32)).decode()], ids=["no-key", "another-key"]
)
def test_sessions_lists_sealed_sessions_without_their_key(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    keys: str | None,
) -> None:
    """With no key (or another key) every session is listed with its state; sealed ones
    show [encrypted] for a prompt, and the count says how many could not be opened."""
    path = tmp_path / "j.sqlite"
    _journal(path)
    monkeypatch.delenv("SWARMKIT_JOURNAL_KEYS", raising=False)
    if keys is not None:
        monkeypatch.setenv("SWARMKIT_JOURNAL_KEYS", keys)

    code = main(["sessions", "--journal", str(path)])

    out, err = capsys.readouterr()
    assert (code, err) == (0, "")
    rows = {line.split()[0]: line for line in out.splitlines()[1:-1]}
    assert rows["plain"].split()[1] == "finished" and rows["plain"].endswith("in clear")
    assert rows["done"].split()[1] == "finished" and "[encrypted" in rows["done"]
    assert rows["paused"].split()[1] == "waiting" and "[encrypted" in rows["paused"]
    assert "a secret question" not in out and "refund me" not in out
    assert out.splitlines()[-1].endswith(
        "2 encrypted with a key $SWARMKIT_JOURNAL_KEYS does not hold)"
    )
