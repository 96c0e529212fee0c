"""Killed workers: a restarted or another worker finishes the session; nothing finished repeats."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from swarmkit import Budget, Ledger, approve
from swarmkit.dbos import SessionClient, SessionHandle
from swarmkit.exceptions import ApplicationVersionError, ConfigurationError
from swarmkit.journal import SQLiteJournal
from tests.dbos.chaos import chaos_run
from tests.dbos.harness import lines, worker_process
from tests.dbos.worker_app import CHANGED, COURIER_ROUNDS, swarms
from tests.journal.conftest import fresh_schema
from tests.temporal.harness import gate_server, kill

if TYPE_CHECKING:
    from tests.journal.postgres_server import PostgresServer

LIMIT = 60.0


@asynccontextmanager
async def session_client(
    database_url: str, version: str | None = None
) -> AsyncIterator[SessionClient]:
    """A client of the workers' system database (it runs no session itself)."""
    client = SessionClient(swarms(), database_url=database_url, application_version=version)
    try:
        yield client
    finally:
        client.close()


async def finished(handle: SessionHandle) -> str:
    """The session's final output, once a worker has finished it."""
    result = await asyncio.wait_for(handle.result(), LIMIT)
    return str(result.final_output)


@asynccontextmanager
async def killed_at(
    url: str, state: Path, swarm: str, prompt: str, *, session_id: str, gate: str = "tool"
) -> AsyncIterator[SessionHandle]:
    """A session of ``swarm`` whose worker ("w1") is SIGKILLed when the session reaches
    ``gate`` ("tool", or "model": gating the model call lets the tool through); yields its
    handle while the restarted worker serves it, the gate open."""
    async with gate_server() as (gates, gate_env), session_client(url) as client:
        env = dict(gate_env)
        if gate == "model":
            gates.open("tool")
            env["SWARMKIT_GATE_MODEL"] = "1"
        handle = await client.start_session(swarm, prompt, session_id=session_id)
        with worker_process(url, "w1", state, env) as pid:
            await gates.arrival(gate, LIMIT)
            kill(pid)
        gates.open(gate)
        with worker_process(url, "w1", state, env):
            yield handle


async def test_a_worker_killed_during_a_tool_is_finished_by_its_restart(
    sqlite_url: str, tmp_path: Path
) -> None:
    """SIGKILL during a tool: the restarted worker reruns only that tool, with the same key."""
    killed = killed_at(sqlite_url, tmp_path, "clerk", "where is A-1?", session_id="s-restart")
    async with killed as handle:
        assert await finished(handle) == "A-1 was delivered."
    assert lines(tmp_path / "calls.txt") == ["0", "1"]  # the first model call ran once
    keys = lines(tmp_path / "keys.txt")
    assert len(keys) == 2 and keys[0] == keys[1]
    records = await SQLiteJournal(tmp_path / "journal.sqlite").read("s-restart")
    assert records[-1].kind == "run_finished"


async def test_a_killed_worker_charges_each_finished_call_once(
    sqlite_url: str, tmp_path: Path
) -> None:
    """SIGKILL during a tool, after the first call was reserved and settled as steps: the
    restarted worker reads them back, so the ledger holds one charge per model call."""
    killed = killed_at(sqlite_url, tmp_path, "metered", "where is A-1?", session_id="s-metered")
    async with killed as handle:
        assert await finished(handle) == "A-1 was delivered."
    assert lines(tmp_path / "calls.txt") == ["0", "1"]
    ledger = Ledger(tmp_path / "spend.sqlite", [Budget(name="calls", limit=10, unit="calls")])
    charged = await ledger.store.calls()
    windows = await ledger.store.windows(now=ledger.clock())
    assert [c.session_id for c in charged] == ["s-metered", "s-metered"]
    assert [(w["spent"], w["held"]) for w in windows] == [(2, 0)]


async def test_a_worker_killed_during_a_model_call_repeats_only_that_call(
    sqlite_url: str, tmp_path: Path
) -> None:
    """SIGKILL during the second model call: the restart asks it again, the tool never reruns."""
    killed = killed_at(
        sqlite_url, tmp_path, "clerk", "where is A-1?", session_id="s-model", gate="model"
    )
    async with killed as handle:
        assert await finished(handle) == "A-1 was delivered."
    assert lines(tmp_path / "calls.txt") == ["0", "1", "1"]  # the first call never repeats
    assert len(lines(tmp_path / "keys.txt")) == 1


