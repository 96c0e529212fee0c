"""UsageLimits and LimitBreach: a run's budget of calls, tokens and cost, and how one ran out."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from swarmkit.exceptions import ConfigurationError
from swarmkit.models import Usage

CostFunction = Callable[[str, Usage], float]
"""The price of one model call: ``cost(model_name, usage)``, in whatever unit you budget in."""

LimitName = Literal[
    "run_timeout",
    "agent_timeout",
    "max_model_calls",
    "max_input_tokens",
    "max_output_tokens",
    "max_total_tokens",
    "max_tool_calls",
    "max_cost",
    "budget",
]
"""Which limit ended a run (``budget``: a spend ledger's budget, see ``swarmkit.ledger``)."""

TIME_LIMITS: frozenset[str] = frozenset({"run_timeout", "agent_timeout"})
"""The limits measured on the run's clock (``stop_reason="timeout"``); the rest are usage."""


@dataclass(frozen=True, kw_only=True, slots=True)
class UsageLimits:
    """What one run may spend, counted over the whole run (every agent, every resumed part,
    and the model and tool calls of the agents it delegates to with ``as_tool()``).

    Each limit is checked before a model call (a call that cannot fit is not made) and after
    each answer; a breach ends the run with ``stop_reason="usage_limit"``, never an exception.
    ``None`` means no limit.
    """

    max_model_calls: int | None = None
    """Model calls the run may make."""
    max_input_tokens: int | None = None
    """Prompt tokens the run may use, summed over its calls."""
    max_output_tokens: int | None = None
    """Completion tokens the run may use."""
    max_total_tokens: int | None = None
    """Total tokens (as the API reports them) the run may use."""
    max_tool_calls: int | None = None
    """Function tool calls the run may make (handoffs are counted by ``max_handoffs``)."""
    max_cost: float | None = None
    """Cost the run may reach, as ``cost`` prices each call; needs ``cost``."""
    cost: CostFunction | None = None
    """Prices one call from the model's name and its usage; the result reports the sum."""
    answer_on_last_call: bool = False
    """Make the last call ``max_model_calls`` allows with ``tool_choice="none"``, so the run
    ends with an answer (as ``on_max_turns="finish"`` does) instead of a cut-off tool call."""
    per: Literal["run", "conversation"] = "run"
    """What the limits count over: this run (each turn of a conversation afresh, the default),
    or the whole conversation: every earlier turn's calls, tokens and cost count too, so a
    turn whose conversation has spent its budget stops with ``usage_limit`` before a model is
    paid. (``max_handoffs``, ``max_turns`` and cycle detection always count per run.)"""

    def __post_init__(self) -> None:
        if self.per not in ("run", "conversation"):
            raise ConfigurationError(f"per must be 'run' or 'conversation', got {self.per!r}")
        for name in _COUNTS:
            _check_count(name, getattr(self, name))
        if self.max_cost is not None:
            if isinstance(self.max_cost, bool) or not isinstance(self.max_cost, int | float):
                raise ConfigurationError(f"max_cost must be a number, got {self.max_cost!r}")
            if self.cost is None:
                raise ConfigurationError(
                    "max_cost needs cost=: a function (model_name, usage) -> cost of one call"
                )
        if self.cost is not None and not callable(self.cost):
            raise ConfigurationError("cost must be a function (model_name, usage) -> float")


@dataclass(frozen=True, kw_only=True, slots=True)
class Spent:
    """What a conversation has spent: model and tool calls, tokens and cost, over its turns."""

    model_calls: int = 0
    """Model calls made."""
    tool_calls: int = 0
    """Function tool calls made."""
    usage: Usage = field(default_factory=Usage)
    """Tokens, summed over every agent and call."""
    cost: float = 0.0
    """The cost, as the limits' ``cost`` function priced each call (0 without one)."""
    handoffs: int = 0
    """Handoffs performed."""
    visits: Mapping[str, int] = field(default_factory=dict)
    """How often each agent became active."""

    def __add__(self, other: Spent) -> Spent:
        visits = dict(self.visits)
        for agent, count in other.visits.items():
            visits[agent] = visits.get(agent, 0) + count
        return Spent(
            model_calls=self.model_calls + other.model_calls,
            tool_calls=self.tool_calls + other.tool_calls,
            usage=self.usage + other.usage,
            cost=self.cost + other.cost,
            handoffs=self.handoffs + other.handoffs,
            visits=visits,
        )

    def to_data(self) -> dict[str, Any]:
        """As journal data."""
        return {**asdict(self), "visits": dict(self.visits)}

    @classmethod
    def from_data(cls, data: object) -> Spent:
        """What ``to_data`` wrote (nothing spent for a record without it)."""
        if not isinstance(data, Mapping):
            return cls()
        usage = data.get("usage")
        return cls(
            model_calls=int(data.get("model_calls") or 0),
            tool_calls=int(data.get("tool_calls") or 0),
            usage=Usage(**usage) if isinstance(usage, Mapping) else Usage(),
            cost=float(data.get("cost") or 0.0),
            handoffs=int(data.get("handoffs") or 0),
            visits={str(k): int(v) for k, v in (data.get("visits") or {}).items()},
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class LimitBreach:
    """The limit that ended a run, with the figures: what it allowed and what was used."""

    limit: LimitName
    """Which limit: ``run_timeout``, ``max_total_tokens``, ..."""
    allowed: float
    """The limit's value (seconds for a timeout)."""
    used: float
    """What the run had used when it stopped (seconds elapsed for a timeout)."""
    agent: str
    """The agent that was active."""
    message: str
    """The breach in words."""
    budget: str | None = None
    """For ``limit="budget"``: the ledger budget's name, with its scope and period
    (``"acme-daily|tenant=acme|2026-11-28"``)."""

    @property
    def stop_reason(self) -> Literal["timeout", "usage_limit", "budget"]:
        """The run's stop reason for this breach."""
        if self.limit == "budget":
            return "budget"
        return "timeout" if self.limit in TIME_LIMITS else "usage_limit"

    def to_data(self) -> dict[str, Any]:
        """The breach as JSON-safe data (as a journal holds it)."""
        data = asdict(self)
        if data["budget"] is None:
            del data["budget"]
        return data

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> LimitBreach:
        """The breach ``to_data`` described."""
        return cls(
            limit=data["limit"],
            allowed=data["allowed"],
            used=data["used"],
            agent=str(data["agent"]),
            message=str(data["message"]),
            budget=str(data["budget"]) if data.get("budget") is not None else None,
        )


_COUNTS = (
    "max_model_calls",
    "max_input_tokens",
    "max_output_tokens",
    "max_total_tokens",
    "max_tool_calls",
)


class Spend:
    """Model and tool calls counted against the usage limits, shared by a run and its sub-runs.

    A delegated sub-run counts in its own ``Spend`` whose ``parent`` is the delegating run's:
    each call it makes is added up the chain, so the top run's figures include every delegate's
    calls, and every run of the tree checks the limits against those figures (``root``).
    """

    __slots__ = ("model_calls", "parent", "tool_calls")

    def __init__(self, parent: Spend | None = None) -> None:
        self.model_calls = 0
        """Model calls made by this run and its sub-runs."""
        self.tool_calls = 0
        """Function tool calls made by this run and its sub-runs."""
        self.parent = parent
        """The delegating run's spend, or None for a top run."""

    @property
    def root(self) -> Spend:
        """The top run's spend: what the limits are checked against."""
        spend = self
        while spend.parent is not None:
            spend = spend.parent
        return spend

    def add(self, *, model_calls: int = 0, tool_calls: int = 0) -> None:
        """Count calls here and in every run above."""
        spend: Spend | None = self
        while spend is not None:
            spend.model_calls += model_calls
            spend.tool_calls += tool_calls
            spend = spend.parent


def check_timeout(name: str, seconds: float | None) -> float | None:
    """A timeout setting, checked: None or a positive number of seconds."""
    if seconds is None:
        return None
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or not seconds > 0:
        raise ConfigurationError(f"{name} must be a positive number of seconds, got {seconds!r}")
    return float(seconds)


def _check_count(name: str, value: object) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigurationError(f"UsageLimits {name} must be an int >= 0, got {value!r}")
