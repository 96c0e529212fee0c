"""Input filters: what history an agent sees when a handoff brings it in.

A filter is called with a [HandoffInput][swarmkit.filters.HandoffInput] and returns messages, or a
string that becomes the receiving agent's prompt. It may be sync or async. A two-parameter callable
``(history, payload) -> str`` (the shape of jeevesagent, a Python agent framework whose Swarm and
Handoff keywords swarmkit keeps) is called with the history rendered as strings and the payload
as a dict (``{}`` for an untyped handoff). Whatever a filter returns, the loop drops
tool results whose call is gone and tool calls whose result is gone, so the receiving agent's
history stays valid for the API. A filter that raises (or returns something else) is an
InputFilterError naming the filter and the handoff.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace

from pydantic import BaseModel

from swarmkit.exceptions import ConfigurationError, InputFilterError
from swarmkit.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from swarmkit.models import Model, ModelRequest

FilterOutput = Sequence[Message] | str
"""What a filter returns: the messages the receiving agent sees, or its prompt as a string."""

InputFilter = Callable[..., FilterOutput | Awaitable[FilterOutput]]
"""A filter: ``(HandoffInput) -> FilterOutput`` or jeevesagent's ``(history, payload) -> str``."""


@dataclass(frozen=True, kw_only=True, slots=True)
class HandoffInput:
    """What a filter is given to decide the receiving agent's history."""

    history: tuple[Message, ...]
    """The run's conversation so far, the handoff's own tool call and result included."""
    new_items: tuple[Message, ...]
    """The part of ``history`` the handing-off agent produced since it became active."""
    payload: BaseModel | None
    """The validated handoff payload, for typed handoffs."""
    message: str | None
    """The free-text message that came with the handoff, if any."""
    source: str
    """The agent handing off."""
    target: str
    """The agent taking over."""


def keep_all(data: HandoffInput) -> FilterOutput:
    """Keep the whole history."""
    return data.history


def remove_tool_calls(data: HandoffInput) -> FilterOutput:
    """Drop tool calls and their results; assistant text stays."""
    kept: list[Message] = []
    for message in data.history:
        if isinstance(message, ToolMessage):
            continue
        if isinstance(message, AssistantMessage) and message.tool_calls:
            if message.content:
                kept.append(_with_calls(message, ()))
            continue
        kept.append(message)
    return kept


