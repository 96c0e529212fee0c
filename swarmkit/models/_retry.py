"""How model calls are retried: the policy, which failures earn another attempt, and ModelError."""

from __future__ import annotations

import email.utils
import functools
import json
import math
import random
import re
import sys
import time
import warnings
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterator, Mapping
from contextlib import aclosing, contextmanager
from dataclasses import dataclass
from datetime import UTC
from typing import TYPE_CHECKING, Any, TypeVar

from swarmkit._log import log
from swarmkit.exceptions import ConfigurationError, ModelError
from swarmkit.models._base import AttemptDiscarded, ModelResponse
from swarmkit.models._deadline import DeadlineExceededError
from swarmkit.models._wire import (
    ErrorAnswerError,
    IncompleteResponseError,
    UnexpectedResponseError,
)

if TYPE_CHECKING:
    from tenacity import AsyncRetrying, RetryCallState

T = TypeVar("T")


class StatusError(Exception):
    """An API answered with an HTTP error status: another SDK's error in our terms, so one
    retry policy serves every adapter."""

    def __init__(
        self,
        message: str,
        *,
        status_code: int,
        headers: Mapping[str, str],
        body: object = None,
    ) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.headers = headers
        self.body = body


class ConnectionFailedError(Exception):
    """The request never got an answer: the connection failed or the client timed out."""


_OWN_FAILURES: tuple[type[Exception], ...] = (
    # openai raises the plain decoder error for a truncated or non-JSON body or stream event.
    json.JSONDecodeError,
    IncompleteResponseError,
    UnexpectedResponseError,
    ErrorAnswerError,
    DeadlineExceededError,
    StatusError,
    ConnectionFailedError,
)
_FAILURES: list[tuple[type[Exception], ...]] = [_OWN_FAILURES]


def loaded_openai() -> Any:
    """The ``openai`` package if something imported it, else None.

    The package costs more to import than the rest of swarmkit, so it loads on the first call
    of an OpenAI adapter, not before; until then no error can be one of its own.
    """
    return sys.modules.get("openai")


def api_failures() -> tuple[type[Exception], ...]:
    """Failures of the API (as opposed to bugs or cancellation): these end as ModelError.

    ``openai``'s errors are among them once the package is loaded.
    """
    if len(_FAILURES) == 1 and (openai := loaded_openai()) is not None:
        _FAILURES.append((openai.OpenAIError, *_OWN_FAILURES))
    return _FAILURES[-1]


_KEY_PATTERN = re.compile(r"\b(sk-[A-Za-z0-9_\-]{4,}|Bearer\s+\S+)")

_HINTS = {
    401: "check the API key ({key} or api_key=)",
    403: "check that the API key may use this model",
    404: "check the model name and the base_url",
}


@dataclass(frozen=True, kw_only=True, slots=True)
class RetryPolicy:
    """How often and how patiently a model call is retried."""

    max_attempts: int = 5
    """Attempts in all, the first included (1 means never retry)."""
    initial_backoff: float = 0.5
    """Seconds to wait before the second attempt; each later wait doubles."""
    max_backoff: float = 30.0
    """The longest computed wait, in seconds."""
    jitter: float = 0.25
    """The fraction (0..1) of each computed wait taken off at random, so clients spread out."""
    max_retry_after: float = 60.0
    """The longest server-requested wait (``Retry-After``) honoured; longer ones are cut to it."""

    def __post_init__(self) -> None:
        if type(self.max_attempts) is not int or self.max_attempts < 1:
            raise ConfigurationError(
                f"RetryPolicy(max_attempts=...) must be a whole number of attempts, at least 1; "
                f"got {self.max_attempts!r:.60} (e.g. max_attempts=3)"
            )
        for name in ("initial_backoff", "max_backoff", "max_retry_after", "jitter"):
            value = getattr(self, name)
            if not _is_real(value) or value < 0:
                raise ConfigurationError(
                    f"RetryPolicy({name}=...) must be a finite number of seconds, not negative; "
                    f"got {value!r:.60}"
                )
        if not 0 <= self.jitter <= 1:
            raise ConfigurationError(f"jitter must be between 0 and 1, got {self.jitter}")

    @classmethod
    def or_default(cls, retry: RetryPolicy | None) -> RetryPolicy:
        """A ``retry=`` argument as a policy: the one given, or the default for None; anything
        else raises ``ConfigurationError`` saying what to pass."""
        if retry is None:
            return cls()
        if not isinstance(retry, RetryPolicy):
            raise ConfigurationError(
                f"retry= must be a RetryPolicy, got {type(retry).__name__}; "
                "e.g. retry=RetryPolicy(max_attempts=3)"
            )
        return retry

    def backoff(self, attempt: int, draw: Callable[[], float] = random.random) -> float:
        """The jittered wait after failed attempt number ``attempt`` (1-based)."""
        # The exponent is capped so a huge attempt count cannot overflow the float.
        computed = min(self.max_backoff, self.initial_backoff * 2.0 ** min(attempt - 1, 64))
        return computed * (1 - self.jitter * draw())


