"""`swarmkit serve a2a` as a process: a printed URL and token, an a2a-sdk client's answer."""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import httpx
import psycopg
import pytest
from a2a.helpers import get_text_parts
from a2a.types.a2a_pb2 import TaskState

from swarmkit.cli import main
from tests.interop.a2a_helpers import a2a_client, responses, user_message
from tests.journal.conftest import fresh_schema
from tests.journal.postgres_server import PostgresServer

ROOT = Path(__file__).resolve().parents[2]
ENTRY = "from swarmkit.cli import main; raise SystemExit(main())"


def _start(journal: Path | str, *extra: str) -> subprocess.Popen[str]:
    command = [sys.executable, "-c", ENTRY, "serve", "a2a", "--swarm", "tests.cli_app:served_swarm"]
    command += ["--journal", str(journal), "--port", "0", *extra]
    env = {k: v for k, v in os.environ.items() if not k.startswith("SWARMKIT_SERVE_")}
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env
    )


async def test_the_command_serves_a_swarm_to_an_a2a_client(tmp_path: Path) -> None:
    """The printed URL and token reach the swarm; requests without the token are refused."""
    process = _start(tmp_path / "journal.sqlite")
    try:
        assert process.stdout is not None
        url_line, token_line = process.stdout.readline(), process.stdout.readline()
        url = re.search(r"http://\S+", url_line)
        token = re.search(r"token: (\S+)", token_line)
        assert url is not None and token is not None
        async with a2a_client(url.group(0), token.group(1), streaming=False) as client:
            (reply,) = await responses(client, user_message("hello"))
        async with httpx.AsyncClient() as http:
            refused = await http.post(url.group(0), json={})
    finally:
        process.terminate()
        _, errors = process.communicate(timeout=30)

    assert url.group(0).startswith("http://127.0.0.1:")
    assert reply.task.status.state == TaskState.TASK_STATE_COMPLETED
    assert get_text_parts(reply.task.artifacts[0].parts) == ["Hello from the served swarm."]
    assert refused.status_code == 401
    assert token.group(1) not in errors
    with closing(sqlite3.connect(tmp_path / "journal.sqlite")) as kept:
        (tasks,) = kept.execute("SELECT count(*) FROM a2a_tasks").fetchone()
    assert tasks == 1  # the task is kept in the journal's file: it outlives the server


async def test_the_command_keeps_tasks_where_told_and_serves_0_3_clients(
    tmp_path: Path,
) -> None:
    """--tasks-db names the task store; --a2a-compat 0.3 adds the 0.3 interface to the card
    and answers 0.3's method names."""
    process = _start(
        tmp_path / "journal.sqlite",
        "--tasks-db",
        str(tmp_path / "tasks.sqlite"),
        "--a2a-compat",
        "0.3",
    )
    try:
        assert process.stdout is not None
        url_line, token_line = process.stdout.readline(), process.stdout.readline()
        url = re.search(r"http://\S+", url_line)
        token = re.search(r"token: (\S+)", token_line)
        assert url is not None and token is not None
        headers = {"Authorization": f"Bearer {token.group(1)}"}
        async with httpx.AsyncClient(headers=headers) as http:
            card = (await http.get(url.group(0) + ".well-known/agent-card.json")).json()
            message = {"role": "user", "messageId": "m1", "parts": [{"kind": "text", "text": "hi"}]}
            request = {"jsonrpc": "2.0", "id": 1, "method": "message/send"}
            reply = await http.post(url.group(0), json={**request, "params": {"message": message}})
    finally:
        process.terminate()
        process.communicate(timeout=30)

    assert [i["protocolVersion"] for i in card["supportedInterfaces"]] == ["1.0", "0.3"]
    assert reply.json()["result"]["status"]["state"] == "completed"
    with closing(sqlite3.connect(tmp_path / "tasks.sqlite")) as kept:
        (tasks,) = kept.execute("SELECT count(*) FROM a2a_tasks").fetchone()
    assert tasks == 1


async def test_allow_decisions_prints_a_decision_token_the_server_accepts(
    tmp_path: Path,
) -> None:
    """--allow-decisions prints a decision token once; it is a token of its own that the
    server accepts beside the run token."""
    process = _start(tmp_path / "journal.sqlite", "--allow-decisions")
    try:
        assert process.stdout is not None
        lines = [process.stdout.readline() for _ in range(3)]
        url = re.search(r"http://\S+", lines[0])
        decision = re.search(r"decision token: (\S+)", lines[2])
        assert url is not None and decision is not None
        async with a2a_client(url.group(0), decision.group(1), streaming=False) as client:
            (reply,) = await responses(client, user_message("hello"))
    finally:
        process.terminate()
        process.communicate(timeout=30)

    assert decision.group(1) not in lines[1]
    assert reply.task.status.state == TaskState.TASK_STATE_COMPLETED


async def test_the_command_keeps_tasks_in_a_postgres_journals_database(
    postgres_server: PostgresServer,
) -> None:
    """With a postgresql:// journal and no --tasks-db, the tasks go to the same database."""
    dsn = fresh_schema(postgres_server)
    process = _start(dsn)
    try:
        assert process.stdout is not None
        url_line, token_line = process.stdout.readline(), process.stdout.readline()
        url = re.search(r"http://\S+", url_line)
        token = re.search(r"token: (\S+)", token_line)
        assert url is not None and token is not None
        async with a2a_client(url.group(0), token.group(1), streaming=False) as client:
            (reply,) = await responses(client, user_message("hello"))
    finally:
        process.terminate()
        process.communicate(timeout=30)

    with psycopg.connect(dsn) as kept:
        row = kept.execute("SELECT owner FROM a2a_tasks WHERE id = %s", (reply.task.id,))
        assert row.fetchall() == [("caller",)]


def test_the_command_refuses_a_public_host_without_the_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--host 0.0.0.0 without --allow-remote is a usage error that says what to add."""
    code = main(
        [
            "serve",
            "a2a",
            "--swarm",
            "tests.cli_app:served_swarm",
            "--journal",
            str(tmp_path / "j.sqlite"),
            "--host",
            "0.0.0.0",
        ]
    )

    assert code == 2
    assert "--allow-remote" in capsys.readouterr().err
