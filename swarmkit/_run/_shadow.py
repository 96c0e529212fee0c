"""Shadow rules on a turn the model decides: judged before the call, journaled after it.

A model-decided turn is the hot path, so each agent's shadow rules are prepared once per graph
(their compiled tests, targets and names), and a turn journals only the indices of the rules
that fired and agreed beside the names' one shared list.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from math import isnan
from typing import Any, Generic, TypeVar
from weakref import ref

from swarmkit._run._handoff import is_handoff_call
from swarmkit._run._parts import RunParts
from swarmkit._run._replies import candidate_target
from swarmkit._run._state import RESERVED_KEY, Candidate, rule_state
from swarmkit.conditions import Condition, compile_condition
from swarmkit.conditions.syntax import And, Expr, path_comparison, path_text
from swarmkit.exceptions import ConditionSyntaxError, JournalError
from swarmkit.graph import Edge, HandoffGraph
from swarmkit.journal import Journal
from swarmkit.models import ModelResponse
from swarmkit.plan import AgentPlan
from swarmkit.shadow import (
    RULE_SET,
    SHADOW_RECORD,
    legacy_shadow_data,
    log_rule_change,
    read_rules_log,
    rule_name,
    rule_set_digest,
    rule_sets,
    verdict_tail,
)

_Key = TypeVar("_Key")
_Value = TypeVar("_Value")
_Test = Callable[[Any], object]
_Members = tuple[tuple[int, _Test], ...]


@dataclass(frozen=True, slots=True)
class _AgentRules:
    """One agent's shadow rules, in evaluation order, ready to judge."""

    agent: str
    edges: tuple[Edge, ...]
    conditions: tuple[Condition | None, ...]
    targets: tuple[str, ...]
    names: list[str]
    """The rules' names, one list shared by every record (nothing mutates it)."""
    digest: str
    """What a compact verdict names the list by, once the rules log holds its names."""
    reads_facts: bool
    """Whether a rule reads the loop's facts (``swarm.*``): else the context is the state."""
    switches: tuple[_Switch, ...]
    """Rules that start by testing one key against a string (``category == 'billing' and
    ...``), by that key: one lookup of its value picks the only ones that can fire."""
    groups: tuple[tuple[_Test, _Members], ...]
    """Other rules that start with the same test, by that test: where it fails, none of
    them can fire, so it is evaluated once for all of them."""
    tables: tuple[_Thresholds, ...]
    """Other rules that compare one key with a number, by key and order (``amount > 50``)."""
    alone: _Members
    """The other rules, each with its index."""
    in_order: bool
    """Whether the indices come out in order with no sort: one kind of part above holds all
    the rules (one switch, whose every case is in order; one table; or tests alone)."""
    tails: dict[tuple[object, ...], str]
    """The verdicts' text past the tokens (``verdict_tail``) by outcome (the model's choice,
    whether the list is named by digest, the indices that fired): few outcomes recur."""


@dataclass(frozen=True, slots=True)
class _Thresholds:
    """Rules that compare one top-level key with a number in one order (``>=``, ``>``,
    ``<=``, ``<``), as one sorted table: a plain number's place among the bounds says which
    hold, as the language's comparison would (exactly, for bounds under 2**53)."""

    key: str
    bounds: tuple[int | float, ...]
    """The numbers compared with, in order."""
    indices: tuple[int, ...]
    """The rules' indices in the order of their bounds."""
    upward: bool
    """Whether the rules that hold are those of the bounds below the value (``>=``, ``>``),
    else those of the bounds above it."""
    after: bool
    """Whether a value equal to a bound is placed after it (``>=``, ``<``)."""
    whole: _Members
    """Each rule with its test, for a value that is not a plain number."""
    search: Callable[[Sequence[int | float], int | float], int] = bisect_left
    """Where a value goes among the bounds: ``bisect_right`` where it goes after an equal
    bound (``after``), else ``bisect_left``."""

    def held(self, state: dict[str, Any]) -> Sequence[int]:
        """The indices of the rules that hold on ``state``."""
        value: Any = state.get(self.key)
        kind = value.__class__
        if kind is int or (kind is float and not isnan(value)):  # NaN holds no bound
            at = self.search(self.bounds, value)
            return self.indices[:at] if self.upward else self.indices[at:]
        return [index for index, test in self.whole if test(state)]


