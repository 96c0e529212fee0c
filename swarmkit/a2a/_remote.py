"""A remote A2A agent as a peer of a swarm: its turn is one model call the journal records.

``RemoteA2AModel`` answers a model request by sending the conversation to a remote A2A agent
(the a2a-sdk's client) and returning its answer as the assistant's text. The run loop sees an
ordinary model, so the turn is journaled as one ``model_call`` step: replay serves it with zero
network calls, resume never repeats a finished remote call, and a failure is a ``ModelError``
(the run stops with ``stop_reason="error"``, its journal intact).

The remote agent cannot call our transfer tools: after its answer the swarm's rules are
consulted as for any agent's answer, and otherwise its answer is the run's answer.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from typing import Any

import httpx
from a2a.client import A2AClientError, ClientConfig, ClientFactory
from a2a.helpers import get_data_parts, get_text_parts, new_data_part
from a2a.types.a2a_pb2 import (
    Message,
    Part,
    Role,
    SendMessageRequest,
    StreamResponse,
    Task,
    TaskState,
)
from a2a.utils.errors import A2AError

from swarmkit.agent import Agent
from swarmkit.exceptions import ConfigurationError, ModelError
from swarmkit.messages import AssistantMessage, SystemMessage, UserMessage, messages_to_data
from swarmkit.models import ModelRequest, ModelResponse, Usage
from swarmkit.serving import check_token

TRANSFER_PREFIX = "transfer_to_"
"""How the transfer tools a model calls to hand off are named."""

DEFAULT_TIMEOUT = 60.0
"""Seconds a remote agent has to answer one turn."""


class RemoteA2AModel:
    """Answers model requests with a remote A2A agent at ``url`` (its card is read first).

    ``token`` is sent as ``Authorization: Bearer <token>`` and never journaled or shown.
    """

    def __init__(self, url: str, *, token: str | None = None, timeout: float = DEFAULT_TIMEOUT):
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise ConfigurationError(f"the remote agent's url must be http(s)://..., got {url!r}")
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
            raise ConfigurationError(f"timeout must be a positive number of seconds: {timeout!r}")
        self.url = url
        self.name = f"a2a:{url}"
        """How the journal and errors name this model."""
        self.provider = "a2a"
        self._headers = {"Authorization": f"Bearer {check_token(token)}"} if token else {}
        self._timeout = float(timeout)

    async def respond(self, request: ModelRequest) -> ModelResponse:
        """Send the conversation to the remote agent; its answer is the assistant's text."""
        try:
            reply = await self._ask(_outgoing(request))
        except (A2AClientError, httpx.HTTPError, ValueError, TimeoutError) as exc:
            raise self._error(f"did not answer: {type(exc).__name__}: {exc}") from exc
        except A2AError as exc:  # a JSON-RPC error, e.g. the peer's own failure
            raise self._error(f"answered an error: {type(exc).__name__}: {exc}") from exc
        text = self._answer(reply)
        return ModelResponse(
            message=AssistantMessage(content=text),
            usage=Usage(reported=False),
            finish_reason="stop",
            model=self.name,
        )

    async def _ask(self, message: Message) -> list[StreamResponse]:
        timeout = httpx.Timeout(self._timeout)
        async with httpx.AsyncClient(headers=self._headers, timeout=timeout) as http:
            config = ClientConfig(httpx_client=http, streaming=False)
            client = await ClientFactory(config).create_from_url(self.url)
            try:
                request = SendMessageRequest(message=message)
                return [response async for response in client.send_message(request)]
            finally:
                await client.close()

    def _answer(self, replies: Sequence[StreamResponse]) -> str:
        if not replies:
            raise self._error("sent no answer")
        last = replies[-1]
        if last.HasField("message"):
            return _text(last.message.parts)
        if not last.HasField("task"):
            raise self._error("answered neither a task nor a message")
        return self._task_answer(last.task)

    def _task_answer(self, task: Task) -> str:
        state = task.status.state
        said = _text(task.status.message.parts)
        if state == TaskState.TASK_STATE_COMPLETED:
            parts = [p for artifact in task.artifacts for p in artifact.parts]
            return _text(parts) or said
        name = TaskState.Name(state).removeprefix("TASK_STATE_").lower().replace("_", "-")
        if state == TaskState.TASK_STATE_INPUT_REQUIRED:
            raise self._error(f"asks for input, which a remote peer cannot get: {said}")
        raise self._error(f"answered a {name} task: {said}" if said else f"answered a {name} task")

    def _error(self, what: str) -> ModelError:
        return ModelError(f"the remote A2A agent at {self.url} {what}", model=self.name, attempts=1)


def remote_agent(
    name: str,
    url: str,
    *,
    token: str | None = None,
    description: str = "",
    timeout: float = DEFAULT_TIMEOUT,
) -> Agent:
    """An Agent whose turns a remote A2A agent takes: hand off to it, or delegate to it, like
    any peer. ``description`` tells the other agents what it is for."""
    model = RemoteA2AModel(url, token=token, timeout=timeout)
    return Agent(name=name, description=description, model=model, handoffs=[])


def _outgoing(request: ModelRequest) -> Message:
    """What the remote agent is sent: the handoff notes and the user's last words as text,
    and the whole conversation as data."""
    notes = [m.content for m in request.messages if isinstance(m, SystemMessage) and m.content]
    users = [m.content for m in request.messages if isinstance(m, UserMessage)]
    text = "\n\n".join([*notes, *users[-1:]]) or "(no message)"
    conversation = [m for m in request.messages if not isinstance(m, SystemMessage)]
    data: dict[str, Any] = {"conversation": messages_to_data(conversation)}
    handoff = _last_transfer(conversation)
    if handoff is not None:
        data["handoff"] = handoff
    return Message(
        role=Role.ROLE_USER,
        parts=[Part(text=text), new_data_part(data)],
        message_id=uuid.uuid4().hex,
    )


def _last_transfer(messages: Sequence[object]) -> dict[str, Any] | None:
    """The handoff that brought the conversation here: the last transfer call, its payload."""
    for message in reversed(messages):
        if not isinstance(message, AssistantMessage):
            continue
        for call in message.tool_calls:
            if call.name.startswith(TRANSFER_PREFIX):
                try:
                    payload = json.loads(call.arguments or "{}")
                except ValueError:
                    payload = {}
                return {"source": message.agent, "tool": call.name, "payload": payload}
    return None


def _text(parts: Sequence[Part]) -> str:
    texts = get_text_parts(list(parts))
    if texts:
        return "\n".join(texts)
    data = get_data_parts(list(parts))
    return json.dumps(data[0] if len(data) == 1 else data) if data else ""
