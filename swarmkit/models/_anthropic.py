"""AnthropicModel: the Model protocol on Anthropic's Messages API, through the ``anthropic`` SDK."""

from __future__ import annotations

import importlib.util
from collections.abc import AsyncGenerator, Awaitable, Callable
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import anthropic
elif importlib.util.find_spec("anthropic") is None:  # pragma: no cover - depends on the extras
    raise ImportError(
        "AnthropicModel needs the anthropic package: pip install 'swarmkit-agents[anthropic]'"
    )

from swarmkit.exceptions import ConfigurationError
from swarmkit.models._adapter import NativeModel, headers_of
from swarmkit.models._anthropic_wire import (
    RequestOptions,
    StreamAssembler,
    parse_message,
    request_params,
)
from swarmkit.models._base import ModelDelta, ModelRequest, ModelResponse
from swarmkit.models._deadline import AttemptDeadline, Timeouts
from swarmkit.models._retry import ConnectionFailedError, RetryPolicy, StatusError
from swarmkit.models._wire import ErrorAnswerError, UnexpectedResponseError, json_type
from swarmkit.runtime import Runtime


class AnthropicModel(NativeModel["anthropic.AsyncAnthropic"]):
    """A Claude model served through ``anthropic.AsyncAnthropic`` (the Messages API).

    As with [OpenAIModel][swarmkit.models.OpenAIModel], the SDK's own retries are off, so each
    attempt is one HTTP request under our retry policy and deadlines, and keys are masked in every
    error. Without an injected client one is built on the first call from ``api_key``/``base_url``
    or ``ANTHROPIC_API_KEY``/``ANTHROPIC_BASE_URL``.

    ``thinking_budget`` switches on extended thinking; its signed thinking blocks are kept on
    the assistant message and sent back unchanged, as the API requires beside tool use.
    ``cache_prompt`` marks the instructions and tools for prompt caching. The ``anthropic``
    package is imported on the first call, not at construction.
    """

    provider = "anthropic"
    key_env = "ANTHROPIC_API_KEY"
    default_url = "https://api.anthropic.com"
    url_env = "ANTHROPIC_BASE_URL"

    def __init__(
        self,
        model: str,
        *,
        client: anthropic.AsyncAnthropic | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        max_tokens: int = 4096,
        thinking_budget: int | None = None,
        cache_prompt: bool = False,
        timeout: float | None = None,
        timeouts: Timeouts | None = None,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], Awaitable[None]] | None = None,
        runtime: Runtime | None = None,
    ) -> None:
        """Describe the model; ``max_tokens`` is sent when an agent's settings set none."""
        super().__init__(
            model,
            api_key=api_key,
            base_url=base_url,
            timeout=timeout,
            timeouts=timeouts,
            retry=retry,
            sleep=sleep,
            runtime=runtime,
        )
        self._check_client(
            client,
            _sdk().AsyncAnthropic if client is not None else type(None),
            "an anthropic.AsyncAnthropic",
            base_url=base_url,
            api_key=api_key,
        )
        for name, value in (("max_tokens", max_tokens), ("thinking_budget", thinking_budget)):
            if value is not None and (type(value) is not int or value < 1):
                raise ConfigurationError(f"{name}= must be a whole number of tokens, got {value!r}")
        self.options = RequestOptions(
            max_tokens=max_tokens, thinking_budget=thinking_budget, cache_prompt=cache_prompt
        )
        """What shapes every request beside the agent's settings."""
        self._client = None if client is None else self._without_retries(client)
        self._owns_client = client is None

    async def _attempt(self, request: ModelRequest, deadline: AttemptDeadline) -> ModelResponse:
        client = self._ready_client()
        params = request_params(self.name, request, self.options)
        message = await deadline.within("first_byte", client.messages.create(**params))
        return parse_message(_json_of(message, "the answer"))

    async def _stream_attempt(
        self, request: ModelRequest, deadline: AttemptDeadline
    ) -> AsyncGenerator[ModelDelta | ModelResponse, None]:
        client = self._ready_client()
        params = request_params(self.name, request, self.options)
        events = await deadline.within("first_byte", client.messages.create(**params, stream=True))
        assembler = StreamAssembler()
        async with events:
            arriving = aiter(events)
            while True:
                event = await deadline.within("stream_gap", anext(arriving, None))
                if event is None:
                    break
                for delta in assembler.add(_json_of(event, "a stream event")):
                    yield delta
        yield assembler.response()

    def _translate(self, exc: Exception) -> Exception | None:
        anthropic = _sdk()
        match exc:
            case anthropic.APIStatusError() if exc.status_code >= 400:
                return StatusError(
                    exc.message,
                    status_code=exc.status_code,
                    headers=headers_of(exc.response),
                    body=exc.body,
                )
            case anthropic.APIStatusError() | anthropic.APIResponseValidationError():
                # An error event inside a 200 stream: transient when its type says so.
                body = exc.body if isinstance(exc.body, dict) else {}
                error = body.get("error", body)
                return ErrorAnswerError(exc.message, body=error if isinstance(error, dict) else {})
            case anthropic.APIConnectionError():
                return ConnectionFailedError(str(exc) or type(exc).__name__)
            case _:
                return None

    def _secrets(self) -> tuple[str, ...]:
        client = self._client
        return (client.api_key or "",) if client is not None else (self._api_key or "",)

    async def aclose(self) -> None:
        """Close the HTTP client this model built (an injected client is left to its owner)."""
        if self._owns_client and self._client is not None:
            await self._client.close()
            self._client = None

    def _build_client(self) -> anthropic.AsyncAnthropic:
        client: anthropic.AsyncAnthropic = _sdk().AsyncAnthropic(
            api_key=self._required_key(),
            base_url=self._base_url,
            timeout=self._http_timeout(),
            max_retries=0,
        )
        return client

    def _without_retries(self, client: anthropic.AsyncAnthropic) -> anthropic.AsyncAnthropic:
        return client.with_options(max_retries=0, timeout=self._http_timeout())

    def _http_timeout(self) -> anthropic.Timeout:
        # Connect and a backstop for the whole attempt; the other deadlines are ours.
        timeout: anthropic.Timeout = _sdk().Timeout(
            self.timeouts.total, connect=self.timeouts.connect
        )
        return timeout


def _json_of(parsed: object, what: str) -> dict[str, Any]:
    """What the SDK parsed, as JSON data. The SDK builds its objects without validating them:
    JSON that is not an object comes back as it is, and a field of the wrong type is kept
    (our parsing then names it)."""
    if not isinstance(parsed, _sdk().BaseModel):
        raise UnexpectedResponseError(f"{what} must be a JSON object, got {json_type(parsed)}")
    data: dict[str, Any] = parsed.to_dict(mode="json", warnings=False)
    return data


def _sdk() -> ModuleType:
    """The ``anthropic`` package, imported on the first call rather than with the adapter."""
    import anthropic  # noqa: PLC0415 - about as costly to import as openai

    return anthropic