@contextmanager
def decoding_answers() -> Iterator[None]:
    """Turn what decoding a hostile answer raises into our failures, with a reason.

    The client's JSON decoding raises a plain ValueError for an integer past Python's 4,300
    digits and RecursionError for JSON nested deeper than the stack; both are the answer's
    fault, not a bug, and not worth another attempt.
    """
    try:
        yield
    except RecursionError:
        raise UnexpectedResponseError("the answer is nested too deeply to decode") from None
    except ValueError as exc:
        if isinstance(exc, api_failures()):
            raise
        raise UnexpectedResponseError(f"the answer cannot be decoded: {exc}") from exc


def _is_real(value: object) -> bool:
    return type(value) in (int, float) and math.isfinite(value)  # type: ignore[arg-type]


def is_retryable(exc: BaseException) -> bool:
    """Whether another attempt may succeed: rate limits, server errors, lost or garbled answers."""
    openai = loaded_openai()
    if openai is not None and isinstance(exc, openai.OpenAIError):
        return _openai_retryable(exc, openai)
    match exc:
        case StatusError():
            return exc.status_code == 429 or exc.status_code >= 500
        case json.JSONDecodeError() | IncompleteResponseError() | ConnectionFailedError():
            return True
        case DeadlineExceededError():
            return True
        case ErrorAnswerError():
            return error_is_transient(exc.body)
        case _:
            return False


def _openai_retryable(exc: Any, openai: Any) -> bool:
    if isinstance(exc, openai.APIStatusError):
        return bool(exc.status_code == 429 or exc.status_code >= 500)
    if isinstance(exc, openai.APIConnectionError):
        return True
    # An error event inside a stream: retried when its body says it is transient.
    return isinstance(exc, openai.APIError) and error_is_transient(exc.body)


_TRANSIENT_ERROR_WORDS = frozenset(
    {
        "server_error",
        "rate_limit_exceeded",
        "rate_limit_error",
        "overloaded",
        "overloaded_error",
        "internal_error",
        "service_unavailable",
        "timeout",
        "api_error",
    }
)


def error_is_transient(body: object) -> bool:
    """Whether an error object (in a stream, or in place of a completion) says it is transient.

    It is when it says ``"retryable": true``, names a 429 or 5xx status (``status``/``code``),
    or has a ``type``/``code`` of a server, rate-limit, overload or timeout error.
    """
    if not isinstance(body, Mapping):
        return False
    if body.get("retryable") is True:
        return True
    for key in ("status", "status_code", "code"):
        value = body.get(key)
        if type(value) is int and (value == 429 or 500 <= value <= 599):
            return True
    return any(
        isinstance(body.get(key), str) and body[key].lower() in _TRANSIENT_ERROR_WORDS
        for key in ("type", "code")
    )


def status_of(exc: BaseException | None) -> int | None:
    """The HTTP status of a failed call, when the server answered with one."""
    if isinstance(exc, StatusError):
        return exc.status_code
    openai = loaded_openai()
    if openai is not None and isinstance(exc, openai.APIStatusError):
        return int(exc.status_code)
    return None


def failure_reason(exc: BaseException | None) -> str:
    """A short, stable name for a failure, for logs and messages."""
    openai = loaded_openai()
    if openai is not None and isinstance(exc, openai.OpenAIError):
        return _openai_reason(exc, openai)
    match exc:
        case StatusError():
            return f"http_{exc.status_code}"
        case ConnectionFailedError():
            return "connection_error"
        case json.JSONDecodeError():
            return "invalid_json"
        case DeadlineExceededError():
            return f"timeout_{exc.phase}"
        case UnexpectedResponseError():
            return "unexpected_response"
        case ErrorAnswerError():
            return "error_answer"
        case IncompleteResponseError():
            return "incomplete_response"
        case _:
            return type(exc).__name__


def _openai_reason(exc: Any, openai: Any) -> str:
    if isinstance(exc, openai.APIStatusError):
        return f"http_{exc.status_code}"
    if isinstance(exc, openai.APITimeoutError):
        return "timeout"
    if isinstance(exc, openai.APIConnectionError):
        return "connection_error"
    if isinstance(exc, openai.APIError):
        return "stream_error"
    return type(exc).__name__


def retry_after_seconds(
    headers: Mapping[str, str], *, now: Callable[[], float] = time.time
) -> float | None:
    """The wait a response asks for: ``retry-after-ms``, else ``Retry-After`` (seconds or date)."""
    millis = _seconds(headers.get("retry-after-ms"))
    if millis is not None:
        return millis / 1000
    raw = headers.get("retry-after")
    if raw is None:
        return None
    seconds = _seconds(raw)
    return seconds if seconds is not None else _seconds_until(raw, now())


