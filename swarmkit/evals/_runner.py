"""The eval runner: k journaled trials per task (live), and stored trials regraded or replayed."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from swarmkit.evals._approvals import ApprovingSwarms, SwarmSource
from swarmkit.evals._graders import (
    Expectation,
    Grader,
    default_graders,
    expectation,
    grade,
    trial_cost,
)
from swarmkit.evals._kept import KeepingJournal
from swarmkit.evals._report import EvalReport, Mode, TrialResult, group_trials
from swarmkit.evals._suggested import suggested_rules
from swarmkit.evals._tasks import Task, TaskSet
from swarmkit.evals._trial import (
    RUN_GRADED,
    RUN_STARTED,
    TRIAL_FINISHED,
    StoredTrial,
    Trial,
    manifest_id,
    route_facts,
    trial_session_id,
)
from swarmkit.evals._users import ModelUser, ScriptedUser, User, UserTurn, next_scripted
from swarmkit.exceptions import ConfigurationError, ReplayDivergenceError, SessionNotFoundError
from swarmkit.journal import InMemoryJournal, Journal, JournalRecord
from swarmkit.limits import CostFunction, UsageLimits
from swarmkit.runtime import DEFAULT_RUNTIME
from swarmkit.swarm import Swarm

Progress = Callable[[int, int], None]
"""Called after each trial with (trials done, trials in all)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class _Settings:
    tasks: TaskSet
    journal: Journal
    run_id: str
    user: User
    graders: tuple[Grader, ...]
    price: CostFunction | None
    limits: UsageLimits | None
    max_turns: int


async def evaluate(
    tasks: TaskSet,
    swarm: SwarmSource,
    *,
    trials: int = 1,
    journal: Journal | None = None,
    user: User | None = None,
    graders: Sequence[Grader] | None = None,
    price: CostFunction | None = None,
    limits: UsageLimits | None = None,
    concurrency: int = 4,
    run_id: str | None = None,
    max_turns: int = 10,
    progress: Progress | None = None,
) -> EvalReport:
    """Run every task ``trials`` times against the swarm (live) and grade each trial.

    Every trial is journaled (``journal``, else memory) as sessions tagged with the eval run,
    task and trial (``eval-{run}-{task}-{n}``, later turns ``__turn_N``), and the run's
    manifest session ``evalrun__{run}`` lists them, so ``regrade`` and ``replay`` can read them
    back. ``limits`` bounds each run of a trial; a trial that raises, or where the user says
    nothing, fails with its reason (a task a scripted user cannot open: ConfigurationError).
    """
    _check_counts(trials, concurrency)
    kept = KeepingJournal(journal or InMemoryJournal())
    settings = _Settings(
        tasks=tasks,
        journal=kept,
        run_id=run_id or DEFAULT_RUNTIME.new_id()[:12],
        user=user or ScriptedUser(),
        graders=tuple(graders or default_graders(price)),
        price=price,
        limits=limits,
        max_turns=max_turns,
    )
    _check_openings(tasks, settings.user)
    manifest = await _started_manifest(settings, trials)
    results = await _live_trials(
        settings,
        swarm,
        manifest,
        kept=kept,
        trials=trials,
        concurrency=concurrency,
        progress=progress,
    )
    report = _report(settings, "live", results, trials)
    # The trials' records are in memory: the learner reads them there, as the graders did.
    return await _closed(manifest, await _with_suggestions(report, kept.reading_kept()))


def _check_counts(trials: int, concurrency: int) -> None:
    if trials < 1 or concurrency < 1:
        raise ConfigurationError(
            f"trials and concurrency must be at least 1, got {trials} and {concurrency}"
        )


async def _closed(manifest: _Manifest, report: EvalReport) -> EvalReport:
    """The report, once the manifest records its grades (`swarmkit eval --list` shows them)."""
    hats = {str(k): report.pass_hat(k) for k in range(1, report.k + 1)}
    await manifest.add(RUN_GRADED, {"pass_rate": report.pass_rate, "pass_hat": hats})
    return report


