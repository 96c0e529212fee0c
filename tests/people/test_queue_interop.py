"""A conversation parked for a person, as A2A and AG-UI clients see it, and a caller with the
decision permission acting as the person over A2A."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator

import httpx
import pytest
from a2a.client import Client
from a2a.helpers import get_data_parts, get_text_parts
from a2a.types.a2a_pb2 import GetTaskRequest, Task, TaskState
from a2a.utils.errors import UnsupportedOperationError

from swarmkit import Agent, PeopleQueue, Swarm, queues
from swarmkit.a2a import A2AServer
from swarmkit.agui import AgUiServer
from swarmkit.journal import InMemoryJournal
from swarmkit.lowlevel import engine_notes
from swarmkit.messages import AssistantMessage
from swarmkit.testing import ScriptedModel, text, transfer
from tests.interop.a2a_helpers import a2a_client, decision, responses, served, user_message
from tests.interop.agui_helpers import check_sequence, sse_events

TOKEN = "test-token-0123456789abcdef"
AGUI_TOKEN = "agui-token-0123456789abcdef"
DECISION_TOKEN = "decision-token-0123456789abcdef"


async def test_an_a2a_task_parked_for_a_person_is_input_required() -> None:
    """The A2A client sees input-required with the queue; a person then hands it back."""
    journal = InMemoryJournal()
    desk = PeopleQueue(name="desk", priority=1)
    billing = Agent(name="billing")
    model = ScriptedModel(
        per_agent={"triage": [transfer("desk")], "billing": [text("Sorted, thanks.")]}
    )
    triage = Agent(name="triage", handoffs=[desk])
    swarm = Swarm([triage, billing, desk], "triage", model=model, journal=journal)
    async with served(swarm, journal, TOKEN, streaming=False) as client:
        (first,) = await responses(client, user_message("a person please"))

    task = first.task
    assert task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    (asked,) = get_data_parts(task.status.message.parts)
    assert asked["pending"]["kind"] == "person"
    assert asked["pending"]["payload"]["queue"] == "desk"
    (found,) = await queues.waiting(journal)
    await queues.claim(journal, found.session_id, by="ana")
    await queues.reply(journal, found.session_id, by="ana", text="On it.")
    done = await queues.hand_back(swarm, found.session_id, to="billing", by="ana")
    assert done.final_output == "Sorted, thanks."


async def test_an_ag_ui_run_parked_for_a_person_ends_with_an_interrupt() -> None:
    """The AG-UI stream ends with an interrupt whose pending step waits for the queue."""
    journal = InMemoryJournal()
    desk = PeopleQueue(name="desk")
    swarm = Swarm(
        [Agent(name="triage", handoffs=[desk]), desk],
        "triage",
        model=ScriptedModel(transfer("desk")),
    )
    body = {
        "threadId": "t1",
        "runId": "r1",
        "messages": [{"id": "m1", "role": "user", "content": "a person please"}],
        "tools": [],
        "context": [],
        "state": {},
        "forwardedProps": {},
    }
    headers = {"Authorization": f"Bearer {AGUI_TOKEN}"}
    async with (
        AgUiServer(swarm, journal, token=AGUI_TOKEN) as server,
        httpx.AsyncClient(headers=headers) as http,
        http.stream("POST", server.url, json=body) as reply,
    ):
        events = sse_events("".join([chunk async for chunk in reply.aiter_text()]))

    check_sequence(events)
    finished = json.loads(events[-1].model_dump_json(by_alias=True))
    (interrupt,) = finished["outcome"]["interrupts"]
    assert interrupt["metadata"]["pending"]["kind"] == "person"
    assert interrupt["metadata"]["pending"]["payload"]["queue"] == "desk"
    assert [c.queue for c in await queues.waiting(journal)] == ["desk"]


def _desk_swarm(model: ScriptedModel, journal: InMemoryJournal) -> Swarm:
    desk = PeopleQueue(name="desk")
    triage = Agent(name="triage", handoffs=[desk])
    return Swarm([triage, Agent(name="billing"), desk], "triage", model=model, journal=journal)


@contextlib.asynccontextmanager
async def _parked(
    model: ScriptedModel, journal: InMemoryJournal
) -> AsyncIterator[tuple[Client, Client, Task]]:
    """A served swarm whose first task waits for a person: the caller's client (a run token),
    the decider's (the decision token) and the task."""
    swarm = _desk_swarm(model, journal)
    async with (
        A2AServer(swarm, journal, token=TOKEN, decision_token=DECISION_TOKEN) as server,
        a2a_client(server.url, TOKEN, streaming=False) as caller,
        a2a_client(server.url, DECISION_TOKEN, streaming=False) as decider,
    ):
        (first,) = await responses(caller, user_message("a person please"))
        assert first.task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        yield caller, decider, first.task


def _said(task: Task) -> str:
    return " ".join(get_text_parts(list(task.status.message.parts)))


