"""Swarm sessions as DBOS workflows in this process, on SQLite and on Postgres."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from dbos import DBOS

from swarmkit import Swarm, approve, edit
from swarmkit.dbos import (
    DurableSwarms,
    JsonSerializer,
    QueueLimits,
    SessionHandle,
    default_version,
)
from swarmkit.exceptions import (
    ConfigurationError,
    HandoffPayloadError,
    JournalError,
    SessionExistsError,
    SessionNotFoundError,
)
from swarmkit.journal import SQLiteJournal
from swarmkit.testing import ScriptedModel
from tests.dbos.harness import lines
from tests.dbos.worker_app import swarms as gated_swarms
from tests.temporal.harness import gate_server
from tests.temporal.swarms import STATE_DIR, support_script, support_swarm

LIMIT = 60.0


@asynccontextmanager
async def launched(
    database_url: str, swarms: dict[str, Swarm], **options: Any
) -> AsyncIterator[DurableSwarms]:
    """A DurableSwarms worker in this process, destroyed at the end."""
    app = DurableSwarms(swarms, database_url=database_url, polling_interval=0.05, **options)
    async with app:
        yield app


async def finished(handle: SessionHandle) -> Any:
    """The session's result, once it ends."""
    return await asyncio.wait_for(handle.result(), LIMIT)


async def test_a_session_runs_as_a_workflow_with_a_step_per_call(
    database_url: str, tmp_path: Path
) -> None:
    """The result matches an in-process run; each model and tool call is one recorded step."""
    model = ScriptedModel(*support_script())
    journal = SQLiteJournal(tmp_path / "journal.sqlite")
    swarms = {"support": support_swarm(model)}
    async with launched(database_url, swarms, journal=journal) as app:
        handle = await app.start_session("support", "refund A-1", session_id="s-1")
        result = await finished(handle)
        steps = [s["function_name"] for s in await DBOS.list_workflow_steps_async("s-1")]
    expected = await support_swarm(ScriptedModel(*support_script())).run("refund A-1")
    assert result.final_output == expected.final_output == "Refunded 42.0 for A-1."
    assert result.trail == expected.trail == ("triage", "billing")
    assert steps == [
        "swarmkit.start",
        "swarmkit.model",
        "swarmkit.tool",  # lookup_order; the pure add tool runs in the workflow
        "swarmkit.model",
        "swarmkit.model",
        "swarmkit.model",
        "swarmkit.mirror",
    ]
    assert model.requests and len(model.requests) == 4
    replayed = await support_swarm(ScriptedModel()).replay("s-1", journal)  # no model call
    assert replayed.final_output == result.final_output


async def test_step_outputs_are_stored_as_json_never_pickle(sqlite_url: str) -> None:
    """Every value DBOS keeps for a session is JSON text written by swarmkit's serializer."""
    swarms = {"support": support_swarm(ScriptedModel(*support_script()))}
    async with launched(sqlite_url, swarms) as app:
        await finished(await app.start_session("support", "refund A-1", session_id="s-json"))
    path = sqlite_url.removeprefix("sqlite:///")
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT output, serialization FROM operation_outputs").fetchall()
        inputs = db.execute("SELECT inputs FROM workflow_input").fetchall()
    assert rows and {kind for _, kind in rows} == {"swarmkit_json"}
    assert all(output is None or json.loads(output) is not None for output, _ in rows)
    assert json.loads(inputs[0][0])["args"] == ["support", "refund A-1", None]


def test_the_serializer_refuses_values_that_are_not_json() -> None:
    """A Python object would need pickle; the serializer names it instead of storing it."""
    with pytest.raises(TypeError, match="JSON data only, not object"):
        JsonSerializer().serialize({"value": object()})
    error = JsonSerializer().deserialize(JsonSerializer().serialize(ValueError("no")))
    assert type(error).__name__ == "DurableStepError" and error.kind == "ValueError"


async def test_a_session_id_that_exists_is_refused(sqlite_url: str) -> None:
    """Ids are never reused: a second start with the same id raises SessionExistsError."""
    swarms = {"support": support_swarm(ScriptedModel(*support_script()))}
    async with launched(sqlite_url, swarms) as app:
        await finished(await app.start_session("support", "refund A-1", session_id="s-dup"))
        with pytest.raises(SessionExistsError, match="s-dup"):
            await app.start_session("support", "refund A-2", session_id="s-dup")
        with pytest.raises(SessionNotFoundError):
            await app.session_handle("nobody").status()
        with pytest.raises(ConfigurationError, match="not registered"):
            await app.start_session("sales", "hello")


