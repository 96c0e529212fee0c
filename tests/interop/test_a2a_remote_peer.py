"""A remote A2A peer done right: the handoff's payload and filtered history, retries, input."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest
from a2a.helpers import get_data_parts, get_text_parts
from google.protobuf import json_format
from google.protobuf.struct_pb2 import Struct
from pydantic import BaseModel

from swarmkit import Agent, ConfigurationError, Handoff, Swarm, tool
from swarmkit.a2a import remote_agent
from swarmkit.filters import FilterOutput, HandoffInput, last_messages, remove_tool_calls
from swarmkit.interrupts import Decision, PendingDecision, edit
from swarmkit.journal import InMemoryJournal
from swarmkit.messages import Message, messages_to_data
from swarmkit.models import RetryPolicy
from swarmkit.testing import FixedRuntime, ScriptedModel, tool_call, transfer, turn
from tests.interop.a2a_peer import PeerExecutor, peer_server

TOKEN = "peer-token-0123456789abcdef"
NO_WAIT = RetryPolicy(max_attempts=3, initial_backoff=0.0, jitter=0.0)


class Order(BaseModel):
    """What the warehouse is asked for."""

    sku: str
    qty: int
    gift: bool = False


@tool
def lookup(sku: str) -> str:
    """Where an item is kept."""
    return f"{sku} is in the north warehouse"


class Recorded:
    """An input filter that keeps what the filter it wraps returned."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.outputs: list[tuple[Message, ...]] = []

    def __call__(self, data: HandoffInput) -> FilterOutput:
        """The wrapped filter's output, kept."""
        out = tuple(self.inner(data))
        self.outputs.append(out)
        return out


def _triage_model() -> ScriptedModel:
    return ScriptedModel(
        tool_call("lookup", sku="A-1"),
        turn(transfer("warehouse", sku="A-1", qty=2), content="Asking the warehouse."),
    )


def _conversation(executor: PeerExecutor, index: int = 0) -> list[dict[str, Any]]:
    metadata = json_format.MessageToDict(executor.messages[index].metadata)
    conversation: list[dict[str, Any]] = metadata["swarmkit"]["conversation"]
    return conversation


def _swarm(url: str, model: ScriptedModel, journal: InMemoryJournal, filter_: Any) -> Swarm:
    warehouse = remote_agent("warehouse", url, token=TOKEN, retry=NO_WAIT)
    triage = Agent(
        name="triage",
        tools=[lookup],
        handoffs=[Handoff(agent=warehouse, input_type=Order, input_filter=filter_)],
    )
    return Swarm([triage, warehouse], "triage", model=model, journal=journal)


async def test_the_typed_payload_is_a_data_part_of_its_own_beside_its_text() -> None:
    """A plain A2A agent finds the validated payload as the message's one data part."""
    executor = PeerExecutor()
    server, _ = peer_server(executor, TOKEN)
    async with server as peer:
        swarm = _swarm(peer.url, _triage_model(), InMemoryJournal(), remove_tool_calls)
        result = await swarm.run("send two A-1", session_id="s")

    assert result.stop_reason == "final_output"
    (message,) = executor.messages
    assert get_data_parts(list(message.parts)) == [{"sku": "A-1", "qty": 2, "gift": False}]
    (said,) = get_text_parts(list(message.parts))
    assert '"sku":"A-1"' in said.replace(" ", "")
    assert said.endswith("send two A-1")


async def test_the_remote_receives_exactly_what_the_input_filter_left() -> None:
    """With remove_tool_calls or a last-N filter, the history sent is the filter's output."""
    for inner in (remove_tool_calls, last_messages(2)):
        recorded = Recorded(inner)
        executor = PeerExecutor()
        server, _ = peer_server(executor, TOKEN)
        async with server as peer:
            swarm = _swarm(peer.url, _triage_model(), InMemoryJournal(), recorded)
            await swarm.run("send two A-1", session_id="s")

        (left,) = recorded.outputs
        assert _conversation(executor) == _json_rounded(messages_to_data(left))
        assert "north warehouse" not in repr(executor.messages)


