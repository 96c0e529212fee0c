"""The worker commands: ``swarmkit dbos worker`` and ``swarmkit dbos recover`` (and the same
worker as ``python -m swarmkit.dbos worker``)."""

from __future__ import annotations

import argparse
import asyncio
import signal
from collections.abc import Sequence

from swarmkit.cli import load_swarm, main, swarm_entries
from swarmkit.dbos._app import DurableSwarms, QueueLimits
from swarmkit.dbos._client import SessionClient
from swarmkit.journal import open_journal
from swarmkit.swarm import Swarm


def module_main(argv: Sequence[str] | None = None) -> int:
    """``python -m swarmkit.dbos ACTION ...``: the same as ``swarmkit dbos ACTION ...``."""
    import sys  # noqa: PLC0415

    return main(["dbos", *(sys.argv[1:] if argv is None else argv)])


async def worker_command(args: argparse.Namespace) -> int:
    """Run a worker until SIGTERM (exit 0) or Ctrl-C (130)."""
    app = DurableSwarms(
        _swarms(args),
        database_url=args.db,
        journal=open_journal(args.journal) if args.journal else None,
        executor_id=args.executor_id,
        application_version=args.application_version,
        limits=QueueLimits(per_worker=args.per_worker, total=args.total),
        polling_interval=args.polling_interval,
        stream_events=args.stream_events,
    )
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    async with app:
        streams = ", streaming events" if app.stream_events else ""
        print(
            f"swarmkit dbos worker {app.executor_id}: serving {', '.join(sorted(app.swarms))} "
            f"(application version {app.application_version}{streams})",
            flush=True,
        )
        await stop.wait()
    return 0


async def recover_command(args: argparse.Namespace) -> int:
    """Hand dead workers' pending sessions back to the queues; print their ids."""
    client = SessionClient(
        _swarms(args), database_url=args.db, application_version=args.application_version
    )
    try:
        taken = await client.recover_sessions(list(args.executor_id))
    finally:
        client.close()
    print(f"recovered {len(taken)} session(s) of {', '.join(args.executor_id)}")
    for session_id in taken:
        print(session_id)
    return 0


def _swarms(args: argparse.Namespace) -> dict[str, Swarm]:
    return {name: load_swarm(target) for name, target in swarm_entries(args).items()}
