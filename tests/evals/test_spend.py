"""An evaluation's spend: charged to a ledger of its own, or to none, never the swarm's."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from swarmkit import Budget, Ledger
from swarmkit.cli import main
from swarmkit.evals import TaskSet, evaluate
from swarmkit.evals.support_desk import build_swarm, tasks
from swarmkit.ledger import open_store


def _one_task() -> TaskSet:
    """The desk's order-status task alone (two model calls a trial)."""
    desk = tasks()
    return TaskSet(domain=desk.domain, tasks=(desk.task("order-status"),))


def _calls(where: Path) -> int:
    """How many calls the ledger at ``where`` holds (0 when there is no file)."""
    if not where.exists():
        return 0
    store = open_store(str(where))
    try:
        return len(asyncio.run(store.calls()))
    finally:
        asyncio.run(store.aclose())


def _statuses(report: str) -> list[str]:
    """Each trial's status in a JSON report."""
    tasks = json.loads(report)["tasks"]
    return [trial["status"] for task in tasks for trial in task["trials"]]


async def test_an_evaluation_charges_its_own_ledger_or_none(tmp_path: Path) -> None:
    """Trials of a swarm given another ledger charge that one; given none, nothing; the
    swarm's own ledger is untouched either way."""
    own = Ledger(tmp_path / "own.sqlite", [Budget(name="calls", limit=1_000, unit="calls")])
    swarm = build_swarm().with_ledger(own)
    other = own.with_store(tmp_path / "eval.sqlite")

    charged = await evaluate(_one_task(), swarm.with_ledger(other), trials=2, run_id="other")
    free = await evaluate(_one_task(), swarm.with_ledger(None), trials=2, run_id="none")

    assert charged.pass_rate == free.pass_rate == 1.0
    tokens = sum(trial.tokens for task in charged.tasks for trial in task.trials)
    calls = await other.store.calls()
    assert len(calls) == 4  # two calls a trial
    assert sum(call.total_tokens for call in calls) == tokens > 0
    windows = await other.store.windows(now=other.clock())
    assert [(w["budget"], w["spent"]) for w in windows] == [("calls", 4)]
    assert await own.store.calls() == []
    assert await own.store.windows(now=own.clock()) == []


@pytest.fixture
def desk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A folder whose ``desk_spend.py`` holds the desk with its own ledger (``own.sqlite``);
    ``tasks.json`` holds the order-status task. Returns the swarm's target."""
    (tmp_path / "desk_spend.py").write_text(
        "from swarmkit import Budget, Ledger\n"
        "from swarmkit.evals.support_desk import DOMAIN, build_swarm\n"
        "LEDGER = Ledger('own.sqlite', [Budget(name='calls', limit=1000, unit='calls')])\n"
        "swarm = build_swarm().with_ledger(LEDGER)\n"
    )
    desk_tasks = json.loads(Path("swarmkit/evals/support_desk/tasks.json").read_text())
    order = [t for t in desk_tasks["tasks"] if t["id"] == "order-status"]
    (tmp_path / "tasks.json").write_text(
        json.dumps({"domain": "desk_spend:DOMAIN", "tasks": order})
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.delenv("SWARMKIT_JOURNAL", raising=False)
    yield "desk_spend:swarm"
    sys.modules.pop("desk_spend", None)


def test_eval_ledger_option_charges_another_ledger_or_none(
    desk: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--ledger eval.sqlite` charges the trials there with the swarm's budgets, `--ledger
    none` charges nothing, and the swarm's own ledger never sees a call."""
    base = ["eval", "tasks.json", "--swarm", desk, "--journal", "j.sqlite", "--report", "json"]

    assert main([*base, "--ledger", "eval.sqlite", "--run-id", "a"]) == 0
    assert _statuses(capsys.readouterr().out) == ["passed"]
    assert main([*base, "--ledger", "none", "--run-id", "b"]) == 0
    assert _statuses(capsys.readouterr().out) == ["passed"]

    assert _calls(tmp_path / "eval.sqlite") == 2  # one trial of two calls, run "a" only
    assert _calls(tmp_path / "own.sqlite") == 0
    assert main(["spend", "--ledger", "eval.sqlite", "--json"]) == 0
    budgets = json.loads(capsys.readouterr().out)["budgets"]
    assert [(b["budget"], b["spent"]) for b in budgets] == [("calls", 2)]
    assert main([*base, "--ledger", " "]) == 2
    assert "--ledger takes an SQLite file" in capsys.readouterr().err
