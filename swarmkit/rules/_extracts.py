"""A session's turns from the few values of its records a store extracts (suggest's fast read).

A store that can (SQLite's JSON functions) reads only what a decision needs: the context and
the prompt of ``run_started``, the agent of ``agent_started``, the turn, tokens and offered
tools of ``model_call``, what ``handoff`` says. The context stays the JSON text the store gave
(unpacked only while a pass reads it). Anything this read does not cover exactly as the full
reader in ``_corpus`` does (a tool's context update, a rule record, a value of an unexpected
type, a damaged record) sends the session to the full reader instead, so both give the same
turns.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from swarmkit.messages import USER_MESSAGE_FACT, USER_WORDS_FACT, message_facts
from swarmkit.rules._corpus import FACT_KEYS, Outcome, fresh_facts, offered_of

PATHS: Mapping[str, Sequence[str | Sequence[str]]] = {
    # One array, the prompt first: the context's text is what follows the prompt's.
    "run_started": (("$.prompt", "$.context"),),
    "agent_started": ("$.agent",),
    "model_call": ("$.error", ("$.turn", "$.response.usage.total_tokens", "$.request.tools")),
    "handoff": (("$.decided_by", "$.target", "$.number", "$.payload", "$.message"),),
}
"""What the fast read asks a store for, by record kind."""
FULL_KINDS = frozenset({"tool_call", "state_edited", "rule"})
"""Kinds whose records send their session to the full reader."""

_FRESH = tuple(fresh_facts().values())
_TURN_AT = FACT_KEYS.index("turn")
_USER_MESSAGE_AT = FACT_KEYS.index(USER_MESSAGE_FACT)
_WORDS_AT = FACT_KEYS.index(USER_WORDS_FACT)
_AGENT_AT = FACT_KEYS.index("agent")
_PREVIOUS_AT = FACT_KEYS.index("previous_agent")
_COUNT_AT = FACT_KEYS.index("handoff_count")
_PAYLOAD_AT = FACT_KEYS.index("payload")
_MESSAGE_AT = FACT_KEYS.index("message")
_CACHED = 65_536
"""How many distinct value texts (a call's turn, tokens and tools; a handoff) are kept parsed."""
_OUTCOMES: Mapping[object, Outcome] = {"llm": "llm", "rule": "rule"}

_V = TypeVar("_V")

Spotted = tuple[int, int, bool, str, tuple[Any, ...]]
"""A point as ``_rows.Spot`` holds it: seq, tokens, call, context text, facts."""
Turned = tuple[str, Outcome, str | None, frozenset[str], tuple[Spotted, ...]]
"""A turn: agent, outcome, target, offered tools, points."""


class Extracted:
    """Reads sessions' extracted rows, keeping parsed the value texts that repeat."""

    def __init__(self) -> None:
        self._calls: dict[str, tuple[int, int, frozenset[str]] | None] = {}
        self._handoffs: dict[str, tuple[Outcome, str, int, Any, Any] | None] = {}
        self._agents: dict[str, str | None] = {}

    def turns(self, rows: Sequence[Sequence[Any]]) -> list[Turned] | None:
        """One session's turns from its rows ``(session id, seq, kind, text, text)`` in seq
        order, as the full reader gives them; None when that reader must read the session."""
        facts = list(_FRESH)
        context, agent = "{}", None
        points: list[Spotted] = []
        offered: frozenset[str] = frozenset()
        turns: list[Turned] = []
        for row in rows:
            kind, first = row[2], row[3]
            if kind == "model_call":
                if first is not None:  # a failed call: the full reader skips it too
                    continue
                call = self._call(row[4])
                if call is None:
                    return None
                facts[_TURN_AT] = call[0] - 1  # the rules were consulted before the call
                points.append((row[1], call[1], True, context, tuple(facts)))
                offered = call[2]
            elif kind == "agent_started":
                agent = self._agent(first)
                if agent is None:
                    return None
                facts[_AGENT_AT] = agent
                points = []
            elif kind == "handoff":
                handoff = self._handoff(first)
                if handoff is None:
                    return None
                if agent is not None:
                    turns.append((agent, handoff[0], handoff[1], offered, tuple(points)))
                    points, offered = [], frozenset()
                facts[_PREVIOUS_AT], facts[_COUNT_AT] = agent, handoff[2]
                facts[_PAYLOAD_AT], facts[_MESSAGE_AT] = handoff[3], handoff[4]
                agent = None
            elif kind == "run_started":
                started = _started(first)
                if started is None:
                    return None
                context, facts = started
            elif kind == "run_finished":
                if agent is not None and points:
                    turns.append((agent, "answer", None, offered, tuple(points)))
                    points, offered = [], frozenset()
                    agent = None
            elif kind in FULL_KINDS:
                return None
        if agent is not None and points:
            turns.append((agent, "answer", None, offered, tuple(points)))
        return turns

    def _call(self, text: object) -> tuple[int, int, frozenset[str]] | None:
        """A call's turn, tokens and offer, or None for the full reader to judge."""
        try:
            return self._calls[text]  # type: ignore[index]
        except KeyError:
            pass
        found = None
        values = json.loads(text) if isinstance(text, str) else None
        if isinstance(values, list) and len(values) == 3:
            turn, tokens, tools = values
            # Absent or null values (or a response that is no object) are the full reader's.
            if _whole(turn) and _whole(tokens) and isinstance(tools, list):
                found = (turn, tokens, offered_of(tools))
        return _kept(self._calls, text, found)

    def _handoff(self, text: object) -> tuple[Outcome, str, int, Any, Any] | None:
        try:
            return self._handoffs[text]  # type: ignore[index]
        except KeyError:
            pass
        found = None
        values = json.loads(text) if isinstance(text, str) else None
        if isinstance(values, list) and len(values) == 5:
            decided_by, target, number, payload, message = values
            if isinstance(target, str) and (number is None or _whole(number)):
                outcome = (
                    _OUTCOMES.get(decided_by, "other") if isinstance(decided_by, str) else "other"
                )
                found = (outcome, target, number or 0, payload, message)
        return _kept(self._handoffs, text, found)

    def _agent(self, text: object) -> str | None:
        try:
            return self._agents[text]  # type: ignore[index]
        except KeyError:
            pass
        name = json.loads(text) if isinstance(text, str) else None
        return _kept(self._agents, text, name if isinstance(name, str) else None)


def _kept(cache: dict[str, _V], text: object, found: _V) -> _V:
    if isinstance(text, str) and len(cache) < _CACHED:
        cache[text] = found
    return found


def _whole(value: object) -> bool:
    return value.__class__ is int


def _started(text: object) -> tuple[str, list[Any]] | None:
    """The run's context text and fresh facts from ``[prompt, context]``, or None for a
    context that is no object."""
    if not isinstance(text, str) or not text.startswith("["):
        return None
    prompt, end = _DECODER.raw_decode(text, 1)
    context = text[end + 1 : -1]  # after the prompt's comma, before the closing bracket
    if context == "null":
        context = "{}"
    elif not context.startswith("{"):
        return None
    facts = list(_FRESH)
    said = message_facts(prompt)
    words = said[USER_WORDS_FACT]
    if words:  # the same few thousand words in every message: kept once
        words = tuple(map(sys.intern, words))
    facts[_USER_MESSAGE_AT], facts[_WORDS_AT] = said[USER_MESSAGE_FACT], words
    return context, facts


_DECODER = json.JSONDecoder()
