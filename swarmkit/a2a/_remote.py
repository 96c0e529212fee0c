"""A remote A2A agent as a peer of a swarm: its turn is one model call the journal records.

``RemoteA2AModel`` answers a model request by sending it to a remote A2A agent (the a2a-sdk's
client) and returning its answer as the assistant's text. The run loop sees an ordinary model,
so the turn is journaled as one ``model_call`` step: replay serves it with zero network calls,
resume never repeats a finished remote call, and a failure is a ``ModelError`` (the run stops
with ``stop_reason="error"``, its journal intact). Each call is retried like a model's (429,
5xx, timeouts and lost connections; not other 4xx) and bounded like one, by its own per-attempt
``timeout`` and by the swarm's ``agent_timeout`` and ``run_timeout``.

A remote task that asks for input becomes a call of the agent's input tool, which pauses the
run with the remote's question; the person's answer is sent to the same remote task, and its
next answer continues the run. The remote agent cannot call our transfer tools: after its
answer the swarm's rules are consulted as for any agent's answer, and otherwise its answer is
the run's answer.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, Sequence

import httpx
from a2a.client import A2AClientError, ClientConfig, ClientFactory
from a2a.client.card_resolver import A2ACardResolver
from a2a.types.a2a_pb2 import (
    AgentCard,
    Message,
    SendMessageRequest,
    StreamResponse,
    Task,
    TaskState,
)
from a2a.utils.errors import A2AError

from swarmkit.a2a._remote_wire import (
    card_url,
    input_call,
    input_tool,
    outgoing,
    text_of,
    translated,
)
from swarmkit.agent import Agent
from swarmkit.exceptions import ConfigurationError, ModelError
from swarmkit.messages import AssistantMessage
from swarmkit.models import (
    CallRetrier,
    ConnectionFailedError,
    ModelRequest,
    ModelResponse,
    RetryPolicy,
    Usage,
)
from swarmkit.runtime import Runtime
from swarmkit.serving import check_token

DEFAULT_TIMEOUT = 60.0
"""Seconds a remote agent has to answer one attempt of a turn."""


class RemoteA2AModel:
    """Answers model requests with a remote A2A agent at ``url``: its base URL or the URL of
    its public card (``.../.well-known/agent-card.json``); the card is read first, and its
    interface's URL is the one called.

    ``token`` is sent as ``Authorization: Bearer <token>`` and never journaled or shown.
    ``retry`` is the models' [RetryPolicy][swarmkit.models.RetryPolicy]; ``timeout`` bounds
    each attempt. ``runtime`` (or ``sleep``) supplies the waits between attempts.
    """

    def __init__(
        self,
        url: str,
        *,
        token: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], Awaitable[None]] | None = None,
        runtime: Runtime | None = None,
    ) -> None:
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise ConfigurationError(f"the remote agent's url must be http(s)://..., got {url!r}")
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
            raise ConfigurationError(f"timeout must be a positive number of seconds: {timeout!r}")
        self.url = url
        self.name = f"a2a:{url}"
        """How the journal and errors name this model."""
        self.provider = "a2a"
        self.retry = RetryPolicy.or_default(retry)
        """The retry policy of every call."""
        self._token = check_token(token) if token else ""
        self._headers = {"Authorization": f"Bearer {self._token}"} if token else {}
        self._timeout = float(timeout)
        self._sleep = runtime.sleep if runtime is not None else (sleep or asyncio.sleep)
        self._random = runtime.random if runtime is not None else random.random
        self._card_url = card_url(url)
        self._card: AgentCard | None = None

    async def respond(self, request: ModelRequest) -> ModelResponse:
        """Send the request to the remote agent; its answer is the assistant's message."""
        message = outgoing(request)
        retrier = CallRetrier(
            model=self.name,
            policy=self.retry,
            sleep=self._sleep,
            secrets=(self._token,) if self._token else (),
            random=self._random,
        )
        try:
            replies = await retrier.call(lambda _attempt: self._attempt(message))
        except ModelError as exc:
            raise self._gave_up(exc) from exc.__cause__
        except A2AError as exc:  # a JSON-RPC error, e.g. the peer's own failure
            raise self._error(f"answered an error: {type(exc).__name__}: {exc}") from exc
        except ValueError as exc:  # e.g. a card with no transport we speak
            raise self._error(f"cannot be called: {exc}") from exc
        return ModelResponse(
            message=self._answer(replies),
            usage=Usage(reported=False),
            finish_reason="stop",
            model=self.name,
        )

    async def _attempt(self, message: Message) -> list[StreamResponse]:
        """One attempt: read the card (once), send the message, collect the answer."""
        timeout = httpx.Timeout(self._timeout, connect=min(10.0, self._timeout))
        async with httpx.AsyncClient(headers=self._headers, timeout=timeout) as http:
            try:
                async with asyncio.timeout(self._timeout):
                    return await self._send(http, message)
            except TimeoutError as exc:
                detail = f"no answer within {self._timeout:g} s (timeout=)"
                raise ConnectionFailedError(detail) from exc
            except (A2AClientError, httpx.HTTPError) as exc:
                raise translated(exc) from exc

    async def _send(self, http: httpx.AsyncClient, message: Message) -> list[StreamResponse]:
        if self._card is None:
            self._card = await A2ACardResolver(http, self._card_url, "").get_agent_card()
        config = ClientConfig(httpx_client=http, streaming=False)
        client = ClientFactory(config).create(self._card)
        try:
            request = SendMessageRequest(message=message)
            return [response async for response in client.send_message(request)]
        finally:
            await client.close()

    def _answer(self, replies: Sequence[StreamResponse]) -> AssistantMessage:
        if not replies:
            raise self._error("sent no answer")
        last = replies[-1]
        if last.HasField("message"):
            return AssistantMessage(content=text_of(last.message.parts))
        if not last.HasField("task"):
            raise self._error("answered neither a task nor a message")
        return self._task_answer(last.task)

    def _task_answer(self, task: Task) -> AssistantMessage:
        state = task.status.state
        said = text_of(task.status.message.parts)
        if state == TaskState.TASK_STATE_COMPLETED:
            parts = [p for artifact in task.artifacts for p in artifact.parts]
            return AssistantMessage(content=text_of(parts) or said)
        if state == TaskState.TASK_STATE_INPUT_REQUIRED:
            return input_call(task, said)
        name = TaskState.Name(state).removeprefix("TASK_STATE_").lower().replace("_", "-")
        raise self._error(f"answered a {name} task: {said}" if said else f"answered a {name} task")

    def _gave_up(self, error: ModelError) -> ModelError:
        """The retrier's verdict, told as this peer's failure."""
        cause = error.__cause__
        tries = f" after {error.attempts} attempts" if error.attempts > 1 else ""
        status = getattr(cause, "status_code", None)
        what = f"answered HTTP {status}" if status is not None else "did not answer"
        return ModelError(
            f"the remote A2A agent at {self.url} {what}{tries}: {cause}",
            model=self.name,
            attempts=error.attempts,
            status_code=status,
        )

    def _error(self, what: str) -> ModelError:
        return ModelError(f"the remote A2A agent at {self.url} {what}", model=self.name, attempts=1)


def remote_agent(
    name: str,
    url: str,
    *,
    token: str | None = None,
    description: str = "",
    timeout: float = DEFAULT_TIMEOUT,
    retry: RetryPolicy | None = None,
    runtime: Runtime | None = None,
) -> Agent:
    """An Agent whose turns a remote A2A agent takes: hand off to it, or delegate to it, like
    any peer. ``url`` is its base URL or its card's URL; ``description`` tells the other agents
    what it is for; ``retry`` and ``timeout`` are as for a model. When the remote asks for
    input, the run pauses with its question (a ``question`` pause) and the answer is sent back."""
    model = RemoteA2AModel(url, token=token, timeout=timeout, retry=retry, runtime=runtime)
    return Agent(name=name, description=description, model=model, handoffs=[], tools=[input_tool()])
