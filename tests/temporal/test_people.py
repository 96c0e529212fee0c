"""A Temporal session parked for a person, and a cancelled one that goes on: both through the
journal mirror."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from pathlib import Path

import pytest
from temporalio.client import WorkflowFailureError

from swarmkit import Agent, Swarm, queues
from swarmkit.cli import main
from swarmkit.exceptions import JournalError, PeopleQueueError, SessionNotFoundError
from swarmkit.journal import SQLiteJournal, session_status
from swarmkit.models import ModelRequest, ModelResponse
from swarmkit.people import PeopleQueue
from swarmkit.temporal import (
    pending_decision,
    resume_session,
    session_events,
    session_result,
    start_session,
)
from swarmkit.testing import ScriptedModel, text, transfer
from tests.temporal.harness import running_worker, wait_for

LIMIT = 60.0


def _desk(model: ScriptedModel) -> Swarm:
    desk = PeopleQueue(name="desk", priority=3)
    triage = Agent(name="triage", handoffs=[desk])
    return Swarm([triage, Agent(name="clerk"), desk], "triage", model=model)


async def test_a_parked_session_is_one_run_of_events_and_resumes_once(
    temporal_address: str, tmp_path: Path
) -> None:
    """The mirror lists the parked session in its queue (run by Temporal); a hand-back in this
    process is refused, writing nothing, with how to send it; the command's hand-back sent to
    the workflow resumes it once, the clerk seeing the reply; the events query reads as one
    run (one start, one end)."""
    mirror = SQLiteJournal(tmp_path / "mirror.sqlite")
    model = ScriptedModel(transfer("desk"), text("Booked.", for_agent="clerk"), name="scripted")
    swarms = {"desk": _desk(model)}
    models = {"scripted": model}
    async with running_worker(temporal_address, swarms=swarms, models=models, journal=mirror) as (
        client,
        queue,
    ):
        handle = await start_session(client, "desk", "a person please", task_queue=queue)
        await wait_for(handle, lambda: _parked(handle), "the person's pause")
        [parked] = await queues.waiting(mirror, queue="desk")
        await queues.claim(mirror, handle.id, by="ana")
        await queues.reply(mirror, handle.id, by="ana", text="Refunded.")
        before = await mirror.read(handle.id)
        with pytest.raises(
            PeopleQueueError,
            match=r"runs on temporal.*swarmkit\.temporal\.decide.*--temporal-address",
        ):
            await queues.hand_back(swarms["desk"], handle.id, to="clerk", by="ana", journal=mirror)
        refused_close = await _refused(
            queues.close(swarms["desk"], handle.id, by="ana", journal=mirror)
        )
        unchanged = await mirror.read(handle.id) == before
        back = ["queue", "hand-back", handle.id, "--to", "clerk", "--by", "ana"]
        where = ["--temporal-address", temporal_address, "--journal", str(mirror.path)]
        sent = await asyncio.to_thread(main, [*back, *where])
        result = await session_result(handle)
        kinds = [e.kind for e in await session_events(handle)]

    assert (parked.session_id, parked.priority, parked.engine) == (handle.id, 3, "temporal")
    assert unchanged and "to=None" in refused_close and sent == 0
    assert result.final_output == "Booked."
    assert len(model.requests) == 2
    replies = [m.content for m in model.requests[-1].messages if getattr(m, "agent", "") == "ana"]
    assert replies == ["Refunded."]
    assert kinds.count("run_started") == 1 and kinds.count("run_finished") == 1
    assert kinds[-1] == "run_finished"
    assert session_status(await mirror.read(handle.id)) == "finished"


async def _refused(attempt: Awaitable[object]) -> str:
    with pytest.raises(PeopleQueueError) as refused:
        await attempt
    return str(refused.value)


async def _parked(handle: object) -> bool:
    pending = await pending_decision(handle)  # type: ignore[arg-type]
    return pending is not None and pending.kind == "person"


class _Hangs:
    """Answers, hanging first on its second call until the test lets it go."""

    name = "hangs"

    def __init__(self) -> None:
        self.reached = asyncio.Event()
        self.hang = True
        self._script = ScriptedModel(transfer("clerk"), text("Done."))

    async def respond(self, request: ModelRequest) -> ModelResponse:
        if self.hang and self._script.requests:
            self.reached.set()
            await asyncio.Event().wait()
        return await self._script.respond(request)


async def test_a_cancelled_session_is_cancelled_in_the_mirror_and_resumes_from_it(
    temporal_address: str, tmp_path: Path
) -> None:
    """Cancelling mid-call mirrors the run's end as cancelled; resume_session goes on from the
    mirror (the handoff before is not repeated) and refuses a session not cancelled."""
    mirror = SQLiteJournal(tmp_path / "mirror.sqlite")
    model = _Hangs()
    agents = [Agent(name="triage", handoffs=["clerk"]), Agent(name="clerk")]
    swarms = {"s": Swarm(agents, "triage", model=model)}
    models = {"hangs": model}
    async with running_worker(temporal_address, swarms=swarms, models=models, journal=mirror) as (
        client,
        queue,
    ):
        handle = await start_session(client, "s", "hello", task_queue=queue)
        await asyncio.wait_for(model.reached.wait(), LIMIT)
        await handle.cancel()
        with pytest.raises(WorkflowFailureError):
            await handle.result()
        cancelled = session_status(await mirror.read(handle.id))
        model.hang = False
        result = await session_result(await resume_session(client, handle.id))
        with pytest.raises(JournalError, match="completed, not cancelled"):
            await resume_session(client, handle.id)
        with pytest.raises(SessionNotFoundError):
            await resume_session(client, "no-such-session")

    assert cancelled == "cancelled"
    assert result.final_output == "Done."
    assert result.trail == ("triage", "clerk")
    assert len(model._script.requests) == 2
