"""Malformed Responses answers: every field of the wrong JSON type is a ModelError naming the
field's path, never a raw AttributeError or ValueError (issue 33, finding 6)."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest

from swarmkit.exceptions import ModelError
from swarmkit.messages import UserMessage
from swarmkit.models import ModelRequest
from tests.models.fake_responses import (
    call_item,
    completed,
    event_stream,
    fake_responses_api,
    response_json,
)


def _ask() -> ModelRequest:
    return ModelRequest(messages=(UserMessage(content="hi"),))


def _with(field: str, value: Any, **changes: Any) -> httpx.Response:
    """An answer with one function call whose ``field`` holds ``value``."""
    body = response_json({**call_item("c1", "lookup", "{}"), field: value})
    body.update(changes)
    return httpx.Response(200, json=body)


@pytest.mark.parametrize(
    ("reply", "path"),
    [
        (_with("arguments", {"city": "Oslo"}), "output[0].arguments"),
        (_with("arguments", 5), "output[0].arguments"),
        (_with("name", ["lookup"]), "output[0].name"),
        (_with("call_id", 7), "output[0].call_id"),
        (_with("arguments", "{}", usage="lots"), "usage"),
        (_with("arguments", "{}", usage={"input_tokens": "12"}), "usage.input_tokens"),
        (_with("arguments", "{}", usage={"total_tokens": -1}), "usage.total_tokens"),
        (_with("arguments", "{}", model=["gpt"]), "model"),
    ],
)
async def test_a_malformed_field_is_a_model_error_with_its_path(
    reply: httpx.Response, path: str
) -> None:
    """respond() raises ModelError naming the field, without retrying."""
    api = fake_responses_api(reply)

    with pytest.raises(ModelError, match=re.escape(path)):
        await api.model.respond(_ask())

    assert len(api.requests) == 1


@pytest.mark.parametrize(
    ("event", "path"),
    [
        (
            {"type": "response.function_call_arguments.delta", "output_index": 0, "delta": 5},
            "function_call_arguments.delta.delta",
        ),
        (
            {"type": "response.function_call_arguments.delta", "output_index": "x", "delta": "{"},
            "output_index",
        ),
        (
            {
                "type": "response.output_item.done",
                "output_index": 0,
                "item": {
                    "type": "function_call",
                    "call_id": "c1",
                    "name": "lookup",
                    "arguments": {},
                },
            },
            "output_item.done.item.arguments",
        ),
    ],
)
async def test_a_malformed_stream_event_is_a_model_error_with_its_path(
    event: dict[str, Any], path: str
) -> None:
    """stream() raises ModelError naming the event's field."""
    added = {
        "type": "response.output_item.added",
        "output_index": 0,
        "item": call_item("c1", "lookup", ""),
    }
    api = fake_responses_api(event_stream(added, event, completed()))

    with pytest.raises(ModelError, match=re.escape(path)):
        async for _ in api.model.stream(_ask()):
            pass
