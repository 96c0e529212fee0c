"""A conversation parked for a person, as A2A and AG-UI clients see it."""

from __future__ import annotations

import json

import httpx
from a2a.helpers import get_data_parts
from a2a.types.a2a_pb2 import TaskState

from swarmkit import Agent, PeopleQueue, Swarm, queues
from swarmkit.agui import AgUiServer
from swarmkit.journal import InMemoryJournal
from swarmkit.testing import ScriptedModel, text, transfer
from tests.interop.a2a_helpers import responses, served, user_message
from tests.interop.agui_helpers import check_sequence, sse_events

TOKEN = "test-token-0123456789abcdef"
AGUI_TOKEN = "agui-token-0123456789abcdef"


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