def _check_openings(tasks: TaskSet, user: User) -> None:
    """Refuse, before any trial, a task the scripted user has nothing to open with: its
    trials would run nothing and grade nothing."""
    if not isinstance(user, ScriptedUser):
        return
    silent = [
        task.id
        for task in tasks.tasks
        if next_scripted(task.turns if user.turns is None else user.turns, ()) is None
    ]
    if silent:
        raise ConfigurationError(
            f"task {', '.join(map(repr, silent))}: the scripted user has nothing to say first; "
            "give the task turns (the first without 'when' opens the dialogue), or evaluate "
            "it with a ModelUser, which plays the scenario"
        )


async def _started_manifest(settings: _Settings, trials: int) -> _Manifest:
    """The eval run's manifest session, begun with what the run is."""
    tasks = settings.tasks
    manifest = _Manifest(settings.journal, settings.run_id)
    await manifest.add(
        RUN_STARTED,
        {
            "run_id": settings.run_id,
            "trials": trials,
            "tasks": [t.id for t in tasks.tasks],
            "domain": tasks.domain.name,
        },
    )
    return manifest


async def _live_trials(
    settings: _Settings,
    swarm: SwarmSource,
    manifest: _Manifest,
    *,
    kept: KeepingJournal,
    trials: int,
    concurrency: int,
    progress: Progress | None,
) -> list[TrialResult]:
    """Every task's ``trials`` trials, in that order, run by ``concurrency`` workers: each
    trial is added to the manifest and graded as it finishes, then counted in ``progress``."""
    expected = {t.id: await expectation(t, settings.tasks.domain) for t in settings.tasks.tasks}
    jobs = [(task, n) for task in settings.tasks.tasks for n in range(1, trials + 1)]
    results: dict[int, TrialResult] = {}
    waiting = iter(enumerate(jobs))  # shared: a worker takes the next job when it is free
    swarms = ApprovingSwarms(swarm)

    async def worker() -> None:
        for index, (task, number) in waiting:
            stored = await _live_trial(settings, swarms, task, number)
            await manifest.add(TRIAL_FINISHED, stored.to_data())
            records = [await kept.kept(s) for s in stored.sessions]
            results[index] = _graded(settings, stored, records, expected[task.id])
            if progress is not None:
                progress(len(results), len(jobs))

    await asyncio.gather(*(worker() for _ in range(min(concurrency, len(jobs)))))
    return [results[index] for index in range(len(jobs))]


async def regrade(
    run_id: str,
    tasks: TaskSet,
    journal: Journal,
    *,
    graders: Sequence[Grader] | None = None,
    price: CostFunction | None = None,
) -> EvalReport:
    """Grade a stored eval run's trials with the current graders and tasks: zero model calls."""
    settings = _settings_for_stored(run_id, tasks, journal, graders=graders, price=price)
    stored, k = await stored_trials(journal, run_id)
    expected = {t.id: await expectation(t, tasks.domain) for t in tasks.tasks}
    results = []
    for trial in stored:
        if trial.task_id in expected:
            records = await _read(journal, trial.sessions)
            results.append(_graded(settings, trial, records, expected[trial.task_id]))
    return await _with_suggestions(_report(settings, "regrade", results, k, source=run_id), journal)


async def replay(
    run_id: str,
    tasks: TaskSet,
    swarm: SwarmSource,
    journal: Journal,
    *,
    user: User | None = None,
    graders: Sequence[Grader] | None = None,
    price: CostFunction | None = None,
) -> EvalReport:
    """Re-run the current swarm code against a stored eval run with zero model calls.

    Model answers (and a model-driven user's) come from the journal; tools run again on a
    fresh database, so the end state is recomputed. A trial whose requests changed is
    ``drifted``, with the divergence diff, and is not scored.
    """
    settings = _settings_for_stored(run_id, tasks, journal, graders=graders, price=price, user=user)
    stored, k = await stored_trials(journal, run_id)
    expected = {t.id: await expectation(t, tasks.domain) for t in tasks.tasks}
    results: list[TrialResult] = []
    steps = 0
    swarms = ApprovingSwarms(swarm)
    for trial in stored:
        task = tasks.get(trial.task_id)
        if task is None:
            continue
        outcome = await _replayed(settings, swarms.for_trial(task, trial.number), task, trial)
        if isinstance(outcome, TrialResult):
            results.append(outcome)
            continue
        replayed, count = outcome
        steps += count
        records = await _read(journal, replayed.sessions)
        results.append(_graded(settings, replayed, records, expected[task.id]))
    report = _report(settings, "replay", results, k, source=run_id, steps=steps)
    return await _with_suggestions(report, journal)