def _seconds(raw: str | None) -> float | None:
    try:
        value = float(raw) if raw is not None else math.nan
    except ValueError:
        return None
    return max(value, 0.0) if math.isfinite(value) else None


def _seconds_until(http_date: str, now: float) -> float | None:
    try:
        when = email.utils.parsedate_to_datetime(http_date)
    except (TypeError, ValueError):
        return None
    # RFC 9110 dates are in GMT; a date without a zone is read the same way.
    when = when if when.tzinfo else when.replace(tzinfo=UTC)
    return max(when.timestamp() - now, 0.0)


def delay_after(
    policy: RetryPolicy,
    attempt: int,
    exc: BaseException | None,
    draw: Callable[[], float] = random.random,
) -> float:
    """The wait before the next attempt: what the server asked for (capped), else our backoff
    (``draw`` is the randomness of its jitter)."""
    openai = loaded_openai()
    headers = (
        exc.headers
        if isinstance(exc, StatusError)
        else exc.response.headers
        if openai is not None and isinstance(exc, openai.APIStatusError)
        else None
    )
    if headers is not None:
        asked = retry_after_seconds(headers)
        if asked is not None:
            return min(asked, policy.max_retry_after)
    return policy.backoff(attempt, draw)


def log_call_finished(
    model: str,
    response: ModelResponse,
    *,
    attempt: int,
    latency_s: float,
    stream: bool,
    api: str | None = None,
) -> None:
    """The ``model_call_finished`` log event every adapter emits after a call (``api`` names
    the API where an adapter speaks more than one; None leaves it out)."""
    log(
        "swarmkit.models",
        "model_call_finished",
        model=model,
        **({} if api is None else {"api": api}),
        latency_ms=round(latency_s * 1000, 3),
        prompt_tokens=response.usage.prompt_tokens,
        completion_tokens=response.usage.completion_tokens,
        total_tokens=response.usage.total_tokens,
        attempt=attempt,
        finish_reason=response.finish_reason,
        stream=stream,
    )


MIN_MASKED_KEY = 8
"""Keys shorter than this are not masked: replacing every "a" of a message would mangle it,
and a key that short is no secret (a placeholder for a server that needs none)."""


def scrub_secrets(text: str, secrets: tuple[str, ...] = ()) -> str:
    """The text with API keys (the known ones and anything shaped like one) masked."""
    for secret in secrets:
        if len(secret) >= MIN_MASKED_KEY:
            text = text.replace(secret, "***")
        elif secret:
            _warn_short_key(secret)
    return _KEY_PATTERN.sub("***", text)


@functools.lru_cache(maxsize=16)
def _warn_short_key(secret: str) -> None:
    """Say once per key that a short key is left unmasked.

    The key is checked deep inside a model call, where no stack level reaches the caller's
    code; the warning is filed under the package itself, so Python prints the one line of
    text and no line of swarmkit's source beneath it.
    """
    warnings.warn_explicit(
        f"an API key shorter than {MIN_MASKED_KEY} characters is not masked in error messages "
        "and logs; use the real key, or any placeholder of 8 or more characters, for a server "
        "that needs none",
        UserWarning,
        filename="swarmkit",
        lineno=0,
        module="swarmkit",
    )


