"""`swarmkit check` and the check `swarmkit run` makes before it runs."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog

from swarmkit.cli import main

Capture = pytest.CaptureFixture[str]


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """Each test runs in its own folder with no API key; structlog is left as it was found."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "SWARMKIT_JOURNAL"):
        monkeypatch.delenv(name, raising=False)
    yield
    structlog.reset_defaults()


def test_check_exits_1_and_prints_each_error(capsys: Capture) -> None:
    """An error finding is printed with its fix, and the exit code is 1."""
    assert main(["check", "tests.check_app:faulty"]) == 1
    out = capsys.readouterr().out
    assert "error: condition_never_true: graph edge triage -> billing" in out
    assert "fix: " in out


def test_check_exits_0_when_there_are_only_warnings(capsys: Capture) -> None:
    """Warnings are printed; the exit code stays 0."""
    assert main(["check", "tests.check_app:lonely"]) == 0
    assert "warning: unreachable_agent: agent billing" in capsys.readouterr().out


def test_check_json_prints_the_findings_as_data(capsys: Capture) -> None:
    """--json prints a list of findings with every field."""
    assert main(["check", "tests.check_app:faulty", "--json"]) == 1
    findings = json.loads(capsys.readouterr().out)
    assert [f["code"] for f in findings] == ["condition_never_true"]
    assert set(findings[0]) == {"code", "severity", "where", "message", "fix"}


def test_check_of_a_clean_swarm_says_so(capsys: Capture) -> None:
    """The demo's swarm has no findings."""
    assert main(["check", "tests.cli_app:swarm"]) == 0
    assert capsys.readouterr().out == "check: no findings\n"


def test_run_warns_about_findings_and_runs_anyway(capsys: Capture) -> None:
    """`swarmkit run` shows the findings on stderr, never blocking the run."""
    assert main(["run", "tests.check_app:faulty", "hello"]) == 0
    captured = capsys.readouterr()
    assert "condition_never_true" in captured.err
    assert "stop:" in captured.out or "final_output" in captured.out


def test_run_with_no_check_skips_it(capsys: Capture) -> None:
    """--no-check runs without checking."""
    assert main(["run", "tests.check_app:faulty", "hello", "--no-check"]) == 0
    assert "condition_never_true" not in capsys.readouterr().err
