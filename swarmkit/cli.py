"""The `swarmkit` command: run a swarm, browse, replay and draw its journal, and the offline demo.

Exit codes: 0 when the command did its job (a run that stopped for any reason but an error),
1 when a run ended in an error or a replay diverged, 2 for a usage error (bad arguments, a
module, attribute, journal or session that is not there, a missing API key).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import inspect
import json
import logging
import os
import sys
from collections.abc import Callable, Coroutine, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import structlog

from swarmkit.console import LiveView, one_line, timeline
from swarmkit.demo import run_demo
from swarmkit.drawing import FORMATS, draw_session, draw_swarm
from swarmkit.exceptions import (
    ConfigurationError,
    JournalError,
    ReplayDivergenceError,
    SwarmkitError,
)
from swarmkit.journal import JournalRecord, SessionInfo, SQLiteJournal, export_jsonl
from swarmkit.models import Model, OpenAIModel
from swarmkit.swarm import Swarm

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2

DEFAULT_JOURNAL = Path(".swarmkit") / "journal.sqlite"
DEMO_JOURNAL = Path(".swarmkit") / "demo.sqlite"
DEFAULT_DEMO_MODEL = "gpt-4o-mini"
MISSING_KEY = "set OPENAI_API_KEY or pass --model with --base-url for a local server"

_Handler = Callable[[argparse.Namespace], Coroutine[Any, Any, int]]


class UsageError(Exception):
    """The command was called wrong; shown as one line on stderr, exit code 2."""


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `swarmkit` command; returns the exit code."""
    _quiet_logs()
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as stop:  # --help, or a usage error argparse has already printed
        return stop.code if isinstance(stop.code, int) else EXIT_USAGE
    handler: _Handler = args.handler
    try:
        return asyncio.run(handler(args))
    except BrokenPipeError:
        return _stdout_closed()
    except UsageError as exc:
        return _fail(str(exc), EXIT_USAGE)
    except (ConfigurationError, JournalError) as exc:
        return _fail(str(exc), EXIT_USAGE)
    except (SwarmkitError, OSError) as exc:
        return _fail(str(exc), EXIT_FAILED)
    except KeyboardInterrupt:
        return _fail("interrupted", 130)


