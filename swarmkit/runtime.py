"""Runtime: where a run gets ids, the time, sleeps and randomness, so an engine can supply them."""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass


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
    or agent's deadline, and a model attempt its own (given to the model as ``runtime=``).
    None (the default) sleeps for the difference, which is the same on a clock that moves by
    itself; a test's clock that moves only when told (``FixedRuntime``) waits here for the
    test to move it, where ``sleep`` would move it at once."""


DEFAULT_RUNTIME = Runtime()
"""The real ids, clock, sleep and randomness."""