async def test_a_dead_workers_session_is_taken_over_by_another_worker(
    postgres_url: str, tmp_path: Path
) -> None:
    """recover_sessions([dead executor]) hands its session to a live worker on Postgres."""
    async with gate_server() as (gates, env), session_client(postgres_url) as client:
        handle = await client.start_session("clerk", "where is A-1?", session_id="s-dead")
        with worker_process(postgres_url, "w1", tmp_path, env) as pid:
            await gates.arrival("tool", LIMIT)
            kill(pid)
        gates.open("tool")
        with worker_process(postgres_url, "w2", tmp_path, env):
            assert await client.recover_sessions(["w1"]) == ("s-dead",)
            assert await finished(handle) == "A-1 was delivered."
        assert await client.recover_sessions(["w1"]) == ()
    assert lines(tmp_path / "calls.txt") == ["0", "1"]


async def test_an_approval_sent_while_the_worker_is_dead_applies_after_recovery(
    sqlite_url: str, tmp_path: Path
) -> None:
    """The decision waits in the database until the restarted worker reads it."""
    async with gate_server() as (gates, env), session_client(sqlite_url) as client:
        gates.open("tool")
        handle = await client.start_session("desk", "where is A-1?", session_id="s-desk")
        with worker_process(sqlite_url, "w1", tmp_path, env) as pid:
            pending = await handle.pending(wait=LIMIT)
            kill(pid)
        assert pending is not None and pending.kind == "answer"
        await handle.decide(approve())
        with worker_process(sqlite_url, "w1", tmp_path, env):
            assert await finished(handle) == "A-1 was delivered."
    assert lines(tmp_path / "calls.txt") == ["0", "1"]


async def test_sessions_of_another_application_version_are_named_not_run(
    sqlite_url: str, tmp_path: Path
) -> None:
    """recover_sessions from another version leaves the session and says which version has it."""
    async with gate_server() as (gates, env), session_client(sqlite_url, "v1") as old:
        handle = await old.start_session("clerk", "where is A-1?", session_id="s-v1")
        with worker_process(sqlite_url, "w1", tmp_path, env, version="v1") as pid:
            await gates.arrival("tool", LIMIT)
            kill(pid)
        async with session_client(sqlite_url, "v2") as new:
            with pytest.raises(ApplicationVersionError, match="v1") as caught:
                await new.recover_sessions(["w1"])
            assert caught.value.sessions == {"s-v1": "v1"}
            assert await new.sessions_of_other_versions() == {"s-v1": "v1"}
        assert await handle.status() == "PENDING"


async def test_a_session_met_by_changed_swarm_code_fails_with_a_clear_error(
    sqlite_url: str, tmp_path: Path
) -> None:
    """Same pinned version, other instructions: the recovered session refuses to go on."""
    async with gate_server() as (gates, env), session_client(sqlite_url, "pinned") as client:
        handle = await client.start_session("clerk", "where is A-1?", session_id="s-changed")
        with worker_process(sqlite_url, "w1", tmp_path, env, version="pinned") as pid:
            await gates.arrival("tool", LIMIT)
            kill(pid)
        gates.open("tool")
        changed = {**env, CHANGED: "1"}
        with (
            worker_process(sqlite_url, "w1", tmp_path, changed, version="pinned"),
            pytest.raises(ConfigurationError, match="another configuration"),
        ):
            await asyncio.wait_for(handle.result(), LIMIT)


CHAOS_SESSIONS = 60
CHAOS_KILLS = 5
"""The suite's size of the chaos run; bench/durable_chaos.py runs 200 sessions and 10 kills."""


@pytest.mark.kill
@pytest.mark.slow
async def test_chaos_killed_and_restarted_workers_finish_every_session_exactly_once(
    postgres_server: PostgresServer, postgres_url: str, tmp_path: Path
) -> None:
    """3 workers on one Postgres, 5 SIGKILLs at seeded points: every session ends once with its
    in-process result, each model call journaled once, every repeated tool call with its key."""
    report = await chaos_run(
        postgres_url,
        fresh_schema(postgres_server),
        tmp_path,
        sessions=CHAOS_SESSIONS,
        kills=CHAOS_KILLS,
    )
    assert report.model_repeats <= CHAOS_KILLS * 4  # only calls in flight at a kill
    assert report.tool_calls == CHAOS_SESSIONS * COURIER_ROUNDS
