"""A swarm served over A2A, called by the a2a-sdk's own client on loopback."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from a2a.client import A2ACardResolver
from a2a.helpers import get_data_parts, get_text_parts
from a2a.types.a2a_pb2 import (
    CancelTaskRequest,
    GetExtendedAgentCardRequest,
    GetTaskRequest,
    Role,
    TaskState,
)
from pydantic import BaseModel

from swarmkit import Agent, ConfigurationError, Handoff, ModelError, Swarm
from swarmkit.a2a import A2AServer
from swarmkit.journal import InMemoryJournal
from swarmkit.models import ModelRequest, ModelResponse
from swarmkit.testing import ScriptedModel, text, transfer
from tests.interop.a2a_helpers import a2a_client, decision, responses, served, user_message
from tests.interop.hanging import HangsOnce

TOKEN = "test-token-0123456789abcdef"
DECISION_TOKEN = "decision-token-0123456789abcdef"


class Refund(BaseModel):
    """A refund."""

    amount: int


def _swarm(model: object, **options: object) -> Swarm:
    billing = Agent(name="billing", description="Pays refunds.")
    triage = Agent(
        name="triage",
        description="Sorts out what a customer needs.",
        handoffs=[Handoff(agent=billing, input_type=Refund)],
    )
    return Swarm([triage, billing], "triage", model=model, **options)  # type: ignore[arg-type]


@pytest.fixture
async def journal() -> InMemoryJournal:
    """A fresh journal."""
    return InMemoryJournal()


async def test_the_agent_card_describes_the_swarm() -> None:
    """The public card names the entry agent, streams, asks for a token and points to the
    extended card, which lists a skill per agent."""
    async with (
        A2AServer(_swarm(ScriptedModel()), InMemoryJournal(), token=TOKEN) as server,
        httpx.AsyncClient() as http,
        a2a_client(server.url, TOKEN, streaming=False) as client,
    ):
        card = await A2ACardResolver(http, server.url).get_agent_card()
        extended = await client.get_extended_agent_card(GetExtendedAgentCardRequest())

    assert card.name == "triage"
    assert card.description == "Sorts out what a customer needs."
    assert [s.id for s in card.skills] == ["triage"]
    assert card.capabilities.streaming
    assert card.capabilities.extended_agent_card
    assert card.supported_interfaces[0].url == server.url
    assert "bearer" in card.security_schemes
    assert [(s.id, s.description) for s in extended.skills] == [
        ("triage", "Sorts out what a customer needs."),
        ("billing", "Pays refunds."),
    ]


async def test_send_completes_the_task_with_the_final_output(journal: InMemoryJournal) -> None:
    """message/send returns a completed task whose artifact holds the answer."""
    swarm = _swarm(ScriptedModel(text("Your order ships today.")))
    async with served(swarm, journal, TOKEN, streaming=False) as client:
        (response,) = await responses(client, user_message("where is my order?"))

    task = response.task
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert get_text_parts(task.artifacts[0].parts) == ["Your order ships today."]
    (info,) = await journal.sessions()
    assert info.session_id == f"a2a-{task.context_id}"
    assert info.stop_reason == "final_output"


async def test_stream_follows_the_run_from_working_to_completed(journal: InMemoryJournal) -> None:
    """message/stream sends working updates for each agent and handoff, then completed."""
    model = ScriptedModel(transfer("billing", amount=5), text("Refunded 5."))
    async with served(_swarm(model), journal, TOKEN, streaming=True) as client:
        stream = await responses(client, user_message("refund 5"))

    updates = [r.status_update for r in stream if r.HasField("status_update")]
    states = [u.status.state for u in updates]
    assert states[0] == TaskState.TASK_STATE_WORKING
    assert states[-1] == TaskState.TASK_STATE_COMPLETED
    assert stream[0].task.metadata["session_id"] == f"a2a-{stream[0].task.context_id}"
    notes = [get_text_parts(u.status.message.parts) for u in updates]
    assert ["triage is working"] in notes
    assert ["triage handed off to billing"] in notes
    assert ["billing is working"] in notes
    artifacts = [r.artifact_update.artifact for r in stream if r.HasField("artifact_update")]
    assert get_text_parts(artifacts[-1].parts) == ["Refunded 5."]


async def test_a_task_names_its_session_and_sends_no_notes_to_a_client_that_does_not_stream(
    journal: InMemoryJournal,
) -> None:
    """The task's metadata names the conversation's session; message/send's task holds none
    of the per-agent and handoff notes only a stream would show."""
    model = ScriptedModel(transfer("billing", amount=5), text("Refunded 5."))
    async with served(_swarm(model), journal, TOKEN, streaming=False) as client:
        (response,) = await responses(client, user_message("refund 5"))
        fetched = await client.get_task(GetTaskRequest(id=response.task.id))

    task = response.task
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert [m.role for m in task.history] == [Role.ROLE_USER]
    assert get_text_parts(task.artifacts[0].parts) == ["Refunded 5."]
    assert fetched.metadata["session_id"] == task.metadata["session_id"]
    (info,) = await journal.sessions()
    assert task.metadata["session_id"] == info.session_id == f"a2a-{task.context_id}"


async def test_a_typed_output_arrives_as_a_data_part(journal: InMemoryJournal) -> None:
    """An agent with an output_type answers with its JSON text and the value as data."""
    model = ScriptedModel(text('{"amount": 12}'))
    swarm = Swarm([Agent(name="clerk", output_type=Refund)], "clerk", model=model)
    async with served(swarm, journal, TOKEN, streaming=False) as client:
        (response,) = await responses(client, user_message("how much?"))

    artifact = response.task.artifacts[0]
    assert get_data_parts(artifact.parts) == [{"amount": 12.0}]
    assert response.task.status.state == TaskState.TASK_STATE_COMPLETED


async def test_a_paused_run_asks_for_input_and_the_decision_completes_it(
    journal: InMemoryJournal,
) -> None:
    """input-required while the run waits; the next message's decision resumes it."""
    model = ScriptedModel(transfer("billing", amount=50), text("Refunded 40."))
    swarm = _swarm(model, interrupt_before=["billing"], journal=journal)
    async with (
        A2AServer(swarm, journal, token=TOKEN, decision_token=DECISION_TOKEN) as server,
        a2a_client(server.url, TOKEN, streaming=False) as client,
        a2a_client(server.url, DECISION_TOKEN, streaming=False) as decider,
    ):
        (first,) = await responses(client, user_message("refund 50"))
        waiting = first.task
        edit = decision(waiting, data={"decision": "edit", "payload": {"amount": 40}})
        (second,) = await responses(decider, edit)

    assert waiting.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    (asked,) = get_data_parts(waiting.status.message.parts)
    assert asked["pending"]["target"] == "billing"
    assert asked["pending"]["payload"] == {"amount": 50.0}
    done = second.task
    assert (done.id, done.status.state) == (waiting.id, TaskState.TASK_STATE_COMPLETED)
    assert get_text_parts(done.artifacts[0].parts) == ["Refunded 40."]
    assert model.requests[-1].agent == "billing"


