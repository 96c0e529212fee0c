"""What an A2A message brings into a run (its id and metadata), what a streamed run sends back
(the answer in chunks), and which pause a decision decides (a2a-sdk client, loopback)."""

from __future__ import annotations

import asyncio

import pytest
from a2a.helpers import get_data_parts, get_text_parts
from a2a.types.a2a_pb2 import GetTaskRequest, StreamResponse, Task, TaskState
from a2a.utils.errors import UnsupportedOperationError
from pydantic import BaseModel, ConfigDict

from swarmkit import Agent, Handoff, HandoffGraph, RunContext, Swarm, tool
from swarmkit.a2a import A2AServer
from swarmkit.journal import InMemoryJournal
from swarmkit.testing import ScriptedModel, text, tool_call, transfer
from tests.interop.a2a_helpers import a2a_client, decision, responses, served, user_message
from tests.interop.test_a2a_server import Refund

TOKEN = "run-token-0123456789abcdef"
DECISION_TOKEN = "decision-token-0123456789abcdef"


@tool
def whose_message(ctx: RunContext) -> str:
    """Say which A2A message started the turn."""
    seen = ctx.context["a2a"]
    return f"{seen['message_id']} from {seen['metadata']['team']}"


async def test_the_message_id_and_metadata_reach_rules_tools_and_the_journal() -> None:
    """The run's context holds the message under ``a2a``: a rule routes on its metadata, a
    tool reads its id, and the journal keeps it; a secret-looking key's value never enters
    the run (only its name, as withheld)."""
    graph = HandoffGraph()
    graph.add_edge("triage", "vip", when="a2a.metadata.tier == 'gold'")
    vip = Agent(name="vip", tools=[whose_message])
    model = ScriptedModel(tool_call("whose_message"), text("Done."))
    journal = InMemoryJournal()
    swarm = Swarm([Agent(name="triage"), vip], "triage", model=model, graph=graph)
    sent = user_message(
        "hello", metadata={"tier": "gold", "team": "payments", "api_key": "sk-live-123"}
    )
    async with served(swarm, journal, TOKEN, streaming=False) as client:
        (reply,) = await responses(client, sent)

    assert reply.task.status.state == TaskState.TASK_STATE_COMPLETED
    assert model.requests[0].agent == "vip"
    assert model.requests[1].messages[-1].content == f"{sent.message.message_id} from payments"
    records = await journal.read(f"a2a-{reply.task.context_id}")
    kept = records[0].data["context"]["a2a"]
    assert kept["message_id"] == sent.message.message_id
    assert kept["metadata"] == {"tier": "gold", "team": "payments"}
    assert kept["withheld"] == ["api_key"]
    assert kept["task_id"] == reply.task.id
    assert "sk-live-123" not in repr([r.data for r in records])


class _Typed(BaseModel):
    """A context type with no room for the A2A message."""

    model_config = ConfigDict(extra="forbid")
    tier: str = "basic"


async def test_a_context_type_without_room_for_it_does_not_get_the_message() -> None:
    """A swarm whose context_type forbids other keys still answers: the message's entry is
    left out rather than failing the run."""
    model = ScriptedModel(text("Hi."))
    swarm = Swarm([Agent(name="support")], "support", model=model, context_type=_Typed)
    async with served(swarm, InMemoryJournal(), TOKEN, streaming=False) as client:
        (reply,) = await responses(client, user_message("hello", metadata={"tier": "gold"}))

    assert reply.task.status.state == TaskState.TASK_STATE_COMPLETED


def _artifact_updates(stream: list[StreamResponse]) -> list[tuple[list[str], bool, bool]]:
    """Each artifact update's texts, append and last_chunk."""
    return [
        (get_text_parts(u.artifact.parts), u.append, u.last_chunk)
        for u in (r.artifact_update for r in stream if r.HasField("artifact_update"))
    ]


async def test_a_streaming_client_gets_the_answer_in_chunks_then_whole() -> None:
    """message/stream: the answer's text deltas arrive as chunks of one artifact (the first
    starts it, the rest append), then the whole answer replaces them as the last chunk."""
    model = ScriptedModel(text("Your order ships today."))
    swarm = Swarm([Agent(name="support")], "support", model=model)
    async with served(swarm, InMemoryJournal(), TOKEN, streaming=True) as client:
        stream = await responses(client, user_message("where is my order?"))
        task_id = stream[0].task.id
        stored = await client.get_task(GetTaskRequest(id=task_id))

    updates = _artifact_updates(stream)
    chunks, (whole, append, last) = updates[:-1], updates[-1]
    assert len(chunks) > 1
    assert "".join(t for texts, _, _ in chunks for t in texts) == "Your order ships today."
    assert [(a, lc) for _, a, lc in chunks] == [(False, False)] + [(True, False)] * (
        len(chunks) - 1
    )
    assert (whole, append, last) == (["Your order ships today."], False, True)
    ids = {r.artifact_update.artifact.artifact_id for r in stream if r.HasField("artifact_update")}
    assert len(ids) == 1
    assert [get_text_parts(a.parts) for a in stored.artifacts] == [["Your order ships today."]]