def last_messages(n: int) -> InputFilter:
    """Keep the last ``n`` messages (a cut through a tool call drops its orphaned half)."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ConfigurationError(f"last_messages(n) needs a positive int, got {n!r}")

    def last_n(data: HandoffInput) -> FilterOutput:
        return data.history[-n:]

    return last_n


def user_messages_only(data: HandoffInput) -> FilterOutput:
    """Keep only what the user said."""
    return [m for m in data.history if isinstance(m, UserMessage)]


def summarize_with(
    model: Model, *, instructions: str = "Summarise this conversation for the next agent."
) -> InputFilter:
    """Replace the history with a summary written by ``model`` (one model call per handoff)."""

    async def summarize(data: HandoffInput) -> FilterOutput:
        transcript = "\n".join(render_history(data.history))
        request = ModelRequest(
            messages=(SystemMessage(content=instructions), UserMessage(content=transcript)),
            agent=f"{data.target}:summary",
        )
        response = await model.respond(request)
        summary = response.message.content or ""
        return [UserMessage(content=f"Summary of the conversation so far:\n{summary}")]

    return summarize


def compose(*filters: InputFilter) -> InputFilter:
    """Apply filters left to right, each seeing what the previous one kept."""

    async def composed(data: HandoffInput) -> FilterOutput:
        current = data
        for one in filters:
            messages = await apply_filter(one, current)
            current = _replace_history(current, messages)
        return current.history

    return composed


async def apply_filter(input_filter: InputFilter, data: HandoffInput) -> tuple[Message, ...]:
    """Run one filter (sync, async, or jeevesagent's two-argument shape) and validate its output.

    Raises InputFilterError, naming the filter and the handoff, whatever went wrong inside it.
    """
    try:
        return repair_tool_pairs(_as_messages(await _call(input_filter, data)))
    except InputFilterError:
        raise  # from a filter inside compose(): it already names the one that failed
    except Exception as exc:
        name = _filter_name(input_filter)
        raise InputFilterError(
            f"input filter {name} of the handoff {data.source} -> {data.target} failed: "
            f"{type(exc).__name__}: {exc}; fix the filter, then resume the session",
            filter_name=name,
            source=data.source,
            target=data.target,
        ) from exc


async def _call(input_filter: InputFilter, data: HandoffInput) -> object:
    if _takes_two_arguments(input_filter):
        # jeevesagent's Swarm hands filters the payload as a dict, {} when the handoff is untyped.
        payload = data.payload.model_dump(mode="json") if data.payload is not None else {}
        out = input_filter(render_history(data.history), payload)
    else:
        out = input_filter(data)
    if inspect.isawaitable(out):
        out = await out
    return out


def _filter_name(input_filter: InputFilter) -> str:
    return str(getattr(input_filter, "__qualname__", None) or repr(input_filter))


def render_history(history: Sequence[Message]) -> list[str]:
    """The history as readable lines, the form jeevesagent's filters receive."""
    lines: list[str] = []
    for message in history:
        match message:
            case UserMessage(content=content):
                lines.append(f"user: {content}")
            case AssistantMessage(content=content, tool_calls=calls, agent=agent):
                who = agent or "assistant"
                if content:
                    lines.append(f"{who}: {content}")
                lines.extend(f"{who} called {c.name}({c.arguments})" for c in calls)
            case ToolMessage(name=name, content=content):
                lines.append(f"{name} returned: {content}")
            case SystemMessage(content=content):
                lines.append(f"system: {content}")
    return lines


def repair_tool_pairs(messages: Sequence[Message]) -> tuple[Message, ...]:
    """Drop tool results without their call and tool calls without their result."""
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    called: set[str] = set()
    repaired: list[Message] = []
    for message in messages:
        if isinstance(message, AssistantMessage) and message.tool_calls:
            calls = tuple(c for c in message.tool_calls if c.id in answered)
            called.update(c.id for c in calls)
            if calls or message.content:
                repaired.append(_with_calls(message, calls))
        elif isinstance(message, ToolMessage):
            if message.tool_call_id in called:
                repaired.append(message)
        else:
            repaired.append(message)
    return tuple(repaired)


def _with_calls(message: AssistantMessage, calls: tuple[ToolCall, ...]) -> AssistantMessage:
    """The message with only ``calls``; its reasoning state stays while any call does.

    Each call's own state (a thought signature) goes with the call. A turn left with text only
    loses its reasoning state: the reasoning led to the calls that are gone, and a provider
    refuses reasoning whose calls it cannot find.
    """
    if len(calls) == len(message.tool_calls):
        return message
    state = message.provider_state if calls else None
    return replace(message, tool_calls=calls, provider_state=state)


def _replace_history(data: HandoffInput, history: tuple[Message, ...]) -> HandoffInput:
    kept = set(map(id, history))
    return HandoffInput(
        history=history,
        new_items=tuple(m for m in data.new_items if id(m) in kept),
        payload=data.payload,
        message=data.message,
        source=data.source,
        target=data.target,
    )


def _as_messages(out: object) -> tuple[Message, ...]:
    if isinstance(out, str):
        return (UserMessage(content=out),)
    if isinstance(out, Sequence) and all(
        isinstance(m, SystemMessage | UserMessage | AssistantMessage | ToolMessage) for m in out
    ):
        return tuple(out)
    raise TypeError(
        f"it returned {type(out).__name__}; return a list of swarmkit messages or a string"
    )


def _takes_two_arguments(func: Callable[..., object]) -> bool:
    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return False
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) == 2


def payload_json(payload: BaseModel | None) -> str:
    """The payload as compact JSON for prompts and tool results ("" when there is none)."""
    return "" if payload is None else json.dumps(payload.model_dump(mode="json"))
