"""The `swarmkit` command: run a swarm, browse, replay and draw its journal, and the offline demo.

Exit codes: 0 when the command did its job (a run that stopped for any reason but an error),
1 when a run ended in an error or a replay diverged, 2 for a usage error (bad arguments, a
module, attribute, journal or session that is not there, a missing API key).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.metadata
import json
import logging
import math
import os
import shutil
import sys
import time
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import structlog

from swarmkit._run._conversation import turn_sessions
from swarmkit.cli._journal_file import (
    DEFAULT_JOURNAL,
    journal_path,
    open_for_reading,
    open_for_writing,
)
from swarmkit.cli._target import TARGET_HELP, UsageError, load_swarm
from swarmkit.console import LiveView, one_line, plural, result_lines, timeline
from swarmkit.demo import run_demo
from swarmkit.drawing import FORMATS, draw_session, draw_swarm
from swarmkit.exceptions import (
    ConfigurationError,
    JournalError,
    ReplayDivergenceError,
    SessionNotFoundError,
    SwarmkitError,
)
from swarmkit.interrupts import Decision, approve, edit, reject
from swarmkit.journal import (
    JournalRecord,
    SessionInfo,
    SQLiteJournal,
    env_cipher,
    export_jsonl,
    import_jsonl,
)
from swarmkit.journal._open import journal_label, mask_locations
from swarmkit.models import Model, OpenAIModel
from swarmkit.result import RunResult
from swarmkit.swarm import Swarm

__all__ = ["DEFAULT_JOURNAL", "MISSING_KEY", "UsageError", "load_swarm", "main"]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

DEMO_JOURNAL = Path(".swarmkit") / "demo.sqlite"
DEFAULT_DEMO_MODEL = "gpt-4o-mini"
MISSING_KEY = "set OPENAI_API_KEY or pass --model with --base-url for a local server"

_Handler = Callable[[argparse.Namespace], Coroutine[Any, Any, int]]


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `swarmkit` command; returns the exit code."""
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as stop:  # --help, --version, or a usage error argparse has printed
        return stop.code if isinstance(stop.code, int) else EXIT_USAGE
    _configure_logs(verbose=args.verbose)
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
    except RunStopped as exc:
        print(f"swarmkit: {mask_locations(str(exc))}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except KeyboardInterrupt:
        return _fail("interrupted", EXIT_INTERRUPTED)


class RunStopped(Exception):
    """A run was stopped by Ctrl-C after it was journaled; the message says how to resume."""


def _configure_logs(*, verbose: bool) -> None:
    """Library logs go to stderr only with --verbose: otherwise they would interleave with the
    live view of the run on a terminal. stdout is the command's output either way."""
    renderer = structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())
    processors: list[Any] = [structlog.processors.add_log_level, renderer]
    structlog.configure(
        processors=processors if verbose else [_drop],
        wrapper_class=structlog.make_filtering_bound_logger(
            logging.INFO if verbose else logging.CRITICAL
        ),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )


def _drop(logger: object, method: str, event: Any) -> Any:
    raise structlog.DropEvent


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
    print(f"swarmkit: error: {mask_locations(message)}", file=sys.stderr)
    return code


def version() -> str:
    """The installed version of the distribution (swarmkit-agents)."""
    try:
        return importlib.metadata.version("swarmkit-agents")
    except importlib.metadata.PackageNotFoundError:
        from swarmkit import __version__  # noqa: PLC0415 - a source tree that is not installed

        return __version__


def program() -> str:
    """How to call this command again from the current folder, in a shell where the venv is
    not active: ``swarmkit`` when that is what PATH finds, else the script's path."""
    script = Path(sys.argv[0])
    if script.name != "swarmkit":
        return "swarmkit"
    found = shutil.which("swarmkit")
    if found and Path(found).resolve() == script.resolve():
        return "swarmkit"
    relative = os.path.relpath(script.absolute())
    return script.as_posix() if relative.startswith("..") else relative


