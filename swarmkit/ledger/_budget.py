"""Budget, Price and Window: what a spend ledger caps, over which period, priced how."""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeGuard

from swarmkit.exceptions import ConfigurationError
from swarmkit.models import Usage

Unit = Literal["tokens", "calls", "money"]
"""What a budget counts: total tokens, model calls, or money (priced by the ledger's prices)."""

Period = Literal["minute", "hour", "day", "month"]
"""A calendar period in UTC: the budget starts afresh when it turns."""

EACH = "*"
"""A key value meaning "each one separately": ``tenant="*"`` gives every tenant its own budget."""

KEYS = ("tenant", "agent", "model", "provider")
"""What a budget may be keyed by."""

_UNITS = ("tokens", "calls", "money")
_PERIODS = ("minute", "hour", "day", "month")


@dataclass(frozen=True, kw_only=True, slots=True)
class Window:
    """A fixed window of time (seconds since the epoch, UTC): the budget applies inside it only."""

    start: float
    """When the window opens."""
    end: float
    """When it closes (exclusive)."""

    def __post_init__(self) -> None:
        _check_numbers(self, ("start", "end"), "seconds since the epoch")
        if not self.end > self.start:
            raise ConfigurationError(f"Window end {self.end} must be after start {self.start}")


@dataclass(frozen=True, kw_only=True, slots=True)
class Price:
    """What a model costs per million tokens, in the currency you budget in."""

    input: float
    """Per million prompt tokens."""
    output: float
    """Per million completion tokens."""

    def __post_init__(self) -> None:
        _check_numbers(self, ("input", "output"), "a number >= 0", minimum=0)

    def of(self, usage: Usage) -> float:
        """The price of one call's usage."""
        return (usage.prompt_tokens * self.input + usage.completion_tokens * self.output) / 1e6


@dataclass(frozen=True, kw_only=True, slots=True)
class Budget:
    """A cap on spend over a period, for the calls its keys match.

    Each key (``tenant``, ``agent``, ``model``, ``provider``) is None (any call, one shared
    budget), a value (only calls with that value), or ``"*"`` (each value its own budget).
    """

    name: str
    """Names the budget in stop reasons, the journal and ``swarmkit spend``."""
    limit: float
    """How much may be spent per period, in ``unit``."""
    unit: Unit = "tokens"
    """Tokens (total), calls, or money (the ledger's ``prices``)."""
    period: Period | Window = "day"
    """A UTC calendar period, or a fixed ``Window``."""
    tenant: str | None = None
    """The tenant it caps (see ``Ledger(tenant=...)``), ``"*"`` for each, None for any."""
    agent: str | None = None
    """The agent it caps, ``"*"`` for each, None for any."""
    model: str | None = None
    """The model name it caps, ``"*"`` for each, None for any."""
    provider: str | None = None
    """The provider it caps (``openai``, ...), ``"*"`` for each, None for any."""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name or "|" in self.name:
            raise ConfigurationError(
                f"Budget name must be a non-empty string without '|', got {self.name!r}"
            )
        limit = self.limit
        if not _is_number(limit) or not math.isfinite(limit):
            raise ConfigurationError(f"Budget {self.name!r}: limit must be a number, got {limit!r}")
        if limit < 0:
            raise ConfigurationError(f"Budget {self.name!r}: limit must be >= 0, got {limit!r}")
        if self.unit not in _UNITS:
            raise ConfigurationError(
                f"Budget {self.name!r}: unit must be one of {', '.join(_UNITS)}, got {self.unit!r}"
            )
        if not isinstance(self.period, Window) and self.period not in _PERIODS:
            raise ConfigurationError(
                f"Budget {self.name!r}: period must be one of {', '.join(_PERIODS)} or a "
                f"Window(start=, end=), got {self.period!r}"
            )
        for key in KEYS:
            value = getattr(self, key)
            if value is not None and (not isinstance(value, str) or not value):
                raise ConfigurationError(
                    f"Budget {self.name!r}: {key} must be a non-empty string, '*' or None"
                )

    def applies(self, facts: Mapping[str, str]) -> bool:
        """Whether a call with these facts (tenant, agent, model, provider) counts here."""
        return all(getattr(self, key) in (None, EACH, facts.get(key)) for key in KEYS)

    def scope(self, facts: Mapping[str, str]) -> str:
        """Which of its budgets a call counts in: the values of its ``"*"`` keys."""
        return ",".join(f"{key}={facts.get(key, '')}" for key in KEYS if getattr(self, key) == EACH)

    def window(self, now: float) -> str | None:
        """The period ``now`` falls in, as text (None: outside a fixed window)."""
        if isinstance(self.period, Window):
            inside = self.period.start <= now < self.period.end
            return f"{self.period.start:g}-{self.period.end:g}" if inside else None
        moment = time.gmtime(now)
        formats = {"minute": "%Y-%m-%dT%H:%M", "hour": "%Y-%m-%dT%H", "day": "%Y-%m-%d"}
        return time.strftime(formats.get(self.period, "%Y-%m"), moment)

    def to_data(self) -> dict[str, Any]:
        """As stored beside the ledger, for ``swarmkit spend``."""
        period: Any = self.period
        if isinstance(period, Window):
            period = {"start": period.start, "end": period.end}
        data = {"name": self.name, "limit": self.limit, "unit": self.unit, "period": period}
        return data | {key: getattr(self, key) for key in KEYS}


def _is_number(value: object) -> TypeGuard[float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _check_numbers(
    owner: object, names: tuple[str, ...], wanted: str, *, minimum: float = -math.inf
) -> None:
    """ConfigurationError unless each of ``owner``'s fields ``names`` is a number (a bool is
    not) of at least ``minimum``; ``wanted`` says what it must be."""
    for name in names:
        value = getattr(owner, name)
        if not _is_number(value) or value < minimum:
            raise ConfigurationError(
                f"{type(owner).__name__} {name} must be {wanted}, got {value!r}"
            )
