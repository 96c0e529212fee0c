"""What every adapter shares: arguments, the client, retries, deadlines, key masking and logs.

``ModelAdapter`` keeps and checks what every adapter takes and builds its SDK's client on the
first call. A native adapter (``NativeModel``) says only how one attempt goes (``_attempt`` and
``_stream_attempt``) and how its SDK's errors read in our terms (``_translate``); everything
around an attempt is here, once.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Iterator
from contextlib import aclosing, contextmanager
from typing import Any, Generic, TypeVar

from swarmkit.exceptions import ConfigurationError
from swarmkit.models._base import ModelDelta, ModelRequest, ModelResponse
from swarmkit.models._deadline import AttemptDeadline, Timeouts, timeouts_of
from swarmkit.models._providers import server_for_url
from swarmkit.models._retry import CallRetrier, RetryPolicy, decoding_answers, log_call_finished
from swarmkit.runtime import Runtime, checked_runtime

_Client = TypeVar("_Client")


class ModelAdapter(Generic[_Client]):
    """The common part of [OpenAIModel][swarmkit.models.OpenAIModel] and the native adapters:
    the arguments every adapter takes, its SDK client, its retrier and its logs."""

    provider = ""
    """Who serves the model, as traces name it (``gen_ai.provider.name``)."""
    key_env = ""
    """The environment variable the API key is read from."""
    default_url = ""
    """The API's address when neither ``base_url=`` nor the environment names one."""
    url_env = ""
    """The environment variable a base URL is read from, if the SDK reads one."""
    _client: _Client | None
    _owns_client: bool
    _kept_retrier: CallRetrier | None = None

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float | None = None,
        timeouts: Timeouts | None = None,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], Awaitable[None]] | None = None,
        clock: Callable[[], float] = time.perf_counter,
        runtime: Runtime | None = None,
    ) -> None:
        """Check and keep what every adapter takes; ``runtime`` supplies the waits between
        attempts and the jitter's randomness (it wins over ``sleep=``; neither: real ones),
        and, if it has ``sleep_until``, the clock each attempt's deadlines run on (else the
        event loop's)."""
        kind = type(self).__name__
        if not isinstance(model, str) or not model:
            raise ConfigurationError(
                f"{kind} needs a model name as a non-empty string, got {model!r:.80}"
            )
        for name, value in (("base_url", base_url), ("api_key", api_key)):
            if value is not None and not isinstance(value, str):
                raise ConfigurationError(f"{name}= must be a string, got {type(value).__name__}")
        checked_runtime(runtime)
        self.name = model
        """The model name sent with every request."""
        self.retry = RetryPolicy.or_default(retry)
        """The retry policy of every call."""
        self.timeouts = timeouts_of(timeout, timeouts)
        """The deadlines of each attempt."""
        self._api_key = api_key
        self._base_url = base_url
        url = base_url or (os.environ.get(self.url_env) if self.url_env else None)
        self.server = server_for_url(url or self.default_url)
        """Where the model's API is reached (host, port), as traces show it."""
        self._sleep = runtime.sleep if runtime is not None else (sleep or asyncio.sleep)
        self._random = runtime.random if runtime is not None else random.random
        self._clock = clock
        self._deadline_runtime = runtime

    def _ready_client(self) -> _Client:
        """The SDK's client, built on the first call (so no key is needed until then)."""
        if self._client is None:
            self._client = self._build_client()
        return self._client

    def _build_client(self) -> _Client:
        raise NotImplementedError

    def _required_key(self, *others: str, hint: str = "") -> str:
        """The API key to build a client with: ``api_key=``, else the first of ``key_env`` and
        the ``others`` variables that is set; ConfigurationError naming ``key_env`` when none is."""
        set_keys = (os.environ.get(name) for name in (self.key_env, *others))
        key = self._api_key or next((value for value in set_keys if value), "")
        if not key:
            raise ConfigurationError(
                f"{self!r} has no API key: pass api_key= or set {self.key_env}{hint}"
            )
        return key

    def _secrets(self) -> tuple[str, ...]:
        """The keys to mask in every message and log line."""
        return ()

    def _api(self) -> str | None:
        """The API the ``model_call_finished`` log names (None: it names none)."""
        return None

    def _retrier(self) -> CallRetrier:
        """The retrier of every call, built once (again only if ``retry`` is replaced)."""
        retrier = self._kept_retrier
        if retrier is None or retrier.policy is not self.retry:
            retrier = self._kept_retrier = CallRetrier(
                model=self.name,
                policy=self.retry,
                sleep=self._sleep,
                secrets=self._secrets(),
                random=self._random,
                key_env=self.key_env,
            )
        return retrier

    def _log_finished(
        self, response: ModelResponse, *, attempt: int, started: float, stream: bool
    ) -> None:
        latency = self._clock() - started
        log_call_finished(
            self.name, response, attempt=attempt, latency_s=latency, stream=stream, api=self._api()
        )


