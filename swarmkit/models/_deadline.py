"""Per-attempt deadlines of a model call: connect, first byte, whole response, stream gaps."""

from __future__ import annotations

import math
from collections.abc import Awaitable
from dataclasses import dataclass, replace
from typing import Literal, TypeVar

from swarmkit.exceptions import ConfigurationError
from swarmkit.runtime import Runtime, deadline_clock, timeout_at

T = TypeVar("T")

Phase = Literal["first_byte", "stream_gap", "total"]
"""What an attempt was waiting for when its deadline passed."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Timeouts:
    """How long one attempt of a model call may take, in seconds; each expiry is retried.

    Every figure bounds one attempt (a retry starts its own clock), so a server that trickles
    one byte at a time, or a stream that sends only keep-alive comments, cannot hold a run.
    """

    connect: float = 10.0
    """Opening the connection (TCP and TLS), as the HTTP client measures it."""
    first_byte: float = 300.0
    """From sending the request until the answer starts. A non-streamed answer is only sent
    once it is complete, so for it this bounds reading the whole body too."""
    total: float = 600.0
    """The whole attempt, from sending the request until the answer is complete."""
    stream_gap: float = 120.0
    """The longest wait between two events of a stream; keep-alive comments do not count."""

    def __post_init__(self) -> None:
        for name in ("connect", "first_byte", "total", "stream_gap"):
            value = getattr(self, name)
            if not _is_positive_seconds(value):
                raise ConfigurationError(
                    f"Timeouts({name}=...) must be a positive finite number of seconds, "
                    f"got {value!r}; e.g. Timeouts({name}=30.0)"
                )

    @classmethod
    def within(cls, total: float) -> Timeouts:
        """The defaults with ``total`` as the whole attempt and no phase longer than it."""
        if not _is_positive_seconds(total):
            raise ConfigurationError(
                f"timeout must be a positive finite number of seconds, got {total!r}; "
                "e.g. timeout=30.0, or pass timeouts=Timeouts(...)"
            )
        base = cls()
        return replace(
            base,
            total=total,
            connect=min(base.connect, total),
            first_byte=min(base.first_byte, total),
            stream_gap=min(base.stream_gap, total),
        )


def timeouts_of(timeout: float | None, timeouts: Timeouts | None) -> Timeouts:
    """An adapter's deadlines from its ``timeout=`` shortcut or its ``timeouts=``."""
    if timeouts is not None and not isinstance(timeouts, Timeouts):
        raise ConfigurationError(
            f"timeouts= must be a Timeouts, got {type(timeouts).__name__}; "
            "e.g. timeouts=Timeouts(total=120.0)"
        )
    if timeout is not None and timeouts is not None:
        raise ConfigurationError(
            "pass either timeout= (the whole-response deadline) or timeouts=, not both"
        )
    if timeout is not None:
        return Timeouts.within(timeout)
    return timeouts or Timeouts()


def _is_positive_seconds(value: object) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        return math.isfinite(value) and value > 0
    except (TypeError, ValueError, OverflowError):
        return False


class DeadlineExceededError(Exception):
    """An attempt ran past one of its deadlines (worth another attempt)."""

    def __init__(self, phase: Phase, seconds: float) -> None:
        super().__init__(f"no answer within the {_PHASE_TEXT[phase]} deadline of {seconds:g} s")
        self.phase: Phase = phase
        self.seconds = seconds


_PHASE_TEXT: dict[Phase, str] = {
    "first_byte": "first-byte",
    "stream_gap": "stream-gap",
    "total": "whole-response",
}


class AttemptDeadline:
    """The clock of one attempt: each awaited step is bounded by its phase and by the total.

    Each await is bounded on its own (rather than one timeout around the attempt) because a
    streaming attempt yields to its consumer between events, and the consumer's own awaits must
    never be the ones cancelled.

    The deadlines run on the event loop's clock, or on a ``Runtime``'s that can wait for its
    own clock (``sleep_until``; see ``swarmkit.runtime.timeout_at``): a test's ``FixedRuntime``
    passes them when the test moves its clock, with no real wait.
    """

    def __init__(self, timeouts: Timeouts, runtime: Runtime | None = None) -> None:
        """Start the attempt's clock now, on the runtime's clock or else the event loop's."""
        self._timeouts = timeouts
        self._runtime = runtime
        self._now = deadline_clock(runtime)
        self._ends = self._now() + timeouts.total

    async def within(self, phase: Literal["first_byte", "stream_gap"], step: Awaitable[T]) -> T:
        """Await ``step``; ``DeadlineExceededError`` when its phase or the total runs out first."""
        seconds = getattr(self._timeouts, phase)
        runtime = self._runtime
        expired: Phase = phase
        when = self._now() + seconds
        if self._ends <= when:
            expired, when, seconds = "total", self._ends, self._timeouts.total
        timeout = timeout_at(when, runtime)
        try:
            async with timeout:
                return await step
        except TimeoutError as exc:
            if not timeout.expired():
                raise
            raise DeadlineExceededError(expired, seconds) from exc