def _settings_for_stored(
    run_id: str,
    tasks: TaskSet,
    journal: Journal,
    *,
    graders: Sequence[Grader] | None,
    price: CostFunction | None,
    user: User | None = None,
) -> _Settings:
    return _Settings(
        tasks=tasks,
        journal=journal,
        run_id=run_id,
        user=user or ScriptedUser(),
        graders=tuple(graders or default_graders(price)),
        price=price,
        limits=None,
        max_turns=10,
    )


async def stored_trials(journal: Journal, run_id: str) -> tuple[tuple[StoredTrial, ...], int]:
    """An eval run's stored trials and its trials per task, from its manifest."""
    try:
        records = await journal.read(manifest_id(run_id))
    except SessionNotFoundError:
        raise SessionNotFoundError(
            f"no eval run {run_id!r} in the journal; `swarmkit eval` lists none by that id"
        ) from None
    k = next((int(r.data.get("trials", 1)) for r in records if r.kind == RUN_STARTED), 1)
    trials = tuple(StoredTrial.from_data(r.data) for r in records if r.kind == TRIAL_FINISHED)
    return tuple(sorted(trials, key=lambda t: (t.task_id, t.number))), k


async def eval_runs(journal: Journal) -> tuple[str, ...]:
    """The ids of the eval runs a journal holds, newest first."""
    prefix = manifest_id("")
    return tuple(
        s.session_id[len(prefix) :]
        for s in await journal.sessions()
        if s.session_id.startswith(prefix)
    )


async def _live_trial(
    settings: _Settings, swarms: ApprovingSwarms, task: Task, number: int
) -> StoredTrial:
    database = task.initial_database(settings.tasks.domain)
    base = trial_session_id(settings.run_id, task.id, number)
    stored = StoredTrial(run_id=settings.run_id, task_id=task.id, number=number, sessions=())
    dialogue = _Dialogue()
    sessions: list[str] = []
    users: list[str] = []
    previous: Any = None
    try:
        approving = swarms.for_trial(task, number)
        for turn in range(1, settings.max_turns + 1):
            said = _turn(settings, task=task, trial=stored, number=turn, dialogue=dialogue)
            message = await settings.user.speak(said)
            if isinstance(settings.user, ModelUser) and turn <= settings.user.max_turns:
                users.append(said.session_id)
            if message is None:
                break
            session = base if turn == 1 else f"{base}__turn_{turn}"
            sessions.append(session)
            dialogue.user.append(message)
            previous = await approving.run(
                message,
                context=task.context,
                deps=database,
                session_id=session,
                journal=settings.journal,
                history=previous,
                limits=settings.limits,
            )
            dialogue.agent.append(_answer_text(previous))
            if previous.stop_reason != "final_output":
                break
    except Exception as exc:  # an erroring trial is a failed trial, never a crashed eval
        stored = replace(stored, error=f"{type(exc).__name__}: {exc}")
    return replace(
        stored,
        sessions=tuple(sessions),
        user_sessions=tuple(users),
        user_said=tuple(dialogue.user),
        database=database,
    )


def _answer_text(result: Any) -> str:
    text = result.final_output_text
    return text if isinstance(text, str) else str(result.final_output or "")


async def _replayed(
    settings: _Settings, approving: Swarm, task: Task, trial: StoredTrial
) -> tuple[StoredTrial, int] | TrialResult:
    """The trial re-run from the journal by the approving swarm, with its tools executed on
    a fresh database, or a drifted result."""
    database = task.initial_database(settings.tasks.domain)
    dialogue = _Dialogue()
    records = 0
    try:
        for i, session in enumerate(trial.sessions):
            said = _turn(settings, task=task, trial=trial, number=i + 1, dialogue=dialogue)
            message = await settings.user.replay(said)
            if message is None:
                raise _Drift(
                    f"the user now ends the dialogue before turn {i + 1}, which the journal holds"
                )
            dialogue.user.append(message)
            result = await approving.replay(
                session, settings.journal, tools="execute", deps=database, prompt=message
            )
            records += await settings.journal.next_seq(session)
            dialogue.agent.append(_answer_text(result))
            last = result
        if (
            trial.sessions
            and last.stop_reason == "final_output"
            and len(trial.sessions) < settings.max_turns
        ):
            number = len(trial.sessions) + 1
            said = _turn(settings, task=task, trial=trial, number=number, dialogue=dialogue)
            if await settings.user.replay(said) is not None:
                raise _Drift("the user now goes on after the journal's last turn")
    except (ReplayDivergenceError, _Drift) as exc:
        return TrialResult(
            task_id=trial.task_id,
            number=trial.number,
            status="drifted",
            sessions=trial.sessions,
            detail=str(exc),
        )
    return replace(trial, database=database), records


