"""Withheld: a rule the learner found and did not suggest, with the reason in one sentence."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from swarmkit.graph import Edge

WithheldReason = Literal["support", "precision", "conflicting", "cycle"]
"""Why a learned rule is not suggested: see [Withheld][swarmkit.rules.Withheld]."""

KEPT = "(kept the turn)"
"""How a turn where the model answered itself instead of handing off is shown."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Withheld:
    """A rule the learner found and did not suggest, and why.

    ``reason`` is ``support`` when the rule takes fewer held-out decisions than
    ``min_support``; ``precision`` when too few of the held-out decisions it takes went where
    it routes; ``conflicting`` when, on the training sessions, the model sent the decisions
    where it holds to several agents and no narrower condition reaches the precision (it
    never reached the held-out check); ``cycle`` when the swarm's graph refuses it (it would close a
    cycle of rules).
    """

    source: str
    """The agent deciding."""
    target: str
    """Where it would route."""
    when: str
    """The condition."""
    reason: WithheldReason
    """Why it is withheld."""
    why: str
    """The reason as a sentence, with its figures."""
    support: int = 0
    """The decisions it takes: on held-out sessions for ``support`` and ``precision``, on the
    training sessions (those no earlier rule takes) for ``conflicting``; 0 for ``cycle``."""
    agreed: int = 0
    """Of those, how many went where it routes."""
    counts: Mapping[str, int] = field(default_factory=dict)
    """Of those, target (or ``KEPT``) -> how many went there, most first."""

    @property
    def precision(self) -> float:
        """``agreed / support`` (0 when it takes none)."""
        return self.agreed / self.support if self.support else 0.0


def held_out_failure(
    rule: Edge,
    counts: Mapping[str, int],
    *,
    min_precision: float,
    min_support: int,
) -> Withheld:
    """The rule withheld for its held-out decisions (``counts``: where they went)."""
    support = sum(counts.values())
    agreed = counts.get(rule.target, 0)
    if support < min_support:
        reason: WithheldReason = "support"
        why = (
            f"it takes {support} decisions on held-out sessions, fewer than the minimum support "
            f"{min_support}"
        )
    else:
        reason = "precision"
        why = (
            f"{agreed} of the {support} held-out decisions it takes went to {rule.target} "
            f"({agreed / support:.1%}), below the minimum precision {min_precision:.1%}; "
            f"the others went to {_shown(counts, but=rule.target)}"
        )
    return _withheld(rule, reason, why, counts)


def conflicting(rule: Edge, counts: Mapping[str, int], *, min_precision: float) -> Withheld:
    """The rule withheld because the training decisions where it holds went several ways."""
    support = sum(counts.values())
    agreed = counts.get(rule.target, 0)
    why = (
        f"on the training sessions the model sent the decisions where it holds to several "
        f"agents ({_shown(counts)}): {agreed} of {support} to {rule.target} "
        f"({agreed / support:.1%}), below the minimum precision {min_precision:.1%}, and no "
        "narrower condition the learner tried reaches it"
    )
    return _withheld(rule, "conflicting", why, counts)


def refused(rule: Edge, message: str) -> Withheld:
    """The rule the swarm's graph refuses, with the graph's message."""
    return Withheld(
        source=rule.source,
        target=rule.target,
        when=rule.when or "",
        reason="cycle",
        why=f"the swarm's graph refuses it: {message}",
    )


def _withheld(rule: Edge, reason: WithheldReason, why: str, counts: Mapping[str, int]) -> Withheld:
    return Withheld(
        source=rule.source,
        target=rule.target,
        when=rule.when or "",
        reason=reason,
        why=why,
        support=sum(counts.values()),
        agreed=counts.get(rule.target, 0),
        counts=_ranked(counts),
    )


def _ranked(counts: Mapping[str, int]) -> dict[str, int]:
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))


def _shown(counts: Mapping[str, int], *, but: str | None = None) -> str:
    return ", ".join(
        f"{target} {count}" for target, count in _ranked(counts).items() if target != but
    )
