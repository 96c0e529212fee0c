"""A stored trial and the facts its journal holds: route, answers, tools, tokens."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from swarmkit.journal import JournalRecord
from swarmkit.lowlevel import EVAL_RUN_MARK
from swarmkit.models import Usage

MANIFEST_PREFIX = EVAL_RUN_MARK
"""Session ids of eval-run manifests start with this; the rest is the run id."""

RUN_STARTED = "eval_run_started"
TRIAL_FINISHED = "eval_trial"
RUN_GRADED = "eval_run_graded"


def manifest_id(run_id: str) -> str:
    """The session that lists an eval run's trials."""
    return MANIFEST_PREFIX + run_id


def trial_session_id(run_id: str, task_id: str, number: int) -> str:
    """The first agent session of a trial; later turns are ``__turn_N``, the user's ``__user_N``."""
    return f"eval-{run_id}-{task_id}-{number}"


# One shared encoder: json.dumps with options builds a new one on every call.
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), default=str)


def database_hash(database: Mapping[str, Any]) -> str:
    """A digest of a database that ignores key order."""
    return hashlib.sha256(_CANONICAL.encode(database).encode()).hexdigest()[:16]


@dataclass(frozen=True, kw_only=True, slots=True)
class Handoff:
    """One performed handoff, as the journal holds it."""

    source: str
    """The agent that handed off."""
    target: str
    """The agent that took over."""
    decided_by: str
    """``rule``, ``llm``, ``tool`` or ``budget``."""


@dataclass(frozen=True, kw_only=True, slots=True)
class RouteFacts:
    """What a trial's journal says about its route, summed over the dialogue's runs."""

    trail: tuple[str, ...] = ()
    """Agents in the order they took turns (repeats kept)."""
    handoffs: tuple[Handoff, ...] = ()
    """Every performed handoff."""
    refusals: tuple[str, ...] = ()
    """The reason of every refused handoff (``cycle``, ``max_handoffs``, ``rejected`` ...)."""
    stop_reasons: tuple[str, ...] = ()
    """How each run of the dialogue stopped."""
    final_agent: str | None = None
    """The agent active when the last run stopped."""
    tools: tuple[str, ...] = ()
    """Names of the tools called, in order."""
    answers: tuple[str, ...] = ()
    """Every text an agent said (final answers and text beside tool calls)."""
    usage: Usage = field(default_factory=Usage)
    """Tokens over every model call of the swarm."""
    calls: tuple[tuple[str, Usage], ...] = ()
    """(model name, usage) of each swarm model call, for a price function."""

    @property
    def stop_reason(self) -> str | None:
        """How the dialogue's last run stopped."""
        return self.stop_reasons[-1] if self.stop_reasons else None

    @property
    def hops(self) -> int:
        """Handoffs performed."""
        return len(self.handoffs)

    @property
    def rule_decided(self) -> int:
        """Handoffs a HandoffGraph rule decided."""
        return sum(1 for h in self.handoffs if h.decided_by == "rule")

    @property
    def cycles(self) -> int:
        """Cycles detected (refused or stopping the run)."""
        return self.refusals.count("cycle") + self.stop_reasons.count("cycle")


def route_facts(sessions: Sequence[Sequence[JournalRecord]]) -> RouteFacts:
    """The route facts of a dialogue from its agent sessions' records."""
    trail: list[str] = []
    handoffs: list[Handoff] = []
    refusals: list[str] = []
    stops: list[str] = []
    tools: list[str] = []
    answers: list[str] = []
    calls: list[tuple[str, Usage]] = []
    final: str | None = None
    for records in sessions:
        for record in records:
            data = record.data
            match record.kind:
                case "agent_started":
                    trail.append(str(data.get("agent")))
                case "handoff":
                    handoffs.append(
                        Handoff(
                            source=str(data.get("source")),
                            target=str(data.get("target")),
                            decided_by=str(data.get("decided_by")),
                        )
                    )
                case "handoff_refused":
                    refusals.append(str(data.get("reason")))
                case "tool_call":
                    tools.append(str(data.get("name")))
                case "model_call":
                    response = data.get("response") or {}
                    if response.get("content"):
                        answers.append(str(response["content"]))
                    calls.append((str(response.get("model") or ""), _usage(response.get("usage"))))
                case "run_finished":
                    stops.append(str(data.get("stop_reason")))
                    final = data.get("final_agent") or final
    total = Usage()
    for _, usage in calls:
        total = total + usage
    return RouteFacts(
        trail=tuple(trail),
        handoffs=tuple(handoffs),
        refusals=tuple(refusals),
        stop_reasons=tuple(stops),
        final_agent=final,
        tools=tuple(tools),
        answers=tuple(answers),
        usage=total,
        calls=tuple(calls),
    )


def _usage(data: object) -> Usage:
    if not isinstance(data, Mapping):
        return Usage()
    return Usage(
        prompt_tokens=int(data.get("prompt_tokens") or 0),
        completion_tokens=int(data.get("completion_tokens") or 0),
        total_tokens=int(data.get("total_tokens") or 0),
    )


@dataclass(frozen=True, kw_only=True, slots=True)
class StoredTrial:
    """One trial as the eval run's manifest records it."""

    run_id: str
    """The eval run."""
    task_id: str
    """The task."""
    number: int
    """1 for the task's first trial, ..."""
    sessions: tuple[str, ...]
    """The swarm's sessions, one per user message, in order."""
    user_sessions: tuple[str, ...] = ()
    """A model-driven user's sessions, one per message it wrote."""
    user_said: tuple[str, ...] = ()
    """The user's messages."""
    database: Mapping[str, Any] = field(default_factory=dict)
    """The database at the end of the trial."""
    error: str | None = None
    """Why the trial could not finish (an exception), else None."""

    def to_data(self) -> dict[str, Any]:
        """JSON-safe data for the manifest."""
        return {
            "run_id": self.run_id,
            "task_id": self.task_id,
            "number": self.number,
            "sessions": list(self.sessions),
            "user_sessions": list(self.user_sessions),
            "user_said": list(self.user_said),
            "database": dict(self.database),
            "error": self.error,
        }

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> StoredTrial:
        """The trial ``to_data`` described."""
        return cls(
            run_id=str(data["run_id"]),
            task_id=str(data["task_id"]),
            number=int(data["number"]),
            sessions=tuple(data.get("sessions") or ()),
            user_sessions=tuple(data.get("user_sessions") or ()),
            user_said=tuple(data.get("user_said") or ()),
            database=dict(data.get("database") or {}),
            error=data.get("error"),
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class Trial:
    """What graders see of one trial: the stored trial and the facts of its journal."""

    stored: StoredTrial
    """The trial as stored."""
    facts: RouteFacts
    """Its route, answers, tools and tokens."""
