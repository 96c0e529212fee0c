"""The timeline of a journaled session: one line per step, for `swarmkit show`."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from swarmkit.console._text import compact_json, displayable, one_line, plural, tokens
from swarmkit.journal import JournalRecord
from swarmkit.lowlevel import StepTime, step_times


def timeline(records: Sequence[JournalRecord]) -> list[str]:
    """A journaled session as lines a person reads top to bottom, one step per line.

    When the records carry times, each step shows when it ended (seconds since the session
    began) and model and tool calls how long they took; the totals add time per agent.
    """
    lines = [f"session {records[0].session_id}: {plural(len(records), 'record')}"]
    timed = step_times(records)
    if timed:
        lines[0] += f", started {local_time(timed[0].start)}"
    for index, record in enumerate(records):
        clock = _clock(timed[index].end - timed[0].start) if timed else ""
        for number, text in enumerate(_step(record.kind, record.data)):
            took = ""
            if number == 0 and timed and record.kind in _TIMED:
                took = f"  ({seconds(timed[index].duration)})"
            lines.append(
                f"  {record.seq:>4}  {clock if number == 0 else ' ' * len(clock)}{text}{took}"
            )
    lines += _still_open(records)
    try:
        lines += _totals(records)
    except (TypeError, ValueError, AttributeError):
        lines.append("tokens: unknown (a model call's usage is not a set of counts)")
    if timed:
        lines += _time_totals(records, timed)
    return [displayable(line) for line in lines]


def seconds(duration: float) -> str:
    """A duration as a person reads it: ``0.42s``, ``12.3s``, ``2m05s``."""
    if duration < 10:
        return f"{duration:.2f}s"
    if duration < 60:
        return f"{duration:.1f}s"
    minutes, rest = divmod(round(duration), 60)
    return f"{minutes}m{rest:02d}s"


def local_time(at: float) -> str:
    """Unix seconds as local ``YYYY-MM-DD HH:MM:SS``, rounded to the microsecond first as
    ``swarmkit sessions`` and the viewer round them, so all three show the same second."""
    return datetime.fromtimestamp(at).strftime("%Y-%m-%d %H:%M:%S")


def _clock(since_start: float) -> str:
    return f"{'+' + seconds(since_start):>9}  "


_TIMED = frozenset({"model_call", "tool_call", "resumed"})


def _step(kind: str, data: Mapping[str, Any]) -> list[str]:
    describe = _STEPS.get(kind)
    try:
        if describe is not None:
            return describe(data)
    except (TypeError, ValueError, AttributeError, KeyError):
        pass  # a record of an unexpected shape is still shown, as its data
    return [f"{kind:<8} {one_line(compact_json(dict(data)))}"]


def _still_open(records: Sequence[JournalRecord]) -> list[str]:
    """For a session with no ``run_finished`` after its last start: how far it got."""
    if records[0].kind == "eval_run_started":
        return _eval_run_open(records)
    ends = [r.seq for r in records if r.kind == "run_finished"]
    starts = [r.seq for r in records if r.kind in ("run_started", "resumed")]
    if ends and (not starts or ends[-1] > starts[-1]):
        return []
    last = records[-1]
    models = sum(1 for r in records if r.kind == "model_call")
    return [
        f"open     no run_finished: the run crashed, was killed, or is still running; it "
        f"stopped after record {last.seq} ({last.kind}), {plural(models, 'model call')} in; "
        "swarm.resume(session_id) continues it"
    ]


def _eval_run_open(records: Sequence[JournalRecord]) -> list[str]:
    """An eval run's manifest is never a run: it is done once its grades are recorded."""
    if any(r.kind == "eval_run_graded" for r in records):
        return []
    trials = sum(1 for r in records if r.kind == "eval_trial")
    return [
        f"open     no grades recorded: the eval run stopped (or still runs) after "
        f"{plural(trials, 'trial')}; `swarmkit eval --regrade RUN` grades what it holds"
    ]


def _eval_run_started(data: Mapping[str, Any]) -> list[str]:
    tasks = data.get("tasks") or []
    return [
        f"eval     run {data.get('run_id')}: {plural(len(tasks), 'task')} x "
        f"{plural(int(data.get('trials') or 1), 'trial')} (domain {data.get('domain')})"
    ]


def _eval_trial(data: Mapping[str, Any]) -> list[str]:
    sessions = ", ".join(str(s) for s in data.get("sessions") or []) or "none"
    head = f"trial    {data.get('task_id')} #{data.get('number')}: sessions {sessions}"
    return [head, *_detail("error", data.get("error"))]


