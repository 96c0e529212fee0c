"""A session as the session page shows it: its summary, its steps, and what a pause waits for."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from swarmkit.exceptions import SwarmkitError
from swarmkit.graph import RouteExplanation
from swarmkit.journal import JournalRecord
from swarmkit.lowlevel import StepTime, step_times
from swarmkit.messages import message_facts
from swarmkit.swarm import Swarm
from swarmkit.ui._redact import REDACTED, is_secret_key
from swarmkit.ui._sessions import figures

JOURNAL_KINDS = frozenset(
    {
        "run_started", "agent_started", "model_call", "tool_call", "tool_required", "rule",
        "handoff", "handoff_refused", "handoff_invalid", "on_handoff", "output_rejected",
        "interrupt", "resumed", "limit_reached", "state_edited", "run_finished",
    }
)  # fmt: skip
"""The record kinds swarmkit writes; a step of any other kind is shown as unknown."""

# Bulky or internal fields a person does not read on the page (a model call's request is
# sent apart, as what the model saw).
_HIDDEN = {"model_call": ("digest", "request"), "agent_started": ("sub_session_id",)}


def session_view(records: Sequence[JournalRecord], swarm: Swarm | None) -> dict[str, Any]:
    """The session page's data: summary, steps (with rule explanations when the swarm is
    known), and the pending decision of a paused run."""
    found = figures(records)
    finished = [r for r in records if r.kind == "run_finished"]
    last = finished[-1].data if finished else None
    stop_reason = last.get("stop_reason") if last else None
    stop_reason = stop_reason if isinstance(stop_reason, str) else None
    times = step_times(records)
    return {
        "session_id": records[0].session_id,
        "status": "interrupted"
        if stop_reason == "interrupted"
        else ("finished" if last else "open"),
        "state": found.state,
        "started_at": times[0].start if times else None,
        "duration": times[-1].end - times[0].start if times else None,
        "agent_time": _agent_time(records, times),
        "stop_reason": stop_reason,
        "records": len(records),
        "trail": list(found.trail),
        "handoffs": found.handoffs,
        "model_calls": found.model_calls,
        "tokens": found.tokens,
        "path": path_of(records),
        "pending": (last.get("pending") if last and stop_reason == "interrupted" else None),
        "steps": _timed(_steps(records, swarm), records, times),
    }


def _timed(
    steps: list[dict[str, Any]], records: Sequence[JournalRecord], times: Sequence[StepTime]
) -> list[dict[str, Any]]:
    """Each step with its time, how long it took, its agent, and for a model call what the
    model saw (the journal's summary of the request)."""
    for index, (step, record) in enumerate(zip(steps, records, strict=True)):
        if times:
            step["at"] = times[index].end
            step["duration"] = times[index].duration
            step["agent"] = times[index].agent
        if record.kind == "model_call" and isinstance(record.data.get("request"), Mapping):
            step["saw"] = dict(record.data["request"])
    return steps


def _agent_time(records: Sequence[JournalRecord], times: Sequence[StepTime]) -> dict[str, float]:
    spent: dict[str, float] = {}
    for record, step in zip(records, times, strict=False):
        if step.agent is not None and record.kind != "resumed":
            spent[step.agent] = spent.get(step.agent, 0.0) + step.duration
    return spent


def path_of(records: Sequence[JournalRecord]) -> list[dict[str, Any]]:
    """Every handoff performed, in order: source, target, number and who decided it."""
    return [
        {
            "source": _text(r.data.get("source")),
            "target": _text(r.data.get("target")),
            "number": r.data.get("number"),
            "decided_by": _text(r.data.get("decided_by")),
        }
        for r in records
        if r.kind == "handoff"
    ]


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _steps(records: Sequence[JournalRecord], swarm: Swarm | None) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = []
    context: dict[str, Any] = {}
    agent, handoff_count = "", 0
    said: dict[str, Any] = message_facts(None)
    explained: set[tuple[str, int]] = set()
    for record in records:
        data = {k: v for k, v in record.data.items() if k not in _HIDDEN.get(record.kind, ())}
        step: dict[str, Any] = {"seq": record.seq, "kind": record.kind, "data": data}
        if record.kind not in JOURNAL_KINDS:
            step["unknown"] = True
        try:
            if record.kind == "run_started":
                context = dict(record.data.get("context") or {})
                said = message_facts(record.data.get("prompt"))
            elif record.kind == "agent_started":
                agent = str(record.data.get("agent"))
                handoff_count = int(record.data.get("handoff_count") or 0)
            elif record.kind == "tool_call":
                update = (record.data.get("outcome") or {}).get("update")
                if isinstance(update, Mapping):
                    context.update(update)
                sub_run = _sub_run_of(record, swarm, handoff_count)
                if sub_run is not None:
                    data["sub_session"] = sub_run
            if swarm is not None and _routes_here(record, swarm, explained, handoff_count):
                facts = {"agent": agent, "handoff_count": handoff_count, **said}
                state = {**context, "swarm": facts}
                step["explain"] = _explanation(swarm, agent, state)
        except (TypeError, ValueError, AttributeError, SwarmkitError) as exc:
            # One record the viewer cannot read (a foreign or damaged journal) is shown as
            # such; the steps around it still render.
            step["unreadable"] = f"{type(exc).__name__}: {exc}"
        steps.append(step)
    return steps


def _sub_run_of(record: JournalRecord, swarm: Swarm | None, handoff_count: int) -> str | None:
    """The session id of the sub-run a delegation tool call ran, when the swarm says it is one."""
    data = record.data
    plan = swarm.plans.get(str(data.get("agent"))) if swarm is not None else None
    delegate = plan.delegates.get(str(data.get("name"))) if plan is not None else None
    if delegate is None:
        return None
    return f"{record.session_id}__swarm_{delegate.agent}_{handoff_count}_{data.get('id')}"


def _routes_here(
    record: JournalRecord, swarm: Swarm, explained: set[tuple[str, int]], handoffs: int
) -> bool:
    """A rule that fired, or an agent's first model call when it has rules that did not."""
    agent = str(record.data.get("agent"))
    if swarm.graph is None or not swarm.graph.has_node(agent) or not swarm.graph.edges(agent):
        return False
    if record.kind == "rule":
        explained.add((agent, handoffs))
        return True
    if record.kind == "model_call" and (agent, handoffs) not in explained:
        explained.add((agent, handoffs))
        return True
    return False


def _explanation(swarm: Swarm, agent: str, state: Mapping[str, Any]) -> dict[str, Any]:
    assert swarm.graph is not None
    explanation: RouteExplanation = swarm.graph.explain(agent, state)
    return {
        "fired": explanation.target,
        "trials": [
            {
                "target": trial.edge.target,
                "when": trial.edge.when,
                "matched": trial.matched,
                "values": [
                    {
                        "path": v.path,
                        "value": REDACTED if is_secret_key(v.path) else v.value,
                        "found": v.found,
                    }
                    for v in trial.values
                ],
            }
            for trial in explanation.trials
        ],
    }
