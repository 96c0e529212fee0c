"""A fake Chat Completions server for OpenAIModel tests: canned replies through the real client."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

import httpx
import respx
from openai import AsyncOpenAI

from swarmkit.models import OpenAIModel, RetryPolicy, Timeouts, ToolSpec
from swarmkit.runtime import Runtime

BASE_URL = "https://llm.test/v1"
API_KEY = "sk-test-Zq8v3Kp0Lm5Xw2Rt7Yb4Nc1"
MODEL = "gpt-test"

EXACT_POLICY = RetryPolicy(
    max_attempts=4, initial_backoff=1.0, max_backoff=8.0, jitter=0.0, max_retry_after=60.0
)
"""No jitter, so every recorded sleep is exact: 1, 2, 4 seconds."""

Reply = httpx.Response | Exception

WEATHER = ToolSpec(
    name="get_weather",
    description="The weather in a city.",
    parameters={
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ("city",),
        "additionalProperties": False,
    },
    strict=True,
)
"""A strict function tool to offer."""


@dataclass(kw_only=True)
class RecordingSleep:
    """A sleep that returns at once and remembers each requested delay."""

    delays: list[float] = field(default_factory=list)
    """The delays asked for, in order."""

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


@dataclass(kw_only=True)
class FakeAPI:
    """An OpenAI adapter wired to a mocked endpoint that serves canned replies."""

    model: OpenAIModel
    """The model under test (an OpenAIModel, or the OpenAIResponsesModel built on it)."""
    route: respx.Route
    """The mocked endpoint; it records every request."""
    sleep: RecordingSleep
    """The model's sleep."""

    @property
    def requests(self) -> list[httpx.Request]:
        """Every HTTP request the client sent, in order."""
        return [call.request for call in self.route.calls]

    def body(self, index: int = -1) -> dict[str, Any]:
        """The JSON body of one request."""
        return cast(dict[str, Any], json.loads(self.requests[index].content))


def mocked_client(router: respx.Router, *, max_retries: int = 2) -> AsyncOpenAI:
    """A real AsyncOpenAI whose HTTP goes to ``router``."""
    http = httpx.AsyncClient(transport=httpx.MockTransport(router.async_handler))
    # openai 3.x types http_client as httpx2's client but accepts the legacy httpx one,
    # which is the one respx can mock.
    return AsyncOpenAI(
        api_key=API_KEY, base_url=BASE_URL, http_client=cast(Any, http), max_retries=max_retries
    )


def fake_api(
    *replies: Reply,
    policy: RetryPolicy = EXACT_POLICY,
    client_max_retries: int = 2,
    clock: Callable[[], float] | None = None,
    timeout: float | None = None,
    timeouts: Timeouts | None = None,
    runtime: Runtime | None = None,
    adapter: type[OpenAIModel] = OpenAIModel,
    path: str = "/chat/completions",
) -> FakeAPI:
    """A model whose HTTP calls get ``replies`` in turn; a request beyond them fails the test."""
    router = respx.Router(base_url=BASE_URL, assert_all_mocked=True)
    route = router.post(path).mock(side_effect=list(replies))
    sleep = RecordingSleep()
    model = adapter(
        MODEL,
        client=mocked_client(router, max_retries=client_max_retries),
        retry=policy,
        sleep=sleep,
        clock=clock or (lambda: 0.0),
        timeout=timeout,
        timeouts=timeouts,
        runtime=runtime,
    )
    return FakeAPI(model=model, route=route, sleep=sleep)


def completion(
    content: str | None = "Hello!",
    *,
    tool_calls: Iterable[Mapping[str, Any]] = (),
    finish_reason: str = "stop",
    usage: tuple[int, int] = (12, 5),
) -> httpx.Response:
    """A 200 chat completion."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = list(tool_calls)
    return httpx.Response(
        200,
        json={
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1,
            "model": MODEL,
            "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
            "usage": usage_json(*usage),
        },
    )


def usage_json(prompt: int, completion: int) -> dict[str, int]:
    """A usage object."""
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def tool_call_json(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    """A tool call as the API returns it."""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def error(status: int, message: str = "failed", headers: Mapping[str, str] | None = None) -> Reply:
    """An API error response."""
    body = {"error": {"message": message, "type": "error", "code": None}}
    return httpx.Response(status, json=body, headers=dict(headers or {}))


def chunk(
    *,
    content: str | None = None,
    tool_calls: list[dict[str, Any]] | None = None,
    finish_reason: str | None = None,
    usage: tuple[int, int] | None = None,
    choices: bool = True,
) -> dict[str, Any]:
    """One streamed chunk; ``choices=False`` gives the final usage-only chunk."""
    delta: dict[str, Any] = {}
    if content is not None:
        delta["content"] = content
    if tool_calls is not None:
        delta["tool_calls"] = tool_calls
    body: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": MODEL,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]
        if choices
        else [],
    }
    if usage is not None:
        body["usage"] = usage_json(*usage)
    return body


def call_piece(
    index: int, *, arguments: str, call_id: str | None = None, name: str | None = None
) -> dict[str, Any]:
    """One streamed piece of a tool call."""
    function: dict[str, Any] = {"arguments": arguments}
    piece: dict[str, Any] = {"index": index, "function": function}
    if call_id is not None:
        piece.update(id=call_id, type="function")
        function["name"] = name
    return piece


def sse_bytes(*events: Mapping[str, Any] | str, done: bool = True) -> bytes:
    """Server-sent events: dicts as JSON, strings as they are, then ``[DONE]``."""
    lines = [e if isinstance(e, str) else json.dumps(e) for e in events]
    if done:
        lines.append("[DONE]")
    return "".join(f"data: {line}\n\n" for line in lines).encode()


def sse(*events: Mapping[str, Any] | str, done: bool = True) -> httpx.Response:
    """A 200 event stream."""
    headers = {"content-type": "text/event-stream"}
    return httpx.Response(200, content=sse_bytes(*events, done=done), headers=headers)


class _BrokenStream(httpx.AsyncByteStream):
    """A body that sends its first bytes, then loses the connection."""

    def __init__(self, first: bytes) -> None:
        self._first = first

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield self._first
        raise httpx.ReadError("connection reset by peer")


def broken_sse(*events: Mapping[str, Any]) -> httpx.Response:
    """A 200 event stream whose connection drops after ``events``."""
    headers = {"content-type": "text/event-stream"}
    return httpx.Response(
        200, stream=_BrokenStream(sse_bytes(*events, done=False)), headers=headers
    )
