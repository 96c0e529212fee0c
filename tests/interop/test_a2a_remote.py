"""A remote A2A agent as a peer of a swarm: handed off to, journaled, replayed offline."""

from __future__ import annotations

import json
import socket

from google.protobuf import json_format
from pydantic import BaseModel

from swarmkit import Agent, Handoff, Swarm, ToolResult, tool
from swarmkit.a2a import A2AServer, remote_agent
from swarmkit.interrupts import edit
from swarmkit.journal import InMemoryJournal
from swarmkit.models import ModelRequest, ModelResponse, RetryPolicy
from swarmkit.testing import ScriptedModel, text, tool_call, transfer
from tests.interop.a2a_peer import PeerExecutor, peer_server

TOKEN = "peer-token-0123456789abcdef"
NO_WAIT = RetryPolicy(max_attempts=2, initial_backoff=0.0, jitter=0.0)


class StockQuery(BaseModel):
    """What to look up."""

    sku: str


def _swarm(url: str, model: ScriptedModel, journal: InMemoryJournal) -> Swarm:
    warehouse = remote_agent(
        "warehouse", url, token=TOKEN, description="Knows the stock.", retry=NO_WAIT
    )
    triage = Agent(name="triage", handoffs=[Handoff(agent=warehouse, input_type=StockQuery)])
    return Swarm([triage, warehouse], "triage", model=model, journal=journal)


async def test_a_swarm_hands_off_to_a_remote_agent_and_replays_it_offline() -> None:
    """The remote answer is the run's answer; replay with the peer stopped makes no call."""
    journal = InMemoryJournal()
    executor = PeerExecutor()
    server, _ = peer_server(executor, TOKEN)
    async with server as peer:
        swarm = _swarm(peer.url, ScriptedModel(transfer("warehouse", sku="A-1")), journal)
        result = await swarm.run("is A-1 in stock?", session_id="s")

    assert result.stop_reason == "final_output"
    assert result.trail == ("triage", "warehouse")
    assert result.final_output.startswith("echo: ")
    assert "is A-1 in stock?" in result.final_output
    assert executor.calls == 1
    assert executor.received == [{"sku": "A-1"}]
    (message,) = executor.messages
    conversation = json_format.MessageToDict(message.metadata)["swarmkit"]["conversation"]
    assert conversation[0]["content"] == "is A-1 in stock?"

    replayed = await _swarm(peer.url, ScriptedModel(), journal).replay("s")
    assert (replayed.final_output, replayed.trail) == (result.final_output, result.trail)
    assert executor.calls == 1


async def test_a_remote_agent_that_is_down_stops_the_run_with_an_error() -> None:
    """A peer nobody listens at ends the run with stop_reason error; the journal keeps it."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}/"
    journal = InMemoryJournal()
    swarm = _swarm(url, ScriptedModel(transfer("warehouse", sku="A-1")), journal)

    result = await swarm.run("stock?", session_id="s")

    assert (result.stop_reason, result.final_agent) == ("error", "warehouse")
    assert result.failure is not None
    assert result.failure.message.startswith(
        f"the remote A2A agent at {url} did not answer after 2 attempts"
    )
    assert TOKEN not in result.failure.message
    records = await journal.read("s")
    assert records[-1].kind == "run_finished"
    assert TOKEN not in repr(records)


async def test_a_failed_remote_task_is_a_clear_error() -> None:
    """A peer answering a failed task stops the run with that task's message."""
    journal = InMemoryJournal()
    server, _ = peer_server(PeerExecutor(fail=True), TOKEN)
    async with server as peer:
        swarm = _swarm(peer.url, ScriptedModel(transfer("warehouse", sku="A-1")), journal)
        result = await swarm.run("stock?", session_id="s")

    assert result.stop_reason == "error"
    assert result.failure is not None
    assert result.failure.message.endswith("answered a failed task: out of stock")


async def test_two_swarms_talk_over_a2a() -> None:
    """A swarm's remote peer can be another swarm served over A2A."""
    served_journal, journal = InMemoryJournal(), InMemoryJournal()
    inner = Swarm([Agent(name="stock")], "stock", model=ScriptedModel(text("12 left.")))
    async with A2AServer(inner, served_journal, token=TOKEN) as server:
        swarm = _swarm(server.url, ScriptedModel(transfer("warehouse", sku="A-1")), journal)
        result = await swarm.run("how many A-1?", session_id="s")

    assert (result.stop_reason, result.final_output) == ("final_output", "12 left.")
    (served,) = await served_journal.sessions()
    assert served.stop_reason == "final_output"


class BrokenModel:
    """A model of the served swarm with a bug: every call raises."""

    async def respond(self, request: ModelRequest) -> ModelResponse:
        raise RuntimeError("the peer's own bug")


async def test_a_remote_swarm_that_raises_is_a_model_error_for_the_caller() -> None:
    """A peer whose swarm raises answers a JSON-RPC error: the caller's run stops with a
    ModelError naming it, never a raw a2a error."""
    inner = Swarm([Agent(name="stock")], "stock", model=BrokenModel())
    async with A2AServer(inner, InMemoryJournal(), token=TOKEN) as server:
        swarm = _swarm(
            server.url, ScriptedModel(transfer("warehouse", sku="A-1")), InMemoryJournal()
        )
        result = await swarm.run("how many A-1?", session_id="s")

    assert (result.stop_reason, result.final_agent) == ("error", "warehouse")
    assert result.failure is not None
    assert result.failure.type == "ModelError"
    assert result.failure.message == (
        f"the remote A2A agent at {server.url} answered an error: InternalError: the peer's own bug"
    )


async def test_a_served_swarm_s_question_is_answered_through_the_calling_swarm() -> None:
    """The served swarm pauses with a question; the caller pauses in turn, and its answer goes
    back naming the served pause's interrupt id, which the served swarm requires."""

    @tool
    async def colour() -> ToolResult:
        """Ask which colour to send."""
        return ToolResult(ask="Which colour?")

    inner = Swarm(
        [Agent(name="stock", tools=[colour])],
        "stock",
        model=ScriptedModel(tool_call("colour"), text("Sent in blue.")),
    )
    journal, served_journal = InMemoryJournal(), InMemoryJournal()
    decider = "decider-token-0123456789abcdef"
    async with A2AServer(inner, served_journal, token=TOKEN, decision_token=decider) as server:
        warehouse = remote_agent("warehouse", server.url, token=decider, retry=NO_WAIT)
        triage = Agent(name="triage", handoffs=[Handoff(agent=warehouse, input_type=StockQuery)])
        model = ScriptedModel(transfer("warehouse", sku="A-1"))
        swarm = Swarm([triage, warehouse], "triage", model=model, journal=journal)
        paused = await swarm.run("send A-1", session_id="s")
        assert paused.pending is not None and paused.pending.kind == "question"

        resumed = await swarm.resume("s", decision=edit(payload={"answer": "blue"}))

    assert (resumed.stop_reason, resumed.final_output) == ("final_output", "Sent in blue.")
    (served,) = await served_journal.sessions()
    records = await served_journal.read(served.session_id)
    (resumed_record,) = [r for r in records if r.kind == "resumed"]
    assert resumed_record.data["decided_by"] == "a2a:decider"
    assert "blue" in json.dumps(resumed_record.data)