@dataclass(frozen=True, slots=True)
class _Switch:
    """The rules whose first test is ``key == 'text'``, by that text."""

    key: str
    cases: dict[str, tuple[tuple[_Thresholds, ...], _Members]]
    """Each text's rules: those whose rest compares a key with a number as tables, the others
    each with the test of the rest of its condition."""
    in_order: bool
    """Whether each case's rules come out in order (tests alone, or one table in order)."""
    whole: _Members
    """Every rule here with its whole test, for a value that is not a plain string."""


Trials = tuple[_AgentRules, list[int]]
"""Each shadow rule out of the active agent, with the indices of those that held (a plain
tuple: made on every model-decided turn, it costs no constructor call)."""


class _Kept(Generic[_Key, _Value]):
    """Values kept for objects as long as each lives, found by identity: a weak-keyed dict
    builds a weak reference at every lookup, which a turn would pay twice."""

    __slots__ = ("_found",)

    def __init__(self) -> None:
        self._found: dict[int, tuple[ref[_Key], _Value]] = {}

    def get(self, key: _Key) -> _Value | None:
        entry = self._found.get(id(key))
        return entry[1] if entry is not None and entry[0]() is key else None

    def put(self, key: _Key, value: _Value) -> _Value:
        """Keep ``value`` for ``key`` (``TypeError`` for an object with no weak reference)."""
        found, ident = self._found, id(key)
        found[ident] = (ref(key, lambda _: found.pop(ident, None)), value)
        return value

    def __contains__(self, key: object) -> bool:
        entry = self._found.get(id(key))
        return entry is not None and entry[0]() is key


_PREPARED: _Kept[HandoffGraph, dict[str, _AgentRules | None]] = _Kept()
_UNPREPARED: Any = object()
"""An agent whose rules are not prepared yet."""
_NAMED: _Kept[Journal, set[str]] = _Kept()
"""The rule lists each journal's rules log is known (by this process) to name."""


def judge(run: RunParts, plan: AgentPlan) -> Trials | None:
    """Each shadow rule's verdict on the rule state the graph sees before this model call;
    None when the agent has no shadow rules (the common case costs one lookup), or when no
    journal keeps the verdicts (a run with no journal judges nothing)."""
    graph = run.swarm.shadow
    if graph is None or not run.tape.keeps_records:
        return None
    # The graph's prepared rules found inline (see _Kept): this runs on every model call.
    kept = _PREPARED._found.get(id(graph))
    by_agent = kept[1] if kept is not None and kept[0]() is graph else None
    rules = by_agent.get(plan.name, _UNPREPARED) if by_agent is not None else _UNPREPARED
    if rules is _UNPREPARED:
        rules = _prepared(graph, plan.name)
    if rules is None:
        return None
    context = run.state.context
    # Rules that read only the context see it as it is: the rule state would copy it.
    state = context if type(context) is dict and not rules.reads_facts else rule_state(run.state)
    try:
        fired = _fired(rules, state)
    except Exception:  # anything odd in the state takes each condition's careful path
        fired = [
            index
            for index, condition in enumerate(rules.conditions)
            if condition is None or condition(state)
        ]
    return rules, fired


