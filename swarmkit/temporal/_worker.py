"""``swarmkit temporal worker``: a Temporal worker serving swarms from one task queue."""

from __future__ import annotations

import argparse
import asyncio
import importlib
import signal
from collections.abc import Mapping

from temporalio.client import Client, WorkflowUpdateFailedError
from temporalio.service import RPCError
from temporalio.worker import Worker

from swarmkit.cli import UsageError, load_swarm, swarm_entries
from swarmkit.exceptions import PeopleQueueError
from swarmkit.interrupts import Decision
from swarmkit.journal import open_journal
from swarmkit.models import Model
from swarmkit.swarm import Swarm
from swarmkit.temporal._client import decide, session_handle
from swarmkit.temporal._options import ActivityOptions
from swarmkit.temporal._plugin import SwarmPlugin
from swarmkit.temporal._registry import model_name


async def worker_command(args: argparse.Namespace) -> int:
    """Serve the swarms until SIGTERM (exit 0) or Ctrl-C (130)."""
    swarms = {name: load_swarm(target) for name, target in swarm_entries(args).items()}
    models = _models(args.models) if args.models else swarm_models(swarms.values())
    calls = ActivityOptions(local=args.local_activities)
    plugin = SwarmPlugin(
        swarms=dict(swarms),
        models=models,
        journal=open_journal(args.journal) if args.journal else None,
        model_options=calls,
        tool_options=calls,
    )
    client = await Client.connect(args.address, namespace=args.namespace, plugins=[plugin])
    worker = Worker(
        client,
        task_queue=args.task_queue,
        max_concurrent_activities=args.max_concurrent_activities,
        max_concurrent_local_activities=(
            args.max_concurrent_activities if args.local_activities else None
        ),
        max_concurrent_workflow_tasks=args.max_concurrent_workflow_tasks,
    )
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    async with worker:
        print(
            f"swarmkit temporal worker: serving {', '.join(sorted(swarms))} on task queue "
            f"{args.task_queue} at {args.address}",
            flush=True,
        )
        await stop.wait()
    return 0


async def decide_command(
    session_id: str, decision: Decision, *, address: str, namespace: str
) -> None:
    """Send a decision (a person's hand-back) to the session's workflow, for the command; a
    refusal is a PeopleQueueError saying why."""
    try:
        client = await Client.connect(address, namespace=namespace)
    except RuntimeError as exc:  # the SDK's "Failed client connect"
        raise PeopleQueueError(
            f"cannot reach Temporal at {address} to hand back session {session_id!r}: {exc}",
            session_id=session_id,
        ) from exc
    try:
        await decide(session_handle(client, session_id), decision)
    except (WorkflowUpdateFailedError, RPCError) as exc:
        cause = exc.cause if isinstance(exc, WorkflowUpdateFailedError) else exc
        raise PeopleQueueError(
            f"the workflow of session {session_id!r} at {address} refused the hand-back: {cause}",
            session_id=session_id,
        ) from exc


def swarm_models(swarms: object) -> dict[str, Model]:
    """The swarms' own models by name: what their sessions' model activities call."""
    found: dict[str, Model] = {}
    for swarm in swarms:  # type: ignore[attr-defined]
        assert isinstance(swarm, Swarm)
        for agent, plan in swarm.plans.items():
            name = model_name(plan.model)
            if name is None:
                raise UsageError(
                    f"agent {agent!r}'s model ({type(plan.model).__name__}) has no name to "
                    "register it by; pass --models module:attribute, a mapping name -> Model"
                )
            found.setdefault(name, plan.model)
    return found


def _models(target: str) -> dict[str, Model]:
    module_name, _, attribute = target.rpartition(":")
    if not module_name or not attribute:
        raise UsageError(f"--models {target!r} is not module:attribute, e.g. myapp.models:MODELS")
    try:
        value = getattr(importlib.import_module(module_name), attribute, None)
    except ImportError as exc:
        raise UsageError(f"--models: importing {module_name!r} failed: {exc}") from exc
    if not isinstance(value, Mapping):
        raise UsageError(
            f"--models {target} is {type(value).__name__}, not a mapping name -> Model"
        )
    return {str(name): model for name, model in value.items()}
