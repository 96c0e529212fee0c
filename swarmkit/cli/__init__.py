"""The `swarmkit` command: run a swarm, browse, replay and draw its journal, and the offline demo.

Exit codes: 0 when the command did its job (a run that stopped for any reason but an error),
1 when a run ended in an error or a replay diverged, 2 for a usage error (bad arguments, a
module, attribute, journal or session that is not there, a missing API key).

This module holds the parser and the entry point only, on the standard library: a command's
work (and what it imports: Pydantic models, the journal, the OpenAI client) loads from
``_commands`` once the arguments name it, so ``swarmkit --help`` starts at once.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import importlib.metadata
import logging
import os
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

from swarmkit.cli._durable import add_durable
from swarmkit.cli._eval import add_eval
from swarmkit.cli._queue import add_queue
from swarmkit.cli._rules import add_rules_command
from swarmkit.cli._serve import add_serve
from swarmkit.cli._spend import add_spend
from swarmkit.cli._usage import (
    DEFAULT_DEMO_MODEL,
    DEFAULT_JOURNAL,
    DEMO_JOURNAL,
    DRAWING_FORMATS,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    MISSING_KEY,
    TARGET_HELP,
    RunStopped,
    UsageError,
    fail,
)
from swarmkit.exceptions import ConfigurationError, JournalError, SwarmkitError, ViewerError
from swarmkit.lowlevel import mask_locations

if TYPE_CHECKING:
    from swarmkit.cli._durable import swarm_entries
    from swarmkit.cli._journal_file import (
        journal_path,
        open_for_reading,
        open_for_writing,
        swarm_journal_path,
    )
    from swarmkit.cli._target import load_swarm

__all__ = [
    "DEFAULT_JOURNAL",
    "MISSING_KEY",
    "UsageError",
    "journal_path",
    "load_swarm",
    "main",
    "open_for_reading",
    "open_for_writing",
    "swarm_entries",
    "swarm_journal_path",
]

_Handler = Callable[[argparse.Namespace], Coroutine[Any, Any, int]]


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `swarmkit` command; returns the exit code."""
    parser = _parser()
    try:
        args = parser.parse_args(argv)
        _check_swarm_given(args)
    except SystemExit as stop:  # --help, --version, or a usage error argparse has printed
        return stop.code if isinstance(stop.code, int) else EXIT_USAGE
    _configure_logs(verbose=args.verbose)
    try:
        handler = _handler(args.handler)
        return asyncio.run(handler(args))
    except BrokenPipeError:
        return _stdout_closed()
    except UsageError as exc:
        return fail(str(exc), EXIT_USAGE)
    except (ConfigurationError, JournalError, ViewerError) as exc:
        # A taken port is the caller's to change (--port), like any other bad option.
        return fail(str(exc), EXIT_USAGE)
    except (SwarmkitError, OSError) as exc:
        return fail(str(exc), EXIT_FAILED)
    except RunStopped as exc:
        print(f"swarmkit: {mask_locations(str(exc))}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except KeyboardInterrupt:
        return fail("interrupted", EXIT_INTERRUPTED)


# The commands that only read journals live apart, so listing sessions loads no model client.
_BROWSE = frozenset({"_sessions", "_export", "_import_session", "_delete"})


def _handler(name: str) -> _Handler:
    """A command's handler by name: ``module:function`` for commands kept beside their extra."""
    home, _, function = name.rpartition(":")
    if not home:
        home = "swarmkit.cli._browse" if name in _BROWSE else "swarmkit.cli._commands"
    handler: _Handler = getattr(importlib.import_module(home), function)
    return handler


def __getattr__(name: str) -> Any:
    """``load_swarm`` and the journal openers load what they need only when first asked for:
    commands kept beside their extras (eval, rules, serve) use them."""
    if name in ("journal_path", "open_for_reading", "open_for_writing", "swarm_journal_path"):
        from swarmkit.cli import _journal_file  # noqa: PLC0415

        return getattr(_journal_file, name)
    if name == "load_swarm":
        from swarmkit.cli._target import load_swarm  # noqa: PLC0415 - heavy, used by commands

        return load_swarm
    if name == "swarm_entries":  # the worker commands of swarmkit.dbos and swarmkit.temporal
        from swarmkit.cli._durable import swarm_entries  # noqa: PLC0415

        return swarm_entries
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _configure_logs(*, verbose: bool) -> None:
    """Library logs go to stderr only with --verbose: otherwise they would interleave with the
    live view of the run on a terminal. stdout is the command's output either way."""
    if not verbose and "structlog" not in sys.modules:
        return  # nothing configured structlog, so the library stays silent without loading it
    import structlog  # noqa: PLC0415 - about 0.1 s, paid only when logs may show

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
    import structlog  # noqa: PLC0415 - loaded by _configure_logs already

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


def version() -> str:
    """The installed version of the distribution (swarmkit-agents)."""
    try:
        return importlib.metadata.version("swarmkit-agents")
    except importlib.metadata.PackageNotFoundError:
        from swarmkit import __version__  # noqa: PLC0415 - a source tree that is not installed

        return __version__


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
    _add_delete(commands)
    _add_draw(commands)
    _add_check(commands)
    _add_ui(commands)
    add_eval(commands)
    add_serve(commands, _command, _journal_option)
    add_durable(commands, _command, _journal_option)
    _add_rules(commands)
    add_queue(commands, _journal_option)
    add_spend(commands, _command)
    return parser


def _command(
    commands: Any, name: str, summary: str, handler: str, epilog: str | None = None
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


def _check_swarm_given(args: argparse.Namespace) -> None:
    """A command that needs a swarm was given one, positionally or with --swarm (argparse
    cannot say "one of a positional and an option")."""
    command: argparse.ArgumentParser | None = getattr(args, "needs_swarm", None)
    if command is None:
        return
    given = [name for name in (args.target, args.swarm) if name]
    if not given:
        command.error("the swarm is required: module:attribute (or --swarm module:attribute)")
    if len(set(given)) > 1:
        command.error("name the swarm once: as module:attribute or with --swarm, not both")


def _swarm_target(
    command: argparse.ArgumentParser, *, flag: bool, help_: str, required: bool = True
) -> None:
    """The swarm as the command's first positional argument; commands that took ``--swarm``
    take it before the session too, and keep ``--swarm`` as an alias."""
    if not flag:
        command.add_argument("target", metavar="module:attribute", help=f"{help_}: {TARGET_HELP}")
        return
    command.add_argument(
        "target", nargs="?", metavar="module:attribute", help=f"{help_}: {TARGET_HELP}"
    )
    command.add_argument("--swarm", metavar="module:attribute", help="the same, as an option")
    if required:
        command.set_defaults(needs_swarm=command)


def _add_rules(commands: Any) -> None:
    add_rules_command(
        commands,
        f"an SQLite file or a postgresql:// URL (default: "
        f"$SWARMKIT_JOURNAL, else {DEFAULT_JOURNAL})",
    )


def _add_demo(commands: Any) -> None:
    command = _command(
        commands,
        "demo",
        "Run the customer-support demo, journal it, then replay it with zero model calls.",
        "_demo",
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
        "_run",
        epilog="Exit code 0 for any clean stop (final_output, max_handoffs, max_turns, cycle, "
        "interrupted), 1 when the run ended in an error, 130 on Ctrl-C. A run paused for a "
        "human, or stopped by Ctrl-C, is continued with `swarmkit resume`.",
    )
    _swarm_target(command, flag=False, help_="the swarm")
    command.add_argument("prompt", help="the user's message")
    command.add_argument("--context", metavar="JSON", help="the run's context, a JSON object")
    _journal_option(command)
    command.add_argument(
        "--model",
        metavar="NAME",
        help="run every agent on this model: an OpenAI name, or PROVIDER:NAME with anthropic:, "
        "google: (gemini:), openai: or responses: (the key from that provider's variable)",
    )
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
        "_resume",
        epilog="A session waiting for a human needs one of --approve, --reject REASON or "
        "--edit JSON; any other resumes without. Journaled steps replay with no model "
        "calls, then the run goes on live.",
    )
    _swarm_target(command, flag=True, help_="the swarm the session ran on")
    command.add_argument("session", metavar="SESSION", help="the session id")
    decision = command.add_mutually_exclusive_group()
    decision.add_argument("--approve", action="store_true", help="approve the pending step")
    decision.add_argument("--reject", metavar="REASON", help="reject it, telling the agent why")
    decision.add_argument(
        "--edit", metavar="JSON", help="approve it with this payload or these arguments"
    )
    command.add_argument("--by", metavar="NAME", help="who decides, kept in the audit trail")
    command.add_argument("--note", metavar="TEXT", help="why, kept in the audit trail")
    _journal_option(command)


def _add_sessions(commands: Any) -> None:
    command = _command(
        commands, "sessions", "List the journal's sessions, newest first.", "_sessions"
    )
    command.add_argument(
        "--threads",
        action="store_true",
        help="group a conversation's turns (SESSION, SESSION__turn_2, ...) under it",
    )
    command.add_argument(
        "--state",
        choices=("running", "waiting", "failed", "limited", "finished", "cancelled"),
        help="only sessions in this state (the words the viewer uses)",
    )
    _journal_option(command)


def _add_show(commands: Any) -> None:
    command = _command(
        commands,
        "show",
        "Show a session as a timeline: agents, rules, handoffs, tool calls, tokens, stop.",
        "_show",
    )
    command.add_argument("session", metavar="SESSION", help="the session id")
    _journal_option(command)


def _add_replay(commands: Any) -> None:
    command = _command(
        commands,
        "replay",
        "Replay a session against a swarm's current code, with zero model calls.",
        "_replay",
        epilog="Exit code 0 when the replay reproduces the session, 1 with a diff when the "
        "code now asks something the journal does not hold.",
    )
    _swarm_target(command, flag=True, help_="the swarm to replay the session against")
    command.add_argument("session", metavar="SESSION", help="the session id")
    command.add_argument(
        "--prompt", metavar="TEXT", help="what if it had been asked this: where it first matters"
    )
    command.add_argument(
        "--context", metavar="JSON", help="what if it had started with this context (an object)"
    )
    command.add_argument(
        "--rules-off", action="store_true", help="what if the HandoffGraph's rules were off"
    )
    command.add_argument(
        "--live",
        action="store_true",
        help="with a change: fork a new session (SESSION__whatif_N) where it first matters and "
        "go on against the swarm's models, instead of stopping there offline",
    )
    _journal_option(command)


def _add_export(commands: Any) -> None:
    command = _command(commands, "export", "Write a session to stdout as JSONL.", "_export")
    command.add_argument("session", metavar="SESSION", help="the session id")
    command.add_argument("--format", choices=["jsonl"], default="jsonl", help="default: jsonl")
    command.add_argument(
        "--thread",
        action="store_true",
        help="also the conversation's later turns (SESSION__turn_2, ...): import takes them all",
    )
    _journal_option(command)


def _add_import(commands: Any) -> None:
    command = _command(
        commands,
        "import",
        "Add a session exported as JSONL (a file, or - for stdin) to the journal.",
        "_import_session",
        epilog="Move a session between stores: swarmkit export S --journal a.sqlite | "
        "swarmkit import - --journal postgresql://...",
    )
    command.add_argument("file", metavar="FILE", help="the JSONL export, or - for stdin")
    _journal_option(command)


def _add_delete(commands: Any) -> None:
    command = _command(
        commands,
        "delete",
        "Delete a session and its records from the journal (asks first unless --yes).",
        "_delete",
        epilog="A session a live run holds (its lease has not expired) is refused. Export it "
        "first to keep a copy: swarmkit export SESSION > SESSION.jsonl",
    )
    command.add_argument("session", metavar="SESSION", help="the session id")
    command.add_argument(
        "--thread", action="store_true", help="delete every turn of the conversation SESSION"
    )
    command.add_argument("--yes", action="store_true", help="do not ask")
    _journal_option(command)


def _add_draw(commands: Any) -> None:
    command = _command(
        commands,
        "draw",
        "Draw a swarm (rule edges dashed, LLM handoffs solid) or the path a session took.",
        "_draw",
    )
    command.add_argument(
        "target", nargs="?", metavar="module:attribute", help=f"the swarm: {TARGET_HELP}"
    )
    command.add_argument("--session", metavar="SESSION", help="draw this session instead")
    command.add_argument(
        "--format", choices=DRAWING_FORMATS, default="mermaid", help="default: mermaid"
    )
    _journal_option(command)


def _add_check(commands: Any) -> None:
    command = _command(
        commands,
        "check",
        "Check a swarm before it runs: unreachable agents, rules that never fire, forced rule "
        "cycles, undeclared paths, comparisons that never hold, offers never made.",
        "_check",
        epilog="Exit code 1 when any finding is an error, 0 otherwise.",
    )
    command.add_argument("target", metavar="module:attribute", help="the swarm")
    command.add_argument("--json", action="store_true", help="print the findings as JSON")


def _add_ui(commands: Any) -> None:
    command = _command(
        commands,
        "ui",
        "Browse the journal's sessions, handoffs and replays in a local web page.",
        "_ui",
        epilog="Listens on 127.0.0.1 only; the printed URL carries a token every request needs.",
    )
    _journal_option(command)
    _swarm_target(
        command, flag=True, help_="the swarm, to explain rules, replay and decide", required=False
    )
    command.add_argument("--port", type=int, default=8765, help="default: 8765; 0 picks one")
    command.add_argument(
        "--allow-decisions",
        action="store_true",
        help="let the page approve, reject or edit paused sessions (needs --swarm)",
    )
    command.add_argument(
        "--ledger",
        metavar="PATH_OR_URL",
        help="the spend ledger the spend page reads: an SQLite file or a postgresql:// URL "
        "(default: the swarm's ledger, if it has one)",
    )