def _eval_run_graded(data: Mapping[str, Any]) -> list[str]:
    hats = data.get("pass_hat") or {}
    shown = ", ".join(
        f"pass^{k} {'-' if v is None else f'{float(v):.3f}'}" for k, v in hats.items()
    )
    return [f"graded   pass rate {float(data.get('pass_rate') or 0):.1%}; {shown}"]


def _run_started(data: Mapping[str, Any]) -> list[str]:
    lines = [
        f"start    entry agent {data.get('entry_agent')}",
        f"         prompt  {one_line(str(data.get('prompt')), limit=200)}",
        f"         context {compact_json(data.get('context') or {})}",
    ]
    if "history" in data:
        earlier = len(data.get("history") or [])
        lines.append(
            f"         continues {data.get('continues') or '-'} ({earlier} earlier messages)"
        )
    decision = data.get("next_turn")
    if isinstance(decision, Mapping):
        lines.append(f"         next turn {_next_turn(decision)}")
    return lines


def _next_turn(decision: Mapping[str, Any]) -> str:
    """Who the next-turn policy chose, and why, in words."""
    agent, last = decision.get("agent"), decision.get("last_agent")
    why = {
        "last": f"{agent} answered last",
        "entry": f"every message starts at the entry agent (last was {last})",
        "start_agent": f"the call's start_agent (last was {last})",
        "rule": f"rule {decision.get('condition')!r} held (last was {last})",
    }.get(str(decision.get("policy")), str(decision.get("policy")))
    return f"{agent}: {one_line(why, limit=200)}"


def _agent_started(data: Mapping[str, Any]) -> list[str]:
    count = data.get("handoff_count") or 0
    how = "entry agent" if count == 0 else f"after handoff #{count}"
    return [f"agent    {data.get('agent')} is active ({how})"]


def _rule(data: Mapping[str, Any]) -> list[str]:
    fired = data.get("condition") or "always"
    return [f"rule     {data.get('agent')}: {fired} fired -> {data.get('target')}"]


def _handoff(data: Mapping[str, Any]) -> list[str]:
    decided = {"rule": "a rule", "llm": "the LLM", "tool": "a tool"}.get(
        str(data.get("decided_by")), str(data.get("decided_by"))
    )
    line = f"handoff  #{data.get('number')} {data.get('source')} -> {data.get('target')}, "
    line += f"decided by {decided}"
    if data.get("decided_by") == "rule":
        line += f" ({data.get('condition') or 'always'})"
    lines = [line]
    if data.get("payload") is not None:
        kind = data.get("payload_type") or "payload"
        lines.append(f"         {kind} {compact_json(data['payload'])}")
    return lines + _detail("message", data.get("message"), limit=120)


def _refused(data: Mapping[str, Any]) -> list[str]:
    head = (
        f"refused  {data.get('source')} -> {data.get('target')} ({data.get('reason')}), asked "
        f"by {data.get('decided_by')}"
    )
    return [head, *_detail("", data.get("detail"), limit=300)]


def _invalid(data: Mapping[str, Any]) -> list[str]:
    """A transfer call refused because its payload did not validate; the model may retry."""
    target = data.get("target") or "?"
    sent = one_line(str(data.get("arguments")))
    return [
        f"refused  {data.get('source')} -> {target} (invalid payload), asked by "
        f"{data.get('decided_by')} with {data.get('tool_name')} {sent}",
        f"         {one_line(str(data.get('problem')), limit=400)}",
    ]


def _model_call(data: Mapping[str, Any]) -> list[str]:
    head = f"model    {data.get('agent')} call {data.get('turn')}"
    if "error" in data:
        return [f"{head} failed: {one_line(str(data['error']))}"]
    response = data.get("response") or {}
    calls = [str(call.get("name")) for call in response.get("tool_calls") or []]
    what = f"calls {', '.join(calls)}" if calls else "answers"
    return [
        f"{head}: {what}; {tokens(response.get('usage') or {})}",
        *_detail("says", response.get("content")),
    ]


def _tool_call(data: Mapping[str, Any]) -> list[str]:
    outcome = data.get("outcome") or {}
    arrow = "error" if outcome.get("is_error") else "->"
    lines = [
        f"tool     {data.get('agent')} {data.get('name')} {one_line(str(data.get('arguments')))}"
    ]
    decision = data.get("decision")
    if isinstance(decision, Mapping):
        lines.append(f"         {_decided(decision)}")
    if "proposed_arguments" in data:
        lines.append(f"         model proposed {one_line(str(data['proposed_arguments']))}")
    lines.append(f"         {arrow} {one_line(str(outcome.get('content')), limit=200)}")
    return lines


