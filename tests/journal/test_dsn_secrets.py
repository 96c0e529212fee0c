"""A Postgres password in a DSN never appears in what a command prints, whether it is given
as user:password@ or as ?password= (issue 33, finding 5)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from swarmkit.cli import main

ROOT = Path(__file__).resolve().parents[2]
SECRET = "swarmkit-test"  # the test server's password


def _query_password_dsn(dsn: str) -> str:
    """The same database with its password moved into the query string."""
    without = dsn.replace(f":{SECRET}@", "@")
    assert without != dsn
    return f"{without}&password={SECRET}"


def test_sessions_never_prints_a_query_password(
    postgres_dsn: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """`swarmkit sessions` on an empty Postgres journal names it without the password."""
    assert main(["sessions", "--journal", _query_password_dsn(postgres_dsn)]) == 0

    out = capsys.readouterr().out
    assert out.startswith("no sessions in postgresql://")
    assert SECRET not in out and "password=***" in out


def test_the_viewer_command_never_prints_a_query_password(postgres_dsn: str) -> None:
    """`swarmkit ui --journal postgresql://...?password=...` prints a URL line without it."""
    entry = "from swarmkit.cli import main; raise SystemExit(main())"
    command = [sys.executable, "-c", entry, "ui", "--journal", _query_password_dsn(postgres_dsn)]
    process = subprocess.Popen(
        [*command, "--port", "0"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
    finally:
        process.terminate()
        _, err = process.communicate(timeout=30)

    assert re.search(r"http://127\.0\.0\.1:\d+/", line), (line, err)
    assert SECRET not in line + err
