"""A DBOS session parked for a person: the queue works on its journal, the hand-back resumes it
once; a cancelled session goes on with resume()."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from swarmkit import Agent, Swarm, queues
from swarmkit.dbos import DurableSwarms
from swarmkit.exceptions import JournalError, PeopleQueueError
from swarmkit.journal import SQLiteJournal
from swarmkit.people import PeopleQueue
from swarmkit.testing import ScriptedModel, text, transfer

LIMIT = 60.0


def _desk(model: ScriptedModel) -> Swarm:
    desk = PeopleQueue(name="desk", priority=3)
    triage = Agent(name="triage", handoffs=[desk])
    return Swarm([triage, Agent(name="clerk"), desk], "triage", model=model)


async def test_a_parked_session_is_one_event_stream_and_resumes_once(
    sqlite_url: str, tmp_path: Path
) -> None:
    """The journal lists the parked session in its queue (run by DBOS); a hand-back in this
    process is refused, writing nothing, with how to send it; after decide's hand-back the
    session's event stream reads as one run (one start, one end), and the reply reaches the
    clerk once."""
    journal = SQLiteJournal(tmp_path / "journal.sqlite")
    model = ScriptedModel(transfer("desk"), text("Booked.", for_agent="clerk"))
    app_swarm = _desk(model)
    app = DurableSwarms(
        {"desk": app_swarm},
        database_url=sqlite_url,
        journal=journal,
        polling_interval=0.05,
        stream_events=True,
    )
    async with app:
        handle = await app.start_session("desk", "a person please", session_id="p1")
        pending = await handle.pending(wait=LIMIT)
        [parked] = await queues.waiting(journal, queue="desk")
        await queues.claim(journal, "p1", by="ana")
        await queues.reply(journal, "p1", by="ana", text="Refunded.")
        before = await journal.read("p1")
        with pytest.raises(PeopleQueueError, match=r"runs on dbos.*session_handle\('p1'\)\.decide"):
            await queues.hand_back(app_swarm, "p1", to="clerk", by="ana", journal=journal)
        unchanged = await journal.read("p1") == before
        decision = await queues.hand_back_decision(journal, "p1", to="clerk", by="ana")
        await handle.decide(decision)
        result = await asyncio.wait_for(handle.result(), LIMIT)
        kinds = [type(e).__name__ async for e in handle.follow()]
        with pytest.raises(JournalError, match="not waiting"):
            await handle.decide(decision)

    assert pending is not None and pending.kind == "person"
    assert (parked.session_id, parked.priority, parked.engine) == ("p1", 3, "dbos")
    assert unchanged
    assert result.final_output == "Booked."
    assert kinds.count("RunStarted") == 1 and kinds.count("RunFinished") == 1
    assert kinds[-1] == "RunFinished"
    assert [m.content for m in model.requests[-1].messages if getattr(m, "agent", "") == "ana"] == [
        "Refunded."
    ]
    with pytest.raises(PeopleQueueError):
        await queues.hand_back_decision(journal, "p1", to="clerk", by="ana")


async def test_only_a_cancelled_session_is_resumed(sqlite_url: str) -> None:
    """resume() refuses a session that finished: it goes on only after a cancellation."""
    swarm = Swarm([Agent(name="clerk")], "clerk", model=ScriptedModel(text("Hello.")))
    async with DurableSwarms({"s": swarm}, database_url=sqlite_url, polling_interval=0.05) as app:
        handle = await app.start_session("s", "hi", session_id="done")
        await asyncio.wait_for(handle.result(), LIMIT)
        with pytest.raises(JournalError, match="SUCCESS, not CANCELLED"):
            await handle.resume()
