"""Two tool calls of one answer with the same id: whatever the model, each gets its own result."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from swarmkit import Agent, SQLiteJournal, Swarm, tool
from swarmkit.messages import AssistantMessage, ToolCall, ToolMessage
from swarmkit.models import ModelDelta, ModelRequest, ModelResponse

LOOKED_UP: list[str] = []


@tool
def lookup(query: str) -> str:
    """Look something up."""
    LOOKED_UP.append(query)
    return f"found {query}"


class RepeatingModel:
    """A model of one's own that gives two calls of one turn the same id, then answers."""

    def __init__(self) -> None:
        self.requests: list[ModelRequest] = []

    async def respond(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        if len(self.requests) > 1:
            return ModelResponse(message=AssistantMessage(content="both found"))
        calls = tuple(
            ToolCall(id="same", name="lookup", arguments=f'{{"query": "{query}"}}')
            for query in ("a", "b")
        )
        return ModelResponse(message=AssistantMessage(tool_calls=calls))

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelDelta | ModelResponse]:
        yield await self.respond(request)


def _results_sent(model: RepeatingModel) -> dict[str, str]:
    """The tool results the model was sent back, by the call id they answer."""
    sent = model.requests[1].messages
    calls = next(m for m in sent if isinstance(m, AssistantMessage) and m.tool_calls).tool_calls
    results = {m.tool_call_id: m.content for m in sent if isinstance(m, ToolMessage)}
    return {call.id: results[call.id] for call in calls}


@pytest.mark.parametrize("streamed", [False, True], ids=["run", "stream"])
async def test_each_call_with_a_repeated_id_gets_its_own_result(
    tmp_path: Path, streamed: bool
) -> None:
    """The second call's id is made unique, so the model is sent both results, each once, and
    the journaled session replays to the same output."""
    LOOKED_UP.clear()
    model = RepeatingModel()
    journal = SQLiteJournal(tmp_path / "j.db")
    swarm = Swarm([Agent(name="a", tools=[lookup])], "a", model=model, journal=journal)

    if streamed:
        async for _ in swarm.stream("find a and b", session_id="s"):
            pass
    else:
        await swarm.run("find a and b", session_id="s")
    replayed = await swarm.replay("s")

    assert LOOKED_UP == ["a", "b"]
    assert _results_sent(model) == {"same": "found a", "same_2": "found b"}
    assert replayed.final_output == "both found"
