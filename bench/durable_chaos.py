"""The DBOS chaos run at size: 200 courier sessions (seven steps each: four model calls and
three tool calls) on one PostgreSQL system database, three worker processes, ten SIGKILLs at
seeded points; each killed worker restarts under its own id and recovers its sessions.

It fails (exit 1) unless every session finished exactly once with its in-process result, each
model call is journaled once, and every tool call that ran twice ran with its first run's
idempotency key; then it prints how many model and tool calls were in flight at a kill.
The suite runs the same shape at 60 sessions and 5 kills (tests/dbos/test_kills.py).
Run: ``.venv/bin/python bench/durable_chaos.py [--sessions 200] [--kills 10] [--seed 30]``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import uuid
from pathlib import Path

import psycopg

sys.path.append(str(Path(__file__).parents[1]))  # after PYTHONPATH: a base checkout wins

from tests.dbos.chaos import chaos_run
from tests.journal.postgres_server import running_postgres


def main() -> None:
    """Start a throwaway Postgres, run the chaos, print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--kills", type=int, default=10)
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--seed", type=int, default=30)
    args = parser.parse_args()
    with running_postgres() as server, tempfile.TemporaryDirectory() as folder:
        name = f"chaos_{uuid.uuid4().hex[:8]}"
        with psycopg.connect(server.dsn, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
            conn.execute("CREATE SCHEMA journal")
        base = server.dsn.rsplit("/", 1)[0]
        journal = f"{server.dsn}?options=-csearch_path%3Djournal"
        report = asyncio.run(
            chaos_run(
                f"{base}/{name}",
                journal,
                Path(folder),
                sessions=args.sessions,
                kills=args.kills,
                seed=args.seed,
                workers=args.workers,
            )
        )
    print(
        f"chaos: {report.sessions} sessions, {args.workers} workers, {report.kills} SIGKILLs, "
        f"{report.seconds:.1f} s: every session finished once with its in-process result"
    )
    print(
        f"  model calls {report.model_calls} ({report.model_repeats} in flight at a kill, ran "
        f"again, journaled once); tool calls {report.tool_calls} ({report.tool_repeats} ran "
        "again, each with its first run's idempotency key)"
    )


if __name__ == "__main__":
    main()