async def test_a_message_without_a_decision_keeps_the_task_waiting(
    journal: InMemoryJournal,
) -> None:
    """A reply that decides nothing says how to decide and leaves the task input-required."""
    model = ScriptedModel(transfer("billing", amount=50))
    swarm = _swarm(model, interrupt_before=["billing"], journal=journal)
    async with (
        A2AServer(swarm, journal, token=TOKEN, decision_token=DECISION_TOKEN) as server,
        a2a_client(server.url, TOKEN, streaming=False) as client,
        a2a_client(server.url, DECISION_TOKEN, streaming=False) as decider,
    ):
        (first,) = await responses(client, user_message("refund 50"))
        task = first.task
        follow_up = decision(task, "maybe?")
        (second,) = await responses(decider, follow_up)

    assert second.task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    (note,) = get_text_parts(second.task.status.message.parts)
    assert note.startswith("the decision was not taken")
    assert '{"decision": "approve"}' in note


class _FailingModel:
    """A model whose API fails for good."""

    async def respond(self, request: ModelRequest) -> ModelResponse:
        raise ModelError("the API said 401", model="gpt-x", attempts=1, status_code=401)


async def test_a_failed_run_fails_the_task_with_the_stop_reason(journal: InMemoryJournal) -> None:
    """A run that stops on an error fails its task, naming the stop reason and the error."""
    async with served(_swarm(_FailingModel()), journal, TOKEN, streaming=False) as client:
        (response,) = await responses(client, user_message("hello"))

    status = response.task.status
    assert status.state == TaskState.TASK_STATE_FAILED
    (note,) = get_text_parts(status.message.parts)
    assert note == "the run stopped (error): ModelError: the API said 401"
    (info,) = await journal.sessions()
    assert info.stop_reason == "error"


async def test_a_context_id_too_long_for_a_session_fails_the_task(journal: InMemoryJournal) -> None:
    """A context id that cannot name a session fails its task, saying what it must be; no
    run starts."""
    swarm = _swarm(ScriptedModel())
    async with served(swarm, journal, TOKEN, streaming=False) as client:
        (response,) = await responses(client, user_message("hello", context_id="c" * 129))

    status = response.task.status
    assert status.state == TaskState.TASK_STATE_FAILED
    assert get_text_parts(status.message.parts) == [
        "the context id must be 1 to 128 printable characters"
    ]
    assert await journal.sessions() == ()


async def test_the_context_id_continues_the_conversation(journal: InMemoryJournal) -> None:
    """A second message in the same context is the conversation's next turn."""
    model = ScriptedModel(text("Hi Ada."), text("You are Ada."))
    async with served(_swarm(model), journal, TOKEN, streaming=False) as client:
        await responses(client, user_message("I am Ada", context_id="chat-1"))
        (second,) = await responses(client, user_message("who am I?", context_id="chat-1"))

    assert get_text_parts(second.task.artifacts[0].parts) == ["You are Ada."]
    seen = [m.content for m in model.requests[-1].messages]
    assert seen[-3:] == ["I am Ada", "Hi Ada.", "who am I?"]
    ids = sorted(info.session_id for info in await journal.sessions())
    assert ids == ["a2a-chat-1", "a2a-chat-1__turn_2"]


