"""Input filters decide what history the receiving agent sees, without orphaned tool items."""

from __future__ import annotations

from pydantic import BaseModel

from swarmkit import Agent, Handoff, Swarm, filters
from swarmkit.messages import AssistantMessage, Message, ToolMessage, UserMessage
from swarmkit.models import ModelRequest
from swarmkit.testing import ScriptedModel, text, tool_call, transfer, turn


def _valid_pairs(messages: tuple[Message, ...]) -> bool:
    called = [c.id for m in messages if isinstance(m, AssistantMessage) for c in m.tool_calls]
    answered = [m.tool_call_id for m in messages if isinstance(m, ToolMessage)]
    return sorted(called) == sorted(answered) and len(set(called)) == len(called)


def _seen(request: ModelRequest) -> tuple[Message, ...]:
    return request.messages[1:]


async def test_four_hop_chain_keeps_every_item_once_and_pairs_valid() -> None:
    """Through four handoffs, each agent sees the history once, with tool calls paired."""
    model = ScriptedModel(
        turn(transfer("b"), content="to b"),
        turn(transfer("c"), content="to c"),
        turn(transfer("d"), content="to d"),
        turn(transfer("e"), content="to e"),
        text("e answers"),
    )
    swarm = Swarm([Agent(name=n) for n in "abcde"], "a", model=model)

    result = await swarm.run("start")

    last = _seen(model.requests[4])
    assert len(last) == 1 + 4 * 2
    assert len({id(m) for m in last}) == len(last)
    assert _valid_pairs(last)
    assert [m.content for m in last if isinstance(m, UserMessage)] == ["start"]
    assert len(result.messages) == len(last) + 1


async def test_remove_tool_calls_leaves_no_orphans() -> None:
    """remove_tool_calls drops tool calls with their results and keeps assistant text."""
    b = Agent(name="b")
    a = Agent(name="a", handoffs=[Handoff(agent=b, input_filter=filters.remove_tool_calls)])
    model = ScriptedModel(turn(transfer("b"), content="passing on"), text("b answers"))
    swarm = Swarm([a, b], "a", model=model)

    await swarm.run("q")

    seen = _seen(model.requests[1])
    assert [m.kind for m in seen] == ["user", "assistant"]
    assert isinstance(seen[1], AssistantMessage) and seen[1].tool_calls == ()


async def test_last_messages_cut_through_a_tool_pair_drops_the_orphan() -> None:
    """last_messages(1) would keep only a tool result; the orphan is dropped."""
    b = Agent(name="b")
    a = Agent(name="a", handoffs=[Handoff(agent=b, input_filter=filters.last_messages(1))])
    model = ScriptedModel(transfer("b"), text("b answers"))
    swarm = Swarm([a, b], "a", model=model)

    await swarm.run("q")

    assert _seen(model.requests[1]) == ()


async def test_user_messages_only_keeps_what_the_user_said() -> None:
    """user_messages_only forwards the user's words and nothing else."""
    b = Agent(name="b")
    a = Agent(name="a", handoffs=[Handoff(agent=b, input_filter=filters.user_messages_only)])
    model = ScriptedModel(turn(transfer("b"), content="secret notes"), text("b answers"))
    swarm = Swarm([a, b], "a", model=model)

    await swarm.run("q")

    assert _seen(model.requests[1]) == (UserMessage(content="q"),)


class Ticket(BaseModel):
    """A routed ticket."""

    summary: str


async def test_seed_002_two_argument_filter_returns_the_prompt() -> None:
    """A seed 002 (history, payload) -> str filter: rendered history in, the prompt out."""
    calls: list[tuple[list[str], object]] = []

    def brief(history: list[str], payload: dict[str, object]) -> str:
        calls.append((history, payload))
        return f"Ticket: {payload.get('summary')}"

    b = Agent(name="b")
    a = Agent(name="a", handoffs=[Handoff(agent=b, input_type=Ticket, input_filter=brief)])
    model = ScriptedModel(transfer("b", summary="printer jam"), text("fixed"))
    swarm = Swarm([a, b], "a", model=model)

    await swarm.run("help")

    assert _seen(model.requests[1]) == (UserMessage(content="Ticket: printer jam"),)
    assert calls[0][0][0] == "user: help"
    assert calls[0][1] == {"summary": "printer jam"}


async def test_composed_filters_apply_left_to_right() -> None:
    """compose(remove_tool_calls, last_messages(1)) keeps the last non-tool message."""
    b = Agent(name="b")
    chain = filters.compose(filters.remove_tool_calls, filters.last_messages(1))
    a = Agent(name="a", handoffs=[Handoff(agent=b, input_filter=chain)])
    model = ScriptedModel(turn(transfer("b"), content="over to b"), text("b answers"))
    swarm = Swarm([a, b], "a", model=model)

    await swarm.run("q")

    seen = _seen(model.requests[1])
    assert [(m.kind, m.content) for m in seen] == [("assistant", "over to b")]


async def test_summarize_with_replaces_history_with_a_model_summary() -> None:
    """summarize_with asks a model for a summary and forwards only that."""
    summarizer = ScriptedModel(text("User wants a refund."))
    b = Agent(name="b")
    a = Agent(
        name="a", handoffs=[Handoff(agent=b, input_filter=filters.summarize_with(summarizer))]
    )
    model = ScriptedModel(tool_call("transfer_to_b"), text("b answers"))
    swarm = Swarm([a, b], "a", model=model)

    await swarm.run("refund pls")

    seen = _seen(model.requests[1])
    assert len(seen) == 1 and "User wants a refund." in str(seen[0].content)
    assert "user: refund pls" in str(summarizer.requests[0].messages[1].content)
