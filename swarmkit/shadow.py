"""Shadow rules: handoff rules judged beside the model on the turns it decides, never followed.

A swarm given ``shadow=`` (a HandoffGraph, or its ``to_dict`` data) evaluates, on every turn
the model decides, each shadow rule out of the active agent on the rule state the graph would
have seen, and journals the verdicts with that decision, as the first member (``shadow``) of
its ``model_call`` record, one line of text (see ``verdict_text``): the call's tokens, the
indices of the rules that fired and of those that agreed with the model (fired and named the
agent it handed off to), the rules judged (by name, in order) and the model's choice (its
agent and turn are the record's own). Nothing else changes: no
call is added, no routing follows a shadow rule, the request's digest is the same. Journals
from before keep the verdicts in a ``shadow`` record of their own, the same data, or
(swarmkit 0.2) one dict per rule (``verdicts``); ``verdicts_held`` finds either record,
``verdicts_of`` reads every form. A run that writes its own journal names each agent's rule
list once in the journal's rules log (a ``rule_set`` record) and its verdicts by the list's
digest (``set``); others (an engine's in-workflow journal) write the names in each verdict
(``rules``).

Promotions and demotions are journal-level records: they live in the journal's rules log, a
session of its own (``RULES_LOG``) that every store holds like any other, so every worker
sharing the store reads the same log; its length is its version.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from swarmkit.exceptions import ConfigurationError, JournalError
from swarmkit.graph import Edge, HandoffGraph
from swarmkit.journal import Journal, JournalRecord

__all__ = [
    "AUDITED",
    "AUDIT_RECORD",
    "DEMOTED",
    "PROMOTED",
    "RULES_LOG",
    "RULE_SET",
    "SKIPPED_RECORD",
    "RuleAudit",
    "SHADOW_MEMBER",
    "SHADOW_PREFIX",
    "SHADOW_RECORD",
    "Verdict",
    "legacy_shadow_data",
    "parse_verdicts",
    "log_rule_change",
    "read_rules_log",
    "read_verdicts",
    "rule_name",
    "rule_set_digest",
    "rule_sets",
    "rule_target",
    "shadow_data",
    "shadow_graph",
    "verdicts_held",
    "verdict_tail",
    "verdict_text",
    "verdicts_of",
]

RULES_LOG = "swarmkit.rules-log"
"""The session id of the journal's rules log: its records promote and demote rules."""
PROMOTED = "rule_promoted"
"""The kind of the rules log record of a promotion."""
DEMOTED = "rule_demoted"
"""The kind of the rules log record of a demotion: the rule routes no more."""
AUDITED = "rule_audited"
"""The kind of the rules log record of one audit's outcome (the rule, whether it agreed)."""
AUDIT_RECORD = "rule_audit"
"""The kind of the session record holding the model's answer on an audited rule decision."""
SKIPPED_RECORD = "rule_skipped"
"""The kind of the session record of a demoted rule that held and did not route."""
RULE_SET = "rule_set"
"""The kind of the rules log record that names an agent's shadow rules once (``set``: their
digest, ``agent``, ``rules``: their names in order), so a verdict names them by digest."""