def verdicts(run: RunParts, plan: AgentPlan, trials: Trials, response: ModelResponse) -> str | None:
    """The verdicts on a live call's decision, as its ``model_call`` record keeps them (see
    ``verdict_text``): the rule list by its digest once the journal's rules log names it,
    else by its names; None when that is not known yet (``naming_verdicts`` then names it)."""
    store, (rules, fired) = run.tape.store, trials
    if store is not None:
        # Known (inline, see _Kept) to be named after the list's first turn in this process.
        kept = _NAMED._found.get(id(store))
        if kept is None or kept[0]() is not store or rules.digest not in kept[1]:
            return None
    # As _verdict_member makes it, inline: this runs on every model-decided turn.
    chosen = model_target(plan, response) if response.message.tool_calls else None
    tail = rules.tails.get((chosen, store is not None, *fired))
    if tail is None:
        tail = _tail(rules, fired, chosen, store is not None)
    return f"tokens={response.usage.total_tokens}{tail}"


async def naming_verdicts(
    run: RunParts, plan: AgentPlan, trials: Trials, response: ModelResponse
) -> str:
    """The verdicts as ``verdicts`` makes them, once the rules log is known to name the list
    or refused to (written there the first time, once per process and journal)."""
    named = await _named(run, trials[0])
    return _verdict_member(plan, trials, response, named)


async def check(run: RunParts, plan: AgentPlan, trials: Trials, response: ModelResponse) -> None:
    """On a replayed call, the verdicts in the form the journal holds them, checked against
    it: in the call's record, or (journals from before) in a ``shadow`` record of their own,
    the form of swarmkit 0.2 included. Nothing on a live call: its record holds them."""
    tape, turn = run.tape, run.state.budget.turns
    in_call = tape.held_verdicts()
    if in_call is None:
        return
    if in_call:
        tape.check_verdicts(_verdict_member(plan, trials, response, _by_digest(in_call)))
        return
    apart = tape.held(SHADOW_RECORD)
    held = None if apart is None else apart.data
    if held is None:  # none here (the note diverges), or the run goes live from here
        named = await _named(run, trials[0])
        data = {"agent": plan.name, "turn": turn, **_verdict_data(plan, trials, response, named)}
    elif "verdicts" in held:
        chosen = model_target(plan, response) if response.message.tool_calls else None
        rules, fired = trials
        tried = [(edge, index in fired) for index, edge in enumerate(rules.edges)]
        data = legacy_shadow_data(plan.name, turn, tried, chosen)
    else:
        data = {
            "agent": plan.name,
            "turn": turn,
            **_verdict_data(plan, trials, response, "set" in held),
        }
    await tape.note(SHADOW_RECORD, data)


def _verdict_member(plan: AgentPlan, trials: Trials, response: ModelResponse, named: bool) -> str:
    """The verdicts as the call's ``shadow`` member (``verdict_text``): the rules that fired
    and those that agreed, by index; the rule list by its digest when ``named``. All but the
    tokens is kept per outcome (see ``_AgentRules.tails``)."""
    rules, fired = trials
    chosen = model_target(plan, response) if response.message.tool_calls else None
    tail = rules.tails.get((chosen, named, *fired))
    if tail is None:
        tail = _tail(rules, fired, chosen, named)
    return f"tokens={response.usage.total_tokens}{tail}"


def _tail(rules: _AgentRules, fired: list[int], chosen: str | None, named: bool) -> str:
    """The member past its tokens (``verdict_tail``), kept for the outcome's next turns."""
    # The model kept the turn (chosen None): no rule targets None, none agrees.
    agrees = [] if chosen is None else [i for i in fired if rules.targets[i] == chosen]
    digest, names = (rules.digest, ()) if named else (None, rules.names)
    tail = verdict_tail(fired, agrees, chosen, digest=digest, names=names)
    if len(rules.tails) < _TAILS:
        rules.tails[(chosen, named, *fired)] = tail
    return tail


_TAILS = 4096
"""The outcomes whose member text an agent's rules keep (past that, each is written anew)."""


def _by_digest(member: str) -> bool:
    """Whether a held ``shadow`` member names its rule list by digest (its fourth part)."""
    parts = member.split(" ", 4)
    return len(parts) > 3 and parts[3].startswith("set=")


