"""A process SIGKILLed between an effect and its journaled result: the provider is paid once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from swarmkit import edit
from swarmkit.journal import SQLiteJournal
from swarmkit.swarm import DEFAULT_LEASE_TTL
from swarmkit.testing import ScriptedModel, text

from .payments_app import SESSION, build_swarm, looked_up, payments

ROOT = Path(__file__).resolve().parents[2]


def _kill_after_payment(journal: Path, ledger: Path) -> None:
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.effects.payments_app", str(journal), str(ledger)],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "paid"  # paid, result not yet journaled
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    assert child.returncode == -signal.SIGKILL


def _after_lease(path: Path) -> SQLiteJournal:
    """The journal as seen once the killed holder's lease has run out."""
    return SQLiteJournal(path, clock=lambda: time.time() + DEFAULT_LEASE_TTL + 1)


@pytest.mark.slow
async def test_killed_effect_with_reconcile_is_paid_once(tmp_path: Path) -> None:
    """Resume asks the provider, journals its answer and never pays again."""
    journal, ledger = tmp_path / "journal.sqlite", tmp_path / "ledger.sqlite"
    _kill_after_payment(journal, ledger)
    kinds = [r.kind for r in await SQLiteJournal(journal).read(SESSION)]
    assert kinds[-1] == "effect_intent"
    swarm = build_swarm(ledger, reconcile=looked_up(ledger))
    resumed = await swarm.with_model(ScriptedModel(text("done"))).resume(
        SESSION, _after_lease(journal)
    )
    assert resumed.final_output == "done"
    assert len(payments(ledger)) == 1
    outcome = [r.data for r in await SQLiteJournal(journal).read(SESSION) if r.kind == "tool_call"]
    assert outcome[0]["outcome"]["content"] == "paid o-1"


@pytest.mark.slow
async def test_killed_effect_without_reconcile_waits_for_a_person(tmp_path: Path) -> None:
    """Resume pauses with the evidence; the person's answer finishes it; paid once."""
    journal, ledger = tmp_path / "journal.sqlite", tmp_path / "ledger.sqlite"
    _kill_after_payment(journal, ledger)
    swarm = build_swarm(ledger, reconcile=None).with_model(ScriptedModel(text("done")))
    paused = await swarm.resume(SESSION, _after_lease(journal))
    assert paused.pending is not None and paused.pending.kind == "effect"
    key = (paused.pending.payload or {})["idempotency"]
    assert payments(ledger) == [(key, "o-1")]  # the person finds it at the provider
    done = await swarm.resume(
        SESSION, _after_lease(journal), decision=edit(payload={"result": "paid o-1"})
    )
    assert done.final_output == "done"
    assert len(payments(ledger)) == 1
