"""Live what-if: the sessions proposed rules route differently, re-run against the swarm's model."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from swarmkit.exceptions import ReplayDivergenceError, RuleLearningError
from swarmkit.journal import Journal, JournalRecord
from swarmkit.rules._corpus import WHATIF_MARK
from swarmkit.rules._judge import with_rules
from swarmkit.rules._whatif import WhatIfReport
from swarmkit.swarm import Swarm


@dataclass(frozen=True, kw_only=True, slots=True)
class Rerun:
    """A session the rules route differently, re-run live from the step where they first
    change what the model is asked, into a new session journaled beside it."""

    session_id: str
    """The journaled session."""
    rerun_id: str
    """The new session, ``{session_id}__whatif_{step}``: its steps before ``step`` are the
    journaled ones, the rest ran against the swarm's model."""
    step: int
    """The step where the rules first change a request (a rule now decides where the model
    was asked, or the other way round)."""
    journaled: tuple[str, ...]
    """The agents of the journaled session, in the order they became active."""
    trail: tuple[str, ...]
    """The agents of the re-run, in the same order."""
    stop_reason: str | None
    """Why the re-run stopped (``None`` if it never finished)."""
    model_calls: int
    """Model calls the re-run made from ``step`` on."""
    existing: bool = False
    """The journal already held this re-run: it was read back, not run again."""


async def rerun_changed(swarm: Swarm, journal: Journal, report: WhatIfReport) -> tuple[Rerun, ...]:
    """Re-run every session ``report`` calls changed against ``swarm``'s models, with the
    report's rules added after the swarm's graph.

    Each re-run replays the journaled steps the rules leave alone, then forks where they first
    change a request into a new session, ``{session_id}__whatif_{step}``, in ``journal``
    (as [Swarm.what_if][swarmkit.Swarm.what_if] does with ``live=True``). A session the
    journal already holds a re-run of is read back instead of being run (and paid for) again,
    once it replays under these rules with zero model calls; ``RuleLearningError`` when it
    ran under other rules. Suggestions and what-ifs leave these sessions out of their corpus.
    """
    ruled = swarm.with_graph(with_rules(swarm.graph, report.rules))
    held = {info.session_id for info in await journal.sessions()}
    reruns = []
    for session in report.changed:
        earlier = sorted(name for name in held if name.startswith(_mark(session.session_id)))
        if earlier:
            rerun_id = earlier[0]
            await _check_same_rules(ruled, journal, rerun_id)
        else:
            rerun_id = (await ruled.what_if(session.session_id, journal, live=True)).session_id
        reruns.append(await _rerun(journal, session.session_id, rerun_id, existing=bool(earlier)))
    return tuple(reruns)


def _mark(session_id: str) -> str:
    return f"{session_id}{WHATIF_MARK}"


async def _check_same_rules(ruled: Swarm, journal: Journal, rerun_id: str) -> None:
    """A re-run already journaled must be what these rules run: it replays under them with
    zero model calls, or it ran under other rules (or code) and cannot stand for them."""
    try:
        await ruled.replay(rerun_id, journal)
    except ReplayDivergenceError as exc:
        raise RuleLearningError(
            f"the journal already holds {rerun_id}, a re-run under other rules or code (it "
            f"diverges at step {exc.step}); delete it (swarmkit delete {rerun_id}) to re-run "
            "it under these rules"
        ) from exc


async def _rerun(journal: Journal, session_id: str, rerun_id: str, *, existing: bool) -> Rerun:
    """The re-run as its journaled records tell it."""
    records = await journal.read(rerun_id)
    _, _, number = rerun_id.rpartition(WHATIF_MARK)
    # A change that alters no request after all runs no new session: nothing ran live.
    step = int(number) if rerun_id != session_id and number.isdigit() else len(records)
    finished = [r for r in records if r.kind == "run_finished"]
    return Rerun(
        session_id=session_id,
        rerun_id=rerun_id,
        step=step,
        journaled=_trail(await journal.read(session_id)),
        trail=_trail(records),
        stop_reason=str(finished[-1].data.get("stop_reason")) if finished else None,
        model_calls=sum(1 for r in records[step:] if r.kind == "model_call"),
        existing=existing,
    )


def _trail(records: Sequence[JournalRecord]) -> tuple[str, ...]:
    return tuple(str(r.data.get("agent")) for r in records if r.kind == "agent_started")
