"""Active rules under audit: a sampled rule decision also asks the model, and a rule whose
agreement drifts is demoted for every swarm sharing the journal's rules log."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from weakref import WeakKeyDictionary

from swarmkit._run._parts import RunParts
from swarmkit._run._request import build_request
from swarmkit._run._shadow import model_target
from swarmkit.graph import Edge
from swarmkit.journal import Journal, JournalRecord
from swarmkit.lowlevel import RequestHistory
from swarmkit.plan import AgentPlan
from swarmkit.shadow import (
    AUDIT_RECORD,
    AUDITED,
    DEMOTED,
    PROMOTED,
    RULES_LOG,
    SKIPPED_RECORD,
    RuleAudit,
    log_rule_change,
    read_rules_log,
    rule_name,
)

_Z = 1.96


@dataclass(kw_only=True, slots=True)
class _LogView:
    """What one process knows of a journal's rules log, as of its ``version`` (length)."""

    version: int = -1
    demoted: set[str] = field(default_factory=set)
    audits: dict[str, list[int]] = field(default_factory=dict)
    """rule -> [audits, agreements] since its last promotion or demotion."""


_VIEWS: WeakKeyDictionary[Journal, _LogView] = WeakKeyDictionary()


@dataclass(frozen=True, slots=True)
class Audited:
    """What the model answered on an audited rule decision."""

    choice: str | None
    """Where it would have handed off (None: it would have kept the turn)."""
    replayed: bool
    """Whether the answer was read from the journal rather than asked for now."""


STANDS = (True, None)
"""A rule that routes, with no audit this turn."""


async def rule_stands(run: RunParts, plan: AgentPlan, edge: Edge) -> tuple[bool, Audited | None]:
    """Whether the rule that held may route this turn (a demoted one may not: the model
    decides), and the audit's answer when the decision was sampled for one (asked first).
    Replay reads both from the journal."""
    audit = run.swarm.audit
    if audit is None:
        return STANDS
    name = rule_name(edge)
    if await _demoted(run, name):
        await run.tape.note(SKIPPED_RECORD, {"agent": plan.name, "rule": name})
        return False, None
    turn = run.state.budget.turns
    if audit.samples(run.state.session_id, turn) and turn < run.swarm.max_turns:
        return True, await _audit(run, plan, edge, audit)
    return STANDS


async def _demoted(run: RunParts, name: str) -> bool:
    held = run.tape.held(SKIPPED_RECORD)
    if held is not None:  # the journal says what this turn did
        return held.data is not None
    journal = run.seams.rules_log
    if journal is None:
        return False
    return name in (await _view(journal)).demoted


async def _audit(run: RunParts, plan: AgentPlan, edge: Edge, audit: RuleAudit) -> Audited | None:
    """Ask the model what it would decide here (or read what it said), journal it; then
    check the rule's agreement over every audit in the rules log. The answer (None: the
    journal holds no audit for this turn)."""
    name = rule_name(edge)
    held = run.tape.held(AUDIT_RECORD)
    if held is not None:
        if held.data is None:
            return None
        await run.tape.note(AUDIT_RECORD, held.data)
        return Audited(held.data.get("model_target"), replayed=True)
    chosen, tokens = await _ask(run, plan)
    data = {
        "agent": plan.name,
        "rule": name,
        "target": edge.target,
        "turn": run.state.budget.turns,
        "model_target": chosen,
        "agrees": chosen == edge.target,
        "tokens": tokens,
    }
    await run.tape.note(AUDIT_RECORD, data)
    journal = run.seams.rules_log
    if journal is not None:
        await _count(run, journal, name, data, audit)
    return Audited(chosen, replayed=False)


async def _ask(run: RunParts, plan: AgentPlan) -> tuple[str | None, int]:
    state = run.state
    request = await build_request(run.swarm, state, plan)
    history = RequestHistory(
        view=state.conversation.view,
        items=state.conversation.own_items,
        count=len(state.conversation.own_items),
    )
    response = await plan.model.respond(history.sent_with(request))
    return model_target(plan, response), response.usage.total_tokens


async def _count(
    run: RunParts, journal: Journal, name: str, data: dict[str, object], audit: RuleAudit
) -> None:
    at = run.seams.runtime.clock()
    entry = {"rule": name, "agrees": data["agrees"], "session_id": run.state.session_id}
    await log_rule_change(journal, AUDITED, {**entry, "turn": data["turn"]}, at=at)
    view = await _view(journal)
    audits, agreements = view.audits.get(name, [0, 0])
    if name in view.demoted or _upper(agreements, audits) >= audit.threshold:
        return
    if audit.on_drift == "warn":
        run.log("rule_drift_detected", rule=name, audits=audits, agreements=agreements)
        return
    evidence = {"audits": audits, "agreements": agreements, "upper": _upper(agreements, audits)}
    demotion = {"rule": name, "by": "audit", "threshold": audit.threshold, "evidence": evidence}
    await log_rule_change(journal, DEMOTED, demotion, at=at)
    run.log("rule_demoted", rule=name, audits=audits, agreements=agreements)


async def _view(journal: Journal) -> _LogView:
    """The rules log as of now: one cheap length check, a read only when it grew."""
    try:
        view = _VIEWS.get(journal)
        if view is None:
            view = _VIEWS[journal] = _LogView()
    except TypeError:  # a store of one's own that cannot be weakly referenced: no cache
        view = _LogView()
    version = await journal.next_seq(RULES_LOG)
    if version != view.version:
        _replay_log(view, await read_rules_log(journal))
        view.version = version
    return view


def _replay_log(view: _LogView, log: tuple[JournalRecord, ...]) -> None:
    view.demoted.clear()
    view.audits.clear()
    for record in log:
        rule = record.data.get("rule")
        if not isinstance(rule, str):
            continue
        if record.kind == AUDITED:
            counts = view.audits.setdefault(rule, [0, 0])
            counts[0] += 1
            counts[1] += bool(record.data.get("agrees"))
        elif record.kind == DEMOTED:
            view.demoted.add(rule)
            view.audits.pop(rule, None)
        elif record.kind == PROMOTED:
            view.demoted.discard(rule)
            view.audits.pop(rule, None)


def _upper(agreements: int, audits: int) -> float:
    """The Wilson 95% upper bound (the core does not import swarmkit.rules)."""
    if audits <= 0:
        return 1.0
    p, z2 = agreements / audits, _Z * _Z
    scale = 1 + z2 / audits
    half = _Z * math.sqrt(p * (1 - p) / audits + z2 / (4 * audits * audits)) / scale
    return min(1.0, (p + z2 / (2 * audits)) / scale + half)