def _json_rounded(data: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Data as a protobuf Struct gives it back (its numbers are floats)."""
    struct = Struct()
    struct.update({"list": list(data)})
    rounded: list[dict[str, Any]] = json_format.MessageToDict(struct)["list"]
    return rounded


async def test_a_503_is_retried_and_the_run_succeeds_on_the_second_attempt() -> None:
    """The model layer's retry policy: one 503, then the answer; two posts in all."""
    executor = PeerExecutor()
    server, wrapper = peer_server(executor, TOKEN, statuses=[503])
    async with server as peer:
        swarm = _swarm(peer.url, _triage_model(), InMemoryJournal(), None)
        result = await swarm.run("send two A-1", session_id="s")

    assert (result.stop_reason, result.final_agent) == ("final_output", "warehouse")
    assert result.final_output.startswith("echo: ")
    assert (wrapper.posts, executor.calls) == (2, 1)


async def test_a_400_is_not_retried() -> None:
    """A refused message is the caller's to fix: one post, a ModelError naming the status."""
    executor = PeerExecutor()
    server, wrapper = peer_server(executor, TOKEN, statuses=[400, 400])
    async with server as peer:
        swarm = _swarm(peer.url, _triage_model(), InMemoryJournal(), None)
        result = await swarm.run("send two A-1", session_id="s")

    assert (result.stop_reason, result.final_agent) == ("error", "warehouse")
    assert result.failure is not None
    assert result.failure.message.startswith(
        f"the remote A2A agent at {peer.url} answered HTTP 400"
    )
    assert (wrapper.posts, executor.calls) == (1, 0)
    assert TOKEN not in result.failure.message


async def test_a_remote_that_keeps_failing_gives_up_after_the_policy_attempts() -> None:
    """Three 502s with three attempts allowed: the run stops with an error after 3 attempts."""
    server, wrapper = peer_server(PeerExecutor(), TOKEN, statuses=[502, 502, 502])
    async with server as peer:
        swarm = _swarm(peer.url, _triage_model(), InMemoryJournal(), None)
        result = await swarm.run("send two A-1", session_id="s")

    assert result.failure is not None
    assert "answered HTTP 502 after 3 attempts" in result.failure.message
    assert wrapper.posts == 3


async def test_remote_agent_takes_the_card_url_or_the_base_url() -> None:
    """Both forms reach the agent: the card's own url is the one called."""
    for suffix in ("", ".well-known/agent-card.json"):
        executor = PeerExecutor()
        server, _ = peer_server(executor, TOKEN)
        async with server as peer:
            swarm = _swarm(peer.url + suffix, _triage_model(), InMemoryJournal(), None)
            result = await swarm.run("send two A-1", session_id="s")

        assert result.final_output.startswith("echo: "), suffix
        assert executor.calls == 1


async def test_a_remote_input_required_pauses_the_run_and_the_answer_goes_back() -> None:
    """The remote's question pauses the caller; the answer reaches the same remote task and
    context, the remote's next answer ends the run, and replay makes no call."""
    journal = InMemoryJournal()
    executor = PeerExecutor(ask="Which colour?")
    server, wrapper = peer_server(executor, TOKEN)
    async with server as peer:
        swarm = _swarm(
            peer.url, ScriptedModel(transfer("warehouse", sku="A-1", qty=2)), journal, None
        )
        paused = await swarm.run("send two A-1", session_id="s")

        assert paused.stop_reason == "interrupted"
        assert paused.pending is not None
        assert (paused.pending.kind, paused.pending.agent) == ("question", "warehouse")
        assert paused.pending.payload == {"question": "Which colour?"}

        resumed = await swarm.resume("s", decision=edit(payload={"answer": "blue"}))

    assert (resumed.stop_reason, resumed.final_output) == ("final_output", "got: blue")
    first, second = executor.messages
    assert (second.task_id, second.context_id) == (first.task_id, first.context_id) != ("", "")
    assert get_text_parts(list(second.parts)) == ["blue"]
    posts = wrapper.posts

    replayed = await _swarm(peer.url, ScriptedModel(), journal, None).replay("s")
    assert (replayed.final_output, wrapper.posts) == ("got: blue", posts)


async def test_a_remote_call_in_flight_is_cancelled_at_the_agent_timeout() -> None:
    """The swarm's agent_timeout bounds the remote turn on the run's clock: the run ends as a
    timeout while the peer still works."""
    fixed, release = FixedRuntime(), asyncio.Event()

    async def stall() -> None:
        fixed.now += 60
        await release.wait()

    executor = PeerExecutor(stall=stall)
    server, _ = peer_server(executor, TOKEN)
    async with server as peer:
        warehouse = remote_agent("warehouse", peer.url, token=TOKEN)
        triage = Agent(name="triage", handoffs=[Handoff(agent=warehouse, input_type=Order)])
        model = ScriptedModel(transfer("warehouse", sku="A-1", qty=2))
        swarm = Swarm([triage, warehouse], "triage", model=model, agent_timeout=30)
        result = await swarm.with_seams(runtime=fixed.runtime()).run("send two A-1")
        release.set()

    assert (result.stop_reason, result.final_agent) == ("timeout", "warehouse")
    assert result.limit is not None
    assert (result.limit.limit, result.limit.used) == ("agent_timeout", 60)
    assert executor.calls == 1


def test_a_remote_agent_refuses_a_bad_url_or_retry_policy() -> None:
    """Configuration mistakes raise at construction, before any call."""
    with pytest.raises(ConfigurationError, match="http"):
        remote_agent("warehouse", "ftp://example.test/")
    with pytest.raises(ConfigurationError, match="RetryPolicy"):
        remote_agent("warehouse", "http://127.0.0.1:1/", retry=3)  # type: ignore[arg-type]


class Picks:
    """A decision source that answers every question with one colour, and keeps the questions."""

    def __init__(self, colour: str) -> None:
        self.colour = colour
        self.asked: list[PendingDecision] = []

    async def decide(self, pending: PendingDecision) -> Decision | None:
        """Answer at once."""
        self.asked.append(pending)
        return edit(payload={"answer": self.colour}, by="ops")


async def test_the_callers_decision_source_answers_a_remote_question_live() -> None:
    """A decision source answers the remote's question in the same run; the journal keeps the
    answer and who gave it, so a replay takes the same path with no call."""
    journal = InMemoryJournal()
    executor, picks = PeerExecutor(ask="Which colour?"), Picks("red")
    server, wrapper = peer_server(executor, TOKEN)
    async with server as peer:
        model = ScriptedModel(transfer("warehouse", sku="A-1", qty=2))
        swarm = _swarm(peer.url, model, journal, None).with_seams(decisions=picks)
        result = await swarm.run("send two A-1", session_id="s")

    assert (result.stop_reason, result.final_output) == ("final_output", "got: red")
    assert [p.payload for p in picks.asked] == [{"question": "Which colour?"}]
    resumed = [r for r in await journal.read("s") if r.kind == "resumed"]
    assert [(r.data["payload"], r.data["decided_by"]) for r in resumed] == [
        ({"answer": "red"}, "ops")
    ]
    posts = wrapper.posts
    replayed = await _swarm(peer.url, ScriptedModel(), journal, None).replay("s")
    assert (replayed.final_output, wrapper.posts) == ("got: red", posts)
