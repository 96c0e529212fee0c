"""The worker command: ``python -m swarmkit.dbos worker --swarm NAME=module:attribute --db URL``."""

from __future__ import annotations

import argparse
import asyncio
import importlib
import signal
import sys
from collections.abc import Sequence

from swarmkit.dbos._app import DurableSwarms, QueueLimits
from swarmkit.exceptions import ConfigurationError, SwarmkitError
from swarmkit.factory import is_swarm_factory
from swarmkit.journal import open_journal
from swarmkit.swarm import Swarm


def main(argv: Sequence[str] | None = None) -> int:
    """Run a worker until SIGTERM or Ctrl-C; 2 on a usage or configuration mistake."""
    args = _parser().parse_args(argv)
    try:
        app = DurableSwarms(
            {name: load_swarm(target) for name, target in args.swarm},
            database_url=args.db,
            journal=open_journal(args.journal) if args.journal else None,
            executor_id=args.executor_id,
            application_version=args.application_version,
            limits=QueueLimits(per_worker=args.per_worker, total=args.total),
        )
        asyncio.run(_serve(app))
    except (SwarmkitError, ImportError) as exc:
        print(f"swarmkit dbos worker: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return 0


async def _serve(app: DurableSwarms) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    async with app:
        print(
            f"swarmkit dbos worker {app.executor_id}: serving {', '.join(sorted(app.swarms))} "
            f"(application version {app.application_version})",
            flush=True,
        )
        await stop.wait()


def load_swarm(target: str) -> Swarm:
    """The Swarm ``module:attribute`` names (or the swarm factory it names returns)."""
    module_name, _, attribute = target.partition(":")
    if not module_name or not attribute:
        raise ConfigurationError(f"{target!r} is not module:attribute, e.g. myapp.agents:swarm")
    value = getattr(importlib.import_module(module_name), attribute, None)
    if is_swarm_factory(value):
        value = value()  # type: ignore[misc]
    if not isinstance(value, Swarm):
        raise ConfigurationError(f"{target} is {type(value).__name__}, not a Swarm")
    return value


def _swarm_entry(text: str) -> tuple[str, str]:
    name, sep, target = text.partition("=")
    if not sep:  # module:attribute alone: the swarm's name is its attribute
        return text.rpartition(":")[2], text
    return name, target


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m swarmkit.dbos")
    commands = parser.add_subparsers(dest="command", required=True)
    worker = commands.add_parser("worker", help="run swarm sessions from the system database")
    worker.add_argument(
        "--swarm",
        action="append",
        type=_swarm_entry,
        required=True,
        metavar="[NAME=]MODULE:ATTRIBUTE",
        help="a swarm to serve (repeat for more); its name defaults to the attribute",
    )
    worker.add_argument("--db", required=True, help="sqlite:///path or postgresql://... URL")
    worker.add_argument("--journal", help="mirror sessions to this SQLite file or Postgres URL")
    worker.add_argument("--executor-id", help="this worker's stable id (default: local)")
    worker.add_argument("--application-version", help="pin the version (default: from code)")
    worker.add_argument("--per-worker", type=int, help="sessions of a swarm run at once here")
    worker.add_argument("--total", type=int, help="sessions of a swarm run at once, all workers")
    return parser