class NativeModel(ModelAdapter[_Client]):
    """The common part of [AnthropicModel][swarmkit.models.AnthropicModel] and
    [GeminiModel][swarmkit.models.GeminiModel]: each attempt of a call, around the SDK's own."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"

    async def respond(self, request: ModelRequest) -> ModelResponse:
        """Answer with one complete response, retrying transient failures."""
        self._ready_client()  # a missing key is the caller's to fix, not retried
        started = self._clock()
        retrier = self._retrier()

        async def attempt_once(attempt: int) -> ModelResponse:
            deadline = AttemptDeadline(self.timeouts, self._deadline_runtime)
            with self._translated():
                response = await self._attempt(request, deadline)
            self._log_finished(response, attempt=attempt, started=started, stream=False)
            return response

        return await retrier.call(attempt_once)

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelDelta | ModelResponse]:
        """Yield text and tool-call deltas as they arrive, then the assembled response.

        A retried attempt's deltas start again from the beginning of the answer, after an
        ``AttemptDiscarded`` marker, as with [OpenAIModel][swarmkit.models.OpenAIModel].
        """
        self._ready_client()
        started = self._clock()
        retrier = self._retrier()

        async def attempt_once(attempt: int) -> AsyncGenerator[ModelDelta | ModelResponse, None]:
            deadline = AttemptDeadline(self.timeouts, self._deadline_runtime)
            items = self._stream_attempt(request, deadline)
            async with aclosing(items):
                while True:
                    with self._translated():
                        item = await anext(items, None)
                    if item is None:
                        return
                    if isinstance(item, ModelResponse):
                        self._log_finished(item, attempt=attempt, started=started, stream=True)
                    yield item

        async with aclosing(retrier.stream(attempt_once)) as items:
            async for item in items:
                yield item

    async def _attempt(self, request: ModelRequest, deadline: AttemptDeadline) -> ModelResponse:
        raise NotImplementedError

    def _stream_attempt(
        self, request: ModelRequest, deadline: AttemptDeadline
    ) -> AsyncGenerator[ModelDelta | ModelResponse, None]:
        raise NotImplementedError

    def _translate(self, exc: Exception) -> Exception | None:
        """The SDK's error in our terms (``StatusError`` ...), or None for one that is not
        the API's fault."""
        raise NotImplementedError

    @staticmethod
    def _check_client(
        client: object, kind: type, label: str, *, base_url: str | None, api_key: str | None
    ) -> None:
        """A given SDK client: of the SDK's own type, and not beside base_url=/api_key=."""
        if client is None:
            return
        if not isinstance(client, kind):
            raise ConfigurationError(f"client= must be {label}, got {type(client).__name__}")
        if base_url is not None or api_key is not None:
            raise ConfigurationError("pass either client= or base_url=/api_key=, not both")

    @contextmanager
    def _translated(self) -> Iterator[None]:
        try:
            with decoding_answers():
                yield
        except Exception as exc:
            ours = self._translate(exc)
            if ours is None or ours is exc:
                raise
            raise ours from exc

    def _api(self) -> str | None:
        return self.provider


def headers_of(response: Any) -> dict[str, str]:
    """The headers of an SDK's HTTP response, or none."""
    headers = getattr(response, "headers", None)
    return dict(headers.items()) if headers is not None else {}
