"""``swarmkit dbos worker`` and ``swarmkit dbos recover`` (and ``python -m swarmkit.dbos``):
real worker processes on a loopback system database, stopped by pid."""

from __future__ import annotations

import asyncio
import base64
import os
import subprocess
import sys
from pathlib import Path

import pytest

from swarmkit.cli import main
from swarmkit.dbos import SessionClient
from swarmkit.dbos._worker import module_main
from swarmkit.exceptions import ConfigurationError, JournalError
from swarmkit.journal import AESGCMCipher, SQLiteJournal, generate_key
from tests.dbos.harness import ROOT, SWARMKIT, command
from tests.dbos.worker_app import swarms
from tests.temporal.harness import gate_server, kill


@pytest.mark.parametrize(
    "arguments",
    [["dbos", "--help"], ["dbos", "worker", "--help"], ["dbos", "recover", "--help"]],
)
def test_the_commands_explain_themselves(
    arguments: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """--help names every option a deployment sets."""
    assert main(arguments) == 0
    text = capsys.readouterr().out
    if arguments[1] == "worker":
        for option in ("--stream-events", "--per-worker", "--total", "--polling-interval", "--db"):
            assert option in text
    if arguments[1] == "recover":
        assert "--executor-id" in text and "live worker" in text


@pytest.mark.slow
async def test_a_dead_workers_session_is_recovered_by_command_and_followed(
    sqlite_url: str, tmp_path: Path
) -> None:
    """Worker a (no streaming) is SIGKILLed at a tool; `dbos recover` hands its session to
    worker b (--stream-events), which finishes it; follow() refuses a's session by name
    of the option and streams b's."""
    state = tmp_path / "state"
    state.mkdir()
    database = ["--db", sqlite_url, "tests.dbos.worker_app:clerk", "--swarm", "courier="]
    database[-1] += "tests.dbos.worker_app:courier"
    client = SessionClient(
        {n: s for n, s in swarms().items() if n in {"clerk", "courier"}}, database_url=sqlite_url
    )
    async with gate_server() as (gates, gate_env):
        env = {**gate_env, "SWARMKIT_TEST_STATE": str(state)}
        handle = await client.start_session("clerk", "where is A-1?", session_id="s-dead")
        worker_a = [*SWARMKIT, "dbos", "worker", *database, "--executor-id", "a"]
        with command([*worker_a, "--polling-interval", "0.05"], env, tmp_path / "a.log") as pid:
            await gates.arrival("tool", 60)
            kill(pid)
        with pytest.raises(ConfigurationError, match="--stream-events"):
            async for _ in handle.follow():
                pass
        recover = subprocess.run(
            [*SWARMKIT, "dbos", "recover", *database, "--executor-id", "a"],
            check=False,
            cwd=ROOT,
            env={**os.environ, **env},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert recover.returncode == 0, recover.stderr
        assert recover.stdout.splitlines() == ["recovered 1 session(s) of a", "s-dead"]
        gates.open("tool")
        worker_b = [*SWARMKIT, "dbos", "worker", *database, "--executor-id", "b"]
        options = ["--stream-events", "--polling-interval", "0.05", "--per-worker", "2"]
        with command([*worker_b, *options], env, tmp_path / "b.log"):
            result = await asyncio.wait_for(handle.result(), 60)
            courier = await client.start_session("courier", "P-9", session_id="s-follow")
            kinds = [type(e).__name__ async for e in courier.follow()]
    client.close()
    assert result.final_output == "A-1 was delivered."
    assert kinds[0] == "RunStarted" and kinds[-1] == "RunFinished"
    assert kinds.count("ToolCalled") == 3
    assert "serving clerk, courier" in (tmp_path / "b.log").read_text()
    assert "streaming events" in (tmp_path / "b.log").read_text()


@pytest.mark.slow
async def test_the_module_command_serves_a_swarm_until_sigterm(
    sqlite_url: str, tmp_path: Path
) -> None:
    """`python -m swarmkit.dbos worker`, the same code: a queued session is run and mirrored,
    sealed, to its journal."""
    journal = tmp_path / "journal.sqlite"
    key = generate_key()
    arguments = [sys.executable, "-m", "swarmkit.dbos", "worker", "--swarm"]
    arguments += ["tests.dbos.worker_app:clerk", "--db", sqlite_url, "--journal", str(journal)]
    client = SessionClient({"clerk": swarms()["clerk"]}, database_url=sqlite_url)
    async with gate_server() as (gates, gate_env):
        gates.open("tool")
        env = {
            **gate_env,
            "SWARMKIT_TEST_STATE": str(tmp_path),
            "SWARMKIT_JOURNAL_KEYS": f"k1:{key}",
        }
        handle = await client.start_session("clerk", "where is A-1?", session_id="s-cmd")
        with command([*arguments, "--executor-id", "cmd"], env, tmp_path / "cmd.log"):
            result = await asyncio.wait_for(handle.result(), 60)
    client.close()
    assert result.final_output == "A-1 was delivered."
    assert "swarmkit dbos worker cmd: serving clerk" in (tmp_path / "cmd.log").read_text()
    cipher = AESGCMCipher({"k1": base64.b64decode(key)})
    assert (await SQLiteJournal(journal, cipher=cipher).read("s-cmd"))[-1].kind == "run_finished"
    with pytest.raises(JournalError, match="is encrypted"):
        await SQLiteJournal(journal).read("s-cmd")


def test_a_target_that_is_not_a_swarm_is_a_usage_error(
    sqlite_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Exit code 2 and one line naming what the target is instead."""
    code = module_main(["worker", "tests.dbos.worker_app:CHANGED", "--db", sqlite_url])
    assert code == 2
    assert "tests.dbos.worker_app:CHANGED is str, not a Swarm" in capsys.readouterr().err


def test_a_worker_needs_a_swarm(sqlite_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    """No swarm named: exit code 2 and how to name one."""
    assert main(["dbos", "worker", "--db", sqlite_url]) == 2
    assert "--swarm [NAME=]module:attribute" in capsys.readouterr().err