def _verdict_data(
    plan: AgentPlan, trials: Trials, response: ModelResponse, named: bool
) -> dict[str, Any]:
    """The verdicts of a ``shadow`` record of their own (a replay of a journal from before
    writes them to check the held ones): the rules that fired and those that agreed, by
    index; the rule list by its digest when ``named``, else by its names."""
    rules, fired = trials
    if not response.message.tool_calls:
        chosen, agrees = None, []
    else:
        chosen = model_target(plan, response)
        agrees = [] if chosen is None else [i for i in fired if rules.targets[i] == chosen]
    listed = {"set": rules.digest} if named else {"rules": rules.names}
    tokens = response.usage.total_tokens
    return {"model_target": chosen, "tokens": tokens, **listed, "fired": fired, "agrees": agrees}


async def _named(run: RunParts, rules: _AgentRules) -> bool:
    """Whether the rules log of the journal this run writes names the list (it is written
    there the first time, once per process and journal); False with no such journal."""
    store = run.tape.store
    if store is None:
        return False
    known = _NAMED.get(store)
    if known is None:
        try:
            known = _NAMED.put(store, set())
        except TypeError:  # a store of one's own that cannot be weakly referenced
            return False
    if rules.digest not in known:
        try:
            if rules.digest not in rule_sets(await read_rules_log(store, rule_lists=True)):
                data = {"set": rules.digest, "agent": rules.agent, "rules": rules.names}
                await log_rule_change(store, RULE_SET, data, at=run.seams.runtime.clock())
        except JournalError:  # the log refused it: the verdicts carry the names instead
            return False
        known.add(rules.digest)
    return True


def _fired(rules: _AgentRules, state: dict[str, Any]) -> list[int]:
    """The indices of the rules that hold, from the compiled tests straight on the state (a
    condition's own call adds a check and a frame per rule)."""
    fired = [index for index, test in rules.alone if test(state)] if rules.alone else []
    for table in rules.tables:
        fired += table.held(state)
    for switch in rules.switches:
        value = state.get(switch.key)
        if value.__class__ is str:  # the first test holds only for the rules of its text
            case = switch.cases.get(value)
            if case is not None:
                for table in case[0]:  # its held(), inline: the common case of a turn
                    found: Any = state.get(table.key)
                    if found.__class__ is int:
                        at = table.search(table.bounds, found)
                        fired += table.indices[:at] if table.upward else table.indices[at:]
                    else:
                        fired += table.held(state)
                for index, test in case[1]:
                    if test(state):
                        fired.append(index)
        elif value is not None:  # a string of a subclass, say: each rule's whole test
            fired.extend(index for index, test in switch.whole if test(state))
    for first, members in rules.groups:
        if first(state):
            for index, test in members:
                if test(state):
                    fired.append(index)
    if not rules.in_order:
        fired.sort()
    return fired


def model_target(plan: AgentPlan, response: ModelResponse) -> str | None:
    """The agent the model asked to hand off to (its first handoff call), or None."""
    for call in response.message.tool_calls:
        if is_handoff_call(plan, call):
            return candidate_target(plan, Candidate(call=call, decided_by="llm"))
    return None


def _prepared(graph: HandoffGraph, agent: str) -> _AgentRules | None:
    by_agent = _PREPARED.get(graph)
    if by_agent is None:
        by_agent = _PREPARED.put(graph, {})
    if agent not in by_agent:
        by_agent[agent] = _prepare(graph, agent)
    return by_agent[agent]


