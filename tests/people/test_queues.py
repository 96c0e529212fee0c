"""A conversation handed to a queue of people parks, is claimed, answered and handed back."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path

import pytest
from pydantic import BaseModel

from swarmkit import (
    Agent,
    ConfigurationError,
    Handoff,
    HandoffGraph,
    JournalError,
    PeopleQueueError,
    Swarm,
    queues,
)
from swarmkit.journal import Journal, JournalRecord, SQLiteJournal, session_status
from swarmkit.lowlevel import append_mirrored, engine_notes
from swarmkit.messages import AssistantMessage
from swarmkit.models import Model
from swarmkit.people import PeopleQueue
from swarmkit.testing import RecordingModel, ScriptedModel, text, transfer


class Refund(BaseModel):
    """What the refunds desk needs."""

    order: str
    amount: int


def _swarm(model: Model, journal: Journal, **queue_options: object) -> Swarm:
    desk = PeopleQueue(name="refunds-desk", priority=5, **queue_options)  # type: ignore[arg-type]
    billing = Agent(name="billing")
    triage = Agent(name="triage", handoffs=[Handoff(desk, Refund), billing])
    return Swarm([triage, billing, desk], "triage", model=model, journal=journal)


async def _parked(journal: Journal, model: Model, **options: object) -> Swarm:
    swarm = _swarm(model, journal, **options)
    result = await swarm.run("refund order 7 please", session_id="s1")
    assert result.stop_reason == "interrupted"
    return swarm


async def test_a_handoff_to_a_queue_parks_the_conversation_for_a_person(tmp_path: Path) -> None:
    """The run pauses as "waiting for a person" with the queue, priority and typed payload."""
    journal = SQLiteJournal(tmp_path / "j.db")
    model = ScriptedModel(transfer("refunds-desk", order="7", amount=30))
    swarm = _swarm(model, journal)

    result = await swarm.run("refund order 7 please", session_id="s1")

    assert result.stop_reason == "interrupted"
    assert result.pending is not None
    assert result.pending.kind == "person"
    assert result.pending.payload is not None
    assert result.pending.payload["queue"] == "refunds-desk"
    assert result.pending.payload["priority"] == 5
    assert result.pending.payload["payload"] == {"order": "7", "amount": 30}
    assert result.pending.payload["payload_type"] == "Refund"
    assert result.trail == ("triage", "refunds-desk")
    assert session_status(await journal.read("s1")) == "waiting"
    model.assert_exhausted()


async def test_claim_reply_and_hand_back_continue_with_the_agent(tmp_path: Path) -> None:
    """The named agent goes on and sees the person's replies as assistant messages."""
    journal = SQLiteJournal(tmp_path / "j.db")
    script = ScriptedModel(
        transfer("refunds-desk", order="7", amount=30), text("Refund booked.", for_agent="billing")
    )
    model = RecordingModel(script)
    swarm = await _parked(journal, model)

    listed = await queues.waiting(journal, now=10**10)
    assert [(c.session_id, c.queue, c.claimed_by) for c in listed] == [("s1", "refunds-desk", None)]
    await queues.claim(journal, "s1", by="ana")
    await queues.reply(journal, "s1", by="ana", text="I approved the refund of 30.")
    assert session_status(await journal.read("s1")) == "waiting"
    result = await queues.hand_back(swarm, "s1", to="billing", by="ana")

    assert result.stop_reason == "final_output"
    assert result.final_output == "Refund booked."
    assert result.trail == ("triage", "refunds-desk", "billing")
    assert result.handoffs[-1].decided_by == "person"
    seen = model.requests[-1].messages
    said = [m for m in seen if isinstance(m, AssistantMessage) and m.agent == "ana"]
    assert [m.content for m in said] == ["I approved the refund of 30."]
    assert await queues.waiting(journal) == ()
    script.assert_exhausted()


