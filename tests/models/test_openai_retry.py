"""OpenAI adapter retries: which faults are retried, how long it waits, and how it gives up
(the cases both adapters share run for each; the rest through OpenAIModel)."""

from __future__ import annotations

import httpx
import openai
import pytest
from structlog.testing import capture_logs

from swarmkit.exceptions import ConfigurationError, ModelError
from swarmkit.messages import UserMessage
from swarmkit.models import ModelRequest, RetryPolicy
from swarmkit.testing import FixedRuntime
from tests.models.fake_openai import API_KEY, MODEL, Reply, completion, error, fake_api
from tests.models.openai_adapters import Adapter

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
                200, content=b'{"id": "x", "mod', headers={"content-type": "application/json"}
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
        pytest.param(httpx.Response(200, json={"id": "x"}), id="no-answer"),
    ],
)
async def test_a_transient_fault_is_retried_then_succeeds(adapter: Adapter, fault: Reply) -> None:
    """Each retryable fault costs one attempt and one backoff; the next attempt's answer wins."""
    api = adapter.fake(fault, adapter.answer("recovered"))

    response = await api.model.respond(REQUEST)

    assert response.message.content == "recovered"
    assert api.sleep.delays == [1.0]
    assert len(api.requests) == 2


async def test_429_honours_retry_after_ms_before_retry_after(adapter: Adapter) -> None:
    """A rate limit waits what retry-after-ms says, even when Retry-After is also present."""
    limited = error(429, headers={"retry-after-ms": "250", "retry-after": "7"})
    api = adapter.fake(limited, adapter.answer())

    await api.model.respond(REQUEST)

    assert api.sleep.delays == [0.25]


async def test_429_honours_retry_after_in_seconds(adapter: Adapter) -> None:
    """A rate limit waits the Retry-After seconds instead of the computed backoff."""
    api = adapter.fake(error(429, headers={"retry-after": "3"}), adapter.answer())

    await api.model.respond(REQUEST)

    assert api.sleep.delays == [3.0]


async def test_retry_after_as_a_far_future_date_is_capped() -> None:
    """An HTTP-date Retry-After is honoured, but never beyond the policy's max_retry_after."""
    far = "Fri, 01 Jan 2100 00:00:00 GMT"
    policy = RetryPolicy(max_attempts=2, jitter=0.0, max_retry_after=20.0)
    api = fake_api(error(429, headers={"retry-after": far}), completion(), policy=policy)

    await api.model.respond(REQUEST)

    assert api.sleep.delays == [20.0]