async def test_a_decision_reaches_the_waiting_session_as_a_message(sqlite_url: str) -> None:
    """The session publishes what it waits for; a bad edit is refused, an approval lets it on."""
    swarm = support_swarm(ScriptedModel(*support_script()), interrupt_before=["billing"])
    async with launched(sqlite_url, {"support": swarm}) as app:
        handle = await app.start_session("support", "refund A-1", session_id="s-wait")
        pending = await handle.pending(wait=LIMIT)
        assert pending is not None and pending.kind == "handoff" and pending.target == "billing"
        with pytest.raises(HandoffPayloadError, match="amount"):
            await handle.decide(edit(payload={"order_id": "A-1", "amount": "lots"}))
        await handle.decide(approve())
        result = await finished(handle)
        assert result.final_output == "Refunded 42.0 for A-1."
        with pytest.raises(JournalError, match="not waiting for a decision"):
            await handle.decide(approve())


async def test_a_worker_runs_no_more_sessions_of_a_swarm_than_its_limit(
    sqlite_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With per_worker=1 the second session stays queued while the first waits in its tool."""
    monkeypatch.setenv(STATE_DIR, str(tmp_path))
    async with gate_server() as (gates, env):
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        limits = QueueLimits(per_worker=1)
        async with launched(sqlite_url, gated_swarms(), limits=limits) as app:
            first = await app.start_session("clerk", "where is A-1?", session_id="s-first")
            second = await app.start_session("clerk", "where is A-2?", session_id="s-second")
            await gates.arrival("tool", LIMIT)
            assert await second.status() == "ENQUEUED"
            assert lines(tmp_path / "calls.txt") == ["0"]  # the second never asked its model
            gates.open("tool")
            for handle in (first, second):
                assert (await finished(handle)).final_output == "A-1 was delivered."
    assert sorted(lines(tmp_path / "calls.txt")) == ["0", "0", "1", "1"]


def test_queue_limits_must_be_positive_whole_numbers() -> None:
    """A limit of 0 or a float is a configuration mistake, named with what to pass."""
    with pytest.raises(ConfigurationError, match="per_worker"):
        QueueLimits(per_worker=0)


def test_the_default_version_follows_the_swarm_code() -> None:
    """Changed instructions are a new application version; the same code the same one."""
    same = default_version({"support": support_swarm()})
    assert default_version({"support": support_swarm()}) == same
    assert default_version({"support": support_swarm(instructions="Refund fast.")}) != same


async def test_a_sessions_events_can_be_followed_while_it_runs(sqlite_url: str) -> None:
    """With stream_events, follow() yields the run's events in order, ending at RunFinished."""
    swarms = {"support": support_swarm(ScriptedModel(*support_script()))}
    async with launched(sqlite_url, swarms, stream_events=True) as app:
        handle = await app.start_session("support", "refund A-1", session_id="s-follow")
        kinds = [type(e).__name__ async for e in handle.follow()]
        await finished(handle)
        again = [type(e).__name__ async for e in handle.follow(since=len(kinds) - 1)]
    assert kinds[0] == "RunStarted" and kinds[-1] == "RunFinished"
    assert kinds.count("ToolCalled") == 2 and "HandoffPerformed" in kinds
    assert again == ["RunFinished"]


async def test_following_a_session_whose_worker_does_not_stream_says_so(sqlite_url: str) -> None:
    """No empty stream: follow() raises, naming the option, and the session runs on."""
    swarms = {"support": support_swarm(ScriptedModel(*support_script()))}
    async with launched(sqlite_url, swarms) as app:
        handle = await app.start_session("support", "refund A-1", session_id="s-quiet")
        with pytest.raises(ConfigurationError, match="--stream-events") as raised:
            async for _ in handle.follow():
                pass
        result = await finished(handle)
    assert "stream_events=True" in str(raised.value) and "s-quiet" in str(raised.value)
    assert result.final_output


async def test_a_mirror_write_cut_short_by_a_crash_is_taken_up_again(
    sqlite_url: str, tmp_path: Path
) -> None:
    """The lease a killed mirror write left in the journal is the session's own: no wait."""
    journal = SQLiteJournal(tmp_path / "journal.sqlite")
    await journal.acquire_lease("s-lease", owner="dbos:s-lease", ttl=600)  # as a crash leaves it
    swarms = {"support": support_swarm(ScriptedModel(*support_script()))}
    async with launched(sqlite_url, swarms, journal=journal) as app:
        await finished(await app.start_session("support", "refund A-1", session_id="s-lease"))
    assert (await journal.read("s-lease"))[-1].kind == "run_finished"


async def test_a_cancelled_session_stops_and_says_so(sqlite_url: str) -> None:
    """Cancelling a session that waits for a decision ends it as CANCELLED."""
    swarm = support_swarm(ScriptedModel(*support_script()), interrupt_before=["billing"])
    async with launched(sqlite_url, {"support": swarm}) as app:
        handle = await app.start_session("support", "refund A-1", session_id="s-cancel")
        assert await handle.pending(wait=LIMIT) is not None
        await handle.cancel()
        assert await handle.status() == "CANCELLED"
