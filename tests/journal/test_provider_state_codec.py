"""Provider state in journal records: verbatim through JSON, and records without it unchanged."""

from __future__ import annotations

import json

from swarmkit.journal._codec import response_from_data, response_to_data
from swarmkit.messages import AssistantMessage, ProviderState, ToolCall
from swarmkit.models import ModelResponse, Usage

THINKING = {"type": "thinking", "thinking": "Check A1.", "signature": "EqQBCkYIARgCIkD"}


def _response() -> ModelResponse:
    signed = ProviderState(provider="google", data={"id": True, "thought_signature": "Cs4B"})
    return ModelResponse(
        message=AssistantMessage(
            content="Checking.",
            tool_calls=(ToolCall(id="c1", name="lookup", arguments="{}", provider_state=signed),),
            provider_state=ProviderState(provider="anthropic", data={"blocks": [THINKING]}),
        ),
        usage=Usage(prompt_tokens=15, completion_tokens=5, total_tokens=20, cache_read_tokens=3),
        finish_reason="tool_calls",
        model="m",
    )


def test_provider_state_and_cache_tokens_round_trip_through_a_json_record() -> None:
    """What an engine or a store writes as JSON reads back equal, signatures and all."""
    data = json.loads(json.dumps(response_to_data(_response())))

    assert response_from_data(data) == _response()


def test_a_response_without_state_is_written_as_before() -> None:
    """No new keys for a state-free response: records stay byte-identical to older ones."""
    plain = ModelResponse(
        message=AssistantMessage(
            content="hi", tool_calls=(ToolCall(id="c", name="t", arguments="{}"),)
        ),
        usage=Usage(prompt_tokens=1, completion_tokens=1, total_tokens=2),
    )

    assert response_to_data(plain) == {
        "content": "hi",
        "tool_calls": [{"id": "c", "name": "t", "arguments": "{}"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        "finish_reason": None,
        "model": None,
    }
