"""Runtime: a run's ids, time, sleeps and randomness (an engine supplies them); timeouts on it."""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from types import TracebackType

from swarmkit.exceptions import ConfigurationError


def _new_hex_id() -> str:
    return uuid.uuid4().hex


@dataclass(frozen=True, kw_only=True, slots=True)
class Runtime:
    """The outside effects a run needs besides models, tools and the journal.

    The loop never calls ``uuid``, ``time``, ``random`` or ``asyncio.sleep`` itself: it asks its
    runtime. The default is the real ones; a test passes fixed ones (see
    ``swarmkit.testing.FixedRuntime``) and an engine passes its own deterministic ones, so a
    run replayed in another process draws the same values.
    """

    new_id: Callable[[], str] = _new_hex_id
    """A fresh unique id (session ids, lease owners)."""
    clock: Callable[[], float] = time.time
    """Wall-clock seconds since the epoch."""
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    """Wait this many seconds."""
    random: Callable[[], float] = random.random
    """A float in [0, 1) (retry jitter)."""
    sleep_until: Callable[[float], Awaitable[None]] | None = None
    """Wait until ``clock`` reads at least this time: how a call in flight waits out its run's
    or agent's deadline, and a model attempt or an MCP source its own timeouts (given to it as
    ``runtime=``; see [timeout][swarmkit.runtime.timeout]). None (the default) sleeps for the
    difference, which is the same on a clock that moves by itself (a model's or MCP source's
    timeouts then stay on the event loop's clock); a test's clock that moves only when told
    (``FixedRuntime``) waits here for the test to move it, where ``sleep`` would move it at
    once."""


DEFAULT_RUNTIME = Runtime()
"""The real ids, clock, sleep and randomness."""


def checked_runtime(runtime: object) -> Runtime | None:
    """``runtime`` as given to a model adapter or an MCP source (``runtime=``): a
    ``Runtime`` or None; anything else is a ``ConfigurationError`` that says what to pass."""
    if runtime is not None and not isinstance(runtime, Runtime):
        raise ConfigurationError(
            f"runtime= must be a swarmkit.runtime.Runtime, got {type(runtime).__name__}; "
            "e.g. runtime=FixedRuntime().runtime() in a test"
        )
    return runtime


def timeout(seconds: float, runtime: Runtime | None = None) -> asyncio.Timeout | ClockTimeout:
    """``asyncio.timeout(seconds)`` on ``runtime``'s clock when it can wait for its own clock
    (``sleep_until``), else on the event loop's (then it is ``asyncio.timeout`` itself).

    A test's ``FixedRuntime().runtime()`` makes the block time out when the test moves its
    clock past the deadline, with no real wait; a runtime without ``sleep_until`` (the real
    one, or one given so that retries do not wait) keeps real seconds.
    """
    if runtime is None or runtime.sleep_until is None:
        return asyncio.timeout(seconds)
    return ClockTimeout(runtime.clock() + seconds, runtime)


def deadline_clock(runtime: Runtime | None = None) -> Callable[[], float]:
    """The clock [timeout][swarmkit.runtime.timeout] and
    [timeout_at][swarmkit.runtime.timeout_at] run on for ``runtime``: ``runtime.clock`` when
    it has ``sleep_until``, else the running event loop's ``loop.time``."""
    if runtime is None or runtime.sleep_until is None:
        return asyncio.get_running_loop().time
    return runtime.clock


def timeout_at(when: float, runtime: Runtime | None = None) -> asyncio.Timeout | ClockTimeout:
    """``asyncio.timeout_at(when)`` on ``runtime``'s clock when it has ``sleep_until``, else on
    the event loop's; ``when`` is a reading of that clock (see
    [deadline_clock][swarmkit.runtime.deadline_clock])."""
    if runtime is None or runtime.sleep_until is None:
        return asyncio.timeout_at(when)
    return ClockTimeout(when, runtime)


class ClockTimeout:
    """An ``async with`` block that raises ``TimeoutError`` once ``runtime``'s clock reaches
    ``when``, as ``asyncio.timeout_at`` does on the event loop's; build it with
    [timeout][swarmkit.runtime.timeout] or [timeout_at][swarmkit.runtime.timeout_at].

    The runtime waits (``sleep_until``) in a task beside the block's and cancels the block when
    it returns, so the awaited call stays in the caller's task (an HTTP client's task-bound
    state survives). A cancellation from anyone else stays a cancellation.
    """

    def __init__(self, when: float, runtime: Runtime) -> None:
        if runtime.sleep_until is None:
            raise ConfigurationError(
                "ClockTimeout needs a runtime with sleep_until; timeout_at(when, runtime) "
                "falls back to the event loop's clock for one without"
            )
        self._when = when
        self._sleep_until = runtime.sleep_until
        self._rang = False

    def expired(self) -> bool:
        """Whether the deadline passed while the block ran (its timeout, not another's)."""
        return self._rang

    async def __aenter__(self) -> ClockTimeout:
        task = asyncio.current_task()
        if task is None:
            raise RuntimeError("ClockTimeout must be used inside a task")
        self._task, self._cancelling = task, task.cancelling()
        self._timer = asyncio.create_task(self._ring())
        return self

    async def _ring(self) -> None:
        await self._sleep_until(self._when)
        self._rang = True
        self._task.cancel()

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._timer.cancel()
        if not self._rang:
            return
        # The cancellation is ours only if nobody else cancelled the task meanwhile.
        ours = self._task.uncancel() <= self._cancelling
        if ours and kind is not None and issubclass(kind, asyncio.CancelledError):
            raise TimeoutError from error
