"""Test kit for users' own tests: a model that plays a script instead of calling an API.

::

    model = ScriptedModel(
        transfer("billing", invoice_id="A-1"),   # triage's turn
        text("Refund issued."),                   # billing's turn
    )
    result = await Swarm([triage, billing], "triage", model=model).run("refund A-1")
    model.assert_exhausted()
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from swarmkit.exceptions import SwarmkitError
from swarmkit.handoffs import transfer_tool_name
from swarmkit.messages import AssistantMessage, ToolCall
from swarmkit.models import (
    ModelDelta,
    ModelRequest,
    ModelResponse,
    TextDelta,
    ToolCallDelta,
    Usage,
)

DEFAULT_USAGE = Usage(prompt_tokens=10, completion_tokens=5, total_tokens=15)
"""The usage a scripted turn reports unless told otherwise."""


class ScriptExhaustedError(SwarmkitError, AssertionError):
    """The scripted model was asked for a turn its script does not have."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ScriptedCall:
    """One tool call of a scripted turn."""

    name: str
    """The tool name."""
    arguments: str
    """The arguments as raw JSON text (may be deliberately malformed)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ScriptedTurn:
    """One model answer of a script: text, tool calls, or both."""

    content: str | None = None
    """The answer's text."""
    calls: tuple[ScriptedCall, ...] = ()
    """The tool calls, in order."""
    usage: Usage = DEFAULT_USAGE
    """Tokens to report for this turn."""
    agent: str | None = None
    """When set, the turn fails loudly if it is served to another agent."""


def text(content: str, *, usage: Usage | None = None, agent: str | None = None) -> ScriptedTurn:
    """A turn that answers with plain text (a final output)."""
    return ScriptedTurn(content=content, agent=agent, usage=usage or DEFAULT_USAGE)


def tool_call(name: str, /, *, agent: str | None = None, **arguments: Any) -> ScriptedTurn:
    """A turn that calls one tool with keyword arguments."""
    return ScriptedTurn(
        calls=(ScriptedCall(name=name, arguments=json.dumps(arguments)),), agent=agent
    )


def raw_tool_call(name: str, arguments: str, *, agent: str | None = None) -> ScriptedTurn:
    """A turn that calls one tool with arguments exactly as given (e.g. malformed JSON)."""
    return ScriptedTurn(calls=(ScriptedCall(name=name, arguments=arguments),), agent=agent)


def transfer(target: str, /, *, agent: str | None = None, **payload: Any) -> ScriptedTurn:
    """A turn that calls ``transfer_to_<target>`` with the payload fields as arguments."""
    return tool_call(transfer_tool_name(target), agent=agent, **payload)


def turn(
    *parts: ScriptedTurn, content: str | None = None, agent: str | None = None
) -> ScriptedTurn:
    """One turn made of several calls: ``turn(tool_call("a"), transfer("b"))``."""
    calls = tuple(call for part in parts for call in part.calls)
    return ScriptedTurn(content=content, calls=calls, agent=agent)


class ScriptedModel:
    """A model that answers from a script and records every request it was sent.

    Give turns in the order the run will ask for them, or a script per agent with
    ``per_agent={"triage": [...], "billing": [...]}``. A request beyond the script raises
    :class:`ScriptExhaustedError` showing the request. It also streams: text in word-sized
    deltas and tool calls in two argument pieces.
    """

    def __init__(
        self,
        *turns: ScriptedTurn,
        per_agent: Mapping[str, Sequence[ScriptedTurn]] | None = None,
        name: str = "scripted",
    ) -> None:
        self.name = name
        self.requests: list[ModelRequest] = []
        self._queue = list(turns)
        self._per_agent = {agent: list(script) for agent, script in (per_agent or {}).items()}
        self._calls = 0

    async def respond(self, request: ModelRequest) -> ModelResponse:
        """Serve the next scripted turn for this request."""
        self.requests.append(request)
        scripted = self._next_turn(request)
        return ModelResponse(
            message=AssistantMessage(content=scripted.content, tool_calls=self._calls_of(scripted)),
            usage=_total(scripted.usage),
            finish_reason="tool_calls" if scripted.calls else "stop",
            model=self.name,
        )

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelDelta | ModelResponse]:
        """Serve the next turn as deltas, then the complete response."""
        response = await self.respond(request)
        for piece in _words(response.message.content or ""):
            yield TextDelta(text=piece)
        for index, call in enumerate(response.message.tool_calls):
            half = len(call.arguments) // 2
            yield ToolCallDelta(
                index=index, id=call.id, name=call.name, arguments=call.arguments[:half]
            )
            yield ToolCallDelta(index=index, arguments=call.arguments[half:])
        yield response

    def assert_exhausted(self) -> None:
        """Fail unless every scripted turn was served."""
        left = len(self._queue) + sum(len(s) for s in self._per_agent.values())
        if left:
            raise ScriptExhaustedError(f"{left} scripted turn(s) were never requested")

    def _next_turn(self, request: ModelRequest) -> ScriptedTurn:
        queue = self._per_agent.get(request.agent, self._queue)
        if not queue:
            raise ScriptExhaustedError(_describe_unexpected(request))
        scripted = queue.pop(0)
        if scripted.agent is not None and scripted.agent != request.agent:
            raise ScriptExhaustedError(
                f"turn scripted for agent {scripted.agent!r} was requested by {request.agent!r}"
            )
        return scripted

    def _calls_of(self, scripted: ScriptedTurn) -> tuple[ToolCall, ...]:
        calls = []
        for call in scripted.calls:
            self._calls += 1
            calls.append(
                ToolCall(id=f"call_{self._calls}", name=call.name, arguments=call.arguments)
            )
        return tuple(calls)


def _total(usage: Usage) -> Usage:
    if usage.total_tokens:
        return usage
    total = usage.prompt_tokens + usage.completion_tokens
    return Usage(
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
        total_tokens=total,
    )


def _words(content: str) -> list[str]:
    pieces = content.split(" ")
    return [p + " " for p in pieces[:-1]] + [pieces[-1]] if content else []


def _describe_unexpected(request: ModelRequest) -> str:
    last = request.messages[-1] if request.messages else None
    tools = ", ".join(t.name for t in request.tools) or "none"
    return (
        f"the script has no turn left for agent {request.agent!r} "
        f"(request #{len(request.messages)} messages, tools: {tools}); last message: {last!r}"
    )