@dataclass(frozen=True, kw_only=True, slots=True)
class RuleAudit:
    """Audit the graph's active rules: on a deterministic sample of the turns a rule decides,
    ask the model anyway and journal its answer (the rule's routing stands). When a rule's
    agreement over its audits has a Wilson 95% upper bound below ``threshold``, ``demote``
    journals a demotion in the rules log, and from their next turn the rule routes no more
    for every swarm sharing the journal (the model decides); ``warn`` only logs
    ``rule_drift_detected``. ``Swarm(audit=RuleAudit(...))``."""

    share: float = 0.05
    """The share of a rule's decisions audited, in [0, 1]: a turn is sampled when a hash of
    (session id, turn) falls below it, so every process and every replay picks the same."""
    threshold: float = 0.95
    """The agreement a rule must stay able to reach (its Wilson upper bound), in (0, 1]."""
    on_drift: Literal["demote", "warn"] = "demote"
    """What a rule whose upper bound falls below the threshold gets."""

    def __post_init__(self) -> None:
        share, threshold = self.share, self.threshold
        if isinstance(share, bool) or not isinstance(share, int | float) or not 0 <= share <= 1:
            raise ConfigurationError(f"RuleAudit share must be in [0, 1], got {share!r}")
        if (
            isinstance(threshold, bool)
            or not isinstance(threshold, int | float)
            or not 0 < threshold <= 1
        ):
            raise ConfigurationError(f"RuleAudit threshold must be in (0, 1], got {threshold!r}")
        if self.on_drift not in ("demote", "warn"):
            raise ConfigurationError(
                f"RuleAudit on_drift must be 'demote' or 'warn', got {self.on_drift!r}"
            )

    def samples(self, session_id: str, turn: int) -> bool:
        """Whether the rule decision at this session's turn is audited."""
        digest = hashlib.sha256(f"{session_id}\x00{turn}".encode()).digest()
        return int.from_bytes(digest[:8], "big") / 2**64 < self.share


SHADOW_RECORD = "shadow"
"""The kind of the record that held one model decision's shadow verdicts, before they were
kept in the decision's own ``model_call`` record (still read)."""
SHADOW_MEMBER = "shadow"
"""The member of a ``model_call`` record holding the shadow verdicts on its decision, as one
string (``verdict_text``): its first, so that a store can read it alone
(``read_many(..., leading=...)``)."""
SHADOW_PREFIX = '{"' + SHADOW_MEMBER + '":'
"""How the stored text of a model call holding verdicts starts (a store's prefix filter)."""


def verdict_text(
    tokens: int,
    fired: Sequence[int],
    agrees: Sequence[int],
    model_target: str | None,
    *,
    digest: str | None = None,
    names: Sequence[str] = (),
) -> str:
    """The ``shadow`` member of a model call, one line of space-separated ``key=value`` parts:
    ``tokens=107 fired=0,1 agrees=0 set=3f0c9a2b71d4e865 model=billing``. ``fired`` and
    ``agrees`` list rule indices (none: empty), the rule list is named by its digest
    (``set=``) or, where no rules log names it, by its names as a JSON list
    (``rules=["triage -> billing if ...", ...]``), and ``model=`` runs to the end: the agent
    the model handed off to, empty where it kept the turn. ``parse_verdicts`` reads it."""
    tail = verdict_tail(fired, agrees, model_target, digest=digest, names=names)
    return f"tokens={tokens}{tail}"


def verdict_tail(
    fired: Sequence[int],
    agrees: Sequence[int],
    model_target: str | None,
    *,
    digest: str | None = None,
    names: Sequence[str] = (),
) -> str:
    """``verdict_text`` past its tokens: the same for every decision on which the same rules
    fired and agreed with the same choice, so a writer may keep it and add the tokens."""
    listed = f"set={digest}" if digest is not None else "rules=" + json.dumps(list(names))
    return (
        f" fired={','.join(map(str, fired))} agrees={','.join(map(str, agrees))}"
        f" {listed} model={model_target or ''}"
    )


_VERDICT = re.compile(
    r"tokens=(\d+) fired=((?:\d+(?:,\d+)*)?) agrees=((?:\d+(?:,\d+)*)?) "
    r"(?:set=([0-9a-f]{16}) model=(.*)|rules=(\[.*))",
    re.ASCII | re.DOTALL,
)
_NAMES = json.JSONDecoder()


def parse_verdicts(text: object, session_id: str, seq: int) -> dict[str, Any]:
    """A ``shadow`` member (``verdict_text``) as data: ``tokens``, ``fired``, ``agrees``,
    ``set`` or ``rules``, ``model_target``; ``JournalError`` naming the record if malformed."""
    found = _VERDICT.fullmatch(text) if isinstance(text, str) else None
    if found is None:
        raise _malformed(text, session_id, seq)
    tokens, fired, agrees, digest, target, rest = found.groups()
    data: dict[str, Any] = {"tokens": int(tokens)}
    if digest is not None:
        data["set"] = digest
    else:
        try:
            names, end = _NAMES.raw_decode(rest)
        except ValueError:
            raise _malformed(text, session_id, seq) from None
        if not rest.startswith(" model=", end) or not all(type(n) is str for n in names):
            raise _malformed(text, session_id, seq)
        data["rules"], target = names, rest[end + 7 :]
    data["fired"] = [int(i) for i in fired.split(",")] if fired else []
    data["agrees"] = [int(i) for i in agrees.split(",")] if agrees else []
    data["model_target"] = target or None
    return data


