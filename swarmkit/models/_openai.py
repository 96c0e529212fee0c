"""OpenAIModel: the Model protocol on Chat Completions of OpenAI or any compatible server."""

from __future__ import annotations

import asyncio
import os
import random
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from contextlib import aclosing
from typing import Any

import openai
from openai import AsyncOpenAI, AsyncStream
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from swarmkit.exceptions import ConfigurationError
from swarmkit.models._base import ModelDelta, ModelRequest, ModelResponse
from swarmkit.models._chat_completions import StreamAssembler, parse_completion, request_json
from swarmkit.models._deadline import AttemptDeadline, Timeouts, timeouts_of
from swarmkit.models._providers import provider_for_url
from swarmkit.models._retry import (
    CallRetrier,
    RetryPolicy,
    decoding_answers,
    log_call_finished,
    scrub_secrets,
)
from swarmkit.models._wire import IncompleteResponseError
from swarmkit.runtime import Runtime

_COMPLETIONS = "/chat/completions"


class OpenAIModel:
    """A model served through ``openai.AsyncOpenAI`` Chat Completions, with our retries.

    The client's own retries are switched off (``max_retries=0``), so each attempt is exactly one
    HTTP request and retries never multiply. Without an injected client, one is built on the
    first call from ``api_key``/``base_url`` or ``OPENAI_API_KEY``/``OPENAI_BASE_URL``, so an
    OpenAIModel can be constructed (and a journal replayed) with no key set.
    """

    def __init__(
        self,
        model: str,
        *,
        client: AsyncOpenAI | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float | None = None,
        timeouts: Timeouts | None = None,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        clock: Callable[[], float] = time.perf_counter,
        runtime: Runtime | None = None,
    ) -> None:
        """Describe the model.

        ``timeouts`` bounds each attempt (connect, first byte, whole response, stream gaps);
        ``timeout=`` is a shortcut for the whole-response deadline, with no phase longer.
        ``runtime`` supplies the waits between attempts and the jitter's randomness (it wins
        over ``sleep=``), so retries draw from the same seam as the run.
        """
        _check_arguments(model, client, base_url, api_key, retry)
        self.name = model
        """The model name sent with every request."""
        self.provider = _provider(client, base_url)
        """Who serves the model, as traces name it (``gen_ai.provider.name``): ``openai``, or
        the listed provider whose host the base URL names (Azure OpenAI, Groq, Mistral...)."""
        self.retry = retry or RetryPolicy()
        """The retry policy of every call."""
        self.timeouts = timeouts_of(timeout, timeouts)
        """The deadlines of each attempt."""
        self._base_url = base_url
        self._api_key = api_key
        self._sleep = runtime.sleep if runtime is not None else sleep
        self._random = runtime.random if runtime is not None else random.random
        self._clock = clock
        self._client = None if client is None else _without_retries(client, self.timeouts)
        self._owns_client = client is None

    def __repr__(self) -> str:
        return f"OpenAIModel({self.name!r})"

    async def respond(self, request: ModelRequest) -> ModelResponse:
        """Answer with one complete response, retrying transient failures."""
        client = self._ready_client()
        started = self._clock()

        async def attempt_once(attempt: int) -> ModelResponse:
            # The low-level post sends our body as it is: JSON bytes joined from each message's
            # JSON, made once in the message's life, so a long history is not walked and
            # re-encoded per call (the typed create()'s recursive transform would cost more
            # still). Auth, errors and JSON parsing are the client's. The body is read whole
            # inside post(), so the first-byte phase bounds it all. A body that cannot be
            # encoded (NaN in extra_body) fails here, as it did inside post().
            deadline = AttemptDeadline(self.timeouts)
            with decoding_answers():
                body = request_json(self.name, request)
                completion = await deadline.within(
                    "first_byte", client.post(_COMPLETIONS, content=body, cast_to=object)
                )
            response = parse_completion(_as_object(completion))
            self._log_finished(response, attempt=attempt, started=started, stream=False)
            return response

        return await self._retrier(client).call(attempt_once)

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelDelta | ModelResponse]:
        """Yield text and tool-call deltas as they arrive, then the assembled response.

        If an attempt fails midway and is retried, the next attempt's deltas start again from
        the beginning of the answer; the final response is always the one complete answer.
        """
        client = self._ready_client()
        body = request_json(self.name, request, stream=True)
        started = self._clock()

        def attempt_once(attempt: int) -> AsyncGenerator[ModelDelta | ModelResponse, None]:
            return self._stream_once(client, body, attempt=attempt, started=started)

        async with aclosing(self._retrier(client).stream(attempt_once)) as items:
            async for item in items:
                yield item

    async def _stream_once(
        self, client: AsyncOpenAI, body: bytes, *, attempt: int, started: float
    ) -> AsyncGenerator[ModelDelta | ModelResponse, None]:
        """One streamed request: deltas as chunks arrive, then the assembled response."""
        assembler = StreamAssembler()
        deadline = AttemptDeadline(self.timeouts)
        # What chat.completions.create(stream=True) posts, with our body as it is.
        create = client.post(
            _COMPLETIONS,
            content=body,
            cast_to=ChatCompletion,
            stream=True,
            stream_cls=AsyncStream[ChatCompletionChunk],
        )
        chunks = await deadline.within("first_byte", create)
        async with chunks:
            events = aiter(chunks)
            while True:
                with decoding_answers():
                    chunk = await deadline.within("stream_gap", anext(events, None))
                if chunk is None:
                    break
                for delta in assembler.add(_json_of(chunk)):
                    yield delta
        response = assembler.response()
        self._log_finished(response, attempt=attempt, started=started, stream=True)
        yield response

    async def aclose(self) -> None:
        """Close the HTTP client this model built (an injected client is left to its owner)."""
        if self._owns_client and self._client is not None:
            await self._client.close()
            self._client = None

    def _ready_client(self) -> AsyncOpenAI:
        if self._client is None:
            self._client = self._build_client()
        return self._client

    def _build_client(self) -> AsyncOpenAI:
        api_key = self._api_key or os.environ.get("OPENAI_API_KEY")
        if not api_key:
            raise ConfigurationError(
                f"{self!r} has no API key: pass api_key= or set OPENAI_API_KEY"
                " (for a server that needs no key, any non-empty string will do)"
            )
        try:
            return AsyncOpenAI(
                api_key=api_key,
                base_url=self._base_url,
                timeout=_http_timeout(self.timeouts),
                max_retries=0,
            )
        except openai.OpenAIError as exc:
            detail = scrub_secrets(str(exc), (api_key,))
            raise ConfigurationError(f"cannot build the OpenAI client: {detail}") from None

    def _retrier(self, client: AsyncOpenAI) -> CallRetrier:
        return CallRetrier(
            model=self.name,
            policy=self.retry,
            sleep=self._sleep,
            secrets=(client.api_key,),
            random=self._random,
        )

    def _log_finished(
        self, response: ModelResponse, *, attempt: int, started: float, stream: bool
    ) -> None:
        latency = self._clock() - started
        log_call_finished(self.name, response, attempt=attempt, latency_s=latency, stream=stream)


