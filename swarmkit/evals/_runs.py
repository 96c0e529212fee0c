"""The eval runs a journal holds, read from their manifests: when, how many tasks and trials,
and the pass^k each live run measured."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from swarmkit.evals._trial import MANIFEST_PREFIX, RUN_GRADED, RUN_STARTED, TRIAL_FINISHED
from swarmkit.journal import Journal, JournalRecord, SessionInfo


@dataclass(frozen=True, kw_only=True, slots=True)
class EvalRun:
    """One eval run as its manifest session records it."""

    run_id: str
    """The run's id (``--regrade RUN`` and ``--replay RUN`` take it)."""
    started_at: float
    """Unix seconds when the run began."""
    domain: str | None
    """The name of the tasks' Domain."""
    tasks: int
    """How many tasks the run was given."""
    trials: int
    """Trials per task (the k of pass^k)."""
    trials_done: int
    """Trials the manifest holds: ``tasks * trials`` for a run that ran to its end."""
    pass_hat: Mapping[int, float | None] = field(default_factory=dict)
    """pass^1 .. pass^k as the run graded them; empty when it stopped before grading."""

    @property
    def graded(self) -> bool:
        """Whether the run ran to its end and recorded its grades."""
        return bool(self.pass_hat)


async def list_eval_runs(journal: Journal) -> tuple[EvalRun, ...]:
    """Every eval run in ``journal``, newest first."""
    infos = [s for s in await journal.sessions() if s.session_id.startswith(MANIFEST_PREFIX)]
    return tuple([_run(info, await journal.read(info.session_id)) for info in infos])


def _run(info: SessionInfo, records: tuple[JournalRecord, ...]) -> EvalRun:
    start: Mapping[str, object] = next((r.data for r in records if r.kind == RUN_STARTED), {})
    graded = next((r.data for r in records if r.kind == RUN_GRADED), {})
    hats = graded.get("pass_hat") if isinstance(graded, Mapping) else None
    tasks = start.get("tasks")
    trials = start.get("trials")
    domain = start.get("domain")
    return EvalRun(
        run_id=info.session_id[len(MANIFEST_PREFIX) :],
        started_at=info.started_at,
        domain=domain if isinstance(domain, str) else None,
        tasks=len(tasks) if isinstance(tasks, list) else 0,
        trials=trials if isinstance(trials, int) else 1,
        trials_done=sum(r.kind == TRIAL_FINISHED for r in records),
        pass_hat={int(k): v for k, v in hats.items()} if isinstance(hats, Mapping) else {},
    )


def runs_table(runs: tuple[EvalRun, ...]) -> str:
    """The runs as a table for a terminal: one line each, newest first."""
    rows = [("RUN", "STARTED", "DOMAIN", "TASKS", "TRIALS", "PASS^K")]
    for run in runs:
        started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(run.started_at))
        done = f"{run.trials_done}/{run.tasks * run.trials}"
        rows.append((run.run_id, started, run.domain or "-", str(run.tasks), done, _hats(run)))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    )


def _hats(run: EvalRun) -> str:
    if not run.graded:
        return "not graded (stopped before its end)"
    return " ".join(
        f"^{k} {'-' if value is None else f'{value:.3f}'}"
        for k, value in sorted(run.pass_hat.items())
    )