async def test_retry_after_as_a_past_date_means_retry_now() -> None:
    """An HTTP-date already passed asks for no wait at all."""
    api = fake_api(
        error(429, headers={"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}), completion()
    )

    await api.model.respond(REQUEST)

    assert api.sleep.delays == [0.0]


async def test_an_unparseable_retry_after_falls_back_to_backoff() -> None:
    """A Retry-After that is neither a number nor a date is ignored."""
    api = fake_api(error(503, headers={"retry-after": "soon"}), completion())

    await api.model.respond(REQUEST)

    assert api.sleep.delays == [1.0]


async def test_backoff_doubles_up_to_its_cap() -> None:
    """Waits grow 1, 2, 4 ... and stop growing at max_backoff."""
    policy = RetryPolicy(max_attempts=6, initial_backoff=1.0, max_backoff=5.0, jitter=0.0)
    api = fake_api(*[error(503)] * 5, completion(), policy=policy)

    await api.model.respond(REQUEST)

    assert api.sleep.delays == [1.0, 2.0, 4.0, 5.0, 5.0]
    assert len(api.requests) == 6


async def test_jitter_takes_at_most_its_fraction_off_each_wait() -> None:
    """With jitter 0.5 each wait lies between half the computed backoff and all of it."""
    policy = RetryPolicy(max_attempts=4, initial_backoff=2.0, max_backoff=60.0, jitter=0.5)
    api = fake_api(error(500), error(500), error(500), completion(), policy=policy)

    await api.model.respond(REQUEST)

    for delay, computed in zip(api.sleep.delays, [2.0, 4.0, 8.0], strict=True):
        assert computed / 2 <= delay <= computed


@pytest.mark.parametrize("status", [400, 401, 403, 404, 408, 409, 422])
async def test_a_client_error_is_not_retried(adapter: Adapter, status: int) -> None:
    """A 4xx other than 429 fails at once: one request, no sleep, a ModelError with the status."""
    api = adapter.fake(error(status, "you sent something wrong"))

    with pytest.raises(ModelError) as caught:
        await api.model.respond(REQUEST)

    assert caught.value.attempts == 1
    assert caught.value.status_code == status
    assert caught.value.model == MODEL
    assert isinstance(caught.value.__cause__, openai.APIStatusError)
    assert "you sent something wrong" in str(caught.value)
    assert len(api.requests) == 1
    assert api.sleep.delays == []


async def test_exhausted_retries_raise_model_error_chaining_the_last_cause(
    adapter: Adapter,
) -> None:
    """After max_attempts failures the ModelError says how many, and its cause is the last one."""
    api = adapter.fake(
        error(503, "overloaded"),
        error(502),
        error(500, "still down"),
        policy=RetryPolicy(max_attempts=3, initial_backoff=1.0, jitter=0.0),
    )

    with pytest.raises(ModelError, match="after 3 attempts") as caught:
        await api.model.respond(REQUEST)

    assert caught.value.attempts == 3
    assert caught.value.status_code == 500
    assert isinstance(caught.value.__cause__, openai.InternalServerError)
    assert "still down" in str(caught.value)
    assert api.sleep.delays == [1.0, 2.0]
    assert len(api.requests) == 3


async def test_exhausted_connection_errors_raise_model_error() -> None:
    """Connection failures end as ModelError too, with no status code."""
    policy = RetryPolicy(max_attempts=2, jitter=0.0)
    api = fake_api(httpx.ConnectError("refused"), httpx.ConnectError("refused"), policy=policy)

    with pytest.raises(ModelError, match="connection_error") as caught:
        await api.model.respond(REQUEST)

    assert caught.value.attempts == 2
    assert caught.value.status_code is None
    assert isinstance(caught.value.__cause__, openai.APIConnectionError)


async def test_a_retry_is_logged_with_its_reason_and_delay() -> None:
    """Each scheduled retry logs model, attempt, delay and why; the success logs its attempt."""
    api = fake_api(
        error(429, headers={"retry-after": "2"}), httpx.ReadTimeout("slow"), completion()
    )

    with capture_logs() as logs:
        await api.model.respond(REQUEST)

    retries = [e for e in logs if e["event"] == "model_retry_scheduled"]
    assert retries == [
        {
            "event": "model_retry_scheduled",
            "log_level": "warning",
            "model": MODEL,
            "attempt": 1,
            "delay_s": 2.0,
            "reason": "http_429",
            "status": 429,
        },
        {
            "event": "model_retry_scheduled",
            "log_level": "warning",
            "model": MODEL,
            "attempt": 2,
            "delay_s": 2.0,
            "reason": "timeout",
            "status": None,
        },
    ]
    assert [e["attempt"] for e in logs if e["event"] == "model_call_finished"] == [3]


async def test_the_api_key_never_appears_in_errors_or_logs(adapter: Adapter) -> None:
    """A server that echoes the key gets it masked in the ModelError, its cause and every log."""
    leaky = f"Incorrect API key provided: {API_KEY}. Header was Bearer {API_KEY}"
    api = adapter.fake(error(500, leaky), error(401, leaky))

    with capture_logs() as logs, pytest.raises(ModelError) as caught:
        await api.model.respond(REQUEST)

    assert "***" in str(caught.value)
    assert "check the API key" in str(caught.value)
    assert API_KEY not in str(caught.value)
    assert API_KEY not in str(caught.value.__cause__)
    assert API_KEY not in repr(logs)
    assert [e["event"] for e in logs] == ["model_retry_scheduled", "model_call_failed"]


async def test_the_client_never_retries_on_its_own(adapter: Adapter) -> None:
    """An injected client's own retries are switched off: our attempts are its requests."""
    api = adapter.fake(error(503), error(503), adapter.answer(), client_max_retries=5)

    await api.model.respond(REQUEST)

    assert len(api.requests) == 3
    assert api.sleep.delays == [1.0, 2.0]


async def test_a_client_that_would_retry_sends_one_request_per_attempt_to_the_end(
    adapter: Adapter,
) -> None:
    """An injected client that would retry 5 times sends exactly one request per attempt."""
    api = adapter.fake(
        error(500),
        error(500),
        client_max_retries=5,
        policy=RetryPolicy(max_attempts=2, jitter=0.0),
    )

    with pytest.raises(ModelError, match="after 2 attempts"):
        await api.model.respond(REQUEST)

    assert len(api.requests) == 2


async def test_a_giving_up_is_logged() -> None:
    """The final failure logs model_call_failed with attempts, reason and status."""
    api = fake_api(error(400, "bad"))

    with capture_logs() as logs, pytest.raises(ModelError):
        await api.model.respond(REQUEST)

    assert logs == [
        {
            "event": "model_call_failed",
            "log_level": "error",
            "model": MODEL,
            "attempts": 1,
            "reason": "http_400",
            "status": 400,
            "retryable": False,
        }
    ]


@pytest.mark.parametrize(
    "settings",
    [
        {"max_attempts": 0},
        {"jitter": 1.5},
        {"jitter": -0.1},
        {"initial_backoff": -1.0},
        {"max_retry_after": -5.0},
    ],
)
def test_a_nonsensical_retry_policy_is_a_configuration_error(settings: dict[str, float]) -> None:
    """Impossible policies are refused when built, saying which setting is wrong."""
    with pytest.raises(ConfigurationError):
        RetryPolicy(**settings)  # type: ignore[arg-type]


def test_the_default_policy_retries_patiently_but_boundedly() -> None:
    """The defaults: 5 attempts, 0.5 s doubling to at most 30 s, a quarter jitter, 60 s cap."""
    assert RetryPolicy() == RetryPolicy(
        max_attempts=5, initial_backoff=0.5, max_backoff=30.0, jitter=0.25, max_retry_after=60.0
    )


async def test_a_runtime_supplies_the_waits_and_the_jitter() -> None:
    """OpenAIModel(runtime=...) sleeps through the runtime and draws jitter from it: fixed."""
    fixed = FixedRuntime()
    policy = RetryPolicy(max_attempts=3, initial_backoff=2.0, max_backoff=60.0, jitter=0.5)
    api = fake_api(error(500), error(500), completion(), policy=policy, runtime=fixed.runtime())

    await api.model.respond(REQUEST)

    assert fixed.sleeps == [1.5, 3.0]  # 2 and 4, each less jitter 0.5 x 0.5
    assert api.sleep.delays == []
