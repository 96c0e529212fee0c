"""``swarmkit spend``: what a spend ledger holds, by tenant, agent, model and day, with budgets."""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from swarmkit.cli._usage import EXIT_OK, UsageError

if TYPE_CHECKING:
    from swarmkit.ledger import LedgerStore

DEFAULT_LEDGER = Path(".swarmkit") / "spend.sqlite"
"""Where ``swarmkit spend`` reads unless told (``--ledger``, ``$SWARMKIT_LEDGER``)."""

_SPEND_COLUMNS = ("calls", "input_tokens", "output_tokens", "total_tokens", "cost")
_BUDGET_COLUMNS = ("budget", "scope", "period", "unit", "limit", "spent", "held", "left")


def add_spend(commands: Any, command: Callable[..., argparse.ArgumentParser]) -> None:
    """The ``spend`` subcommand."""
    spend = command(
        commands,
        "spend",
        "Show what a spend ledger holds: spend by tenant, agent, model and day, and each "
        "budget's limit, spend and what is left.",
        "swarmkit.cli._spend:show_spend",
    )
    spend.add_argument(
        "--ledger",
        metavar="PATH_OR_URL",
        help="an SQLite file or a postgresql:// URL "
        f"(default: $SWARMKIT_LEDGER, else {DEFAULT_LEDGER})",
    )
    spend.add_argument(
        "--by",
        default="tenant,agent,model,day",
        help="what to group by, comma-separated: tenant, agent, model, provider, day",
    )
    spend.add_argument("--json", action="store_true", help="print JSON instead of tables")


def open_ledger(where: str) -> LedgerStore:
    """The ledger at a SQLite file that exists or a ``postgresql://`` URL."""
    from swarmkit.ledger import open_store  # noqa: PLC0415 - on use

    if not where.startswith(("postgres://", "postgresql://")) and not Path(where).is_file():
        raise UsageError(f"no ledger at {where}: pass --ledger PATH_OR_URL")
    return open_store(where)


async def show_spend(args: argparse.Namespace) -> int:
    """Print the report."""
    from swarmkit.ledger import spend_report  # noqa: PLC0415 - on use

    store = open_ledger(args.ledger or os.environ.get("SWARMKIT_LEDGER") or str(DEFAULT_LEDGER))
    try:
        by = [part.strip() for part in args.by.split(",") if part.strip()]
        report = await spend_report(store, by=by, now=time.time())
    finally:
        await store.aclose()
    if args.json:
        print(json.dumps(report, indent=2))
        return EXIT_OK
    print(_table([*by, *_SPEND_COLUMNS], report["spend"]))
    print()
    print(_table(list(_BUDGET_COLUMNS), report["budgets"]))
    return EXIT_OK


def _table(columns: list[str], rows: list[dict[str, Any]]) -> str:
    cells = [[_cell(row.get(name)) for name in columns] for row in rows]
    widths = [max([len(name), *(len(row[i]) for row in cells)]) for i, name in enumerate(columns)]
    lines = ["  ".join(name.ljust(w) for name, w in zip(columns, widths, strict=True))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in cells]
    if not rows:
        lines.append("(none)")
    return "\n".join(line.rstrip() for line in lines)


def _cell(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)
