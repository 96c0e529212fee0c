"""OpenAIResponsesModel retries of what only the Responses API answers (the faults both
adapters share are in test_openai_retry.py)."""

from __future__ import annotations

import httpx
import pytest

from swarmkit.messages import UserMessage
from swarmkit.models import ModelRequest
from tests.models.fake_openai import Reply
from tests.models.fake_responses import answer, fake_responses_api, response_json

REQUEST = ModelRequest(messages=(UserMessage(content="Hi"),))


@pytest.mark.parametrize(
    "fault",
    [
        pytest.param(
            httpx.Response(
                200, json={**response_json(), "status": "failed", "error": {"message": "boom"}}
            ),
            id="failed-response",
        ),
        pytest.param(
            httpx.Response(200, json={**response_json(), "status": "in_progress"}),
            id="unfinished-response",
        ),
    ],
)
async def test_a_failed_or_unfinished_response_is_retried_then_succeeds(fault: Reply) -> None:
    """A response that failed or has not finished costs one attempt; the next one's answer wins."""
    api = fake_responses_api(fault, answer("recovered"))

    response = await api.model.respond(REQUEST)

    assert response.message.content == "recovered"
    assert api.sleep.delays == [1.0]
    assert len(api.requests) == 2