def _malformed(text: object, session_id: str, seq: int) -> JournalError:
    return JournalError(
        f"record {seq} (model_call) of session {session_id!r} holds malformed shadow verdicts "
        f"{text!r}: expected 'tokens=N fired=I,J agrees=I set=DIGEST model=AGENT' (or "
        "rules=[names] for set=); the record was altered: restore it or delete the session"
    )


def rule_name(edge: Edge) -> str:
    """The name a rule is counted and promoted under: ``"source -> target if when"``
    (``"source -> target"`` for a rule with no condition)."""
    when = "" if edge.when is None else f" if {edge.when}"
    return f"{edge.source} -> {edge.target}{when}"


def shadow_graph(value: object, agents: Mapping[str, object]) -> HandoffGraph | None:
    """``shadow=`` as a graph, checked against the swarm's agents; ``ConfigurationError`` for a
    value that is neither a HandoffGraph nor its data, or a rule naming an unknown agent."""
    if value is None:
        return None
    if isinstance(value, Mapping):
        graph = HandoffGraph.from_dict(value)
    elif isinstance(value, HandoffGraph):
        graph = value
    else:
        raise ConfigurationError(
            f"shadow takes a HandoffGraph or its to_dict data, got {type(value).__name__}"
        )
    unknown = [node for node in graph.nodes() if node not in agents]
    if unknown:
        raise ConfigurationError(
            f"the shadow rules name agents the swarm does not have: {', '.join(unknown)}; "
            f"agents: {', '.join(agents)}"
        )
    return graph


def shadow_data(
    agent: str,
    turn: int,
    trials: Sequence[tuple[Edge, bool]],
    model_target: str | None,
    *,
    tokens: int = 0,
) -> dict[str, Any]:
    """The ``shadow`` record of one model decision: ``trials`` holds each shadow rule out of
    ``agent`` with whether its condition held; ``model_target`` is the agent the model handed
    off to (None: it kept the turn or answered); ``tokens`` the decision's call's total. A rule
    agrees when it fired and its target is the model's; a rule that did not fire neither
    agrees nor disagrees."""
    fired = [index for index, (_, held) in enumerate(trials) if held]
    return {
        "agent": agent,
        "turn": turn,
        "model_target": model_target,
        "tokens": tokens,
        "rules": [rule_name(edge) for edge, _ in trials],
        "fired": fired,
        "agrees": [index for index in fired if trials[index][0].target == model_target],
    }


def legacy_shadow_data(
    agent: str, turn: int, trials: Sequence[tuple[Edge, bool]], model_target: str | None
) -> dict[str, Any]:
    """The ``shadow`` record as swarmkit 0.2 wrote it: one dict per rule (``verdicts``). A
    replay of such a journal writes this form to check the journaled one."""
    verdicts = [
        {
            "rule": rule_name(edge),
            "target": edge.target,
            "fired": fired,
            "agrees": fired and edge.target == model_target,
        }
        for edge, fired in trials
    ]
    return {"agent": agent, "turn": turn, "model_target": model_target, "verdicts": verdicts}


@dataclass(frozen=True, kw_only=True, slots=True)
class Verdict:
    """One shadow rule's verdict on one model decision."""

    rule: str
    """The rule's name (see ``rule_name``)."""
    fired: bool
    """Whether its condition held."""
    agrees: bool
    """Whether it fired and named the agent the model handed off to."""


