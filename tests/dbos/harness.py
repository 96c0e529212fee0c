"""Worker processes for the DBOS tests, started and stopped by pid."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SWARMKIT = [sys.executable, "-c", "import sys; from swarmkit.cli import main; sys.exit(main())"]
"""The `swarmkit` console script, run from this tree."""


@contextmanager
def command(arguments: list[str], env: Mapping[str, str], log: Path) -> Iterator[int]:
    """A command in its own process, output to ``log``; yields its pid, stops it by SIGTERM."""
    with log.open("wb") as out:
        process = subprocess.Popen(
            arguments, cwd=ROOT, env={**os.environ, **env}, stdout=out, stderr=subprocess.STDOUT
        )
        try:
            yield process.pid
        finally:
            if process.poll() is None:
                os.kill(process.pid, signal.SIGTERM)
                assert process.wait(timeout=30) == 0, log.read_text()


@contextmanager
def worker_process(
    database_url: str,
    executor_id: str,
    state: Path,
    env: Mapping[str, str],
    *,
    version: str = "",
    journal: str | None = None,
) -> Iterator[int]:
    """A worker in its own process (``tests.dbos.worker_app``); yields its pid. Its journal
    mirror is ``journal`` (a Postgres URL), else ``journal.sqlite`` in ``state``."""
    log = (state / f"worker-{executor_id}-{uuid.uuid4().hex[:6]}.log").open("wb")
    journal = journal or str(state / "journal.sqlite")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.dbos.worker_app",
            database_url,
            executor_id,
            journal,
            version,
        ],
        cwd=ROOT,
        env={**os.environ, **env, "SWARMKIT_TEST_STATE": str(state)},
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        yield process.pid
    finally:
        if process.poll() is None:
            os.kill(process.pid, signal.SIGTERM)
            process.wait(timeout=30)
        log.close()


def lines(path: Path) -> list[str]:
    """The lines of a state file the worker's tool or model wrote (none if it is absent)."""
    return path.read_text().split() if path.exists() else []