# -- arguments -------------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="swarmkit",
        description="Run multi-agent swarms, and browse, replay and draw their journals.",
        epilog="Exit codes: 0 done; 1 a run ended in an error or a replay diverged; "
        "2 usage error; 130 stopped by Ctrl-C (the run is journaled: resume it). Journal: "
        f"--journal, else $SWARMKIT_JOURNAL, else {DEFAULT_JOURNAL}.",
    )
    parser.add_argument("-V", "--version", action="version", version=f"swarmkit {version()}")
    parser.set_defaults(verbose=False)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_demo(commands)
    _add_run(commands)
    _add_resume(commands)
    _add_sessions(commands)
    _add_show(commands)
    _add_replay(commands)
    _add_export(commands)
    _add_import(commands)
    _add_draw(commands)
    _add_check(commands)
    _add_ui(commands)
    return parser


def _command(
    commands: Any, name: str, summary: str, handler: _Handler, epilog: str | None = None
) -> argparse.ArgumentParser:
    command: argparse.ArgumentParser = commands.add_parser(
        name, help=summary, description=summary, epilog=epilog
    )
    command.set_defaults(handler=handler)
    command.add_argument(
        "-v", "--verbose", action="store_true", help="also show the library's logs on stderr"
    )
    return command


def _journal_option(command: argparse.ArgumentParser, default: Path = DEFAULT_JOURNAL) -> None:
    command.add_argument(
        "--journal",
        metavar="PATH_OR_URL",
        help=f"an SQLite file or a postgresql:// URL (default: $SWARMKIT_JOURNAL, else {default})",
    )


def _swarm_target(command: argparse.ArgumentParser, *, flag: bool, help_: str) -> None:
    names = ["--swarm"] if flag else ["target"]
    extra: dict[str, Any] = {"required": True} if flag else {}
    command.add_argument(
        *names, metavar="module:attribute", help=f"{help_}: {TARGET_HELP}", **extra
    )


def _add_demo(commands: Any) -> None:
    command = _command(
        commands,
        "demo",
        "Run the customer-support demo, journal it, then replay it with zero model calls.",
        _demo,
        epilog="Runs live when OPENAI_API_KEY is set (OPENAI_BASE_URL is honoured), otherwise "
        "on a deterministic offline stand-in model. Exit code 1 when a run failed (a wrong "
        "key, an unreachable server) or a replay differed.",
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
        "interrupted), 1 when the run ended in an error, 130 on Ctrl-C. A run paused for a "
        "human, or stopped by Ctrl-C, is continued with `swarmkit resume`.",
    )
    _swarm_target(command, flag=False, help_="the swarm")
    command.add_argument("prompt", help="the user's message")
    command.add_argument("--context", metavar="JSON", help="the run's context, a JSON object")
    _journal_option(command)
    command.add_argument("--model", metavar="NAME", help="run every agent on this OpenAI model")
    command.add_argument(
        "--base-url", metavar="URL", help="an OpenAI-compatible server for --model (http/https)"
    )
    command.add_argument("--session-id", metavar="ID", help="the run's session id")
    command.add_argument(
        "--no-check", action="store_true", help="skip the check of the swarm before it runs"
    )


def _add_resume(commands: Any) -> None:
    command = _command(
        commands,
        "resume",
        "Continue a journaled session: one paused for a human, stopped by Ctrl-C, or failed.",
        _resume,
        epilog="A session waiting for a human needs one of --approve, --reject REASON or "
        "--edit JSON; any other resumes without. Journaled steps replay with no model "
        "calls, then the run goes on live.",
    )
    command.add_argument("session", metavar="SESSION", help="the session id")
    _swarm_target(command, flag=True, help_="the swarm the session ran on")
    decision = command.add_mutually_exclusive_group()
    decision.add_argument("--approve", action="store_true", help="approve the pending step")
    decision.add_argument("--reject", metavar="REASON", help="reject it, telling the agent why")
    decision.add_argument(
        "--edit", metavar="JSON", help="approve it with this payload or these arguments"
    )
    _journal_option(command)


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
    _swarm_target(command, flag=True, help_="the swarm to replay the session against")
    _journal_option(command)