async def test_closing_ends_the_run_with_the_persons_last_reply(tmp_path: Path) -> None:
    """A closed conversation's answer is what the person said last."""
    journal = SQLiteJournal(tmp_path / "j.db")
    swarm = await _parked(journal, ScriptedModel(transfer("refunds-desk", order="7", amount=3)))
    await queues.claim(journal, "s1", by="ana")
    await queues.reply(journal, "s1", by="ana", text="Done, refunded.")

    result = await queues.close(swarm, "s1", by="ana")

    assert result.final_output == "Done, refunded."
    assert session_status(await journal.read("s1")) == "finished"


async def test_a_second_claim_is_refused_with_who_holds_it(tmp_path: Path) -> None:
    """Only one person claims a conversation; the other is told who has it."""
    journal = SQLiteJournal(tmp_path / "j.db")
    await _parked(journal, ScriptedModel(transfer("refunds-desk", order="7", amount=3)))
    await queues.claim(journal, "s1", by="ana")

    with pytest.raises(PeopleQueueError, match="already claimed by 'ana'") as caught:
        await queues.claim(journal, "s1", by="bo")
    assert caught.value.claimed_by == "ana"


async def test_replies_need_the_claim_and_nothing_is_written_without_it(tmp_path: Path) -> None:
    """A reply nobody claimed, or another person claimed, is refused and writes nothing."""
    journal = SQLiteJournal(tmp_path / "j.db")
    await _parked(journal, ScriptedModel(transfer("refunds-desk", order="7", amount=3)))
    before = len(await journal.read("s1"))

    with pytest.raises(PeopleQueueError, match="nobody has claimed"):
        await queues.reply(journal, "s1", by="bo", text="hi")
    await queues.claim(journal, "s1", by="ana")
    with pytest.raises(PeopleQueueError, match="claimed by 'ana', not 'bo'"):
        await queues.reply(journal, "s1", by="bo", text="hi")

    assert len(await journal.read("s1")) == before + 1  # the claim only


async def test_a_hand_back_to_an_unknown_agent_keeps_the_conversation_waiting(
    tmp_path: Path,
) -> None:
    """An agent the swarm does not have is refused before anything is written."""
    journal = SQLiteJournal(tmp_path / "j.db")
    model = ScriptedModel(transfer("refunds-desk", order="7", amount=3), text("ok"))
    swarm = await _parked(journal, model)
    await queues.claim(journal, "s1", by="ana")
    await queues.reply(journal, "s1", by="ana", text="noted")
    before = await journal.read("s1")

    with pytest.raises(PeopleQueueError, match="no agent named 'shipping'"):
        await queues.hand_back(swarm, "s1", to="shipping", by="ana")

    assert await journal.read("s1") == before
    result = await queues.hand_back(swarm, "s1", to="triage", by="ana")
    assert result.final_output == "ok"


def test_a_negative_deadline_is_refused_at_construction() -> None:
    """A queue's deadline must be zero or more."""
    with pytest.raises(ConfigurationError, match="deadline must be zero or more"):
        PeopleQueue(name="desk", deadline=timedelta(minutes=-1))


async def test_a_graph_rule_can_hand_off_to_a_queue(tmp_path: Path) -> None:
    """A queue is a rule's target like any agent; no model call is made."""
    journal = SQLiteJournal(tmp_path / "j.db")
    desk = PeopleQueue(name="desk")
    triage = Agent(name="triage")
    graph = HandoffGraph()
    graph.add_edge("triage", "desk", when="true")
    model = ScriptedModel()
    swarm = Swarm([triage, desk], "triage", model=model, journal=journal, graph=graph)

    result = await swarm.run("I want a person", session_id="s2")

    assert result.pending is not None and result.pending.kind == "person"
    assert [c.queue for c in await queues.waiting(journal)] == ["desk"]


async def test_the_round_trip_works_on_postgres(postgres_dsn: str) -> None:
    """Park, claim, reply and hand back on a Postgres journal."""
    from swarmkit.journal import PostgresJournal  # noqa: PLC0415 - the postgres extra

    async with PostgresJournal(postgres_dsn) as journal:
        model = ScriptedModel(transfer("refunds-desk", order="7", amount=30), text("Booked."))
        swarm = await _parked(journal, model)
        await queues.claim(journal, "s1", by="ana")
        with pytest.raises(PeopleQueueError, match="already claimed"):
            await queues.claim(journal, "s1", by="bo")
        await queues.reply(journal, "s1", by="ana", text="Approved.")

        result = await queues.hand_back(swarm, "s1", to="billing", by="ana")

        assert result.final_output == "Booked."
        assert session_status(await journal.read("s1")) == "finished"