def verdicts_of(
    data: Mapping[str, Any], lists: Mapping[str, tuple[str, Sequence[str]]] | None = None
) -> tuple[Verdict, ...]:
    """The verdicts a ``shadow`` record holds, in the rules' order, whichever its form;
    ``lists`` (``rule_sets`` of the rules log) names a list the record names by digest
    (``JournalError`` when it does not)."""
    if "verdicts" in data:  # the form of swarmkit 0.2
        return tuple(
            Verdict(rule=v["rule"], fired=bool(v["fired"]), agrees=bool(v["agrees"]))
            for v in data["verdicts"]
        )
    names = data.get("rules")
    if names is None:
        found = (lists or {}).get(data.get("set", ""))
        if found is None:
            raise JournalError(
                f"the verdicts name their rules by the digest {data.get('set')!r}, which no "
                "rules log given names: pass rule_sets(await read_rules_log(journal))"
            )
        names = found[1]
    fired, agrees = set(data["fired"]), set(data["agrees"])
    return tuple(
        Verdict(rule=rule, fired=index in fired, agrees=index in agrees)
        for index, rule in enumerate(names)
    )


def verdicts_held(record: JournalRecord) -> Mapping[str, Any] | None:
    """The shadow verdicts a record holds (a model call's ``shadow`` member, or the data of a
    ``shadow`` record from before), in any form ``verdicts_of`` reads; None where it holds
    none."""
    data = record.data
    if record.kind == "model_call":
        found = data.get(SHADOW_MEMBER)  # without the agent and turn: the call's own
        if found is None:
            return None
        verdicts = parse_verdicts(found, record.session_id, record.seq)
        return {"agent": data.get("agent"), "turn": data.get("turn"), **verdicts}
    return data if record.kind == SHADOW_RECORD else None


async def read_verdicts(journal: Journal, session_id: str) -> tuple[tuple[Verdict, ...], ...]:
    """The verdicts of each model decision a session journaled, oldest first."""
    held = [found for r in await journal.read(session_id) if (found := verdicts_held(r))]
    if not held:
        return ()
    lists = rule_sets(await read_rules_log(journal, rule_lists=True))
    return tuple(verdicts_of(data, lists) for data in held)


def rule_set_digest(agent: str, names: Sequence[str]) -> str:
    """The digest a compact verdict names an agent's shadow rules by (``set``)."""
    text = "\n".join((agent, *names))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def rule_sets(log: Sequence[JournalRecord]) -> dict[str, tuple[str, tuple[str, ...]]]:
    """The rule lists a rules log names: digest -> (agent, rule names)."""
    found: dict[str, tuple[str, tuple[str, ...]]] = {}
    for record in log:
        data = record.data
        if record.kind == RULE_SET and isinstance(data.get("set"), str):
            found.setdefault(data["set"], (str(data.get("agent")), tuple(data.get("rules", ()))))
    return found


def rule_target(name: str) -> str:
    """The target a rule's name routes to (``"a -> b if x"``: ``b``)."""
    return name.partition(" -> ")[2].partition(" if ")[0]


async def read_rules_log(
    journal: Journal, *, rule_lists: bool = False
) -> tuple[JournalRecord, ...]:
    """The journal's promotions, demotions and audits, oldest first (none yet: an empty
    tuple); with ``rule_lists``, the records naming shadow rule lists (``RULE_SET``) too."""
    if await journal.next_seq(RULES_LOG) == 0:
        return ()
    log = await journal.read(RULES_LOG)
    return log if rule_lists else tuple(r for r in log if r.kind != RULE_SET)


async def log_rule_change(
    journal: Journal, kind: str, data: Mapping[str, Any], *, at: float, attempts: int = 5
) -> JournalRecord:
    """Append one record to the rules log; a writer that raced another appends after it."""
    for _ in range(attempts):
        seq = await journal.next_seq(RULES_LOG)
        record = JournalRecord(session_id=RULES_LOG, seq=seq, kind=kind, data=dict(data), at=at)
        try:
            await journal.append([record])
        except JournalError:
            if await journal.next_seq(RULES_LOG) == seq:
                raise  # not a race: the store refused the record itself
            continue
        return record
    raise JournalError(f"the rules log kept moving under {attempts} attempts to append to it")