def _add_export(commands: Any) -> None:
    command = _command(commands, "export", "Write a session to stdout as JSONL.", _export)
    command.add_argument("session", metavar="SESSION", help="the session id")
    command.add_argument("--format", choices=["jsonl"], default="jsonl", help="default: jsonl")
    _journal_option(command)


def _add_import(commands: Any) -> None:
    command = _command(
        commands,
        "import",
        "Add a session exported as JSONL (a file, or - for stdin) to the journal.",
        _import_session,
        epilog="Move a session between stores: swarmkit export S --journal a.sqlite | "
        "swarmkit import - --journal postgresql://...",
    )
    command.add_argument("file", metavar="FILE", help="the JSONL export, or - for stdin")
    _journal_option(command)


def _add_draw(commands: Any) -> None:
    command = _command(
        commands,
        "draw",
        "Draw a swarm (rule edges dashed, LLM handoffs solid) or the path a session took.",
        _draw,
    )
    command.add_argument(
        "target", nargs="?", metavar="module:attribute", help=f"the swarm: {TARGET_HELP}"
    )
    command.add_argument("--session", metavar="SESSION", help="draw this session instead")
    command.add_argument("--format", choices=FORMATS, default="mermaid", help="default: mermaid")
    _journal_option(command)


def _add_check(commands: Any) -> None:
    command = _command(
        commands,
        "check",
        "Check a swarm before it runs: unreachable agents, rules that never fire, forced rule "
        "cycles, undeclared paths, comparisons that never hold, offers never made.",
        _check,
        epilog="Exit code 1 when any finding is an error, 0 otherwise.",
    )
    command.add_argument("target", metavar="module:attribute", help="the swarm")
    command.add_argument("--json", action="store_true", help="print the findings as JSON")


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


async def _check(args: argparse.Namespace) -> int:
    from swarmkit.check._report import has_errors, render_json, render_text  # noqa: PLC0415

    findings = load_swarm(args.target).check()
    sys.stdout.write(render_json(findings) if args.json else render_text(findings))
    return EXIT_FAILED if has_errors(findings) else EXIT_OK


def _warn_findings(swarm: Swarm) -> None:
    """``swarmkit run`` shows the check's findings on stderr and runs anyway."""
    from swarmkit.check._report import render_text  # noqa: PLC0415

    findings = swarm.check()
    if findings:
        sys.stderr.write(render_text(findings))


async def _demo(args: argparse.Namespace) -> int:
    model = None if args.offline else _demo_model(args.model)
    path = journal_path(args.journal) if args.journal else DEMO_JOURNAL
    with open_for_writing(path):
        pass  # a bad path is a usage error before anything runs
    code = await run_demo(sys.stdout, journal_path=path, model=model, program=program())
    if code != EXIT_OK:
        return _fail("the demo did not complete: a run failed or its replay differed", code)
    return code


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
    _check_base_url(args.base_url)
    context = _context(args.context)
    swarm = _with_model(load_swarm(args.target), args.model, args.base_url)
    if not args.no_check:
        _warn_findings(swarm)
    path = journal_path(args.journal)
    out = sys.stdout
    with open_for_writing(path) as journal:
        where = journal_label(path)
        out.write(f"swarmkit run {args.target} (model: {_model_name(swarm)}; journal: {where})\n")
        view = LiveView(out, swarm)
        events = swarm.stream(
            args.prompt, context=context, session_id=args.session_id, journal=journal
        )
        try:
            result = await view.follow(events)
        except (asyncio.CancelledError, KeyboardInterrupt) as stop:
            if view.session_id is None:
                raise
            resume = (
                f"{program()} resume {view.session_id} --swarm {args.target} "
                f"--journal {journal_label(path)}"
            )
            message = f"stopped by Ctrl-C; the run is journaled; continue it: {resume}"
            raise RunStopped(message) from stop
    _say_how_to_continue(result, args.target, path)
    return EXIT_FAILED if result.stop_reason == "error" else EXIT_OK