def _prepare(graph: HandoffGraph, agent: str) -> _AgentRules | None:
    edges = graph.compiled_edges(agent) if agent in graph else []
    if not edges:
        return None
    conditions = tuple(condition for _, condition in edges)
    names = [rule_name(edge) for edge, _ in edges]
    tests = tuple(_always if c is None else c._test for c in conditions)
    switches, placed = _switches(conditions, tests)
    groups, alone = _grouped(conditions, tests, placed)
    tables, alone = _tabled([(i, getattr(conditions[i], "tree", None), test) for i, test in alone])
    parts = [bool(alone), len(switches), len(groups), len(tables)]
    in_order = sum(parts) <= 1 and all(switch.in_order for switch in switches)
    in_order = in_order and all(_case_in_order((table,), ()) for table in tables)
    return _AgentRules(
        agent=agent,
        edges=tuple(edge for edge, _ in edges),
        conditions=conditions,
        targets=tuple(edge.target for edge, _ in edges),
        names=names,
        digest=rule_set_digest(agent, names),
        reads_facts=any(c is not None and RESERVED_KEY in c.roots for c in conditions),
        switches=switches,
        groups=groups,
        tables=tables,
        alone=alone,
        in_order=in_order,
        tails={},
    )


def _switches(
    conditions: tuple[Condition | None, ...], tests: tuple[_Test, ...]
) -> tuple[tuple[_Switch, ...], set[int]]:
    """Switch on a key where two or more rules start with ``key == 'text'`` (a top-level
    key, a string constant); each rule is then tested on the rest of its condition only."""
    by_key: dict[str, list[tuple[int, str, Condition]]] = {}
    for index, condition in enumerate(conditions):
        found = _keyed_text(condition)
        if found is not None and condition is not None:
            by_key.setdefault(found[0], []).append((index, found[1], condition))
    switches: list[_Switch] = []
    placed: set[int] = set()
    for key, members in by_key.items():
        if len(members) < 2:
            continue
        cases: dict[str, list[tuple[int, Expr | None, _Test]]] = {}
        for index, text, condition in members:
            assert isinstance(condition.tree, And)
            rest = condition.tree.operands[1:]
            test = _rest_test(condition)
            tree = rest[0] if len(rest) == 1 and test is not None else None
            cases.setdefault(text, []).append((index, tree, test or tests[index]))
        whole = tuple((index, tests[index]) for index, _, _ in members)
        table = {text: _tabled(found) for text, found in cases.items()}
        in_order = all(_case_in_order(*case) for case in table.values())
        switches.append(_Switch(key=key, cases=table, whole=whole, in_order=in_order))
        placed.update(index for index, _, _ in members)
    return tuple(switches), placed


_ORDERS = {">=": (True, True), ">": (True, False), "<=": (False, False), "<": (False, True)}
"""Each order a table holds: whether its rules hold below the value, and where a value equal
to a bound is placed (after it)."""
_EXACT = 2**53
"""Bounds from here on compare otherwise (see ``conditions``): no table holds them."""


def _tabled(
    members: Sequence[tuple[int, Expr | None, _Test]],
) -> tuple[tuple[_Thresholds, ...], _Members]:
    """The members (index, the tree its test tests, the test) whose tree compares a top-level
    key with a number, two or more of one key and order, as tables; the others as they are."""
    by_key: dict[tuple[str, str], list[tuple[int | float, int, _Test]]] = {}
    others: list[tuple[int, _Test]] = []
    for index, tree, test in members:
        bound = None if tree is None else _bound_of(tree)
        if bound is None:
            others.append((index, test))
        else:
            by_key.setdefault(bound[:2], []).append((bound[2], index, test))
    tables: list[_Thresholds] = []
    for (key, op), rules in by_key.items():
        if len(rules) < 2:
            others.extend((index, test) for _, index, test in rules)
            continue
        rules.sort(key=lambda rule: (rule[0], rule[1]))
        upward, after = _ORDERS[op]
        whole = tuple(sorted(((index, test) for _, index, test in rules), key=lambda m: m[0]))
        bounds, indices = tuple(rule[0] for rule in rules), tuple(rule[1] for rule in rules)
        search = bisect_right if after else bisect_left
        tables.append(_Thresholds(key, bounds, indices, upward, after, whole, search))
    others.sort(key=lambda member: member[0])
    return tuple(tables), tuple(others)