def _provider(client: AsyncOpenAI | None, base_url: str | None) -> str:
    """The provider the endpoint is: the client's, the given or the environment's base URL."""
    if client is not None:
        return provider_for_url(str(client.base_url))
    return provider_for_url(base_url or os.environ.get("OPENAI_BASE_URL"))


def _check_arguments(
    model: object, client: object, base_url: object, api_key: object, retry: object
) -> None:
    """Refuse arguments of the wrong kind at construction, saying what to pass instead."""
    if not isinstance(model, str) or not model:
        raise ConfigurationError(
            f"OpenAIModel needs a model name as a non-empty string, got {model!r:.80}; "
            "e.g. OpenAIModel('gpt-4o')"
        )
    if client is not None and not isinstance(client, AsyncOpenAI):
        raise ConfigurationError(
            f"client= must be an openai.AsyncOpenAI, got {type(client).__name__}; "
            "or pass base_url=/api_key= and let OpenAIModel build one"
        )
    if client is not None and (base_url is not None or api_key is not None):
        raise ConfigurationError(
            "pass either client= or base_url=/api_key=, not both: configure the client itself"
        )
    for name, value in (("base_url", base_url), ("api_key", api_key)):
        if value is not None and not isinstance(value, str):
            raise ConfigurationError(f"{name}= must be a string, got {type(value).__name__}")
    if retry is not None and not isinstance(retry, RetryPolicy):
        raise ConfigurationError(
            f"retry= must be a RetryPolicy, got {type(retry).__name__}; "
            "e.g. retry=RetryPolicy(max_attempts=3)"
        )


def _http_timeout(timeouts: Timeouts) -> openai.Timeout:
    """The HTTP client's own timeouts: connect, and the whole attempt as a backstop.

    The first-byte, stream-gap and total deadlines are ours (``AttemptDeadline``): the client's
    read timeout restarts on every byte, so it cannot bound a trickle or a keep-alive stream.
    """
    return openai.Timeout(timeouts.total, connect=timeouts.connect)


def _without_retries(client: AsyncOpenAI, timeouts: Timeouts) -> AsyncOpenAI:
    """A copy of the client that never retries on its own, so our attempts are its requests."""
    return client.with_options(max_retries=0, timeout=_http_timeout(timeouts))


def _as_object(result: object) -> dict[str, Any]:
    """The completion's JSON object; a server that answered with non-JSON text gives a str."""
    if not isinstance(result, dict):
        raise IncompleteResponseError(f"expected a JSON object, got {type(result).__name__}")
    return result


def _json_of(result: object) -> dict[str, Any]:
    """The JSON of a parsed API object; a server that answered with non-JSON text gives a str."""
    if not isinstance(result, openai.BaseModel):
        raise IncompleteResponseError(f"expected a JSON object, got {type(result).__name__}")
    # Without warnings: an odd field is reported by the parser, as a ModelError, not here.
    return result.to_dict(mode="json", warnings=False)
