"""What a remote A2A peer is sent and how its answers read: parts, tasks, input and failures."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import httpx
from a2a.client import A2AClientError
from a2a.client.errors import AgentCardResolutionError
from a2a.helpers import get_data_parts, get_text_parts, new_data_part
from a2a.types.a2a_pb2 import Message, Part, Role, Task

from swarmkit.a2a._principals import INTERRUPT_ID
from swarmkit.messages import (
    AssistantMessage,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
    messages_to_data,
)
from swarmkit.models import ConnectionFailedError, ModelRequest, StatusError
from swarmkit.tools import FunctionTool, ToolResult

INPUT_TOOL = "a2a_input_required"
"""The tool call a remote agent's ``input-required`` answer becomes: its result (a person's
answer to the pause it makes) is sent back to the same remote task."""

CARD_PATH = "/.well-known/agent-card.json"
"""Where an A2A agent publishes its public card, below its base URL."""


@dataclass(frozen=True, kw_only=True, slots=True)
class InputReply:
    """A person's answer to a remote task that asked for input, to send back to that task."""

    task_id: str
    """The remote task waiting for the answer."""
    context_id: str
    """The remote conversation the task belongs to."""
    answer: str
    """The answer, as the input tool's result reads."""
    interrupt_id: str | None = None
    """The pause the remote task waits on, when it names one (a swarmkit server does); the
    answer names it back."""


def card_url(url: str) -> str:
    """The URL of the agent's public card: ``url`` itself when it names a card, else the
    well-known path below it."""
    if url.rstrip("/").endswith((CARD_PATH, "/.well-known/agent.json")):
        return url.rstrip("/")
    return url.rstrip("/") + CARD_PATH


def outgoing(request: ModelRequest) -> Message:
    """The message for this request: the answer to a remote task waiting for input, or a new
    task with the handoff's notes, its payload and the history the agent may see."""
    reply = input_reply(request.messages)
    return first_message(request) if reply is None else answer_message(reply)


def first_message(request: ModelRequest) -> Message:
    """A new task: the notes and the user's last words as text, the typed handoff payload as a
    data part of its own, and the history the handoff's input filter left as metadata."""
    notes = [m.content for m in request.messages if isinstance(m, SystemMessage) and m.content]
    users = [m.content for m in request.messages if isinstance(m, UserMessage)]
    text = "\n\n".join([*notes, *users[-1:]]) or "(no message)"
    parts = [Part(text=text)]
    if request.handoff_payload is not None:
        parts.append(new_data_part(dict(request.handoff_payload)))
    message = Message(role=Role.ROLE_USER, parts=parts, message_id=uuid.uuid4().hex)
    conversation = [m for m in request.messages if not isinstance(m, SystemMessage)]
    message.metadata.update({"swarmkit": {"conversation": messages_to_data(conversation)}})
    return message


def answer_message(reply: InputReply) -> Message:
    """The person's answer for the waiting task: its text, and its data when it is an object."""
    parts = [Part(text=reply.answer)]
    data = _json_object(reply.answer)
    if data is not None:
        parts.append(new_data_part(data))
    message = Message(
        role=Role.ROLE_USER,
        parts=parts,
        message_id=uuid.uuid4().hex,
        task_id=reply.task_id,
        context_id=reply.context_id,
    )
    if reply.interrupt_id:
        message.metadata.update({INTERRUPT_ID: reply.interrupt_id})
    return message


def input_reply(messages: Sequence[object]) -> InputReply | None:
    """The answer to send when the conversation ends with the input tool's result."""
    if len(messages) < 2 or not isinstance(last := messages[-1], ToolMessage):
        return None
    if last.name != INPUT_TOOL:
        return None
    for message in reversed(messages[:-1]):
        if not isinstance(message, AssistantMessage):
            continue
        for call in message.tool_calls:
            if call.id == last.tool_call_id:
                asked = _json_object(call.arguments) or {}
                return InputReply(
                    task_id=str(asked.get("task_id", "")),
                    context_id=str(asked.get("context_id", "")),
                    answer=last.content,
                    interrupt_id=asked.get(INTERRUPT_ID) or None,
                )
    return None


def input_call(task: Task, question: str) -> AssistantMessage:
    """The input tool's call for a task that asks for input (its ids ride in the arguments)."""
    arguments = {"question": question, "task_id": task.id, "context_id": task.context_id}
    metadata = task.status.message.metadata
    # a protobuf Struct: `in` and indexing, no .get
    waits_on = metadata[INTERRUPT_ID] if INTERRUPT_ID in metadata else None  # noqa: SIM401
    if isinstance(waits_on, str):
        arguments[INTERRUPT_ID] = waits_on
    call = ToolCall(id=f"a2a-{uuid.uuid4().hex}", name=INPUT_TOOL, arguments=json.dumps(arguments))
    return AssistantMessage(content=question or None, tool_calls=(call,))


def input_tool() -> FunctionTool:
    """The tool a remote agent's request for input calls: it pauses the run with the question
    (``pending.kind == "question"``); the person's answer goes back to the remote task."""

    async def ask(arguments: dict[str, Any]) -> ToolResult:
        question = arguments.get("question")
        asked = question if isinstance(question, str) and question else None
        return ToolResult(ask=asked or "The remote agent asks for input (it said no more).")

    return FunctionTool.from_schema(
        name=INPUT_TOOL,
        description="The remote agent asks a person for input; the run pauses for the answer.",
        parameters={
            "type": "object",
            "properties": {
                "question": {"type": "string"},
                "task_id": {"type": "string"},
                "context_id": {"type": "string"},
                INTERRUPT_ID: {"type": "string"},
            },
            "required": ["question", "task_id", "context_id"],
        },
        function=ask,
        strict=False,
    )


def text_of(parts: Sequence[Part]) -> str:
    """What parts say as text: their text parts, else their data as JSON."""
    texts = get_text_parts(list(parts))
    if texts:
        return "\n".join(texts)
    data = get_data_parts(list(parts))
    return json.dumps(data[0] if len(data) == 1 else data) if data else ""


def translated(exc: Exception) -> Exception:
    """A client failure in the retrier's terms: an HTTP status, else no answer at all."""
    for cause in _causes(exc):
        if isinstance(cause, httpx.HTTPStatusError):
            response = cause.response
            return StatusError(
                f"HTTP {response.status_code} from {response.request.url}",
                status_code=response.status_code,
                headers=dict(response.headers),
            )
    if isinstance(exc, AgentCardResolutionError) and exc.status_code is not None:
        return StatusError(str(exc), status_code=exc.status_code, headers={})
    if isinstance(exc, A2AClientError | httpx.HTTPError | TimeoutError):
        return ConnectionFailedError(f"{type(exc).__name__}: {exc}".rstrip(": "))
    return exc


def _causes(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _json_object(text: str) -> Mapping[str, Any] | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