class _GatedModel:
    """A model that tells when it is called, then waits for a gate that never opens."""

    def __init__(self) -> None:
        self.called = asyncio.Event()

    async def respond(self, request: ModelRequest) -> ModelResponse:
        self.called.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


async def test_cancel_stops_the_run_and_the_journal_keeps_it(journal: InMemoryJournal) -> None:
    """tasks/cancel cancels a working task; its session is journaled as cancelled."""
    model = _GatedModel()
    async with served(_swarm(model), journal, TOKEN, streaming=True) as client:
        stream = client.send_message(user_message("slow please"))
        first = await anext(stream)
        task_id = first.task.id
        await model.called.wait()
        cancelled = await client.cancel_task(CancelTaskRequest(id=task_id))
        rest = [r async for r in stream]
        fetched = await client.get_task(GetTaskRequest(id=task_id))

    assert cancelled.status.state == TaskState.TASK_STATE_CANCELED
    assert fetched.status.state == TaskState.TASK_STATE_CANCELED
    assert all(not r.HasField("artifact_update") for r in rest)
    (info,) = await journal.sessions()
    assert info.stop_reason == "interrupted"
    records = await journal.read(info.session_id)
    assert records[-1].data.get("cancelled") is True


async def test_cancel_stops_a_run_sent_without_streaming(journal: InMemoryJournal) -> None:
    """A task sent with message/send (answered at once, still working) is cancelled the same
    way: canceled, and its session journaled as cancelled."""
    model = _GatedModel()
    request = user_message("slow please")
    request.configuration.return_immediately = True
    async with served(_swarm(model), journal, TOKEN, streaming=False) as client:
        (sent,) = await responses(client, request)
        await model.called.wait()
        cancelled = await client.cancel_task(CancelTaskRequest(id=sent.task.id))
        fetched = await client.get_task(GetTaskRequest(id=sent.task.id))

    assert cancelled.status.state == TaskState.TASK_STATE_CANCELED
    assert fetched.status.state == TaskState.TASK_STATE_CANCELED
    assert not fetched.artifacts
    (info,) = await journal.sessions()
    assert info.stop_reason == "interrupted"
    records = await journal.read(info.session_id)
    assert records[-1].data.get("cancelled") is True


async def test_the_next_message_after_a_cancelled_task_continues_the_conversation(
    journal: InMemoryJournal,
) -> None:
    """A task cancelled mid model call does not lock its context: the caller's next message
    completes, and the model sees the cancelled turn's message before the new one."""
    script = ScriptedModel(text("Here again."))
    model = HangsOnce(script)
    async with served(_swarm(model), journal, TOKEN, streaming=True) as client:
        stream = client.send_message(user_message("slow please"))
        first = await anext(stream)
        await model.called.wait()
        await client.cancel_task(CancelTaskRequest(id=first.task.id))
        _ = [r async for r in stream]
        context = first.task.context_id
        replies = await responses(client, user_message("still there?", context_id=context))
        task = await client.get_task(GetTaskRequest(id=replies[0].task.id))

    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert get_text_parts(task.artifacts[0].parts) == ["Here again."]
    sent = [m.content for m in script.requests[0].messages if m.kind == "user"]
    assert sent == ["slow please", "still there?"]


async def test_requests_without_the_token_are_refused() -> None:
    """No token or a wrong one gets 401 for JSON-RPC; the public card needs none."""
    async with (
        A2AServer(_swarm(ScriptedModel()), InMemoryJournal(), token=TOKEN) as server,
        httpx.AsyncClient() as http,
    ):
        card = await http.get(server.url + ".well-known/agent-card.json")
        wrong = await http.post(
            server.url, json={}, headers={"Authorization": "Bearer wrong-token-123456789"}
        )
        missing = await http.post(server.url, json={"jsonrpc": "2.0"})

    assert [card.status_code, wrong.status_code, missing.status_code] == [200, 401, 401]
    assert wrong.headers["www-authenticate"] == "Bearer"
    assert "wrong-token" not in wrong.text


async def test_an_oversized_request_is_refused() -> None:
    """A body over max_request_bytes gets 413 before any JSON is parsed."""
    swarm = _swarm(ScriptedModel())
    async with A2AServer(swarm, InMemoryJournal(), token=TOKEN, max_request_bytes=1000) as server:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with httpx.AsyncClient(headers=headers) as http:
            reply = await http.post(server.url, content=b"x" * 5000)

    assert reply.status_code == 413


def test_binding_beyond_loopback_needs_an_explicit_flag() -> None:
    """A non-loopback host is refused unless allow_remote=True, and tokens must be long."""
    swarm = _swarm(ScriptedModel())
    with pytest.raises(ConfigurationError, match="allow_remote=True"):
        A2AServer(swarm, InMemoryJournal(), host="0.0.0.0")
    with pytest.raises(ConfigurationError, match="at least 16 characters"):
        A2AServer(swarm, InMemoryJournal(), token="short")