async def test_a_decider_replies_and_hands_back_as_the_person_over_a2a() -> None:
    """The decider's text is journaled as its reply (claimed for it), the agent it hands back
    to sees the reply once, and the same hand-back sent again is the protocol's error."""
    journal = InMemoryJournal()
    model = ScriptedModel(transfer("desk"), text("Refund booked.", for_agent="billing"))
    async with _parked(model, journal) as (_, decider, task):
        (replied,) = await responses(decider, decision(task, "I approved the refund."))
        waiting = replied.task
        (done,) = await responses(decider, decision(waiting, data={"hand_back": "billing"}))
        with pytest.raises(UnsupportedOperationError, match="not waiting for input"):
            await responses(decider, decision(waiting, data={"hand_back": "billing"}))

    assert waiting.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    assert "reply is journaled" in _said(waiting)
    assert done.task.status.state == TaskState.TASK_STATE_COMPLETED
    records = await journal.read(f"a2a-{task.context_id}")
    notes = [(r.kind, r.data) for r in records if r.kind.startswith("queue_")]
    assert notes == [
        ("queue_claimed", {"by": "a2a:decider"}),
        ("queue_replied", {"by": "a2a:decider", "text": "I approved the refund."}),
    ]
    (resumed,) = [r.data for r in records if r.kind == "resumed"]
    assert resumed["decided_by"] == "a2a:decider"
    seen = model.requests[-1].messages
    said = [m.content for m in seen if isinstance(m, AssistantMessage) and m.agent == "a2a:decider"]
    assert said == ["I approved the refund."]
    model.assert_exhausted()


async def test_a_decider_closes_with_its_last_reply_as_the_answer() -> None:
    """A reply and ``{"close": true}`` in one message: the task completes with that reply."""
    journal = InMemoryJournal()
    async with _parked(ScriptedModel(transfer("desk")), journal) as (_, decider, task):
        (done,) = await responses(decider, decision(task, "Refunded, bye.", data={"close": True}))

    assert done.task.status.state == TaskState.TASK_STATE_COMPLETED
    assert _said(done.task) == "Refunded, bye."
    assert await queues.waiting(journal) == ()


async def test_a_run_token_cannot_act_as_the_person_and_nothing_is_written() -> None:
    """The caller's own token gets the protocol's error; no claim, no reply is journaled."""
    journal = InMemoryJournal()
    async with _parked(ScriptedModel(transfer("desk")), journal) as (caller, _, task):
        before = await journal.read(f"a2a-{task.context_id}")
        with pytest.raises(UnsupportedOperationError, match="decision token"):
            await responses(caller, decision(task, "hi", data={"hand_back": "billing"}))
        still = await caller.get_task(GetTaskRequest(id=task.id))

    assert still.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    assert await journal.read(f"a2a-{task.context_id}") == before


@pytest.mark.parametrize(
    ("words", "data", "refusal"),
    [
        ("a reply", {"hand_back": "shipping"}, "no agent named 'shipping'"),
        ("", {"decision": "approve"}, "waits for a person, not a decision"),
        ("", {"close": "yes"}, "nothing to do"),
    ],
)
async def test_a_person_message_that_cannot_be_taken_keeps_the_task_waiting(
    words: str, data: dict[str, object], refusal: str
) -> None:
    """An unknown agent, a plain decision or an empty message: the task still waits, says
    why, and the journal is unchanged."""
    journal = InMemoryJournal()
    async with _parked(ScriptedModel(transfer("desk")), journal) as (_, decider, task):
        before = await journal.read(f"a2a-{task.context_id}")
        (refused,) = await responses(decider, decision(task, words, data=data))

    assert refused.task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    assert refusal in _said(refused.task)
    assert await journal.read(f"a2a-{task.context_id}") == before


async def test_a_conversation_another_person_claimed_is_refused_over_a2a() -> None:
    """A person who claimed it through the queue keeps it: the decider is told who has it."""
    journal = InMemoryJournal()
    async with _parked(ScriptedModel(transfer("desk")), journal) as (_, decider, task):
        await queues.claim(journal, f"a2a-{task.context_id}", by="ana")
        (refused,) = await responses(decider, decision(task, "mine now"))

    assert refused.task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    assert "claimed by 'ana'" in _said(refused.task)
    (found,) = await queues.waiting(journal)
    assert (found.claimed_by, found.replies) == ("ana", ())


async def test_messages_that_leave_out_the_context_id_keep_the_tasks_own() -> None:
    """A reply, then a hand-back, each naming only the task: the task keeps its context and
    completes (the a2a-sdk refuses an update in another context)."""
    journal = InMemoryJournal()
    model = ScriptedModel(transfer("desk"), text("Booked.", for_agent="billing"))
    async with _parked(model, journal) as (_, decider, task):
        reply = decision(task, "Approved.")
        reply.message.context_id = ""
        (replied,) = await responses(decider, reply)
        hand_back = decision(replied.task, data={"hand_back": "billing"})
        hand_back.message.context_id = ""
        (done,) = await responses(decider, hand_back)

    assert replied.task.context_id == task.context_id
    assert done.task.status.state == TaskState.TASK_STATE_COMPLETED
    assert _said(done.task) == "Booked."


async def test_a_hand_back_of_a_session_an_engine_runs_is_refused_over_a2a() -> None:
    """A conversation a durable engine resumes is not handed back here: the task still waits,
    says to use the engine's decide, and no claim or reply is journaled."""
    journal = InMemoryJournal()
    async with _parked(ScriptedModel(transfer("desk")), journal) as (_, decider, task):
        session_id = f"a2a-{task.context_id}"
        await journal.append(engine_notes(await journal.read(session_id), engine="temporal"))
        before = await journal.read(session_id)
        (refused,) = await responses(decider, decision(task, "done", data={"hand_back": "billing"}))

    assert refused.task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    assert "runs on temporal" in _said(refused.task)
    assert await journal.read(session_id) == before