async def test_a_client_that_does_not_stream_gets_no_chunks() -> None:
    """message/send: the task holds the whole answer in one text part; no chunk was built."""
    model = ScriptedModel(text("Your order ships today."))
    swarm = Swarm([Agent(name="support")], "support", model=model)
    async with served(swarm, InMemoryJournal(), TOKEN, streaming=False) as client:
        (reply,) = await responses(client, user_message("where is my order?"))

    assert [get_text_parts(a.parts) for a in reply.task.artifacts] == [["Your order ships today."]]


def _two_pauses(journal: InMemoryJournal) -> tuple[Swarm, ScriptedModel]:
    """A refund that pauses before billing, then again before payouts."""
    model = ScriptedModel(
        transfer("billing", amount=50), transfer("payouts", amount=50), text("Paid 50.")
    )
    payouts = Agent(name="payouts")
    billing = Agent(name="billing", handoffs=[Handoff(agent=payouts, input_type=Refund)])
    triage = Agent(name="triage", handoffs=[Handoff(agent=billing, input_type=Refund)])
    swarm = Swarm(
        [triage, billing, payouts],
        "triage",
        model=model,
        interrupt_before=["billing", "payouts"],
        journal=journal,
    )
    return swarm, model


async def test_a_stale_decision_is_refused_and_does_not_decide_the_next_pause() -> None:
    """Two pauses in a row: each carries its own interrupt id; a decision naming the first,
    sent once the second waits, is refused, and the second still waits for its own."""
    journal = InMemoryJournal()
    swarm, model = _two_pauses(journal)
    async with (
        A2AServer(swarm, journal, token=TOKEN, decision_token=DECISION_TOKEN) as server,
        a2a_client(server.url, TOKEN, streaming=False) as caller,
        a2a_client(server.url, DECISION_TOKEN, streaming=False) as decider,
    ):
        (first,) = await responses(caller, user_message("refund 50"))
        stale = decision(first.task, "approve")
        (second,) = await responses(decider, stale)
        with pytest.raises(UnsupportedOperationError) as refused:
            await responses(decider, stale)
        still = await caller.get_task(GetTaskRequest(id=first.task.id))
        (done,) = await responses(decider, decision(still, "approve"))

    ids = [_interrupt(t) for t in (first.task, second.task, still)]
    assert second.task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    assert ids[0] != ids[1] == ids[2]
    assert f"names interrupt {ids[0]}" in refused.value.message
    assert still.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    assert done.task.status.state == TaskState.TASK_STATE_COMPLETED
    assert [r.agent for r in model.requests] == ["triage", "billing", "payouts"]


async def test_a_duplicate_approval_queued_behind_the_first_does_not_decide_the_next_pause() -> (
    None
):
    """Two approvals of the first pause at once: one resumes the run to its second pause;
    the other, queued behind it, decides nothing, and the second pause keeps its id."""
    journal = InMemoryJournal()
    swarm, model = _two_pauses(journal)
    async with (
        A2AServer(swarm, journal, token=TOKEN, decision_token=DECISION_TOKEN) as server,
        a2a_client(server.url, TOKEN, streaming=False) as caller,
        a2a_client(server.url, DECISION_TOKEN, streaming=False) as decider,
    ):
        (first,) = await responses(caller, user_message("refund 50"))
        twice = decision(first.task, "approve")
        await asyncio.gather(
            responses(decider, twice), responses(decider, twice), return_exceptions=True
        )
        after = await caller.get_task(GetTaskRequest(id=first.task.id))

    assert after.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    assert _interrupt(after) != _interrupt(first.task)
    (data,) = get_data_parts(after.status.message.parts)
    assert data["pending"]["target"] == "payouts"
    assert [r.agent for r in model.requests] == ["triage", "billing"]
    records = await journal.read(f"a2a-{first.task.context_id}")
    assert len([r for r in records if r.kind == "resumed"]) == 1


def _interrupt(task: Task) -> str:
    """The interrupt id a waiting task carries, in its status message's metadata and data."""
    message = task.status.message
    (data,) = get_data_parts(message.parts)
    assert data["interrupt_id"] == message.metadata["interrupt_id"]
    return str(data["interrupt_id"])
