"""A fake Responses API for OpenAIResponsesModel tests: canned replies through the real client."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, cast

import httpx
import respx
from openai import AsyncOpenAI

from swarmkit.models import OpenAIResponsesModel, RetryPolicy
from tests.models.fake_openai import (
    API_KEY,
    BASE_URL,
    EXACT_POLICY,
    MODEL,
    RecordingSleep,
    Reply,
    broken_sse,
    sse,
)


@dataclass(kw_only=True)
class FakeResponsesAPI:
    """An OpenAIResponsesModel wired to a mocked ``/responses`` that serves canned replies."""

    model: OpenAIResponsesModel
    """The model under test."""
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
    """A real AsyncOpenAI whose HTTP goes to ``router`` (openai 3.x accepts the httpx client)."""
    http = httpx.AsyncClient(transport=httpx.MockTransport(router.async_handler))
    return AsyncOpenAI(
        api_key=API_KEY, base_url=BASE_URL, http_client=cast(Any, http), max_retries=max_retries
    )


def fake_responses_api(
    *replies: Reply,
    policy: RetryPolicy = EXACT_POLICY,
    client_max_retries: int = 2,
    clock: Callable[[], float] | None = None,
    timeout: float | None = None,
) -> FakeResponsesAPI:
    """A model whose HTTP calls get ``replies`` in turn; a request beyond them fails the test."""
    router = respx.Router(base_url=BASE_URL, assert_all_mocked=True)
    route = router.post("/responses").mock(side_effect=list(replies))
    sleep = RecordingSleep()
    model = OpenAIResponsesModel(
        MODEL,
        client=mocked_client(router, max_retries=client_max_retries),
        retry=policy,
        sleep=sleep,
        clock=clock or (lambda: 0.0),
        timeout=timeout,
    )
    return FakeResponsesAPI(model=model, route=route, sleep=sleep)


def message_item(text: str) -> dict[str, Any]:
    """An assistant message output item."""
    return {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def call_item(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    """A function call output item."""
    return {
        "type": "function_call",
        "id": f"fc_{call_id}",
        "call_id": call_id,
        "name": name,
        "arguments": arguments,
        "status": "completed",
    }


def response_json(
    *items: Mapping[str, Any],
    status: str = "completed",
    usage: tuple[int, int] | None = (12, 5),
    incomplete: str | None = None,
) -> dict[str, Any]:
    """A response object."""
    body: dict[str, Any] = {
        "id": "resp_1",
        "object": "response",
        "created_at": 1,
        "model": MODEL,
        "status": status,
        "output": list(items),
        "incomplete_details": {"reason": incomplete} if incomplete else None,
    }
    if usage is not None:
        prompt, completion = usage
        body["usage"] = {
            "input_tokens": prompt,
            "output_tokens": completion,
            "total_tokens": prompt + completion,
        }
    return body


def answer(
    text: str | None = "Hello!",
    *,
    calls: Iterable[Mapping[str, Any]] = (),
    status: str = "completed",
    usage: tuple[int, int] | None = (12, 5),
    incomplete: str | None = None,
) -> httpx.Response:
    """A 200 response with text and/or function calls."""
    items = ([message_item(text)] if text is not None else []) + list(calls)
    return httpx.Response(
        200, json=response_json(*items, status=status, usage=usage, incomplete=incomplete)
    )


def text_events(*pieces: str) -> list[dict[str, Any]]:
    """The events of streamed text: the message item opens, then one delta per piece."""
    opened = {"type": "response.output_item.added", "output_index": 0, "item": message_item("")}
    deltas = [
        {"type": "response.output_text.delta", "output_index": 0, "content_index": 0, "delta": p}
        for p in pieces
    ]
    return [opened, *deltas]


def call_events(index: int, call_id: str, name: str, *pieces: str) -> list[dict[str, Any]]:
    """The events of one streamed function call: added, argument deltas, done."""
    added = {
        "type": "response.output_item.added",
        "output_index": index,
        "item": {**call_item(call_id, name, ""), "status": "in_progress"},
    }
    deltas = [
        {"type": "response.function_call_arguments.delta", "output_index": index, "delta": p}
        for p in pieces
    ]
    done = {
        "type": "response.output_item.done",
        "output_index": index,
        "item": call_item(call_id, name, "".join(pieces)),
    }
    return [added, *deltas, done]


def completed(
    *items: Mapping[str, Any],
    usage: tuple[int, int] | None = (9, 2),
    status: str = "completed",
    incomplete: str | None = None,
) -> dict[str, Any]:
    """The terminal event."""
    kind = "response.completed" if status == "completed" else "response.incomplete"
    response = response_json(*items, status=status, usage=usage, incomplete=incomplete)
    return {"type": kind, "response": response}


def event_stream(*events: Mapping[str, Any] | str) -> httpx.Response:
    """A 200 Responses event stream (no ``[DONE]``: the terminal event ends it)."""
    return sse(*events, done=False)


def broken_event_stream(*events: Mapping[str, Any]) -> httpx.Response:
    """A 200 event stream whose connection drops after ``events``."""
    return broken_sse(*events)
