"""The `eval` command's arguments; its work (swarmkit.evals) loads only when it runs."""

from __future__ import annotations

import argparse
from typing import Any


def add_eval(commands: Any) -> None:
    """Add ``eval`` to the `swarmkit` command's subcommands."""
    summary = "Evaluate a swarm on tasks: k journaled trials each, graded, pass^k reported."
    command: argparse.ArgumentParser = commands.add_parser(
        "eval",
        help=summary,
        description=summary,
        epilog="Exit code 1 when a gate (--min-pass-rate, --min-pass-hat) is missed or a "
        "replayed trial drifted; 2 for a usage error. --regrade and --replay make no model call.",
    )
    command.set_defaults(handler="swarmkit.evals.command:run_eval_command", verbose=False)
    command.add_argument(
        "tasks",
        metavar="TASKS",
        nargs="?",
        help="a JSON/YAML task file, or module:attribute naming a TaskSet",
    )
    command.add_argument(
        "--swarm", metavar="module:attribute", help="the swarm (a Swarm or a @swarm_factory)"
    )
    command.add_argument(
        "--domain",
        metavar="module:attribute",
        help="the tasks' Domain (default: the one the task file names, found in the module of "
        "--swarm or its package; a task file never imports code)",
    )
    command.add_argument(
        "--trials", type=int, default=1, metavar="K", help="trials per task (default 1)"
    )
    command.add_argument(
        "--concurrency", type=int, default=4, metavar="N", help="trials at once (default 4)"
    )
    command.add_argument(
        "--journal",
        metavar="PATH_OR_URL",
        help="an SQLite file or a postgresql:// URL (default: $SWARMKIT_JOURNAL, else the "
        "swarm's own journal, else .swarmkit/journal.sqlite)",
    )
    command.add_argument(
        "--ledger",
        metavar="PATH_OR_URL|none",
        help="the spend ledger the trials charge: an SQLite file or a postgresql:// URL (the "
        "swarm's budgets, if any, kept there), or none (default: the swarm's own)",
    )
    command.add_argument(
        "--run-id", metavar="ID", help="the id of a new eval run (default: random)"
    )
    _add_modes(command)
    _add_report_options(command)


def _add_modes(command: argparse.ArgumentParser) -> None:
    """The options that choose what the command does instead of a live run."""
    mode = command.add_mutually_exclusive_group()
    mode.add_argument(
        "--regrade", metavar="RUN", help="grade the stored run RUN again (zero model calls)"
    )
    mode.add_argument(
        "--list",
        action="store_true",
        help="list the eval runs the journal holds (dates, tasks, trials, pass^k) and exit",
    )
    mode.add_argument(
        "--replay", metavar="RUN", help="replay the stored run RUN on the current code (zero calls)"
    )


def _add_report_options(command: argparse.ArgumentParser) -> None:
    """The options that say how the report is shown and which gates it must pass."""
    command.add_argument(
        "--report", choices=("table", "json", "junit"), default="table", help="output format"
    )
    command.add_argument(
        "--output", metavar="FILE", help="write the report there instead of stdout"
    )
    command.add_argument(
        "--compare", metavar="REPORT_JSON", help="also show the change since a JSON report"
    )
    command.add_argument(
        "--min-pass-rate", type=float, metavar="X", help="gate: passed share of trials"
    )
    command.add_argument(
        "--min-pass-hat", action="append", default=[], metavar="K=X", help="gate: pass^K >= X"
    )
    command.add_argument(
        "-v", "--verbose", action="store_true", help="also show the library's logs"
    )
