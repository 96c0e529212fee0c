"""`swarmkit dbos worker|recover` and `swarmkit temporal worker`: the durable engines' worker
commands. Only the arguments live here; the work loads from the engine's own package (its
extra) once the arguments name it."""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable
from typing import Any

from swarmkit.cli._usage import TARGET_HELP

_Command = Callable[..., argparse.ArgumentParser]

SWARMS_HELP = (
    f"a swarm to serve, [NAME=]module:attribute (repeat for more; {TARGET_HELP}); "
    "its name defaults to the attribute"
)


def add_durable(commands: Any, command: _Command, journal_option: Callable[..., None]) -> None:
    """The `dbos` command (`worker`, `recover`) and the `temporal` command (`worker`)."""
    actions, worker = _engine_worker(
        commands,
        command,
        "dbos",
        "Run swarm sessions as DBOS workflows: a worker, or take over dead workers' sessions.",
        "Serve swarms' sessions from a DBOS system database until SIGTERM or Ctrl-C.",
        epilog="A restarted worker recovers the pending sessions of its own --executor-id; "
        "`swarmkit dbos recover` hands a dead worker's sessions to the live ones.",
    )
    _database(worker)
    journal_option(worker)
    worker.add_argument(
        "--executor-id", metavar="ID", help="this worker's stable id (default: local)"
    )
    worker.add_argument(
        "--stream-events",
        action="store_true",
        help="write each event of the sessions it starts to a stream SessionHandle.follow() "
        "reads (one database write per event)",
    )
    worker.add_argument(
        "--per-worker", type=int, metavar="N", help="sessions of a swarm run at once here"
    )
    worker.add_argument(
        "--total", type=int, metavar="N", help="sessions of a swarm run at once, all workers"
    )
    worker.add_argument(
        "--polling-interval",
        type=float,
        default=1.0,
        metavar="SECONDS",
        help="how often the queues are polled for new sessions (default: 1.0)",
    )
    _add_recover(actions, command)
    _add_temporal(commands, command, journal_option)


def _add_recover(actions: Any, command: _Command) -> None:
    recover = command(
        actions,
        "recover",
        "Hand the pending sessions of dead workers back to the queues, for live workers.",
        f"{__name__}:_dbos_recover",
        epilog="Never name a live worker: its running sessions would run twice. Sessions "
        "started by another application version are named and left alone (exit code 1).",
    )
    _swarms(recover)
    _database(recover)
    recover.add_argument(
        "--executor-id",
        action="append",
        required=True,
        metavar="ID",
        help="a dead worker's id (repeat for more)",
    )


def _add_temporal(commands: Any, command: _Command, journal_option: Callable[..., None]) -> None:
    _, worker = _engine_worker(
        commands,
        command,
        "temporal",
        "Run swarm sessions as Temporal workflows.",
        "Serve swarms' sessions from a Temporal task queue until SIGTERM or Ctrl-C.",
        epilog="The models a session calls are the swarms' own, by name; --models names a "
        "mapping (module:attribute) of name to model to use others. Every worker of a task "
        "queue must serve the same swarms.",
    )
    worker.add_argument(
        "--address", default="127.0.0.1:7233", help="the Temporal server (default: 127.0.0.1:7233)"
    )
    worker.add_argument("--namespace", default="default", help="default: default")
    worker.add_argument("--task-queue", default="swarms", help="default: swarms")
    worker.add_argument("--models", metavar="module:attribute", help="a mapping name -> Model")
    journal_option(worker)
    worker.add_argument(
        "--max-concurrent-activities",
        type=int,
        metavar="N",
        help="model and tool calls at once (local ones too with --local-activities)",
    )
    worker.add_argument(
        "--local-activities",
        action="store_true",
        help="run model and tool calls as local activities in the session's own worker: about "
        "a third of the server's writes per session; every worker of the task queue must "
        "agree, and sessions in flight must end before it changes",
    )
    worker.add_argument(
        "--max-concurrent-workflow-tasks", type=int, metavar="N", help="workflow tasks at once"
    )


def _engine_worker(
    commands: Any, command: _Command, engine: str, summary: str, serves: str, *, epilog: str
) -> tuple[Any, argparse.ArgumentParser]:
    """The `<engine>` command, its actions, and its `worker` action taking the swarms to serve."""
    parser = commands.add_parser(engine, help=summary, description=summary)
    actions = parser.add_subparsers(dest=f"{engine}_command", required=True, metavar="ACTION")
    worker = command(actions, "worker", serves, f"{__name__}:_{engine}_worker", epilog=epilog)
    _swarms(worker)
    return actions, worker


def _swarms(command: argparse.ArgumentParser) -> None:
    command.add_argument("target", nargs="*", metavar="module:attribute", help=SWARMS_HELP)
    command.add_argument(
        "--swarm",
        action="append",
        default=[],
        metavar="[NAME=]module:attribute",
        help="the same, as an option",
    )


def _database(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--db",
        required=True,
        metavar="URL",
        help="the system database: sqlite:///path or postgresql://...",
    )
    command.add_argument(
        "--application-version", metavar="VERSION", help="pin the version (default: from code)"
    )


def swarm_entries(args: argparse.Namespace) -> dict[str, str]:
    """The swarms a worker command was given: name to module:attribute, each named once."""
    from swarmkit.cli._usage import UsageError  # noqa: PLC0415 - light, kept beside its use

    given = [*args.target, *args.swarm]
    if not given:
        raise UsageError(
            "name the swarms to serve: module:attribute (or --swarm [NAME=]module:attribute)"
        )
    entries: dict[str, str] = {}
    for text in given:
        name, sep, target = text.partition("=")
        if not sep:
            name, target = text.rpartition(":")[2], text
        if name in entries and entries[name] != target:
            raise UsageError(
                f"two swarms are named {name!r}; name one of them: NAME=module:attribute"
            )
        entries[name] = target
    return entries


async def _dbos_worker(args: argparse.Namespace) -> int:
    code: int = await _extra("dbos", "worker_command")(args)
    return code


async def _dbos_recover(args: argparse.Namespace) -> int:
    code: int = await _extra("dbos", "recover_command")(args)
    return code


async def _temporal_worker(args: argparse.Namespace) -> int:
    code: int = await _extra("temporal", "worker_command")(args)
    return code


def engine_command(engine: str, function: str) -> Any:
    """The engine's command-side ``function`` (in its ``_worker`` module), or a usage error
    naming the extra to install."""
    return _extra(engine, function)


def _extra(engine: str, function: str) -> Any:
    """The engine's command, or a usage error naming the extra to install."""
    from swarmkit.cli._usage import UsageError  # noqa: PLC0415

    try:
        module = importlib.import_module(f"swarmkit.{engine}._worker")
    except ImportError as exc:
        if exc.name and exc.name.split(".")[0] in ("dbos", "temporalio"):
            raise UsageError(
                f"`swarmkit {engine}` needs the {engine} extra: pip install "
                f"'swarmkit-agents[{engine}]' ({exc.name} is not installed)"
            ) from exc
        raise
    return getattr(module, function)
