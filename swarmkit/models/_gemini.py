"""GeminiModel: the Model protocol on the Gemini API, through the ``google-genai`` SDK."""

from __future__ import annotations

import importlib.util
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import TYPE_CHECKING, Literal

from swarmkit.exceptions import ConfigurationError
from swarmkit.models._adapter import NativeModel, headers_of
from swarmkit.models._base import ModelDelta, ModelRequest, ModelResponse
from swarmkit.models._deadline import AttemptDeadline, Timeouts
from swarmkit.models._retry import ConnectionFailedError, RetryPolicy, StatusError
from swarmkit.runtime import Runtime

if TYPE_CHECKING:
    from google import genai
    from google.genai import types


def _sdk_installed() -> bool:
    try:
        return importlib.util.find_spec("google.genai") is not None
    except ImportError:  # pragma: no cover - no google namespace at all
        return False


# The SDK itself (and the wire module built on its types) loads on the first call.
if not _sdk_installed():  # pragma: no cover - depends on the installed extras
    raise ImportError(
        "GeminiModel needs the google-genai package: pip install 'swarmkit-agents[google]'"
    )


class GeminiModel(NativeModel["genai.Client"]):
    """A Gemini model served through ``google.genai.Client`` (``generateContent``).

    The SDK's own retries stay off (it retries only when given retry options), so each attempt
    is one HTTP request under our retry policy and deadlines. Without an injected client one is
    built on the first call from ``api_key``/``base_url`` or ``GEMINI_API_KEY`` (or
    ``GOOGLE_API_KEY``). Each function call keeps its thought signature and goes back with it,
    as Gemini requires; a call another provider's model made gets Gemini's documented stand-in.
    The ``google-genai`` package is imported on the first call, not at construction.
    """

    provider = "gcp.gemini"  # OpenTelemetry's name for the Gemini API
    key_env = "GEMINI_API_KEY"
    default_url = "https://generativelanguage.googleapis.com"

    def __init__(
        self,
        model: str,
        *,
        client: genai.Client | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        thinking_budget: int | None = None,
        timeout: float | None = None,
        timeouts: Timeouts | None = None,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], Awaitable[None]] | None = None,
        runtime: Runtime | None = None,
    ) -> None:
        """Describe the model; ``thinking_budget`` sets the thinking tokens (None: the model's
        default)."""
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
        if client is not None:
            from google import genai  # noqa: PLC0415 - a client given: the SDK is loaded

            self._check_client(
                client, genai.Client, "a google.genai.Client", base_url=base_url, api_key=api_key
            )
        if thinking_budget is not None and (
            type(thinking_budget) is not int or thinking_budget < 0
        ):
            raise ConfigurationError(
                f"thinking_budget= must be a whole number of tokens, got {thinking_budget!r}"
            )
        self.thinking_budget = thinking_budget
        """The thinking tokens each call may spend (None: the model's default)."""
        self._client = client
        self._owns_client = client is None

    async def _attempt(self, request: ModelRequest, deadline: AttemptDeadline) -> ModelResponse:
        from swarmkit.models._gemini_wire import contents, parse_response  # noqa: PLC0415

        client = self._ready_client()
        call = client.aio.models.generate_content(
            model=self.name, contents=contents(request.messages), config=self._config(request)
        )
        return parse_response(await deadline.within("first_byte", call))

    async def _stream_attempt(
        self, request: ModelRequest, deadline: AttemptDeadline
    ) -> AsyncGenerator[ModelDelta | ModelResponse, None]:
        from swarmkit.models._gemini_wire import StreamAssembler, contents  # noqa: PLC0415

        client = self._ready_client()
        call = client.aio.models.generate_content_stream(
            model=self.name, contents=contents(request.messages), config=self._config(request)
        )
        chunks = await deadline.within("first_byte", call)
        assembler = StreamAssembler()
        # The SDK sends the request on the first read, so that read waits for the first byte.
        phase: Literal["first_byte", "stream_gap"] = "first_byte"
        while True:
            chunk = await deadline.within(phase, anext(chunks, None))
            phase = "stream_gap"
            if chunk is None:
                break
            for delta in assembler.add(chunk):
                yield delta
        yield assembler.response()

    def _config(self, request: ModelRequest) -> types.GenerateContentConfig:
        from google.genai import types  # noqa: PLC0415 - loaded with the client

        from swarmkit.models._gemini_wire import request_config  # noqa: PLC0415

        config = request_config(request)
        if self.thinking_budget is not None:
            config.thinking_config = types.ThinkingConfig(thinking_budget=self.thinking_budget)
        if request.settings.extra_body:
            config.http_options = types.HttpOptions(extra_body=dict(request.settings.extra_body))
        return config

    def _translate(self, exc: Exception) -> Exception | None:
        import httpx  # noqa: PLC0415 - loaded with the client
        from google.genai import errors  # noqa: PLC0415

        match exc:
            case errors.APIError():
                return StatusError(
                    str(exc),
                    status_code=int(exc.code or 0),
                    headers=headers_of(exc.response),
                    body=exc.details,
                )
            case httpx.TransportError():
                return ConnectionFailedError(str(exc) or type(exc).__name__)
            case _:
                return None

    def _secrets(self) -> tuple[str, ...]:
        client = self._client
        key = getattr(getattr(client, "_api_client", None), "api_key", None)
        return (key or self._api_key or "",)

    async def aclose(self) -> None:
        """Close the HTTP client this model built (an injected client is left to its owner)."""
        if self._owns_client and self._client is not None:
            await self._client.aio.aclose()
            self._client = None

    def _build_client(self) -> genai.Client:
        api_key = self._required_key("GOOGLE_API_KEY")
        from google import genai  # noqa: PLC0415 - the SDK loads on the first call
        from google.genai import types  # noqa: PLC0415

        options = types.HttpOptions(
            base_url=self._base_url,
            api_version="v1beta",
            # Milliseconds: a backstop for the whole attempt; the other deadlines are ours.
            timeout=int(self.timeouts.total * 1000),
        )
        return genai.Client(api_key=api_key, http_options=options)
