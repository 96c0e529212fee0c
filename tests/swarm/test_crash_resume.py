"""A run killed with SIGKILL mid-way resumes from its journal without repeating completed work."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from swarmkit.exceptions import SessionBusyError
from swarmkit.journal import SQLiteJournal
from swarmkit.swarm import DEFAULT_LEASE_TTL

from .crash_app import PROMPT, SESSION, body_digest, build_swarm, model_on, respond

ROOT = Path(__file__).resolve().parents[2]


def _run_child_until_it_hangs(journal: Path) -> list[str]:
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.swarm.crash_app", str(journal)],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    lines: list[str] = []
    for line in child.stdout:
        lines.append(line.strip())
        if line.strip() == "hang":
            break
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    assert lines[-1] == "hang", lines
    return lines


async def test_sigkilled_run_resumes_to_the_uninterrupted_result(tmp_path: Path) -> None:
    """After the dead holder's lease expires, the resumed result equals an uninterrupted run's,
    and each completed request was sent once."""
    journal_path = tmp_path / "journal.sqlite"
    child_lines = _run_child_until_it_hangs(journal_path)
    completed_in_child = [line.split()[1] for line in child_lines if line.startswith("completed")]
    tools_in_child = [line for line in child_lines if line.startswith("tool")]

    sent: list[str] = []
    tools_after: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(body_digest(request))
        return httpx.Response(200, json=respond(json.loads(request.content)))

    swarm = build_swarm(model_on(handler), tools_after.append)
    with pytest.raises(SessionBusyError, match="being written by"):
        await swarm.resume(SESSION, SQLiteJournal(journal_path))
    # The killed holder never renews its lease: once it expires, the session is free.
    after_expiry = SQLiteJournal(journal_path, clock=lambda: time.time() + DEFAULT_LEASE_TTL + 1)
    resumed = await swarm.resume(SESSION, after_expiry)

    baseline_tools: list[str] = []
    baseline = await build_swarm(
        model_on(lambda r: httpx.Response(200, json=respond(json.loads(r.content)))),
        baseline_tools.append,
    ).run(PROMPT, session_id=SESSION)

    assert resumed.final_output == baseline.final_output == "Refunded A-1."
    assert resumed.trail == baseline.trail
    assert resumed.handoffs == baseline.handoffs
    assert resumed.messages == baseline.messages
    assert len(completed_in_child) == 2
    assert not set(completed_in_child) & set(sent)
    assert len(set(sent)) == len(sent) == 2
    assert tools_in_child == ["tool lookup A-1"]
    assert tools_after == ["refund A-1"]


async def test_a_second_process_is_refused_while_the_first_writes_the_session(
    tmp_path: Path,
) -> None:
    """Two writers of one session: the second gets SessionBusyError at once, the first
    finishes, and the session then replays cleanly with no model call."""
    journal_path = tmp_path / "journal.sqlite"
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.swarm.crash_app", str(journal_path)],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdin is not None and child.stdout is not None
    try:
        for line in child.stdout:
            if line.strip() == "hang":
                break
        swarm = build_swarm(model_on(lambda r: httpx.Response(500)), lambda line: None)
        with pytest.raises(SessionBusyError, match="being written by") as caught:
            await swarm.resume(SESSION, SQLiteJournal(journal_path))
        assert caught.value.owner.split(":")[1] == str(child.pid)
        child.stdin.write("go on\n")
        child.stdin.flush()
        assert child.wait(timeout=60) == 0
    finally:
        child.kill()
        child.wait()
    replayed = await swarm.replay(SESSION, SQLiteJournal(journal_path))
    assert replayed.final_output == "Refunded A-1."


async def test_another_process_reads_the_journal_while_a_turn_runs(tmp_path: Path) -> None:
    """No transaction stays open across a model call: the session lists from outside."""
    journal_path = tmp_path / "journal.sqlite"
    listed: list[str] = []
    probe = (
        "import asyncio, sys\n"
        "from swarmkit.journal import SQLiteJournal\n"
        "infos = asyncio.run(SQLiteJournal(sys.argv[1]).sessions())\n"
        "print(' '.join(f'{i.session_id}:{i.records}' for i in infos))\n"
    )

    def handler(request: httpx.Request) -> httpx.Response:
        done = subprocess.run(
            [sys.executable, "-c", probe, str(journal_path)],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        listed.append(done.stdout.strip())
        return httpx.Response(200, json=respond(json.loads(request.content)))

    swarm = build_swarm(model_on(handler), lambda line: None)
    await swarm.run(PROMPT, session_id=SESSION, journal=SQLiteJournal(journal_path))
    assert listed[0] == ""  # the first step is written with the first answer
    # Before the second call: run_started, agent_started, the first model call and its tool.
    assert listed[1] == f"{SESSION}:4"