async def test_an_unclaimed_conversation_past_its_deadline_is_escalated_once(
    tmp_path: Path,
) -> None:
    """On the clock given, an overdue conversation gets one journaled escalation, listed."""
    journal = SQLiteJournal(tmp_path / "j.db")
    model = ScriptedModel(transfer("refunds-desk", order="7", amount=3))
    await _parked(journal, model, deadline=timedelta(minutes=10))
    (fresh,) = await queues.waiting(journal, now=None)
    assert fresh.parked_at is not None
    parked = fresh.parked_at

    assert await queues.escalate(journal, now=parked + 599) == ()
    (late,) = await queues.escalate(journal, now=parked + 601)
    assert await queues.escalate(journal, now=parked + 900) == ()

    assert late.escalated_at == parked + 601
    (listed,) = await queues.waiting(journal, now=parked + 900)
    assert (listed.overdue, listed.escalated_at) == (True, parked + 601)
    kinds = [r.kind for r in await journal.read("s1")]
    assert kinds.count("queue_escalated") == 1


async def test_listing_escalates_and_a_claimed_conversation_is_never_escalated(
    tmp_path: Path,
) -> None:
    """Listing sweeps too; once someone claims a conversation its deadline no longer counts."""
    journal = SQLiteJournal(tmp_path / "j.db")
    swarm = _swarm(
        ScriptedModel(
            transfer("refunds-desk", order="1", amount=1),
            transfer("refunds-desk", order="2", amount=2),
        ),
        journal,
        deadline=timedelta(seconds=0),
    )
    await swarm.run("first", session_id="a")
    await swarm.run("second", session_id="b")
    await queues.claim(journal, "a", by="ana")

    listed = await queues.waiting(journal, now=10**10)

    escalated = {c.session_id: c.escalated_at is not None for c in listed}
    assert escalated == {"a": False, "b": True}


async def test_a_handed_back_session_replays_with_no_model_call(tmp_path: Path) -> None:
    """Replay steps over the people's notes and takes the journaled hand-back again."""
    journal = SQLiteJournal(tmp_path / "j.db")
    model = ScriptedModel(transfer("refunds-desk", order="7", amount=3), text("Booked."))
    swarm = await _parked(journal, model)
    await queues.claim(journal, "s1", by="ana")
    await queues.reply(journal, "s1", by="ana", text="Approved.")
    await queues.hand_back(swarm, "s1", to="billing", by="ana")
    idle = ScriptedModel()

    replayed = await _swarm(idle, journal).replay("s1")

    assert replayed.final_output == "Booked."
    assert replayed.trail == ("triage", "refunds-desk", "billing")
    assert idle.requests == []


async def test_two_claims_at_once_in_one_process_leave_one_claim(tmp_path: Path) -> None:
    """Two connections claiming together: one wins, the other is refused, one record."""
    path = tmp_path / "j.db"
    with SQLiteJournal(path) as journal:
        await _parked(journal, ScriptedModel(transfer("refunds-desk", order="7", amount=3)))
    with SQLiteJournal(path) as first, SQLiteJournal(path) as second:
        outcomes = await asyncio.gather(
            queues.claim(first, "s1", by="ana"),
            queues.claim(second, "s1", by="bo"),
            return_exceptions=True,
        )
        records = await first.read("s1")

    assert sum(isinstance(o, PeopleQueueError) for o in outcomes) == 1
    assert [r.kind for r in records].count("queue_claimed") == 1


