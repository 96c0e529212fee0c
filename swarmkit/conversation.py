"""Who answers a conversation's next user message: the next-turn policy and its rules.

``Swarm(next_turn=...)`` takes ``"last"`` (the agent that answered goes on: the default),
``"entry"`` (every new message starts at the entry agent), or a
[NextTurn][swarmkit.conversation.NextTurn] of ``(when, agent)`` rules in the condition language,
tried in order over the context and the new message; the first that holds picks the agent, else
``otherwise`` decides. The choice is journaled with the turn's start (``RunResult.next_turn``) and
replayed from there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from swarmkit.conditions import Condition, compile_condition
from swarmkit.exceptions import ConfigurationError
from swarmkit.messages import message_facts
from swarmkit.result import NextTurnDecision

__all__ = ["NextTurn", "NextTurnSetting", "next_turn_state"]

NEXT_TURN_KEY = "swarm"
"""The context key under which next-turn rules see the facts (the loop's reserved key)."""


@dataclass(frozen=True, kw_only=True)
class NextTurn:
    """Rules for who answers a conversation's next message; the first that holds decides.

    Each rule is ``(when, agent)``: a condition over the context (as the previous turn left
    it, with the new call's ``context=`` merged over it) and the facts under ``swarm``:
    ``swarm.agent`` (the agent that answered last), ``swarm.message`` (the new message),
    ``swarm.user_message`` and ``swarm.user_words`` (the same message, and its words, as
    handoff rules see them) and ``swarm.entry_agent``. For example ``("swarm.agent ==
    'billing' and 'invoice' not in swarm.message", "triage")`` sends billing's customer back
    to triage unless they still ask about the invoice.
    """

    rules: Sequence[tuple[str, str]] = ()
    """``(when, agent)`` pairs, tried in order; stored as a tuple."""
    otherwise: Literal["last", "entry"] = "last"
    """Who answers when no rule holds: the agent that answered last, or the entry agent."""
    _compiled: tuple[tuple[Condition, str], ...] = field(default=(), repr=False, compare=False)

    def __post_init__(self) -> None:
        rules = self.rules
        if isinstance(rules, str | bytes) or not isinstance(rules, Sequence):
            raise ConfigurationError(
                "NextTurn rules take a list of (when, agent) pairs, e.g. "
                "[(\"swarm.agent == 'billing'\", 'triage')]"
            )
        compiled = tuple(_compiled_rule(rule) for rule in rules)
        object.__setattr__(self, "rules", tuple((c.source, agent) for c, agent in compiled))
        object.__setattr__(self, "_compiled", compiled)
        if self.otherwise not in ("last", "entry"):
            raise ConfigurationError(
                f"NextTurn(otherwise=) must be 'last' or 'entry', got {self.otherwise!r}"
            )

    def agents(self) -> tuple[str, ...]:
        """The agents the rules name, in order."""
        return tuple(agent for _, agent in self.rules)

    def decide(
        self, *, last_agent: str, entry_agent: str, message: str, context: Mapping[str, Any]
    ) -> NextTurnDecision:
        """Who answers ``message``: the first rule that holds, else ``otherwise``."""
        state = next_turn_state(
            context, last_agent=last_agent, entry_agent=entry_agent, message=message
        )
        for condition, agent in self._compiled:
            if condition(state):
                return NextTurnDecision(
                    policy="rule", agent=agent, last_agent=last_agent, condition=condition.source
                )
        agent = last_agent if self.otherwise == "last" else entry_agent
        return NextTurnDecision(policy=self.otherwise, agent=agent, last_agent=last_agent)


NextTurnSetting = Literal["last", "entry"] | NextTurn | Sequence[tuple[str, str]]
"""What ``Swarm(next_turn=)`` takes: a policy's name, a NextTurn, or its rules as a list."""


def next_turn_state(
    context: Mapping[str, Any], *, last_agent: str, entry_agent: str, message: str
) -> dict[str, Any]:
    """What a next-turn rule sees: the context, and the facts under ``swarm``."""
    facts = {
        "agent": last_agent,
        "message": message,
        "entry_agent": entry_agent,
        **message_facts(message),
    }
    return {**context, NEXT_TURN_KEY: facts}


def as_next_turn(setting: object, agents: Sequence[str]) -> NextTurn:
    """``Swarm(next_turn=)`` checked against the swarm's agents, as a NextTurn."""
    if setting == "last":
        return NextTurn(otherwise="last")
    if setting == "entry":
        return NextTurn(otherwise="entry")
    if isinstance(setting, str):
        raise ConfigurationError(
            f"next_turn must be 'last', 'entry', a NextTurn or a list of (when, agent) rules; "
            f"got {setting!r}"
        )
    policy = setting if isinstance(setting, NextTurn) else NextTurn(rules=setting)  # type: ignore[arg-type]
    unknown = [agent for agent in policy.agents() if agent not in agents]
    if unknown:
        raise ConfigurationError(
            f"next_turn's rules name agents the swarm does not have: {', '.join(unknown)}; "
            f"agents: {', '.join(agents)}"
        )
    return policy


def _compiled_rule(rule: object) -> tuple[Condition, str]:
    if isinstance(rule, str | bytes) or not isinstance(rule, Sequence) or len(rule) != 2:
        raise ConfigurationError(
            f"a next-turn rule is a (when, agent) pair, e.g. (\"swarm.agent == 'billing'\", "
            f"'triage'); got {rule!r:.80}"
        )
    when, agent = rule
    if not isinstance(when, str) or not isinstance(agent, str) or not agent:
        raise ConfigurationError(
            f"a next-turn rule is a (when, agent) pair of strings; got {rule!r:.80}"
        )
    return compile_condition(when), agent
