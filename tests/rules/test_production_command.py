"""``swarmkit rules status|promote``: the evidence as text and JSON, refusals as one clear line."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from swarmkit import HandoffGraph
from swarmkit.cli import main
from swarmkit.journal import SQLiteJournal
from swarmkit.shadow import read_rules_log
from tests.rules.test_promote import BILLING, corpus

SWARM = "tests.rules.shadow_swarm:shadowed"


async def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = await asyncio.to_thread(main, ["rules", *argv])
    out, err = capsys.readouterr()
    return code, out, err


async def test_status_then_promote_through_the_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """status shows the bounds; promote refuses short evidence, then writes the file."""
    path = tmp_path / "journal.sqlite"
    with SQLiteJournal(path) as journal:
        await corpus(journal, 36, 1)
    options = ["--swarm", SWARM, "--journal", str(path)]
    code, out, _ = await _run(capsys, "status", *options)
    assert code == 0
    assert BILLING in out and "36 of 37 fired (97.3%), Wilson 95% [0.8618, 0.9952]" in out
    assert "p036 step" in out and "(model: sales)" in out
    code, out, _ = await _run(capsys, "status", *options, "--json", "--session-prefix", "p00")
    billing = next(r for r in json.loads(out)["rules"] if r["rule"] == BILLING)
    assert (billing["fired"], billing["agreements"]) == (10, 10)

    rules = tmp_path / "rules.json"
    code, _, err = await _run(capsys, "promote", BILLING, *options, "--out", str(rules))
    assert code == 2 and "below the threshold 0.95" in err and "36 agreements in 37" in err
    assert not rules.exists()
    code, out, _ = await _run(
        capsys,
        "promote",
        BILLING,
        *options,
        "--out",
        str(rules),
        "--threshold",
        "0.85",
        "--by",
        "ana",
    )
    assert code == 0 and f"Promoted {BILLING}" in out
    assert HandoffGraph.from_dict(json.loads(rules.read_text())).edges("triage")
    with SQLiteJournal(path) as journal:
        [record] = await read_rules_log(journal)
    assert record.data["by"] == "ana"


async def test_status_of_a_journal_without_decisions_is_one_clear_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An empty journal: exit 2 and what to do, no traceback."""
    path = tmp_path / "journal.sqlite"
    SQLiteJournal(path).close()
    code, _, err = await _run(capsys, "status", "--swarm", SWARM, "--journal", str(path))
    assert code == 2 and "shadow=" in err and "Traceback" not in err


def test_the_rules_help_lists_status_and_promote(capsys: pytest.CaptureFixture[str]) -> None:
    """Both actions are in `swarmkit rules --help`, and their own help prints."""
    for argv in (["rules", "--help"], ["rules", "status", "--help"], ["rules", "promote", "-h"]):
        assert main(argv) == 0
    out = capsys.readouterr().out
    assert "status" in out and "promote" in out and "--session-prefix" in out
