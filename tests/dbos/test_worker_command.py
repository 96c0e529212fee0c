"""``python -m swarmkit.dbos worker``: a worker process serving swarms named module:attribute."""

from __future__ import annotations

import asyncio
import base64
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from swarmkit.dbos import SessionClient
from swarmkit.dbos._worker import main
from swarmkit.exceptions import JournalError
from swarmkit.journal import AESGCMCipher, SQLiteJournal, generate_key
from tests.dbos.harness import ROOT
from tests.dbos.worker_app import swarms
from tests.temporal.harness import gate_server


@pytest.mark.slow
async def test_the_worker_command_serves_a_swarm_until_sigterm(
    sqlite_url: str, tmp_path: Path
) -> None:
    """A queued session is run by the command's worker and mirrored, sealed, to its journal."""
    journal = tmp_path / "journal.sqlite"
    key = generate_key()
    command = [
        sys.executable,
        "-m",
        "swarmkit.dbos",
        "worker",
        "--swarm",
        "tests.dbos.worker_app:clerk",
        "--db",
        sqlite_url,
        "--journal",
        str(journal),
        "--executor-id",
        "cmd",
    ]
    client = SessionClient({"clerk": swarms()["clerk"]}, database_url=sqlite_url)
    async with gate_server() as (gates, env):
        gates.open("tool")
        handle = await client.start_session("clerk", "where is A-1?", session_id="s-cmd")
        process = subprocess.Popen(
            command,
            cwd=ROOT,
            env={
                **os.environ,
                **env,
                "SWARMKIT_TEST_STATE": str(tmp_path),
                "SWARMKIT_JOURNAL_KEYS": f"k1:{key}",
            },
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        try:
            result = await asyncio.wait_for(handle.result(), 60)
        finally:
            os.kill(process.pid, signal.SIGTERM)
            output, _ = process.communicate(timeout=30)
    client.close()
    assert result.final_output == "A-1 was delivered."
    assert process.returncode == 0
    assert b"swarmkit dbos worker cmd: serving clerk" in output
    cipher = AESGCMCipher({"k1": base64.b64decode(key)})
    assert (await SQLiteJournal(journal, cipher=cipher).read("s-cmd"))[-1].kind == "run_finished"
    with pytest.raises(JournalError, match="is encrypted"):
        await SQLiteJournal(journal).read("s-cmd")


def test_a_target_that_is_not_a_swarm_is_a_usage_error(
    sqlite_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Exit code 2 and one line naming what the target is instead."""
    code = main(["worker", "--swarm", "tests.dbos.worker_app:CHANGED", "--db", sqlite_url])
    assert code == 2
    assert "tests.dbos.worker_app:CHANGED is str, not a Swarm" in capsys.readouterr().err
