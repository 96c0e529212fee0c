"""The `rules` command's arguments; its work (swarmkit.rules) loads only when it runs."""

from __future__ import annotations

import argparse
from typing import Any


def add_rules_command(commands: Any, journal_help: str) -> None:
    """Register ``swarmkit rules suggest|whatif|status|promote`` on the command's subparsers."""
    summary = "Learn HandoffGraph rules from the model's journaled handoffs, and try them offline."
    rules = commands.add_parser("rules", help=summary, description=summary)
    actions = rules.add_subparsers(dest="rules_command", required=True, metavar="ACTION")
    suggest = _action(
        actions,
        "suggest",
        "Suggest rules the model is paying for, with their held-out precision and savings.",
        "swarmkit.rules._command:_suggest",
        journal_help,
    )
    suggest.add_argument("--agent", metavar="NAME", help="learn rules from this agent only")
    suggest.add_argument(
        "--min-precision",
        type=float,
        default=0.98,
        metavar="P",
        help="held-out precision a rule needs (default 0.98)",
    )
    suggest.add_argument(
        "--min-support",
        type=int,
        default=20,
        metavar="N",
        help="held-out decisions a rule must take (default 20)",
    )
    suggest.add_argument(
        "--out", metavar="FILE", help="write the rules as HandoffGraph data (JSON) to FILE"
    )
    check = _action(
        actions,
        "whatif",
        "Replay the journal with proposed rules added, with zero model calls.",
        "swarmkit.rules._command:_whatif",
        journal_help,
    )
    check.add_argument(
        "--rules", required=True, metavar="FILE", help="rules as HandoffGraph data (JSON)"
    )
    check.add_argument(
        "--live",
        action="store_true",
        help="re-run the sessions the rules route differently against the swarm's model, each "
        "into a new session SESSION__whatif_STEP in the journal (this makes model calls)",
    )
    _add_status(actions, journal_help)
    _add_promote(actions, journal_help)


def _add_status(actions: Any, journal_help: str) -> None:
    _action(
        actions,
        "status",
        "How each shadow and active rule agrees with the model (with Wilson bounds), its share, "
        "savings, disagreeing sessions.",
        "swarmkit.rules._production:_status",
        journal_help,
        tag=False,
    )


def _add_promote(actions: Any, journal_help: str) -> None:
    promote = _action(
        actions,
        "promote",
        "Make a shadow rule active when its agreement with the model is proven: write the "
        "rules file and journal the promotion; otherwise refuse with the evidence.",
        "swarmkit.rules._production:_promote",
        journal_help,
        tag=False,
    )
    promote.add_argument("rule", metavar="RULE", help="the rule, as status names it")
    promote.add_argument(
        "--out", required=True, metavar="FILE", help="the rules file to write (HandoffGraph data)"
    )
    promote.add_argument(
        "--threshold",
        type=float,
        default=0.95,
        metavar="P",
        help="Wilson 95%% lower bound the agreement must reach (default 0.95)",
    )
    promote.add_argument(
        "--min-fired",
        type=int,
        default=30,
        metavar="N",
        help="fired decisions the rule needs at least (default 30)",
    )
    promote.add_argument("--by", metavar="NAME", help="who promotes it (default: your user)")


def _action(
    actions: Any, name: str, summary: str, handler: str, journal_help: str, *, tag: bool = True
) -> argparse.ArgumentParser:
    command: argparse.ArgumentParser = actions.add_parser(name, help=summary, description=summary)
    command.set_defaults(handler=handler)
    command.add_argument("-v", "--verbose", action="store_true", help="show the library's logs")
    command.add_argument(
        "--swarm", required=True, metavar="module:attribute", help="the swarm whose journal it is"
    )
    command.add_argument("--journal", metavar="PATH_OR_URL", help=journal_help)
    command.add_argument(
        "--since", metavar="TIME", help="sessions started at or after (ISO or Unix)"
    )
    command.add_argument("--until", metavar="TIME", help="sessions started before (ISO or Unix)")
    command.add_argument(
        "--prefix",
        "--session-prefix",
        dest="prefix",
        metavar="TEXT",
        help="sessions whose id starts with TEXT",
    )
    if tag:
        command.add_argument(
            "--tag", metavar="PATH=VALUE", help="sessions whose starting context has VALUE at PATH"
        )
    command.add_argument("--json", action="store_true", help="print the report as JSON")
    return command