@dataclass(kw_only=True, slots=True)
class _Dialogue:
    """What a trial's user and agents have said so far, one entry per turn."""

    user: list[str] = field(default_factory=list)
    agent: list[str] = field(default_factory=list)


def _turn(
    settings: _Settings,
    *,
    task: Task,
    trial: StoredTrial,
    number: int,
    dialogue: _Dialogue,
) -> UserTurn:
    """The user's turn ``number`` of the trial, after what ``dialogue`` holds so far."""
    base = trial_session_id(trial.run_id, task.id, trial.number)
    return UserTurn(
        task=task,
        number=number,
        agent_said=tuple(dialogue.agent),
        user_said=tuple(dialogue.user),
        session_id=f"{base}__user_{number}",
        journal=settings.journal,
    )


async def _read(journal: Journal, sessions: Sequence[str]) -> list[tuple[JournalRecord, ...]]:
    return [await journal.read(s) for s in sessions]


def _graded(
    settings: _Settings,
    stored: StoredTrial,
    sessions: Sequence[Sequence[JournalRecord]],
    expected: Expectation,
) -> TrialResult:
    """The trial graded from its agent sessions' records."""
    return grade_trial(
        Trial(stored=stored, facts=route_facts(sessions)),
        expected,
        settings.graders,
        settings.price,
    )


def grade_trial(
    trial: Trial,
    expected: Expectation,
    graders: Sequence[Grader],
    price: CostFunction | None = None,
) -> TrialResult:
    """A trial's result: every grade, passed when every grade passed."""
    grades = grade(trial, expected, graders)
    facts = trial.facts
    return TrialResult(
        task_id=trial.stored.task_id,
        number=trial.stored.number,
        status="passed" if all(g.passed for g in grades) else "failed",
        grades=grades,
        sessions=trial.stored.sessions,
        hops=facts.hops,
        rule_decided=facts.rule_decided,
        stop_reason=facts.stop_reason,
        tokens=facts.usage.total_tokens,
        cost=None if price is None else trial_cost(trial, price),
        detail="; ".join(f"{g.grader}: {g.detail}" for g in grades if not g.passed),
    )


def _report(
    settings: _Settings,
    mode: Mode,
    results: Sequence[TrialResult],
    k: int,
    *,
    source: str | None = None,
    steps: int | None = None,
) -> EvalReport:
    extra: dict[str, Any] = {"domain": settings.tasks.domain.name}
    if source is not None:
        extra["source_run"] = source
    if steps is not None:
        extra["replayed_steps"] = steps
    tasks = group_trials(results, [t.id for t in settings.tasks.tasks])
    return EvalReport(
        run_id=settings.run_id,
        mode=mode,
        tasks=tasks,
        k=k,
        model_calls=None if mode == "live" else 0,
        extra=extra,
    )


async def _with_suggestions(report: EvalReport, journal: Journal) -> EvalReport:
    """The report with the rules its trials suggest (the learner reads the journal only)."""
    return replace(report, suggested_rules=await suggested_rules(journal, report.run_id))


class _Drift(Exception):
    """The dialogue itself changed: the user now says less or more than the journal holds."""


class _Manifest:
    """The eval run's own session: a start record, then one record per finished trial."""

    def __init__(self, journal: Journal, run_id: str) -> None:
        self._journal = journal
        self._session = manifest_id(run_id)
        self._lock = asyncio.Lock()
        self._seq: int | None = None  # asked once: only this object writes the session

    async def add(self, kind: str, data: dict[str, Any]) -> None:
        async with self._lock:
            if self._seq is None:
                self._seq = await self._journal.next_seq(self._session)
            await self._journal.append(
                [JournalRecord(session_id=self._session, seq=self._seq, kind=kind, data=data)]
            )
            self._seq += 1
