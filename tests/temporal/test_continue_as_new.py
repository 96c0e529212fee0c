"""Long sessions across continue-as-new: events followed once, records carried by reference."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import WorkflowFailureError
from temporalio.testing import ActivityEnvironment

from swarmkit import Agent, Swarm, tool
from swarmkit.events import Event, TextDelta, ToolCalled, event_to_data
from swarmkit.journal import SQLiteJournal
from swarmkit.temporal import SwarmPlugin, follow, run_session, session_result, start_session
from swarmkit.temporal._activities import MIRROR_ACTIVITY, MIRROR_READ_ACTIVITY, SwarmActivities
from swarmkit.temporal._data import MirrorInput, record_to_data
from swarmkit.testing import NeverCalledModel, ScriptedModel, ScriptedTurn, text, tool_call
from tests.temporal.harness import (
    activity_inputs,
    run_histories,
    running_worker,
    started_input,
)
from tests.temporal.swarms import lookup_order, support_script, support_swarm

_GATES: dict[str, asyncio.Event] = {}


@tool
async def hold(order_id: str) -> str:
    """Wait until the test opens the gate (so a follower is seen mid-session)."""
    await _GATES["hold"].wait()
    return f"{order_id}: held and released"


def _clerk(model: ScriptedModel | None = None) -> Swarm:
    clerk = Agent(name="clerk", instructions="Look orders up.", tools=[lookup_order, hold])
    return Swarm([clerk], "clerk", model=model or ScriptedModel(name="scripted"))


def _clerk_script() -> list[ScriptedTurn]:
    """Nine steps (five model calls, four tools); the hold is the sixth."""
    return [
        tool_call("lookup_order", order_id="A-1"),
        tool_call("lookup_order", order_id="A-2"),
        tool_call("hold", order_id="A-3"),
        tool_call("lookup_order", order_id="A-4"),
        text("All four looked up."),
    ]


async def _collect(events: list[Event], source: object, held: asyncio.Event) -> None:
    async for event in source:  # type: ignore[attr-defined]
        events.append(event)
        if isinstance(event, ToolCalled) and event.name == "hold":
            held.set()


@pytest.mark.slow
async def test_a_follower_sees_every_event_once_across_continue_as_new(
    temporal_address: str,
) -> None:
    """Two steps per workflow run: followed live, the session's events are the in-process
    run's, each once and in order, though the session crosses four run boundaries."""
    session_id = f"follow-{uuid.uuid4().hex[:8]}"
    _GATES["hold"] = asyncio.Event()
    _GATES["hold"].set()
    local = [
        event_to_data(e)
        async for e in _clerk(ScriptedModel(*_clerk_script(), name="scripted")).stream(
            "look up four orders", session_id=session_id
        )
        if not isinstance(e, TextDelta)
    ]
    _GATES["hold"] = asyncio.Event()
    followed: list[Event] = []
    async with running_worker(
        temporal_address,
        swarms={"clerk": _clerk()},
        models={"scripted": ScriptedModel(*_clerk_script(), name="scripted")},
        steps_per_run=2,
    ) as (client, queue):
        handle = await start_session(
            client, "clerk", "look up four orders", task_queue=queue, session_id=session_id
        )
        held = asyncio.Event()
        reading = asyncio.create_task(_collect(followed, follow(handle, every=0.02), held))
        await asyncio.wait_for(held.wait(), 30)  # the follower saw the held tool
        seen_mid_session = len(followed)
        _GATES["hold"].set()
        await reading
        await session_result(handle)
        runs = await run_histories(client, session_id, handle.first_execution_run_id or "")

    assert len(runs) == 5
    assert 0 < seen_mid_session < len(followed)
    # In a workflow the model is called in an activity without streaming, and the event says
    # so; everything else is the in-process run's.
    assert [_unstreamed(event_to_data(e)) for e in followed] == [_unstreamed(e) for e in local]


def _unstreamed(data: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in data.items() if key != "stream"}