async def _resume(args: argparse.Namespace) -> int:
    decision = _decision(args)
    swarm = load_swarm(args.swarm)
    path = journal_path(args.journal)
    records = await _read_session(args.journal, args.session)
    _check_decision(records, decision, args.session)
    with open_for_writing(path) as journal:
        print(f"swarmkit resume {args.session} (journal: {journal_label(path)})")
        result = await swarm.resume(args.session, journal, decision=decision)
    print("\n".join(result_lines(result)))
    _say_how_to_continue(result, args.swarm, path)
    return EXIT_FAILED if result.stop_reason == "error" else EXIT_OK


async def _sessions(args: argparse.Namespace) -> int:
    path = journal_path(args.journal)
    with open_for_reading(path) as journal:
        infos = await journal.sessions()
    if not infos:
        print(f"no sessions in {journal_label(path)}")
        return EXIT_OK
    header = ("SESSION", "STATUS", "STOP", "RECORDS", "STARTED", "PROMPT")
    started = _local_times()
    print(_table([header, *(_session_row(info, started) for info in infos)]))
    return EXIT_OK


async def _show(args: argparse.Namespace) -> int:
    records = await _read_session(args.journal, args.session)
    print("\n".join(timeline(records)))
    # A conversation's later turns are sessions of their own: show them after the first.
    with open_for_reading(journal_path(args.journal)) as journal:
        turns = await turn_sessions(journal, args.session)
        for number, session_id in enumerate(turns[1:], start=2):
            print(f"\n== turn {number} ({session_id})")
            print("\n".join(timeline(await journal.read(session_id))))
    return EXIT_OK


async def _replay(args: argparse.Namespace) -> int:
    swarm = load_swarm(args.swarm)
    await _read_session(args.journal, args.session)  # a missing one is a usage error
    with open_for_reading(journal_path(args.journal)) as journal:
        try:
            result = await swarm.replay(args.session, journal)
        except ReplayDivergenceError as exc:
            return _fail(f"replay diverged: {exc}", EXIT_FAILED)
    trail = " -> ".join(result.trail)
    print(
        f"replayed {args.session}: reproduced {result.stop_reason} ({result.final_agent}), "
        f"trail {trail}, {plural(len(result.handoffs), 'handoff')}, "
        f"{plural(result.turns, 'model answer')} from the journal, 0 model calls"
    )
    return EXIT_OK


async def _export(args: argparse.Namespace) -> int:
    records = await _read_session(args.journal, args.session)
    sys.stdout.write(export_jsonl(records))
    return EXIT_OK


async def _import_session(args: argparse.Namespace) -> int:
    text = sys.stdin.read() if args.file == "-" else _read_text(Path(args.file))
    records = import_jsonl(text)
    session_id = records[0].session_id
    path = journal_path(args.journal)
    with open_for_writing(path) as journal:
        if await journal.next_seq(session_id):
            raise UsageError(
                f"session {session_id!r} is already in {journal_label(path)}; delete it there first"
            )
        await journal.append(records)  # one step: the whole session or nothing
    print(f"imported {session_id} ({plural(len(records), 'record')}) into {journal_label(path)}")
    return EXIT_OK


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {exc}") from exc


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

    path = journal_path(args.journal)
    swarm = load_swarm(args.swarm) if args.swarm else None
    if args.allow_decisions and swarm is None:
        raise UsageError("--allow-decisions needs --swarm module:attribute to resume with")
    open_for_reading(path).close()  # a missing or foreign file is refused untouched
    if isinstance(path, str):  # Postgres: one pool serves pages, listing and decisions
        writable = listing_journal = open_for_writing(path)
    else:
        cipher = env_cipher()
        writable = SQLiteJournal(path, read_only=not args.allow_decisions, cipher=cipher)
        listing_journal = SQLiteJournal(path, read_only=True, cipher=cipher)
    with writable as journal, listing_journal as listing:
        viewer = Viewer(journal, swarm=swarm, allow_decisions=args.allow_decisions, listing=listing)
        server = ViewerServer(viewer, port=args.port)
        server.start()
        print(f"swarmkit ui: {journal_label(path)} at {server.url}  (Ctrl-C stops)", flush=True)
        try:
            await asyncio.Event().wait()  # serve until Ctrl-C cancels this
        finally:
            server.close()
    return EXIT_OK


