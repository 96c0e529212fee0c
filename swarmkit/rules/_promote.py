"""Promotion on evidence: a shadow rule becomes active only when its agreement is proven."""

from __future__ import annotations

import getpass
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from swarmkit.exceptions import PromotionRefusedError, RuleLearningError
from swarmkit.graph import Edge, HandoffGraph
from swarmkit.journal import Journal, JournalRecord
from swarmkit.rules._evidence import Evidence
from swarmkit.rules._judge import with_rules
from swarmkit.rules._status import status
from swarmkit.rules._whatif import load_rules
from swarmkit.runtime import Runtime
from swarmkit.shadow import PROMOTED, log_rule_change, rule_name

if TYPE_CHECKING:
    from swarmkit.swarm import Swarm

DEFAULT_THRESHOLD = 0.95
"""The Wilson 95% lower bound a rule's agreement must reach to be promoted."""
DEFAULT_MIN_FIRED = 30
"""The fired decisions a rule needs before its agreement counts as evidence."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Promotion:
    """A rule made active: the rules file written and the record journaled."""

    rule: str
    """The rule's name."""
    evidence: Evidence
    """The agreement it was promoted on."""
    out: Path
    """The rules file written (the graph's ``to_dict`` data)."""
    graph: HandoffGraph
    """The rules the file holds."""
    record: JournalRecord
    """The promotion as journaled in the rules log (who, when, on which evidence)."""


async def promote(
    journal: Journal,
    swarm: Swarm,
    rule: str,
    *,
    out: str | Path,
    threshold: float = DEFAULT_THRESHOLD,
    min_fired: int = DEFAULT_MIN_FIRED,
    by: str | None = None,
    runtime: Runtime | None = None,
    since: float | None = None,
    until: float | None = None,
    session_prefix: str | None = None,
) -> Promotion:
    """Make the swarm's shadow rule ``rule`` active when its Wilson lower bound is at least
    ``threshold`` over at least ``min_fired`` fired decisions: write the rules file ``out``
    (the file's rules when it exists, else the swarm's graph, with the rule added) and journal
    who promoted it (``by``, the user by default), when (``runtime``'s clock) and on which
    evidence. Otherwise ``PromotionRefusedError`` with the evidence, and nothing is written."""
    _check_settings(threshold, min_fired)
    edge = _shadow_edge(swarm, rule)
    path = Path(out)
    base = load_rules(path, agents=tuple(swarm.plans)) if path.exists() else swarm.graph
    found = await status(journal, swarm, since=since, until=until, session_prefix=session_prefix)
    evidence = found.rule(rule).evidence
    _check_evidence(rule, evidence, threshold, min_fired)
    graph = _with_edge(base, edge)
    data = {
        "rule": rule,
        "agent": edge.source,
        "target": edge.target,
        "when": edge.when,
        "by": by or _user(),
        "evidence": {**evidence.to_data(), "threshold": threshold, "min_fired": min_fired},
        "rules_file": str(path),
    }
    clock = (runtime or Runtime()).clock
    record = await _write_then_log(journal, path, graph, data, clock())
    return Promotion(rule=rule, evidence=evidence, out=path, graph=graph, record=record)


def _check_settings(threshold: float, min_fired: int) -> None:
    if isinstance(threshold, bool) or not isinstance(threshold, int | float):
        raise RuleLearningError(f"threshold must be a number in (0, 1], got {threshold!r}")
    if not 0 < threshold <= 1:
        raise RuleLearningError(f"threshold must be in (0, 1], got {threshold!r}")
    if isinstance(min_fired, bool) or not isinstance(min_fired, int) or min_fired < 1:
        raise RuleLearningError(f"min_fired must be a positive int, got {min_fired!r}")


def _shadow_edge(swarm: Swarm, rule: str) -> Edge:
    shadow = swarm.spec.shadow
    edges = {} if shadow is None else {rule_name(edge): edge for edge in shadow.edge_list()}
    if rule not in edges:
        known = "; ".join(edges) or "none (give the swarm shadow= rules)"
        raise RuleLearningError(
            f"{rule!r} is not a shadow rule of the swarm; its shadow rules: {known}"
        )
    return edges[rule]


def _check_evidence(rule: str, evidence: Evidence, threshold: float, min_fired: int) -> None:
    shown = (
        f"{evidence.agreements} agreements in {evidence.fired} fired decisions, Wilson 95% "
        f"lower bound {evidence.lower:.4f}"
    )
    if evidence.fired < min_fired:
        why = f"it fired {evidence.fired} times, fewer than the {min_fired} needed"
    elif evidence.lower < threshold:
        why = f"its lower bound {evidence.lower:.4f} is below the threshold {threshold}"
    else:
        return
    raise PromotionRefusedError(
        f"not promoting {rule!r}: {why} ({shown}); let it run in shadow longer, or lower "
        "--threshold / --min-fired if that is what you mean",
        rule=rule,
        fired=evidence.fired,
        agreements=evidence.agreements,
        lower=evidence.lower,
        threshold=threshold,
        min_fired=min_fired,
    )


def _with_edge(graph: HandoffGraph | None, edge: Edge) -> HandoffGraph:
    """A copy of ``graph`` (the swarm's own stays as it is) with ``edge``, unless it holds the
    rule already."""
    name = rule_name(edge)
    held = graph is not None and any(rule_name(known) == name for known in graph.edge_list())
    return with_rules(graph, () if held else (edge,))


async def _write_then_log(
    journal: Journal, path: Path, graph: HandoffGraph, data: dict[str, Any], at: float
) -> JournalRecord:
    """Write the file beside its place, journal the promotion, then move the file in: a
    failure on either side leaves neither the file nor the record."""
    staged = path.with_name(f".{path.name}.promoting")
    try:
        staged.write_text(json.dumps(graph.to_dict(), indent=2) + "\n", encoding="utf-8")
    except OSError as exc:
        raise RuleLearningError(f"cannot write the rules file {path}: {exc}") from exc
    try:
        record = await log_rule_change(journal, PROMOTED, data, at=at)
    except BaseException:
        staged.unlink(missing_ok=True)
        raise
    os.replace(staged, path)
    return record


def _user() -> str:
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return "unknown"
