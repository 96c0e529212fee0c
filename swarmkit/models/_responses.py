"""OpenAIResponsesModel: the Model protocol on OpenAI's Responses API, with our retries."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from typing import Any

from openai import AsyncOpenAI, AsyncStream

from swarmkit.models._base import ModelDelta, ModelRequest, ModelResponse
from swarmkit.models._deadline import AttemptDeadline
from swarmkit.models._openai import OpenAIModel
from swarmkit.models._responses_wire import (
    ResponseStreamAssembler,
    parse_response,
    request_json,
)
from swarmkit.models._retry import decoding_answers, log_call_finished
from swarmkit.models._wire import IncompleteResponseError

_RESPONSES = "/responses"


class OpenAIResponsesModel(OpenAIModel):
    """A model served through ``client.responses`` (OpenAI's Responses API), with our retries.

    Everything but the wire format is the Chat Completions adapter's: the client is built the same
    way (``api_key``/``base_url`` or the environment, on the first call), its own retries are off,
    failures are retried by the same policy and keys are masked the same way. Servers that only
    speak Chat Completions keep using [OpenAIModel][swarmkit.models.OpenAIModel]. Each call sends
    the whole conversation (no ``previous_response_id``), so journals replay and agents mix freely.
    """

    def __repr__(self) -> str:
        return f"OpenAIResponsesModel({self.name!r})"

    async def respond(self, request: ModelRequest) -> ModelResponse:
        """Answer with one complete response, retrying transient failures."""
        client = self._ready_client()
        body = request_json(self.name, request)
        started = self._clock()

        async def attempt_once(attempt: int) -> ModelResponse:
            # The low-level post sends the body as it is (JSON bytes joined from each message's
            # JSON, made once), within the attempt's deadlines, as OpenAIModel does.
            deadline = AttemptDeadline(self.timeouts)
            with decoding_answers():
                data = await deadline.within(
                    "first_byte", client.post(_RESPONSES, content=body, cast_to=object)
                )
            response = parse_response(_as_object(data))
            self._log_finished(response, attempt=attempt, started=started, stream=False)
            return response

        return await self._retrier(client).call(attempt_once)

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelDelta | ModelResponse]:
        """Yield text and function-call argument deltas as they arrive, then the response.

        As with OpenAIModel, a retried attempt's deltas start again from the beginning.
        """
        client = self._ready_client()
        body = request_json(self.name, request, stream=True)
        started = self._clock()

        def attempt_once(attempt: int) -> AsyncGenerator[ModelDelta | ModelResponse, None]:
            return self._stream_events(client, body, attempt=attempt, started=started)

        async with aclosing(self._retrier(client).stream(attempt_once)) as items:
            async for item in items:
                yield item

    async def _stream_events(
        self, client: AsyncOpenAI, body: bytes, *, attempt: int, started: float
    ) -> AsyncGenerator[ModelDelta | ModelResponse, None]:
        """One streamed request: deltas as events arrive, then the assembled response."""
        assembler = ResponseStreamAssembler()
        deadline = AttemptDeadline(self.timeouts)
        create = client.post(
            _RESPONSES, content=body, cast_to=object, stream=True, stream_cls=AsyncStream[object]
        )
        events = await deadline.within("first_byte", create)
        async with events:
            arriving = aiter(events)
            while True:
                with decoding_answers():
                    event = await deadline.within("stream_gap", anext(arriving, None))
                if event is None:
                    break
                for delta in assembler.add(_as_object(event)):
                    yield delta
        response = assembler.response()
        self._log_finished(response, attempt=attempt, started=started, stream=True)
        yield response

    def _log_finished(
        self, response: ModelResponse, *, attempt: int, started: float, stream: bool
    ) -> None:
        latency = self._clock() - started
        log_call_finished(
            self.name, response, attempt=attempt, latency_s=latency, stream=stream, api="responses"
        )


def _as_object(result: object) -> dict[str, Any]:
    """The JSON object of a response or event; a server that answered non-JSON gives a str."""
    if not isinstance(result, dict):
        raise IncompleteResponseError(f"expected a JSON object, got {type(result).__name__}")
    return result
