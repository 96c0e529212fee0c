"""`swarmkit eval` with $SWARMKIT_JOURNAL_KEYS: every record it writes is sealed, and a regrade
reads the sealed run back."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from swarmkit.cli import main
from swarmkit.journal import generate_key

TASKS = str(Path("swarmkit/evals/support_desk/tasks.json").resolve())
SWARM = "swarmkit.evals.support_desk:offline_swarm"


def test_an_eval_with_keys_writes_only_sealed_records_and_regrades_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """No record of the run is in clear; regrade with the same keys reads it with no model."""
    monkeypatch.setenv("SWARMKIT_JOURNAL_KEYS", f"k1:{generate_key()}")
    journal = tmp_path / "evals.sqlite"
    base = ["eval", TASKS, "--journal", str(journal)]

    assert main([*base, "--swarm", SWARM, "--run-id", "r1"]) == 0
    capsys.readouterr()
    regraded = main([*base, "--swarm", SWARM, "--regrade", "r1", "--report", "json"])
    report = json.loads(capsys.readouterr().out)
    with sqlite3.connect(journal) as conn:
        kinds = conn.execute(
            "SELECT count(*), sum(data LIKE '{\"chained\":%') FROM records"
        ).fetchone()

    assert kinds[0] > 0 and kinds[0] == kinds[1]
    assert regraded == 0 and report["mode"] == "regrade" and report["model_calls"] == 0