@dataclass(frozen=True, kw_only=True, slots=True)
class CallRetrier:
    """Runs one model call under a retry policy and turns its final failure into ModelError."""

    model: str
    """The model name, for logs and errors."""
    policy: RetryPolicy
    """How often and how patiently to retry."""
    sleep: Callable[[float], Awaitable[None]]
    """Waits between attempts (injected so tests never wait)."""
    secrets: tuple[str, ...] = ()
    """Keys to mask in every message and log line."""
    random: Callable[[], float] = random.random
    """The jitter's randomness (a runtime's, so an engine draws the same values on replay)."""
    key_env: str = "OPENAI_API_KEY"
    """The environment variable of the API key, named in the hint for a refused key."""

    async def call(self, attempt_once: Callable[[int], Awaitable[T]]) -> T:
        """The result of the first successful attempt; ``attempt_once`` gets the attempt number.

        The first attempt runs bare: the retry machinery is built only once one has failed.
        """
        try:
            return await attempt_once(1)
        except api_failures() as exc:
            first = exc
        return await self._call_again(attempt_once, first)

    async def _call_again(self, attempt_once: Callable[[int], Awaitable[T]], first: Exception) -> T:
        """Attempts from the second on, after the first failed with ``first``."""
        await self._retry_or_give_up(first)
        retrying = self._retrying()
        try:
            async for attempt in retrying:
                with attempt:
                    return await attempt_once(attempt.retry_state.attempt_number + 1)
        except api_failures() as exc:
            attempts = retrying.statistics["attempt_number"] + 1
            raise self._give_up(exc, attempts=attempts) from exc
        raise AssertionError("tenacity stopped without a result or an error")  # pragma: no cover

    async def stream(
        self, attempt_once: Callable[[int], AsyncGenerator[T, None]]
    ) -> AsyncGenerator[T | AttemptDiscarded, None]:
        """The items of attempts in turn until one ends cleanly.

        Items of a failed attempt have already gone out; before the next attempt starts from
        scratch, an ``AttemptDiscarded`` tells the consumer to drop what that attempt yielded.
        """
        async with aclosing(attempt_once(1)) as items:
            try:
                async for item in items:
                    yield item
            except api_failures() as exc:
                first = exc
            else:
                return
        async with aclosing(self._stream_again(attempt_once, first)) as again:
            async for retried in again:
                yield retried

    async def _stream_again(
        self, attempt_once: Callable[[int], AsyncGenerator[T, None]], first: Exception
    ) -> AsyncGenerator[T | AttemptDiscarded, None]:
        """Attempts from the second on, after the first failed with ``first``."""
        await self._retry_or_give_up(first)
        retrying = self._retrying()
        failed = first
        try:
            async for attempt in retrying:
                # Not ``with attempt``: it would swallow GeneratorExit when the consumer stops.
                state = attempt.retry_state
                number = state.attempt_number + 1
                yield AttemptDiscarded(attempt=number - 1, reason=failure_reason(failed))
                async with aclosing(attempt_once(number)) as items:
                    try:
                        async for item in items:
                            yield item
                    except api_failures() as exc:
                        failed = exc
                        state.set_exception((type(exc), exc, exc.__traceback__))
                    else:
                        state.set_result(None)
        except api_failures() as exc:
            attempts = retrying.statistics["attempt_number"] + 1
            raise self._give_up(exc, attempts=attempts) from exc

    async def _retry_or_give_up(self, first: Exception) -> None:
        """After a failed first attempt: wait for the second, or raise ModelError."""
        if self.policy.max_attempts < 2 or not is_retryable(first):
            raise self._give_up(first, attempts=1) from first
        delay = delay_after(self.policy, 1, first, self.random)
        self._log_retry_of(first, attempt=1, delay=delay)
        await self.sleep(delay)

    def _retrying(self) -> AsyncRetrying:
        """Tenacity's loop over the attempts after the first (numbered from 1 in its state)."""
        from tenacity import (  # noqa: PLC0415 - built only once a first attempt failed
            AsyncRetrying,
            retry_if_exception,
            stop_after_attempt,
        )

        return AsyncRetrying(
            stop=stop_after_attempt(self.policy.max_attempts - 1),
            wait=self._wait,
            retry=retry_if_exception(is_retryable),
            sleep=self.sleep,
            before_sleep=self._log_retry,
            reraise=True,
        )

    def _wait(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        return delay_after(self.policy, state.attempt_number + 1, exc, self.random)

    def _log_retry(self, state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        self._log_retry_of(exc, attempt=state.attempt_number + 1, delay=state.upcoming_sleep)

    def _log_retry_of(self, exc: BaseException | None, *, attempt: int, delay: float) -> None:
        log(
            "swarmkit.models",
            "model_retry_scheduled",
            level="warning",
            model=self.model,
            attempt=attempt,
            delay_s=delay,
            reason=failure_reason(exc),
            status=status_of(exc),
        )

    def _give_up(self, exc: Exception, *, attempts: int) -> ModelError:
        _scrub_exception(exc, self.secrets)
        status = status_of(exc)
        log(
            "swarmkit.models",
            "model_call_failed",
            level="error",
            model=self.model,
            attempts=attempts,
            reason=failure_reason(exc),
            status=status,
            retryable=is_retryable(exc),
        )
        message = self._failure_message(exc, attempts=attempts)
        return ModelError(message, model=self.model, attempts=attempts, status_code=status)

    def _failure_message(self, exc: Exception, *, attempts: int) -> str:
        tries = f" after {attempts} attempts" if attempts > 1 else ""
        detail = scrub_secrets(str(exc), self.secrets)
        status = status_of(exc)
        hint = f"; {_HINTS[status].format(key=self.key_env)}" if status in _HINTS else ""
        return f"model {self.model!r} failed{tries} ({failure_reason(exc)}): {detail}{hint}"


def _scrub_exception(exc: Exception, secrets: tuple[str, ...]) -> None:
    """Mask keys in the chained cause too: tracebacks print it beside our message."""
    exc.args = tuple(scrub_secrets(a, secrets) if isinstance(a, str) else a for a in exc.args)
    openai = loaded_openai()
    if openai is not None and isinstance(exc, openai.APIError):
        exc.message = scrub_secrets(exc.message, secrets)
