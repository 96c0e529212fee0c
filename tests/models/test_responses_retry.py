"""OpenAIResponsesModel retries: the Chat adapter's policy, fault for fault, on /responses."""

from __future__ import annotations

import httpx
import openai
import pytest
from structlog.testing import capture_logs

from swarmkit.exceptions import ModelError
from swarmkit.messages import UserMessage
from swarmkit.models import ModelRequest, RetryPolicy
from tests.models.fake_openai import API_KEY, MODEL, Reply, error
from tests.models.fake_responses import answer, fake_responses_api, response_json

REQUEST = ModelRequest(messages=(UserMessage(content="Hi"),))


@pytest.mark.parametrize(
    "fault",
    [
        pytest.param(error(500), id="500"),
        pytest.param(error(502), id="502"),
        pytest.param(error(503), id="503"),
        pytest.param(error(429), id="429-without-retry-after"),
        pytest.param(httpx.ReadTimeout("read timed out"), id="timeout"),
        pytest.param(httpx.ConnectTimeout("connect timed out"), id="connect-timeout"),
        pytest.param(httpx.ConnectError("connection refused"), id="connection-error"),
        pytest.param(
            httpx.Response(
                200, content=b'{"id": "x", "outp', headers={"content-type": "application/json"}
            ),
            id="truncated-json",
        ),
        pytest.param(
            httpx.Response(200, content=b"not json", headers={"content-type": "application/json"}),
            id="invalid-json",
        ),
        pytest.param(
            httpx.Response(
                200, content=b"<html>bad gateway</html>", headers={"content-type": "text/html"}
            ),
            id="html-body",
        ),
        pytest.param(httpx.Response(200, json={"id": "x"}), id="no-output"),
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
async def test_a_transient_fault_is_retried_then_succeeds(fault: Reply) -> None:
    """Each retryable fault costs one attempt and one backoff; the next attempt's answer wins."""
    api = fake_responses_api(fault, answer("recovered"))

    response = await api.model.respond(REQUEST)

    assert response.message.content == "recovered"
    assert api.sleep.delays == [1.0]
    assert len(api.requests) == 2


async def test_429_honours_retry_after_ms_before_retry_after() -> None:
    """A rate limit waits what retry-after-ms says, even when Retry-After is also present."""
    limited = error(429, headers={"retry-after-ms": "250", "retry-after": "7"})
    api = fake_responses_api(limited, answer())

    await api.model.respond(REQUEST)

    assert api.sleep.delays == [0.25]


async def test_429_honours_retry_after_in_seconds() -> None:
    """A rate limit waits the Retry-After seconds instead of the computed backoff."""
    api = fake_responses_api(error(429, headers={"retry-after": "3"}), answer())

    await api.model.respond(REQUEST)

    assert api.sleep.delays == [3.0]


@pytest.mark.parametrize("status", [400, 401, 403, 404, 408, 409, 422])
async def test_a_client_error_is_not_retried(status: int) -> None:
    """A 4xx other than 429 fails at once: one request, no sleep, a ModelError with the status."""
    api = fake_responses_api(error(status, "you sent something wrong"))

    with pytest.raises(ModelError) as caught:
        await api.model.respond(REQUEST)

    assert caught.value.attempts == 1
    assert caught.value.status_code == status
    assert caught.value.model == MODEL
    assert isinstance(caught.value.__cause__, openai.APIStatusError)
    assert "you sent something wrong" in str(caught.value)
    assert len(api.requests) == 1
    assert api.sleep.delays == []


async def test_exhausted_retries_raise_model_error_chaining_the_last_cause() -> None:
    """After max_attempts failures the ModelError says how many, and its cause is the last one."""
    api = fake_responses_api(
        error(503, "overloaded"),
        error(502),
        error(500, "still down"),
        policy=RetryPolicy(max_attempts=3, initial_backoff=1.0, jitter=0.0),
    )

    with pytest.raises(ModelError, match="after 3 attempts") as caught:
        await api.model.respond(REQUEST)

    assert caught.value.status_code == 500
    assert isinstance(caught.value.__cause__, openai.InternalServerError)
    assert api.sleep.delays == [1.0, 2.0]


async def test_the_client_never_retries_on_its_own() -> None:
    """An injected client's own retries are switched off: our attempts are its requests."""
    api = fake_responses_api(error(503), error(503), answer(), client_max_retries=5)

    await api.model.respond(REQUEST)

    assert len(api.requests) == 3
    assert api.sleep.delays == [1.0, 2.0]


async def test_the_api_key_never_appears_in_errors_or_logs() -> None:
    """A server that echoes the key gets it masked in the ModelError, its cause and every log."""
    leaky = f"Incorrect API key provided: {API_KEY}. Header was Bearer {API_KEY}"
    api = fake_responses_api(error(500, leaky), error(401, leaky))

    with capture_logs() as logs, pytest.raises(ModelError) as caught:
        await api.model.respond(REQUEST)

    assert "check the API key" in str(caught.value)
    assert API_KEY not in str(caught.value)
    assert API_KEY not in str(caught.value.__cause__)
    assert API_KEY not in repr(logs)