# -- pausing and resuming --------------------------------------------------------------------


def _say_how_to_continue(result: RunResult, target: str, path: Path | str) -> None:
    if result.stop_reason != "interrupted":
        return
    where = journal_label(path)
    resume = f"{program()} resume {result.session_id} --swarm {target} --journal {where}"
    print(f"  next:   {resume} --approve   (or --reject REASON, or --edit JSON)")


def _decision(args: argparse.Namespace) -> Decision | None:
    if args.approve:
        return approve()
    if args.reject is not None:
        return reject(args.reject)
    if args.edit is not None:
        return edit(payload=_json_object("--edit", args.edit))
    return None


def _check_decision(
    records: Sequence[JournalRecord], decision: Decision | None, session_id: str
) -> None:
    last = records[-1]
    finished = last.kind == "run_finished"
    waiting = (
        finished
        and last.data.get("stop_reason") == "interrupted"
        and not last.data.get("cancelled")
    )
    if waiting and decision is None:
        raise UsageError(
            f"session {session_id!r} is waiting for a human decision: "
            "pass --approve, --reject REASON or --edit JSON"
        )
    if not waiting and decision is not None:
        raise UsageError(
            f"session {session_id!r} is not waiting for a decision; resume it without "
            "--approve, --reject or --edit"
        )


# -- options ---------------------------------------------------------------------------------


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


def _check_base_url(url: str | None) -> None:
    if url is None:
        return
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(
            f"--base-url {url!r} is not an http(s) URL; pass one such as http://localhost:11434/v1"
        )


def _model_name(swarm: Swarm) -> str:
    model = swarm.plans[swarm.entry_agent].model
    return str(getattr(model, "name", type(model).__name__))


def _context(text: str | None) -> dict[str, Any]:
    if text is None:
        return {}
    return _json_object("--context", text)


def _json_object(option: str, text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"{option} is not valid JSON ({exc.msg} at column {exc.colno}); pass an object "
            """such as '{"category": "billing"}'"""
        ) from exc
    if not isinstance(value, dict):
        raise UsageError(f"{option} must be a JSON object, got {type(value).__name__}")
    return value


# -- journals --------------------------------------------------------------------------------


async def _read_session(option: str | None, session_id: str) -> tuple[JournalRecord, ...]:
    path = journal_path(option)
    with open_for_reading(path) as journal:
        try:
            return await journal.read(session_id)
        except SessionNotFoundError as exc:
            raise UsageError(f"{exc} (swarmkit sessions --journal {journal_label(path)})") from exc


def _session_row(info: SessionInfo, started: Callable[[float], str]) -> tuple[str, ...]:
    return (
        info.session_id,
        info.status,
        info.stop_reason or "-",
        str(info.records),
        started(info.started_at),
        one_line(info.prompt or "", limit=48),
    )


def _local_times() -> Callable[[float], str]:
    """Unix seconds as local ``YYYY-MM-DD HH:MM:SS``, each minute's part formatted once:
    a listing's start times crowd into few minutes, and formatting was a third of it."""
    minutes: dict[int, str] = {}

    def local_time(seconds: float) -> str:
        minute, second = divmod(math.floor(round(seconds, 6)), 60)
        prefix = minutes.get(minute)
        if prefix is None:
            at = time.localtime(minute * 60)
            if at.tm_sec:  # a zone offset of odd seconds (old local mean times): no sharing
                return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(seconds))
            prefix = minutes[minute] = time.strftime("%Y-%m-%d %H:%M", at)
        return f"{prefix}:{second:02d}"

    return local_time


def _table(rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in rows
    )
