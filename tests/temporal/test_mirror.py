"""The journal mirror writing a Temporal session into a real PostgreSQL journal."""

from __future__ import annotations

import asyncio

import pytest

from swarmkit import approve
from swarmkit.cli import main
from swarmkit.journal import PostgresJournal
from swarmkit.temporal import (
    SessionHandle,
    decide,
    pending_decision,
    session_result,
    start_session,
)
from swarmkit.testing import NeverCalledModel, ScriptedModel
from tests.temporal.harness import running_worker, wait_for
from tests.temporal.swarms import support_script, support_swarm


def _scripted() -> ScriptedModel:
    return ScriptedModel(*support_script(), name="scripted")


async def test_a_session_mirrored_into_postgres_replays_with_no_model_call(
    temporal_address: str, postgres_dsn: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Swarm.replay and `swarmkit replay` over the Postgres mirror reproduce the run offline."""
    async with (
        PostgresJournal(postgres_dsn) as mirror,
        running_worker(
            temporal_address,
            swarms={"support": support_swarm()},
            models={"scripted": _scripted()},
            journal=mirror,
        ) as (client, queue),
    ):
        handle = await start_session(client, "support", "refund A-1", task_queue=queue)
        result = await session_result(handle)

    async with PostgresJournal(postgres_dsn) as journal:
        records = await journal.read(handle.id)
        replayed = await support_swarm(NeverCalledModel()).replay(handle.id, journal)
    command = ["replay", handle.id, "--swarm", "tests.temporal.swarms:support"]
    code = await asyncio.to_thread(main, [*command, "--journal", postgres_dsn])

    assert [r.seq for r in records] == list(range(len(records)))
    assert records[-1].kind == "run_finished"
    assert replayed.to_data() == result.to_data()
    assert code == 0
    assert "0 model calls" in capsys.readouterr().out


async def test_records_mirrored_at_a_pause_are_in_postgres_before_the_decision(
    temporal_address: str, postgres_dsn: str
) -> None:
    """A paused session's steps so far are readable from Postgres while it waits."""
    swarm = support_swarm(interrupt_before=["billing"])
    async with (
        PostgresJournal(postgres_dsn) as mirror,
        PostgresJournal(postgres_dsn) as reader,
        running_worker(
            temporal_address,
            swarms={"support": swarm},
            models={"scripted": _scripted()},
            journal=mirror,
        ) as (client, queue),
    ):
        handle = await start_session(client, "support", "refund A-1", task_queue=queue)
        await wait_for(handle, lambda: _mirrored_pause(handle, reader), "the mirrored pause")
        at_pause = await reader.read(handle.id)
        waiting = await pending_decision(handle)
        await decide(handle, approve())
        result = await session_result(handle)
        records = await reader.read(handle.id)
        replayed = await support_swarm(NeverCalledModel(), interrupt_before=["billing"]).replay(
            handle.id, reader
        )

    assert waiting is not None and waiting.target == "billing"
    assert [r.kind for r in at_pause[:3]] == ["run_started", "agent_started", "model_call"]
    assert records[: len(at_pause)] == at_pause
    assert records[-1].kind == "run_finished" and result.stop_reason == "final_output"
    assert replayed.final_output == result.final_output


async def _mirrored_pause(handle: SessionHandle, journal: PostgresJournal) -> bool:
    """The session waits for a decision and its steps so far are in Postgres (a record
    mirrored by the first step is not yet the pause)."""
    waiting = await pending_decision(handle) is not None
    return waiting and await journal.next_seq(handle.id) > 0