async def test_a_claim_written_from_a_stale_read_is_refused_by_the_store(tmp_path: Path) -> None:
    """Under the lease, the store's own check: a note at a seq another claim took fails."""
    journal = SQLiteJournal(tmp_path / "j.db")
    await _parked(journal, ScriptedModel(transfer("refunds-desk", order="7", amount=3)))
    stale = len(await journal.read("s1"))
    await queues.claim(journal, "s1", by="ana")
    late = JournalRecord(session_id="s1", seq=stale, kind="queue_claimed", data={"by": "bo"})

    with pytest.raises(JournalError):
        await journal.append([late])

    (found,) = await queues.waiting(journal)
    assert found.claimed_by == "ana"


async def test_a_conversation_cannot_be_handed_back_to_a_queue(tmp_path: Path) -> None:
    """Only agents take a conversation back; a queue's name is refused, nothing written."""
    journal = SQLiteJournal(tmp_path / "j.db")
    swarm = await _parked(journal, ScriptedModel(transfer("refunds-desk", order="7", amount=3)))
    await queues.claim(journal, "s1", by="ana")
    before = await journal.read("s1")

    with pytest.raises(PeopleQueueError, match="no agent named 'refunds-desk'"):
        await queues.hand_back(swarm, "s1", to="refunds-desk", by="ana")

    assert await journal.read("s1") == before


async def test_a_fork_after_a_persons_reply_runs_on_from_the_hand_back(tmp_path: Path) -> None:
    """A fork at a step past the people's notes keeps them, replays the hand-back and goes
    live after it: the forked agent sees the person's reply once."""
    journal = SQLiteJournal(tmp_path / "j.db")
    model = ScriptedModel(transfer("refunds-desk", order="7", amount=3), text("Booked."))
    swarm = await _parked(journal, model)
    await queues.claim(journal, "s1", by="ana")
    await queues.reply(journal, "s1", by="ana", text="Approved.")
    await queues.hand_back(swarm, "s1", to="billing", by="ana")
    records = await journal.read("s1")
    entered = next(r.seq for r in records if r.data.get("agent") == "billing")
    again = RecordingModel(ScriptedModel(text("Booked again.", for_agent="billing")))

    forked = await _swarm(again, journal).fork("s1", at=entered, fork_session_id="f1")

    assert forked.final_output == "Booked again."
    assert forked.trail == ("triage", "refunds-desk", "billing")
    said = [m for m in again.requests[-1].messages if getattr(m, "agent", None) == "ana"]
    assert [m.content for m in said] == ["Approved."]
    kinds = [r.kind for r in await journal.read("f1")]
    assert kinds[: entered + 1] == [r.kind for r in records[: entered + 1]]


async def test_a_session_an_engine_runs_is_not_handed_back_in_this_process(
    tmp_path: Path,
) -> None:
    """A mirror whose engine noted the person's pause lists the engine; hand_back and close
    are refused with how to send the hand-back to the engine, and nothing is written."""
    journal = SQLiteJournal(tmp_path / "j.db")
    swarm = await _parked(journal, ScriptedModel(transfer("refunds-desk", order="7", amount=3)))
    (in_process,) = await queues.waiting(journal)
    mirror = SQLiteJournal(tmp_path / "mirror.db")
    records = await journal.read("s1")
    marks = engine_notes(records, engine="dbos")
    await append_mirrored(mirror, [*records, *marks], owner="dbos:s1")
    await queues.claim(mirror, "s1", by="ana")
    await queues.reply(mirror, "s1", by="ana", text="Refunded.")
    before = await mirror.read("s1")

    with pytest.raises(PeopleQueueError) as handed:
        await queues.hand_back(swarm, "s1", to="billing", by="ana", journal=mirror)
    with pytest.raises(PeopleQueueError, match=r"to=None, by='ana'"):
        await queues.close(swarm, "s1", by="ana", journal=mirror)

    assert "runs on dbos" in str(handed.value)
    assert "hand_back_decision(journal, 's1', to='billing', by='ana')" in str(handed.value)
    assert await mirror.read("s1") == before
    (listed,) = await queues.waiting(mirror)
    assert (in_process.engine, listed.engine, listed.claimed_by) == (None, "dbos", "ana")
    assert session_status(before) == "waiting"
    assert engine_notes(before, engine="dbos") == ()