def _decided(decision: Mapping[str, Any]) -> str:
    """``edited by dana at 2026-...: amount ("half, per policy")``."""
    verb = {"approve": "approved", "reject": "rejected", "edit": "edited"}.get(
        str(decision.get("kind")), str(decision.get("kind"))
    )
    line = f"{verb} by {decision.get('decided_by') or 'a person (unnamed)'}"
    if isinstance(decision.get("at"), int | float):
        line += f" at {local_time(float(decision['at']))}"
    if decision.get("edited"):
        line += f": changed {', '.join(str(name) for name in decision['edited'])}"
    if decision.get("note"):
        line += f" ({one_line(str(decision['note']), limit=200)})"
    return line


def _interrupt(data: Mapping[str, Any]) -> list[str]:
    about = data.get("tool_name") or data.get("target")
    line = f"pause    waiting for a human: {data.get('kind')} {about}"
    if data.get("payload") is not None:
        line += f" {compact_json(data['payload'])}"
    return [line]


def _resumed(data: Mapping[str, Any]) -> list[str]:
    lines = [f"resumed  decision {one_line(compact_json(dict(data)))}"]
    lines.append(f"         {_decided(data)}")
    return lines


def _limit_reached(data: Mapping[str, Any]) -> list[str]:
    return [f"limit    {data.get('message')} (agent {data.get('agent')})"]


def _run_finished(data: Mapping[str, Any]) -> list[str]:
    how = " by Ctrl-C" if data.get("cancelled") else ""
    if "final_agent" not in data:
        # Written when the run raised (a limit set to "error", a tool set to raise): the
        # error is all the record holds.
        lines = [f"stop     {data.get('stop_reason')}: the run raised an exception"]
    else:
        trail = " -> ".join(str(agent) for agent in data.get("trail") or [])
        lines = [
            f"stop     {data.get('stop_reason')}{how} ({data.get('final_agent')} was active) "
            f"after {plural(int(data.get('turns') or 0), 'model call')}; trail {trail}"
        ]
    return [
        *lines,
        *_detail("error", data.get("error")),
        *_detail("answer", data.get("final_output"), limit=400),
    ]


def _detail(label: str, value: object, *, limit: int = 200) -> list[str]:
    """A step's indented line that shows ``value`` after ``label``, cut at ``limit``; none
    when there is no value."""
    if not value:
        return []
    return [f"         {f'{label} ' if label else ''}{one_line(str(value), limit=limit)}"]


_STEPS: dict[str, Callable[[Mapping[str, Any]], list[str]]] = {
    "run_started": _run_started,
    "agent_started": _agent_started,
    "rule": _rule,
    "handoff": _handoff,
    "handoff_refused": _refused,
    "handoff_invalid": _invalid,
    "model_call": _model_call,
    "tool_call": _tool_call,
    "interrupt": _interrupt,
    "resumed": _resumed,
    "limit_reached": _limit_reached,
    "run_finished": _run_finished,
    "eval_run_started": _eval_run_started,
    "eval_trial": _eval_trial,
    "eval_run_graded": _eval_run_graded,
}


def _totals(records: Sequence[JournalRecord]) -> list[str]:
    by_agent: dict[str, int] = {}
    for record in records:
        if record.kind == "model_call" and "response" in record.data:
            usage = record.data["response"].get("usage") or {}
            agent = str(record.data.get("agent"))
            by_agent[agent] = by_agent.get(agent, 0) + int(usage.get("total_tokens") or 0)
    if not by_agent:
        return []
    parts = ", ".join(f"{agent} {count}" for agent, count in by_agent.items())
    return [f"tokens: {sum(by_agent.values())} ({parts})"]


def _time_totals(records: Sequence[JournalRecord], timed: Sequence[StepTime]) -> list[str]:
    by_agent: dict[str, float] = {}
    waited = 0.0
    for record, step in zip(records, timed, strict=True):
        if record.kind == "resumed":
            waited += step.duration
        elif step.agent is not None:
            by_agent[step.agent] = by_agent.get(step.agent, 0.0) + step.duration
    total = timed[-1].end - timed[0].start
    parts = [f"{agent} {seconds(spent)}" for agent, spent in by_agent.items()]
    if waited:
        parts.append(f"waiting for a decision {seconds(waited)}")
    return [f"time: {seconds(total)}" + (f" ({', '.join(parts)})" if parts else "")]
