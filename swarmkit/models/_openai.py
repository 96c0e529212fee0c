"""OpenAIModel: the Model protocol on Chat Completions of OpenAI or any compatible server."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from contextlib import aclosing
from typing import TYPE_CHECKING, Any

from swarmkit.exceptions import ConfigurationError
from swarmkit.models._adapter import ModelAdapter
from swarmkit.models._base import ModelDelta, ModelRequest, ModelResponse
from swarmkit.models._chat_completions import StreamAssembler, parse_completion, request_json
from swarmkit.models._deadline import AttemptDeadline, Timeouts
from swarmkit.models._providers import provider_for_url, server_for_url
from swarmkit.models._retry import RetryPolicy, decoding_answers, loaded_openai, scrub_secrets
from swarmkit.models._wire import IncompleteResponseError, StreamAssembly, json_object
from swarmkit.runtime import Runtime

if TYPE_CHECKING:
    import openai
    from openai import AsyncOpenAI, AsyncStream

_COMPLETIONS = "/chat/completions"


class OpenAIModel(ModelAdapter["AsyncOpenAI"]):
    """A model served through ``openai.AsyncOpenAI`` Chat Completions, with our retries.

    The client's own retries are switched off (``max_retries=0``), so each attempt is exactly one
    HTTP request and retries never multiply. Without an injected client, one is built on the
    first call from ``api_key``/``base_url`` or ``OPENAI_API_KEY``/``OPENAI_BASE_URL``, so an
    OpenAIModel can be constructed (and a journal replayed) with no key set. The ``openai``
    package itself is imported on that first call too, not at construction.
    """

    key_env = "OPENAI_API_KEY"
    default_url = "https://api.openai.com/v1"
    url_env = "OPENAI_BASE_URL"

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
        over ``sleep=``), so retries draw from the same seam as the run; a runtime with
        ``sleep_until`` is also the clock of the first-byte, stream-gap and whole-response
        deadlines (a test's ``FixedRuntime`` passes them when the test moves its clock;
        connect stays the HTTP client's own).
        """
        _check_arguments(model, client, base_url, api_key)
        super().__init__(
            model,
            api_key=api_key,
            base_url=base_url,
            timeout=timeout,
            timeouts=timeouts,
            retry=retry,
            sleep=sleep,
            clock=clock,
            runtime=runtime,
        )
        self.provider = _provider(client, base_url)
        """Who serves the model, as traces name it (``gen_ai.provider.name``): ``openai``, or
        the listed provider whose host the base URL names (Azure OpenAI, Groq, Mistral...)."""
        if client is not None:
            self.server = server_for_url(str(client.base_url))
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
            deadline = AttemptDeadline(self.timeouts, self._deadline_runtime)
            with decoding_answers():
                body = self._encode(self.name, request)
                answer = await deadline.within(
                    "first_byte", client.post(self._path, content=body, cast_to=object)
                )
            response = self._decode(json_object(answer))
            self._log_finished(response, attempt=attempt, started=started, stream=False)
            return response

        return await self._retrier().call(attempt_once)

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelDelta | ModelResponse]:
        """Yield text and tool-call deltas as they arrive, then the assembled response.

        If an attempt fails midway and is retried, the next attempt's deltas start again from
        the beginning of the answer; the final response is always the one complete answer.
        """
        client = self._ready_client()
        body = self._encode(self.name, request, stream=True)
        started = self._clock()

        def attempt_once(attempt: int) -> AsyncGenerator[ModelDelta | ModelResponse, None]:
            return self._stream_once(client, body, attempt=attempt, started=started)

        async with aclosing(self._retrier().stream(attempt_once)) as items:
            async for item in items:
                yield item

    async def _stream_once(
        self, client: AsyncOpenAI, body: bytes, *, attempt: int, started: float
    ) -> AsyncGenerator[ModelDelta | ModelResponse, None]:
        """One streamed request: deltas as its chunks arrive, then the assembled response."""
        assembler = self._assembler()
        deadline = AttemptDeadline(self.timeouts, self._deadline_runtime)
        chunks = await deadline.within("first_byte", self._post_stream(client, body))
        async with chunks:
            arriving = aiter(chunks)
            while True:
                with decoding_answers():
                    chunk = await deadline.within("stream_gap", anext(arriving, None))
                if chunk is None:
                    break
                for delta in assembler.add(self._chunk_json(chunk)):
                    yield delta
        response = assembler.response()
        self._log_finished(response, attempt=attempt, started=started, stream=True)
        yield response

    # What the API's dialect decides; OpenAIResponsesModel replaces these, the rest is the same.

    _path = _COMPLETIONS
    """Where a request is posted."""
    _encode = staticmethod(request_json)
    """A request as the JSON body the API takes: ``(model, request, *, stream)``."""
    _decode = staticmethod(parse_completion)
    """A whole answer's JSON as our response."""
    _assembler: Callable[[], StreamAssembly] = StreamAssembler
    """Joins a streamed answer's chunks into deltas and the response."""

    def _post_stream(self, client: AsyncOpenAI, body: bytes) -> Awaitable[AsyncStream[Any]]:
        # What chat.completions.create(stream=True) posts, with our body as it is.
        from openai import AsyncStream  # noqa: PLC0415 - loaded with the client
        from openai.types.chat import ChatCompletion, ChatCompletionChunk  # noqa: PLC0415

        return client.post(
            _COMPLETIONS,
            content=body,
            cast_to=ChatCompletion,
            stream=True,
            stream_cls=AsyncStream[ChatCompletionChunk],
        )

    def _chunk_json(self, chunk: object) -> dict[str, Any]:
        return _json_of(chunk)

    async def aclose(self) -> None:
        """Close the HTTP client this model built (an injected client is left to its owner)."""
        if self._owns_client and self._client is not None:
            await self._client.close()
            self._client = None

    def _build_client(self) -> AsyncOpenAI:
        api_key = self._required_key(
            hint=" (for a server that needs no key, any non-empty string will do)"
        )
        import openai  # noqa: PLC0415 - the package loads on the first call, not at construction
        from openai import AsyncOpenAI  # noqa: PLC0415

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

    def _secrets(self) -> tuple[str, ...]:
        return (self._ready_client().api_key,)


