"""Timeouts on the runtime seam's clock: a test passes them by moving a FixedRuntime's clock."""

from __future__ import annotations

import asyncio

import pytest

from swarmkit.exceptions import ConfigurationError
from swarmkit.runtime import ClockTimeout, Runtime, deadline_clock, timeout, timeout_at
from swarmkit.testing import FixedRuntime


async def _wait_forever(seconds: float, runtime: Runtime) -> None:
    async with timeout(seconds, runtime):
        await asyncio.Event().wait()


async def _passes(count: int = 20) -> None:
    for _ in range(count):
        await asyncio.sleep(0)  # passes of the event loop, no wall-clock wait


async def test_a_timeout_passes_when_the_test_moves_the_clock_past_it() -> None:
    """The block raises TimeoutError once the clock reaches its deadline, and not before."""
    fixed = FixedRuntime()
    waiting = asyncio.ensure_future(_wait_forever(30, fixed.runtime()))
    await _passes()
    fixed.now += 29
    await _passes()
    assert not waiting.done()
    fixed.now += 1
    with pytest.raises(TimeoutError):
        await waiting


async def test_a_cancellation_from_elsewhere_stays_a_cancellation() -> None:
    """Cancelling the task inside the block is a cancellation, not a timeout."""
    fixed = FixedRuntime()
    waiting = asyncio.ensure_future(_wait_forever(30, fixed.runtime()))
    await _passes()
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    fixed.now += 30  # the deadline the cancelled block set passes: nothing happens


async def test_a_timeout_error_of_the_block_itself_is_not_an_expiry() -> None:
    """A TimeoutError the awaited call raises on its own leaves expired() False."""
    fixed = FixedRuntime()
    limit = timeout_at(fixed.now + 30, fixed.runtime())
    with pytest.raises(TimeoutError):
        async with limit:
            raise TimeoutError("the call's own")

    assert not limit.expired()


async def test_a_runtime_without_sleep_until_keeps_the_event_loops_timeout() -> None:
    """The real runtime (or none) gets asyncio's own timeout and clock, at no extra cost."""
    assert isinstance(timeout(30, Runtime()), asyncio.Timeout)
    assert isinstance(timeout_at(1.0), asyncio.Timeout)
    assert deadline_clock(Runtime()) == asyncio.get_running_loop().time
    assert deadline_clock(FixedRuntime(start=5.0).runtime())() == 5.0


def test_a_clock_timeout_needs_a_runtime_that_can_wait_for_its_clock() -> None:
    """ClockTimeout on a runtime without sleep_until is refused, naming the function to use."""
    with pytest.raises(ConfigurationError, match="sleep_until"):
        ClockTimeout(1.0, Runtime())
