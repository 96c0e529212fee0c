"""A fake Responses API for OpenAIResponsesModel tests: canned replies through the real client."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import partial
from typing import Any

import httpx

from swarmkit.models import OpenAIResponsesModel
from tests.models.fake_openai import MODEL, broken_sse, fake_api, sse

fake_responses_api = partial(fake_api, adapter=OpenAIResponsesModel, path="/responses")
"""``fake_api`` for an OpenAIResponsesModel on a mocked ``/responses``."""


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