def _case_in_order(tables: tuple[_Thresholds, ...], members: _Members) -> bool:
    """Whether a case's rules come out in order: tests alone, or one table whose bounds are
    in the order of its rules."""
    if not tables:
        return True
    if len(tables) > 1 or members:
        return False
    return list(tables[0].indices) == sorted(tables[0].indices)


def _bound_of(tree: Expr) -> tuple[str, str, int | float] | None:
    """``(key, op, number)`` when ``tree`` compares a top-level key with a number in order."""
    found = path_comparison(tree)
    if found is None or found[0] not in _ORDERS:
        return None
    keys, bound = found[1].keys, found[2].value
    if len(keys) != 1 or not isinstance(keys[0], str):
        return None
    if type(bound) is not int and type(bound) is not float:
        return None
    assert isinstance(bound, int | float)
    return (keys[0], found[0], bound) if abs(bound) < _EXACT else None


def _keyed_text(condition: Condition | None) -> tuple[str, str] | None:
    """``(key, text)`` when the condition is ``key == 'text' and ...`` on a top-level key."""
    tree = None if condition is None else condition.tree
    if not isinstance(tree, And):
        return None
    found = path_comparison(tree.operands[0])
    if found is None:
        return None
    op, path, constant = found
    keys, value = path.keys, constant.value
    if op != "==" or len(keys) != 1 or not isinstance(keys[0], str) or type(value) is not str:
        return None
    return keys[0], value


def _rest_test(condition: Condition) -> _Test | None:
    """The test of a condition ``A and B and ...`` past its first operand, compiled from
    source that parses back to the same operands; None where no such source is written."""
    assert isinstance(condition.tree, And)
    rest = condition.tree.operands[1:]
    texts = [_comparison_source(operand) for operand in rest]
    if any(text is None for text in texts):
        return None
    try:
        compiled = compile_condition(" and ".join(str(text) for text in texts))
    except ConditionSyntaxError:
        return None
    tree = compiled.tree
    same = tree.operands == rest if isinstance(tree, And) else (tree,) == rest
    return compiled._test if same else None


def _grouped(
    conditions: tuple[Condition | None, ...], tests: tuple[_Test, ...], placed: set[int]
) -> tuple[tuple[tuple[_Test, _Members], ...], _Members]:
    """Group the rules (not ``placed`` already) whose condition is ``A and ...`` with the same
    first test ``A`` (a path compared with a constant), two or more to a group; the rest stay
    alone."""
    by_first: dict[str, list[int]] = {}
    for index, condition in enumerate(conditions):
        if index in placed or not isinstance(tree := getattr(condition, "tree", None), And):
            continue
        first = _comparison_source(tree.operands[0])
        if first is not None:
            by_first.setdefault(first, []).append(index)
    groups, grouped = [], set(placed)
    for text, members in by_first.items():
        if len(members) > 1:
            groups.append((compile_condition(text)._test, tuple((i, tests[i]) for i in members)))
            grouped.update(members)
    alone = tuple((i, test) for i, test in enumerate(tests) if i not in grouped)
    return tuple(groups), alone


def _comparison_source(node: Expr) -> str | None:
    """The source of a path compared with a string, an int, a boolean or null, written so
    that it parses back to the same tree; else None."""
    found = path_comparison(node)
    if found is None:
        return None
    op, path, constant = found
    value = constant.value
    if isinstance(value, bool) or value is None:
        literal = {True: "true", False: "false", None: "null"}[value]
    elif isinstance(value, int):
        literal = str(value)
    elif isinstance(value, str):
        literal = "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    else:
        return None
    text = f"{path_text(path.keys)} {op} {literal}"
    try:
        same = compile_condition(text).tree == node
    except ConditionSyntaxError:
        return None
    return text if same else None


def _always(state: object) -> bool:
    return True
