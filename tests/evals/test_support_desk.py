"""The support-desk example domain in all three modes, offline."""

from __future__ import annotations

from dataclasses import replace

from swarmkit import InMemoryJournal, RecordingModel
from swarmkit.evals import Reply, TaskSet, eval_runs, evaluate, grader, regrade, replay
from swarmkit.evals.support_desk import DeskModel, build_swarm, tasks
from swarmkit.models import Usage


async def test_a_live_run_journals_and_grades_every_trial() -> None:
    """22 tasks x 2 trials: every trial journaled, one known-bad task fails, pass^k exact."""
    journal = InMemoryJournal()
    report = await evaluate(tasks(), build_swarm(), trials=2, journal=journal, run_id="live1")
    assert len(report.trials) == 44
    failed = {t.task_id for t in report.trials if not t.passed}
    assert failed == {"refund-then-ticket"}
    assert report.pass_hat(1) == report.pass_hat(2) == 21 / 22
    assert await eval_runs(journal) == ("live1",)
    sessions = {s.session_id for s in await journal.sessions()}
    assert "eval-live1-refund-damaged-2" in sessions
    metrics = report.route_metrics()
    assert 0 < metrics["rule_share"] < 1


async def test_a_failed_trial_shows_the_database_diff() -> None:
    """The database grader names the path that differs."""
    report = await evaluate(tasks(), build_swarm(), run_id="diff")
    bad = next(t for t in report.trials if t.task_id == "refund-then-ticket")
    assert "tickets" in bad.detail and "accounts never took a turn" in bad.detail


async def test_regrading_uses_new_graders_and_calls_no_model() -> None:
    """Stored trials are scored by graders written after the run, with zero model calls."""
    journal = InMemoryJournal()
    done = await evaluate(tasks(), build_swarm(), trials=2, journal=journal, run_id="r1")

    @grader("two_hops")
    def at_most_zero_hops(trial, expected) -> bool:  # type: ignore[no-untyped-def]
        return bool(trial.facts.hops == 0)

    again = await regrade(done.run_id, tasks(), journal, graders=[at_most_zero_hops])
    assert again.model_calls == 0 and again.mode == "regrade"
    zero_hop_tasks = {t.task_id for t in done.trials if t.hops == 0}
    assert {t.task_id for t in again.trials if t.passed} == zero_hop_tasks


async def test_replay_reproduces_the_run_with_zero_model_calls() -> None:
    """Replay re-runs the current code on the journal: same verdicts, no model call."""
    journal = InMemoryJournal()
    done = await evaluate(tasks(), build_swarm(), trials=2, journal=journal, run_id="p1")
    model = RecordingModel(DeskModel())
    again = await replay(done.run_id, tasks(), build_swarm(model), journal)
    assert model.calls == 0
    assert not again.drifted
    assert [t.status for t in again.trials] == [t.status for t in done.trials]
    assert again.extra["replayed_steps"] > 0


async def test_a_trial_whose_requests_changed_is_drifted_with_its_diff() -> None:
    """A changed user message makes replay diverge: drifted, diff shown, never re-scored."""
    journal = InMemoryJournal()
    original = tasks()
    await evaluate(original, build_swarm(), journal=journal, run_id="d1")
    changed = replace(original.task("greeting"), turns=(Reply(say="Good morning"),))
    edited = TaskSet(
        domain=original.domain,
        tasks=tuple(changed if t.id == "greeting" else t for t in original.tasks),
    )
    again = await replay("d1", edited, build_swarm(), journal)
    assert [(t.task_id, t.status) for t in again.drifted] == [("greeting", "drifted")]
    assert "Good morning" in again.drifted[0].detail
    assert again.tasks[[t.id for t in edited.tasks].index("greeting")].pass_hat(1) is None


async def test_a_trial_that_raises_is_a_failed_trial_with_its_reason() -> None:
    """An exception inside a trial fails that trial only."""

    def broken(task, number):  # type: ignore[no-untyped-def]
        if task.id == "greeting":
            raise RuntimeError("no swarm for you")
        return build_swarm()

    report = await evaluate(tasks(), broken, run_id="e1")
    greeting = next(t for t in report.trials if t.task_id == "greeting")
    assert greeting.status == "failed" and "no swarm for you" in greeting.detail
    assert sum(t.passed for t in report.trials) == 20


async def test_a_live_run_grades_and_suggests_as_its_regrade_from_the_journal_does() -> None:
    """Live grading reads the trials' records in memory: a regrade reading them back from the
    journal gives every trial the same grades, tokens and cost, and the same suggested rules."""
    journal = InMemoryJournal()

    def price(model: str, usage: Usage) -> float:
        return usage.total_tokens * 1e-6

    live = await evaluate(tasks(), build_swarm(), trials=3, journal=journal, price=price)
    again = await regrade(live.run_id, tasks(), journal, price=price)

    assert again.trials == live.trials
    assert again.suggested_rules == live.suggested_rules
    assert live.suggested_rules is not None and live.suggested_rules.rules
