"""`swarmkit ui`: starts on the demo's journal, prints its URL, and fails clearly."""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from swarmkit.cli import main
from tests.ui.test_spend_page import _spent


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A loopback port something else is listening on."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield holder.getsockname()[1]


def test_a_taken_port_is_one_clear_line(
    demo_journal: Path, taken_port: int, capsys: pytest.CaptureFixture[str]
) -> None:
    """A usage error: the command exits 2 with one line naming the port and how to pick
    another."""
    code = main(["ui", "--journal", str(demo_journal), "--port", str(taken_port)])

    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1
    assert f"port {taken_port} on 127.0.0.1 is taken" in err
    assert "--port" in err


def test_decisions_need_a_swarm(demo_journal: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--allow-decisions without --swarm is a usage error."""
    code = main(["ui", "--journal", str(demo_journal), "--allow-decisions"])

    assert code == 2
    assert "--swarm" in capsys.readouterr().err


def _start(journal: Path, *options: str) -> subprocess.Popen[str]:
    # Ctrl-C as a terminal delivers it, even when the test runner's shell ignores SIGINT.
    entry = (
        "import signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
        "from swarmkit.cli import main; raise SystemExit(main())"
    )
    command = [sys.executable, "-c", entry, "ui", "--journal", str(journal)]
    command += ["--swarm", "swarmkit.demo:support_swarm", "--port", "0", *options]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _visit(process: subprocess.Popen[str], api: str, **params: str) -> tuple[int, Any]:
    """The first page's status at the URL the command printed, then ``api``'s JSON; the
    command is stopped either way."""
    try:
        assert process.stdout is not None
        url = re.search(r"http://\S+", process.stdout.readline())
        assert url is not None
        with httpx.Client(trust_env=False, follow_redirects=True) as http:
            page = http.get(url.group(0))
            return page.status_code, http.get(str(page.url.join(api)), params=params).json()
    finally:
        process.terminate()
        process.wait()


def test_the_command_serves_the_demos_journal_at_the_printed_url(demo_journal: Path) -> None:
    """Started as a process, it prints a tokened URL whose first visit opens the sessions."""
    status, sessions = _visit(_start(demo_journal), "/api/sessions")

    assert status == 200
    assert len(sessions["rows"]) == 3


def test_ctrl_c_stops_the_viewer(demo_journal: Path) -> None:
    """SIGINT ends the command with the usual interrupted exit code, 130."""
    process = _start(demo_journal)
    assert process.stdout is not None
    process.stdout.readline()

    process.send_signal(signal.SIGINT)
    code = process.wait(timeout=30)

    assert code == 130


def test_a_missing_ledger_is_one_clear_line(
    demo_journal: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--ledger naming no file is a usage error that says how to pass one."""
    missing = tmp_path / "nowhere.sqlite"
    code = main(["ui", "--journal", str(demo_journal), "--ledger", str(missing)])

    assert code == 2
    assert f"no ledger at {missing}: pass --ledger PATH_OR_URL" in capsys.readouterr().err
    assert not missing.exists()


def test_the_spend_page_reads_the_ledger_given_on_the_command_line(tmp_path: Path) -> None:
    """A swarm without a ledger (the demo's) and --ledger FILE: the spend page reads the file."""
    journal, _ = _spent(tmp_path)
    process = _start(journal, "--ledger", str(tmp_path / "spend.sqlite"))
    _, report = _visit(process, "/api/spend", by="tenant")

    assert [(row["tenant"], row["total_tokens"]) for row in report["spend"]] == [
        ("acme", 42),
        ("globex", 42),
    ]