async def test_a_continued_run_reads_its_records_from_the_mirror(
    temporal_address: str, tmp_path: Path
) -> None:
    """With a mirror, a continued run's input holds a cursor and no records; each record is
    mirrored once; the mirror holds the whole session, which replays with no model call."""
    journal = SQLiteJournal(tmp_path / "mirror.db")
    async with running_worker(
        temporal_address,
        swarms={"support": support_swarm()},
        models={"scripted": ScriptedModel(*support_script(), name="scripted")},
        journal=journal,
        steps_per_run=2,
    ) as (client, queue):
        handle = await start_session(client, "support", "refund A-1", task_queue=queue)
        result = await session_result(handle)
        runs = await run_histories(client, handle.id, handle.first_execution_run_id or "")

    records = await journal.read(handle.id)
    inputs = [started_input(history) for history in runs]
    mirrored = [
        (r["session_id"], r["seq"])
        for history in runs
        for batch in activity_inputs(history, MIRROR_ACTIVITY)
        for r in batch["records"]
    ]
    replayed = await support_swarm(NeverCalledModel()).replay(handle.id, journal)

    assert len(runs) == 3
    assert all(i["records"] == [] and i["mirrored"][handle.id] > 0 for i in inputs[1:])
    assert [r.seq for r in records] == list(range(len(records)))
    assert sorted(mirrored) == [(handle.id, r.seq) for r in records]
    assert replayed.to_data() == result.to_data()


async def test_records_too_large_to_carry_without_a_mirror_fail_naming_the_fix(
    temporal_address: str,
) -> None:
    """With no mirror and records over the payload limit, the session fails at the boundary
    with an error that names the cause and the fix; it never hangs."""
    async with running_worker(
        temporal_address,
        swarms={"support": support_swarm()},
        models={"scripted": ScriptedModel(*support_script(), name="scripted")},
        steps_per_run=2,
        max_payload_bytes=2_500,
    ) as (client, queue):
        with pytest.raises(WorkflowFailureError) as failure:
            await run_session(client, "support", "refund A-1", task_queue=queue)

    message = str(failure.value.cause)
    assert "cannot continue as new" in message
    assert "SwarmPlugin(journal=...)" in message


async def test_small_payload_limits_page_the_mirror_both_ways(
    temporal_address: str, tmp_path: Path
) -> None:
    """Under a small payload limit the mirror is written in several batches and read back in
    several pages; the session still ends as in process, each record mirrored once."""
    journal = SQLiteJournal(tmp_path / "mirror.db")
    session_id = f"paged-{uuid.uuid4().hex[:8]}"
    local = await _clerk(ScriptedModel(*_clerk_script(), name="scripted")).run(
        "look up four orders", session_id=session_id
    )
    _GATES["hold"] = asyncio.Event()
    _GATES["hold"].set()
    async with running_worker(
        temporal_address,
        swarms={"clerk": _clerk()},
        models={"scripted": ScriptedModel(*_clerk_script(), name="scripted")},
        journal=journal,
        steps_per_run=4,
        max_payload_bytes=2_500,
    ) as (client, queue):
        handle = await start_session(
            client, "clerk", "look up four orders", task_queue=queue, session_id=session_id
        )
        result = await session_result(handle)
        runs = await run_histories(client, handle.id, handle.first_execution_run_id or "")

    reads = [len(activity_inputs(history, MIRROR_READ_ACTIVITY)) for history in runs]
    writes = sum(len(activity_inputs(history, MIRROR_ACTIVITY)) for history in runs)
    records = await journal.read(handle.id)
    assert result.to_data() == local.to_data()
    assert reads[0] == 0 and reads[-1] > 1
    assert writes > len(runs)
    assert [r.seq for r in records] == list(range(len(records)))


async def test_a_retried_mirror_activity_writes_each_record_once(tmp_path: Path) -> None:
    """The mirror activity run twice on one batch (a retry) leaves each record in the journal
    once; a later batch that overlaps the first adds only what is new."""
    journal = SQLiteJournal(tmp_path / "mirror.db")
    await _clerk(ScriptedModel(*_clerk_script(), name="scripted")).run(
        "look up four orders", session_id="done", journal=journal
    )
    records = [record_to_data(r) for r in await journal.read("done")]
    copy = SQLiteJournal(tmp_path / "copy.db")
    activities = SwarmActivities(SwarmPlugin(journal=copy).registry)
    environment = ActivityEnvironment()

    await environment.run(activities.mirror, MirrorInput(records=records[:5]))
    await environment.run(activities.mirror, MirrorInput(records=records[:5]))
    await environment.run(activities.mirror, MirrorInput(records=records[3:]))

    assert [record_to_data(r) for r in await copy.read("done")] == records
