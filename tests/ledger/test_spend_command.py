"""``swarmkit spend``: the ledger's figures by tenant, agent, model and day, and budgets."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from swarmkit import Agent, Budget, Ledger, Price, RunResult, Swarm
from swarmkit.cli import main
from swarmkit.journal import SQLiteJournal
from swarmkit.models import Usage
from swarmkit.testing import ScriptedModel, text, tool_call
from swarmkit.tools import tool

NOON = 1_795_000_000.0


@tool
def look() -> str:
    """Look around."""
    return "seen"


def _spend(tmp_path: Path, capsys: pytest.CaptureFixture[str], store: str) -> list[RunResult]:
    """Two tenants' runs charged to ``store`` and journaled in ``tmp_path / "j.db"``."""
    ledger = Ledger(
        store,
        [
            Budget(name="daily", limit=10_000, unit="tokens", tenant="*"),
            Budget(name="eur", limit=1, unit="money"),
        ],
        prices={"scripted": Price(input=3.0, output=15.0)},
        tenant="tenant",
        clock=lambda: NOON,
    )
    journal = SQLiteJournal(tmp_path / "j.db")
    results = []
    for tenant, turns in (
        (
            "acme",
            [
                tool_call("look"),
                text("a", usage=Usage(prompt_tokens=20, completion_tokens=4, total_tokens=24)),
            ],
        ),
        ("globex", [text("b", usage=Usage(prompt_tokens=8, completion_tokens=2, total_tokens=10))]),
    ):
        swarm = Swarm(
            [Agent(name="desk", tools=[look])],
            "desk",
            model=ScriptedModel(*turns),
            journal=journal,
            ledger=ledger,
        )
        results.append(swarm.run_sync("x", context={"tenant": tenant}))
    capsys.readouterr()
    assert [r.stop_reason for r in results] == ["final_output", "final_output"]
    return results


def test_spend_equals_the_journals_usage(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], store: str
) -> None:
    """Each tenant's calls and tokens in ``swarmkit spend --json`` are those of the
    ``model_call`` records its sessions journaled, and each budget shows its limit, spend and
    what is left."""
    results = _spend(tmp_path, capsys, store)

    assert main(["spend", "--ledger", store, "--json", "--by", "tenant,agent,model"]) == 0
    report = json.loads(capsys.readouterr().out)

    journaled = {r.context["tenant"]: _journaled(tmp_path / "j.db", r.session_id) for r in results}
    rows = {row["tenant"]: row for row in report["spend"]}
    assert set(rows) == {"acme", "globex"}
    for tenant, (calls, usage) in journaled.items():
        assert rows[tenant]["calls"] == calls
        assert rows[tenant]["input_tokens"] == usage.prompt_tokens
        assert rows[tenant]["output_tokens"] == usage.completion_tokens
        assert rows[tenant]["total_tokens"] == usage.total_tokens
        assert rows[tenant]["agent"] == "desk" and rows[tenant]["model"] == "scripted"
    assert journaled["acme"][0] == 2
    budgets = {(b["budget"], b["scope"]): b for b in report["budgets"]}
    assert budgets[("daily", "tenant=acme")]["spent"] == 39
    assert budgets[("daily", "tenant=acme")]["left"] == 9_961
    assert budgets[("daily", "tenant=globex")]["left"] == 9_990
    eur = budgets[("eur", "")]
    assert eur["spent"] == pytest.approx((38 * 3.0 + 11 * 15.0) / 1e6)
    assert eur["unit"] == "money" and eur["limit"] == 1


def _journaled(path: Path, session_id: str) -> tuple[int, Usage]:
    """The number of model calls a session journaled and the sum of their usage, read back
    from its ``model_call`` records."""
    with SQLiteJournal(path) as journal:
        records = asyncio.run(journal.read(session_id))
    usages = [Usage(**r.data["response"]["usage"]) for r in records if r.kind == "model_call"]
    return len(usages), sum(usages, Usage())


def test_spend_prints_tables(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Without --json: one table of spend, one of budgets."""
    store = str(tmp_path / "spend.db")
    _spend(tmp_path, capsys, store)

    assert main(["spend", "--ledger", store]) == 0
    out = capsys.readouterr().out

    assert out.splitlines()[0].split() == [
        "tenant",
        "agent",
        "model",
        "day",
        "calls",
        "input_tokens",
        "output_tokens",
        "total_tokens",
        "cost",
    ]
    assert "daily   tenant=acme    2026-11-18  tokens  10000  39" in out


def test_spend_without_a_ledger_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A missing file is named, with the option to fix it; a bad grouping too."""
    assert main(["spend", "--ledger", str(tmp_path / "none.db")]) == 2
    assert "no ledger at" in capsys.readouterr().err
    store = str(tmp_path / "spend.db")
    _spend(tmp_path, capsys, store)
    assert main(["spend", "--ledger", store, "--by", "colour"]) == 2
    assert "spend can be grouped by tenant, agent, model, provider, day" in capsys.readouterr().err