def _provider(client: AsyncOpenAI | None, base_url: str | None) -> str:
    """The provider the endpoint is: the client's, the given or the environment's base URL."""
    if client is not None:
        return provider_for_url(str(client.base_url))
    return provider_for_url(base_url or os.environ.get("OPENAI_BASE_URL"))


def _check_arguments(model: object, client: object, base_url: object, api_key: object) -> None:
    """Refuse a model name or a client of the wrong kind at construction, saying what to pass
    instead (the other arguments are every adapter's, checked by ModelAdapter)."""
    if not isinstance(model, str) or not model:
        raise ConfigurationError(
            f"OpenAIModel needs a model name as a non-empty string, got {model!r:.80}; "
            "e.g. OpenAIModel('gpt-4o')"
        )
    openai = loaded_openai()  # a client given means its package is loaded
    if client is not None and (openai is None or not isinstance(client, openai.AsyncOpenAI)):
        raise ConfigurationError(
            f"client= must be an openai.AsyncOpenAI, got {type(client).__name__}; "
            "or pass base_url=/api_key= and let OpenAIModel build one"
        )
    if client is not None and (base_url is not None or api_key is not None):
        raise ConfigurationError(
            "pass either client= or base_url=/api_key=, not both: configure the client itself"
        )


def _http_timeout(timeouts: Timeouts) -> openai.Timeout:
    """The HTTP client's own timeouts: connect, and the whole attempt as a backstop.

    The first-byte, stream-gap and total deadlines are ours (``AttemptDeadline``): the client's
    read timeout restarts on every byte, so it cannot bound a trickle or a keep-alive stream.
    """
    import openai  # noqa: PLC0415 - loaded with the client

    return openai.Timeout(timeouts.total, connect=timeouts.connect)


def _without_retries(client: AsyncOpenAI, timeouts: Timeouts) -> AsyncOpenAI:
    """A copy of the client that never retries on its own, so our attempts are its requests."""
    return client.with_options(max_retries=0, timeout=_http_timeout(timeouts))


def _json_of(result: object) -> dict[str, Any]:
    """The JSON of a parsed API object; a server that answered with non-JSON text gives a str."""
    import openai  # noqa: PLC0415 - loaded with the client

    if not isinstance(result, openai.BaseModel):
        raise IncompleteResponseError(f"expected a JSON object, got {type(result).__name__}")
    # Without warnings: an odd field is reported by the parser, as a ModelError, not here.
    return result.to_dict(mode="json", warnings=False)