def _quiet_logs() -> None:
    """Show the library's warnings on stderr and nothing else: stdout is the command's output."""
    renderer = structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())
    structlog.configure(
        processors=[structlog.processors.add_log_level, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )


def _stdout_closed() -> int:
    # The reader went away (`swarmkit sessions | head`): stop quietly, and point stdout at
    # devnull so the interpreter's final flush does not report the broken pipe again.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout is not a file (captured in tests)
        pass
    return EXIT_FAILED


def _fail(message: str, code: int) -> int:
    print(f"swarmkit: error: {message}", file=sys.stderr)
    return code


# -- arguments -------------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="swarmkit",
        description="Run multi-agent swarms, and browse, replay and draw their journals.",
        epilog="Exit codes: 0 done; 1 a run ended in an error or a replay diverged; "
        "2 usage error. Journal: --journal, else $SWARMKIT_JOURNAL, else "
        f"{DEFAULT_JOURNAL}.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_demo(commands)
    _add_run(commands)
    _add_sessions(commands)
    _add_show(commands)
    _add_replay(commands)
    _add_export(commands)
    _add_draw(commands)
    _add_ui(commands)
    return parser


def _command(
    commands: Any, name: str, summary: str, handler: _Handler, epilog: str | None = None
) -> argparse.ArgumentParser:
    command: argparse.ArgumentParser = commands.add_parser(
        name, help=summary, description=summary, epilog=epilog
    )
    command.set_defaults(handler=handler)
    return command


def _journal_option(command: argparse.ArgumentParser, default: Path = DEFAULT_JOURNAL) -> None:
    command.add_argument(
        "--journal",
        metavar="PATH",
        help=f"the SQLite journal (default: $SWARMKIT_JOURNAL, else {default})",
    )


def _add_demo(commands: Any) -> None:
    command = _command(
        commands,
        "demo",
        "Run the customer-support demo, journal it, then replay it with zero model calls.",
        _demo,
        epilog="Runs live when OPENAI_API_KEY is set (OPENAI_BASE_URL is honoured), otherwise "
        "on a deterministic offline stand-in model.",
    )
    command.add_argument("--journal", metavar="PATH", help=f"default: {DEMO_JOURNAL}")
    command.add_argument(
        "--model", metavar="NAME", help=f"the model of a live run (default: {DEFAULT_DEMO_MODEL})"
    )
    command.add_argument(
        "--offline", action="store_true", help="use the offline stand-in even with an API key"
    )


def _add_run(commands: Any) -> None:
    command = _command(
        commands,
        "run",
        "Run a swarm on a prompt, showing each step live, and journal the run.",
        _run,
        epilog="Exit code 0 for any clean stop (final_output, max_handoffs, max_turns, cycle, "
        "interrupted), 1 when the run ended in an error.",
    )
    command.add_argument(
        "target",
        metavar="module:attribute",
        help="a Swarm, or a function "
        "with no arguments that returns one (the current folder is importable)",
    )
    command.add_argument("prompt", help="the user's message")
    command.add_argument("--context", metavar="JSON", help="the run's context, a JSON object")
    _journal_option(command)
    command.add_argument("--model", metavar="NAME", help="run every agent on this OpenAI model")
    command.add_argument(
        "--base-url", metavar="URL", help="an OpenAI-compatible server for --model"
    )
    command.add_argument("--session-id", metavar="ID", help="the run's session id")


def _add_sessions(commands: Any) -> None:
    command = _command(
        commands, "sessions", "List the journal's sessions, newest first.", _sessions
    )
    _journal_option(command)


def _add_show(commands: Any) -> None:
    command = _command(
        commands,
        "show",
        "Show a session as a timeline: agents, rules, handoffs, tool calls, tokens, stop.",
        _show,
    )
    command.add_argument("session", metavar="SESSION", help="the session id")
    _journal_option(command)


def _add_replay(commands: Any) -> None:
    command = _command(
        commands,
        "replay",
        "Replay a session against a swarm's current code, with zero model calls.",
        _replay,
        epilog="Exit code 0 when the replay reproduces the session, 1 with a diff when the "
        "code now asks something the journal does not hold.",
    )
    command.add_argument("session", metavar="SESSION", help="the session id")
    command.add_argument(
        "--swarm",
        required=True,
        metavar="module:attribute",
        help="the swarm to replay the session against",
    )
    _journal_option(command)


def _add_export(commands: Any) -> None:
    command = _command(commands, "export", "Write a session to stdout as JSONL.", _export)
    command.add_argument("session", metavar="SESSION", help="the session id")
    command.add_argument("--format", choices=["jsonl"], default="jsonl", help="default: jsonl")
    _journal_option(command)


def _add_draw(commands: Any) -> None:
    command = _command(
        commands,
        "draw",
        "Draw a swarm (rule edges dashed, LLM handoffs solid) or the path a session took.",
        _draw,
    )
    command.add_argument("target", nargs="?", metavar="module:attribute", help="the swarm")
    command.add_argument("--session", metavar="SESSION", help="draw this session instead")
    command.add_argument("--format", choices=FORMATS, default="mermaid", help="default: mermaid")
    _journal_option(command)


def _add_ui(commands: Any) -> None:
    command = _command(
        commands,
        "ui",
        "Browse the journal's sessions, handoffs and replays in a local web page.",
        _ui,
        epilog="Listens on 127.0.0.1 only; the printed URL carries a token every request needs.",
    )
    _journal_option(command)
    command.add_argument(
        "--swarm", metavar="module:attribute", help="the swarm, to explain rules and replay"
    )
    command.add_argument("--port", type=int, default=8765, help="default: 8765; 0 picks one")
    command.add_argument(
        "--allow-decisions",
        action="store_true",
        help="let the page approve, reject or edit paused sessions (needs --swarm)",
    )


# -- commands --------------------------------------------------------------------------------


async def _demo(args: argparse.Namespace) -> int:
    model = None if args.offline else _demo_model(args.model)
    path = Path(args.journal) if args.journal else DEMO_JOURNAL
    return await run_demo(sys.stdout, journal_path=path, model=model)


def _demo_model(name: str | None) -> Model | None:
    if os.environ.get("OPENAI_API_KEY"):
        return OpenAIModel(name or DEFAULT_DEMO_MODEL)
    if name and os.environ.get("OPENAI_BASE_URL"):
        return OpenAIModel(name, api_key=_LOCAL_KEY)
    if name:
        raise UsageError(f"--model runs the demo live: {MISSING_KEY} (or drop --model)")
    return None


# Local OpenAI-compatible servers ignore the key, but the client refuses to start without one.
_LOCAL_KEY = "no-key-needed"


async def _run(args: argparse.Namespace) -> int:
    context = _context(args.context)
    swarm = _with_model(load_swarm(args.target), args.model, args.base_url)
    path = _journal_path(args.journal)
    path.parent.mkdir(parents=True, exist_ok=True)
    out = sys.stdout
    out.write(f"swarmkit run {args.target} (model: {_model_name(swarm)}; journal: {path})\n")
    with SQLiteJournal(path) as journal:
        events = swarm.stream(
            args.prompt, context=context, session_id=args.session_id, journal=journal
        )
        result = await LiveView(out, swarm).follow(events)
    return EXIT_FAILED if result.stop_reason == "error" else EXIT_OK


async def _sessions(args: argparse.Namespace) -> int:
    path = _journal_path(args.journal)
    with _open_journal(path) as journal:
        infos = await journal.sessions()
    if not infos:
        print(f"no sessions in {path}")
        return EXIT_OK
    header = ("SESSION", "STATUS", "STOP", "RECORDS", "STARTED", "PROMPT")
    print(_table([header, *(_session_row(info) for info in infos)]))
    return EXIT_OK


async def _show(args: argparse.Namespace) -> int:
    records = await _read_session(args.journal, args.session)
    print("\n".join(timeline(records)))
    return EXIT_OK


async def _replay(args: argparse.Namespace) -> int:
    swarm = load_swarm(args.swarm)
    await _read_session(args.journal, args.session)  # a missing one is a usage error
    with _open_journal(_journal_path(args.journal)) as journal:
        try:
            result = await swarm.replay(args.session, journal)
        except ReplayDivergenceError as exc:
            return _fail(f"replay diverged: {exc}", EXIT_FAILED)
    trail = " -> ".join(result.trail)
    print(
        f"replayed {args.session}: reproduced {result.stop_reason} ({result.final_agent}), "
        f"trail {trail}, {len(result.handoffs)} handoffs, {result.turns} model answers "
        "from the journal, 0 model calls"
    )
    return EXIT_OK


async def _export(args: argparse.Namespace) -> int:
    records = await _read_session(args.journal, args.session)
    sys.stdout.write(export_jsonl(records))
    return EXIT_OK


async def _draw(args: argparse.Namespace) -> int:
    if (args.target is None) == (args.session is None):
        raise UsageError("draw takes a swarm (module:attribute) or --session SESSION, one of them")
    if args.session is not None:
        text = draw_session(await _read_session(args.journal, args.session), args.format)
    else:
        text = draw_swarm(load_swarm(args.target), args.format)
    sys.stdout.write(text)
    return EXIT_OK


async def _ui(args: argparse.Namespace) -> int:
    from swarmkit.ui import Viewer, ViewerServer  # noqa: PLC0415 - loaded only when asked for

    path = _journal_path(args.journal)
    swarm = load_swarm(args.swarm) if args.swarm else None
    if args.allow_decisions and swarm is None:
        raise UsageError("--allow-decisions needs --swarm module:attribute to resume with")
    with _open_journal(path) as journal, SQLiteJournal(path) as listing:
        viewer = Viewer(journal, swarm=swarm, allow_decisions=args.allow_decisions, listing=listing)
        server = ViewerServer(viewer, port=args.port)
        server.start()
        print(f"swarmkit ui: {path} at {server.url}  (Ctrl-C stops)", flush=True)
        try:
            await asyncio.Event().wait()  # serve until Ctrl-C cancels this
        finally:
            server.close()
    return EXIT_OK


# -- loading a swarm -------------------------------------------------------------------------


def load_swarm(target: str) -> Swarm:
    """The Swarm that ``module:attribute`` names (or that the function it names returns)."""
    module_name, _, attribute = target.partition(":")
    if not module_name or not attribute:
        raise UsageError(f"{target!r} is not module:attribute, e.g. myapp.agents:swarm")
    module = _import(module_name)
    if not hasattr(module, attribute):
        found = sorted(name for name, value in vars(module).items() if isinstance(value, Swarm))
        hint = f"; its Swarms: {', '.join(found)}" if found else ""
        raise UsageError(f"module {module_name!r} has no attribute {attribute!r}{hint}")
    value = getattr(module, attribute)
    if not isinstance(value, Swarm) and _is_factory(value):
        value = value()
    if not isinstance(value, Swarm):
        raise UsageError(
            f"{target} is {type(value).__name__}, not a Swarm (or a function with no "
            "arguments that returns one)"
        )
    return value


def _import(module_name: str) -> Any:
    # A console script does not put the current folder on sys.path; `swarmkit run app:swarm`
    # should find app.py where it is run, as `python -m` would.
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and (module_name + ".").startswith(exc.name + "."):
            raise UsageError(
                f"no module named {module_name!r} in {cwd} or on sys.path; run swarmkit from "
                "the folder that contains it"
            ) from exc
        raise UsageError(f"importing {module_name!r} failed: {exc}") from exc
    except ImportError as exc:
        raise UsageError(f"importing {module_name!r} failed: {exc}") from exc


def _is_factory(value: object) -> bool:
    if isinstance(value, type) or not callable(value):
        return False
    try:
        signature = inspect.signature(value)
    except (TypeError, ValueError):
        return False
    return all(
        p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        for p in signature.parameters.values()
    )


def _with_model(swarm: Swarm, name: str | None, base_url: str | None) -> Swarm:
    if name is None:
        if base_url is not None:
            raise UsageError("--base-url needs --model NAME, the model the server serves")
        return swarm
    has_key = bool(os.environ.get("OPENAI_API_KEY"))
    if not has_key and not (base_url or os.environ.get("OPENAI_BASE_URL")):
        raise UsageError(MISSING_KEY)
    api_key = None if has_key else _LOCAL_KEY
    return swarm.with_model(OpenAIModel(name, base_url=base_url, api_key=api_key))


def _model_name(swarm: Swarm) -> str:
    model = swarm.plans[swarm.entry_agent].model
    return str(getattr(model, "name", type(model).__name__))


def _context(text: str | None) -> dict[str, Any]:
    if text is None:
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"--context is not valid JSON ({exc.msg} at column {exc.colno}); pass an object "
            """such as '{"category": "billing"}'"""
        ) from exc
    if not isinstance(value, dict):
        raise UsageError(f"--context must be a JSON object, got {type(value).__name__}")
    return value


# -- journals --------------------------------------------------------------------------------


def _journal_path(option: str | None) -> Path:
    return Path(option or os.environ.get("SWARMKIT_JOURNAL") or DEFAULT_JOURNAL)


def _open_journal(path: Path) -> SQLiteJournal:
    # Opening a missing file would create an empty journal; reading one is always a mistake.
    if not path.is_file():
        raise UsageError(
            f"no journal at {path}; pass --journal PATH or set SWARMKIT_JOURNAL "
            "(runs write to it with `swarmkit run`)"
        )
    return SQLiteJournal(path)


async def _read_session(option: str | None, session_id: str) -> tuple[JournalRecord, ...]:
    path = _journal_path(option)
    with _open_journal(path) as journal:
        try:
            return await journal.read(session_id)
        except JournalError as exc:
            raise UsageError(f"{exc} (swarmkit sessions --journal {path})") from exc


def _session_row(info: SessionInfo) -> tuple[str, ...]:
    started = datetime.fromtimestamp(info.started_at).strftime("%Y-%m-%d %H:%M:%S")
    return (
        info.session_id,
        info.status,
        info.stop_reason or "-",
        str(info.records),
        started,
        one_line(info.prompt or "", limit=48),
    )


def _table(rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in rows
    )
