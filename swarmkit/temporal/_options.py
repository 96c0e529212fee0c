"""How model and tool calls run as Temporal activities: timeouts, retries, queue, local or not."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RetryPolicy

DEFAULT_TIMEOUT = timedelta(seconds=60)
"""How long one attempt of a model or tool call may take unless told otherwise."""


@dataclass(frozen=True, kw_only=True)
class ActivityOptions:
    """The Temporal options of one kind of call (model calls, or tool calls)."""

    start_to_close_timeout: timedelta = DEFAULT_TIMEOUT
    """How long one attempt may run before Temporal retries it."""
    schedule_to_close_timeout: timedelta | None = None
    """How long all attempts together may take; None means no overall cap."""
    heartbeat_timeout: timedelta | None = None
    """For long calls that heartbeat: how long a silent attempt counts as alive."""
    retry_policy: RetryPolicy | None = None
    """Temporal's retry policy: the only retry layer (swarmkit's own retries are off here)."""
    task_queue: str | None = None
    """Run the calls on another task queue (e.g. workers with GPU or network access)."""
    local: bool = False
    """Run as a local activity in the workflow's worker: fewer round trips, same retries."""


async def execute(
    name: str, argument: Any, options: ActivityOptions, *, result_type: type | None = dict
) -> Any:
    """Run activity ``name`` from inside a workflow as ``options`` say (local or not)."""
    common: dict[str, Any] = {
        "result_type": result_type,
        "start_to_close_timeout": options.start_to_close_timeout,
        "schedule_to_close_timeout": options.schedule_to_close_timeout,
        "retry_policy": options.retry_policy,
    }
    if options.local:
        return await workflow.execute_local_activity(name, argument, **common)
    # Heartbeats and another task queue belong to remote activities only.
    return await workflow.execute_activity(
        name,
        argument,
        **common,
        heartbeat_timeout=options.heartbeat_timeout,
        task_queue=options.task_queue,
    )
