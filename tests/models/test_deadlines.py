"""Per-attempt deadlines on the runtime seam's clock: a test passes them by moving its clock."""

from __future__ import annotations

import asyncio

import pytest

from swarmkit.exceptions import ConfigurationError, ModelError
from swarmkit.messages import UserMessage
from swarmkit.models import (
    AnthropicModel,
    GeminiModel,
    ModelRequest,
    OpenAIModel,
    OpenAIResponsesModel,
    Timeouts,
)
from swarmkit.runtime import Runtime
from swarmkit.testing import FixedRuntime

from .raw_server import (
    ONE_TRY,
    TWO_TRIES,
    RawServer,
    completion,
    failure,
    json_reply,
    raw_server,
    silent,
)

ASK = ModelRequest(messages=(UserMessage(content="Hi"),))


async def _holding(server: RawServer, requests: int) -> None:
    """Return once the server holds ``requests`` requests."""
    async with server.arrived:
        await server.arrived.wait_for(lambda: server.requests >= requests)


async def test_a_deadline_passes_when_the_test_moves_a_fixed_clock() -> None:
    """With runtime=FixedRuntime().runtime(), an attempt's first-byte deadline passes when the
    test moves the clock past it, and not while the clock stands short of it."""
    fixed = FixedRuntime()
    async with raw_server(silent) as server:
        model = server.model(
            timeouts=Timeouts(first_byte=30), retry=TWO_TRIES, runtime=fixed.runtime()
        )
        call = asyncio.ensure_future(model.respond(ASK))
        await _holding(server, 1)
        fixed.now += 29
        for _ in range(20):
            await asyncio.sleep(0)  # passes of the event loop: the deadline has its chance
        assert not call.done()
        fixed.now += 1
        await _holding(server, 2)
        fixed.now += 30
        with pytest.raises(ModelError) as caught:
            await call

    first_line = str(caught.value).splitlines()[0]
    assert first_line == (
        "model 'gpt-raw' failed after 2 attempts (timeout_first_byte): "
        "no answer within the first-byte deadline of 30 s"
    )


async def test_a_call_cancelled_under_a_runtime_deadline_stays_cancelled() -> None:
    """Cancelling the caller while an attempt waits on a runtime-clock deadline is a
    cancellation, not a deadline, and the clock has nobody left waiting on it."""
    fixed = FixedRuntime()
    async with raw_server(silent) as server:
        model = server.model(timeouts=Timeouts(first_byte=30), runtime=fixed.runtime())
        call = asyncio.ensure_future(model.respond(ASK))
        await _holding(server, 1)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        fixed.now += 30  # the deadline the cancelled attempt set passes: nothing happens

    assert server.requests == 1


@pytest.mark.parametrize(
    ("kind", "stream"),
    [(AnthropicModel, False), (AnthropicModel, True), (GeminiModel, False), (GeminiModel, True)],
    ids=["anthropic", "anthropic-stream", "gemini", "gemini-stream"],
)
async def test_a_native_adapters_deadlines_run_on_its_runtime_clock(
    kind: type[AnthropicModel | GeminiModel], stream: bool
) -> None:
    """Claude's and Gemini's adapters take runtime= for their deadlines as OpenAIModel does; a
    server silent from the start fails the first-byte deadline, streamed or not."""
    async with raw_server(silent) as server:
        model = kind(
            "native-test",
            base_url=f"http://127.0.0.1:{server.port}",
            api_key="test-key-12345678",
            retry=ONE_TRY,
            timeouts=Timeouts(first_byte=30),
            runtime=server.stalled_time(),
        )
        first_line = await failure(model, ASK, stream=stream)

    assert first_line.endswith(
        "(timeout_first_byte): no answer within the first-byte deadline of 30 s"
    )
    assert (server.requests, server.deadlines_passed) == (1, 1)


@pytest.mark.parametrize("kind", [OpenAIModel, OpenAIResponsesModel, AnthropicModel, GeminiModel])
def test_a_runtime_that_is_not_a_runtime_is_refused(kind: type[OpenAIModel]) -> None:
    """runtime= takes a Runtime; a FixedRuntime itself is refused with the call to make."""
    with pytest.raises(ConfigurationError) as caught:
        kind("m", runtime=FixedRuntime())  # type: ignore[arg-type]

    assert str(caught.value) == (
        "runtime= must be a swarmkit.runtime.Runtime, got FixedRuntime; "
        "e.g. runtime=FixedRuntime().runtime() in a test"
    )


async def test_a_runtime_without_sleep_until_keeps_real_deadlines() -> None:
    """A runtime given so that retries do not wait (an instant sleep, no sleep_until) leaves the
    deadlines on the event loop's clock: its instant sleep does not pass them at once."""

    async def no_wait(seconds: float) -> None:
        return None

    answer = json_reply(completion({"content": "hi"}))
    async with raw_server(answer) as server:
        model = server.model(timeouts=Timeouts(first_byte=30), runtime=Runtime(sleep=no_wait))
        response = await model.respond(ASK)

    assert response.message.content == "hi"
