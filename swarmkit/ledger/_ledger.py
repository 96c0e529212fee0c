"""Ledger: budgets checked before each model call, reserved atomically and settled after."""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from swarmkit.exceptions import ConfigurationError
from swarmkit.ledger._budget import KEYS, Budget, Price
from swarmkit.ledger._store import CallRecord, Hold, LedgerStore, Refusal
from swarmkit.models import ModelRequest, Usage

Estimate = Callable[[ModelRequest], Usage]
"""What a call is expected to use, from its request (prompt and history included)."""

DEFAULT_HOLD_SECONDS = 600.0
"""How long an unsettled reservation holds budget (a worker killed mid-call leaks no longer)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Reservation:
    """A call's estimate held against its budgets until it is settled."""

    id: str
    """Unique per call; settling twice with it charges once."""
    session_id: str
    """The run's session."""
    facts: Mapping[str, str]
    """tenant, agent, model and provider of the call."""
    holds: tuple[Hold, ...]
    """One per applicable budget."""
    estimate: Usage
    """What was held, in tokens."""

    def to_data(self) -> dict[str, Any]:
        """As JSON-safe data (a durable engine records it)."""
        return {
            "id": self.id,
            "session_id": self.session_id,
            "facts": dict(self.facts),
            "holds": [asdict(hold) for hold in self.holds],
            "estimate": asdict(self.estimate),
        }

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> Reservation:
        """What ``to_data`` wrote."""
        return cls(
            id=str(data["id"]),
            session_id=str(data["session_id"]),
            facts={str(k): str(v) for k, v in data["facts"].items()},
            holds=tuple(Hold(**hold) for hold in data["holds"]),
            estimate=Usage(**data["estimate"]),
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class Refused:
    """A call a budget has no room for: it is not made."""

    budget: str
    """The budget's name."""
    scope: str
    """Its ``"*"`` keys' values, if any."""
    period: str
    """The period that is full."""
    limit: float
    """The budget's limit."""
    spent: float
    """Settled spend plus other calls' holds."""
    needed: float
    """This call's estimate."""
    unit: str
    """tokens, calls or money."""


class Ledger:
    """Budgets (by tenant, agent, model, provider; per period) shared by every run and worker
    that uses the same store: a SQLite file path, a Postgres DSN, or a ``LedgerStore``.

    The tenant is read from the run's context at ``tenant`` (a dotted path, e.g.
    ``"customer.id"``). A run whose context lacks it counts as ``default_tenant``: budgets
    for ``tenant="*"`` then cap those runs together, and a budget for one named tenant does
    not apply to them.
    """

    def __init__(
        self,
        store: LedgerStore | str | os.PathLike[str],
        budgets: Sequence[Budget],
        *,
        prices: Mapping[str, Price] | None = None,
        tenant: str | None = None,
        default_tenant: str = "default",
        estimate: Estimate | None = None,
        output_estimate: int = 1024,
        hold_seconds: float = DEFAULT_HOLD_SECONDS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = open_store(store)
        """Where spend is kept."""
        self.budgets = _checked_budgets(budgets)
        """The budgets, by name."""
        self.prices = _checked_prices(prices)
        """Per-model prices for money budgets."""
        if tenant is not None and (not isinstance(tenant, str) or not tenant):
            raise ConfigurationError("Ledger tenant= must be a context path such as 'tenant'")
        self.tenant = tenant
        """The context path that names a run's tenant."""
        self.default_tenant = default_tenant
        """The tenant of a run whose context lacks the path."""
        self.estimate = estimate or _estimator(output_estimate)
        """What a call is expected to use."""
        if isinstance(hold_seconds, bool) or not isinstance(hold_seconds, int | float):
            raise ConfigurationError("Ledger hold_seconds must be a number of seconds")
        if not hold_seconds > 0:
            raise ConfigurationError(f"Ledger hold_seconds must be > 0, got {hold_seconds!r}")
        self.hold_seconds = float(hold_seconds)
        """How long an unsettled reservation holds budget."""
        self.clock = clock
        """Seconds since the epoch (UTC periods are read from it)."""
        self._saved = False

    def with_store(self, store: LedgerStore | str | os.PathLike[str]) -> Ledger:
        """The same budgets, prices, tenant rule, estimate, hold and clock, kept in another
        store (an evaluation's own SQLite file or database, say)."""
        return Ledger(
            store,
            list(self.budgets.values()),
            prices=self.prices,
            tenant=self.tenant,
            default_tenant=self.default_tenant,
            estimate=self.estimate,
            hold_seconds=self.hold_seconds,
            clock=self.clock,
        )

    def check_models(self, calls: Iterable[tuple[str, str, str]]) -> None:
        """Raise ConfigurationError when a money budget applies to an (agent, model, provider)
        that ``prices`` has no price for."""
        for agent, model, provider in calls:
            facts = {"agent": agent, "model": model, "provider": provider}
            for budget in self.budgets.values():
                if budget.unit != "money" or model in self.prices:
                    continue
                if all(getattr(budget, k) in (None, "*", facts.get(k)) for k in KEYS[1:]):
                    raise ConfigurationError(
                        f"Budget {budget.name!r} counts money but the ledger has no price for "
                        f"model {model!r} (agent {agent!r}); add prices={{{model!r}: Price(...)}}"
                    )

    def tenant_of(self, context: Mapping[str, Any]) -> str:
        """The run's tenant: the value at the ``tenant`` path, else ``default_tenant``."""
        if self.tenant is None:
            return self.default_tenant
        value: Any = context
        for part in self.tenant.split("."):
            if not isinstance(value, Mapping) or part not in value:
                return self.default_tenant
            value = value[part]
        return str(value) if value is not None else self.default_tenant

    async def reserve(
        self, *, session_id: str, facts: Mapping[str, str], estimate: Usage
    ) -> Reservation | Refused:
        """Hold ``estimate`` against every applicable budget at once, or refuse the call."""
        if not self._saved:
            await self.store.save_budgets(
                {name: json.dumps(b.to_data()) for name, b in self.budgets.items()}
            )
            self._saved = True
        now = self.clock()
        holds = self._holds(facts, estimate, now)
        reservation = Reservation(
            id=uuid.uuid4().hex,
            session_id=session_id,
            facts=dict(facts),
            holds=tuple(holds),
            estimate=estimate,
        )
        if not holds:
            return reservation
        refusal = await self.store.reserve(
            reservation.id, holds, now=now, expires=now + self.hold_seconds
        )
        return reservation if refusal is None else self._refused(refusal)

    async def settle(self, reservation: Reservation, usage: Usage) -> bool:
        """Charge the call's real usage to its budgets and release the hold; once per
        reservation (False when it was settled already)."""
        facts = reservation.facts
        now = self.clock()
        charges = [
            (h, self._amount(self.budgets[h.budget], facts, usage)) for h in reservation.holds
        ]
        call = CallRecord(
            reservation=reservation.id,
            at=now,
            day=time.strftime("%Y-%m-%d", time.gmtime(now)),
            session_id=reservation.session_id,
            **{key: facts.get(key, "") for key in KEYS},
            calls=1,
            input_tokens=usage.prompt_tokens,
            output_tokens=usage.completion_tokens,
            total_tokens=_total(usage),
            cost=self._cost(facts.get("model", ""), usage),
        )
        return await self.store.settle(reservation.id, charges, call)

    def _holds(self, facts: Mapping[str, str], estimate: Usage, now: float) -> list[Hold]:
        holds = []
        for budget in self.budgets.values():
            period = budget.window(now) if budget.applies(facts) else None
            if period is None:
                continue
            scope = budget.scope(facts)
            holds.append(
                Hold(
                    key=f"{budget.name}|{scope}|{period}",
                    budget=budget.name,
                    scope=scope,
                    period=period,
                    limit=float(budget.limit),
                    amount=self._amount(budget, facts, estimate),
                )
            )
        return holds

    def _amount(self, budget: Budget, facts: Mapping[str, str], usage: Usage) -> float:
        if budget.unit == "calls":
            return 1.0
        if budget.unit == "tokens":
            return float(_total(usage))
        return self._cost(facts.get("model", ""), usage)

    def _cost(self, model: str, usage: Usage) -> float:
        price = self.prices.get(model)
        return price.of(usage) if price is not None else 0.0

    def _refused(self, refusal: Refusal) -> Refused:
        hold = refusal.hold
        return Refused(
            budget=hold.budget,
            scope=hold.scope,
            period=hold.period,
            limit=hold.limit,
            spent=refusal.spent + refusal.held,
            needed=hold.amount,
            unit=self.budgets[hold.budget].unit,
        )


def _total(usage: Usage) -> int:
    return usage.total_tokens or usage.prompt_tokens + usage.completion_tokens


def _estimator(output_estimate: int) -> Estimate:
    if (
        isinstance(output_estimate, bool)
        or not isinstance(output_estimate, int)
        or output_estimate < 0
    ):
        raise ConfigurationError(
            f"Ledger output_estimate must be an int >= 0, got {output_estimate!r}"
        )

    def estimate(request: ModelRequest) -> Usage:
        # About four characters a token: a hold, settled with the real figures after.
        chars = sum(len(str(getattr(m, "content", "") or "")) + 16 for m in request.messages)
        chars += sum(len(t.name) + len(json.dumps(t.parameters)) for t in request.tools)
        prompt = chars // 4 + 1
        completion = request.settings.max_tokens or output_estimate
        return Usage(
            prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion
        )

    return estimate


def open_store(store: object) -> LedgerStore:
    """A ledger store from a SQLite file path, a ``postgresql://`` DSN, or a store itself."""
    if isinstance(store, str) and store.startswith(("postgres://", "postgresql://")):
        from swarmkit.ledger._postgres import PostgresLedgerStore  # noqa: PLC0415 - extra

        return PostgresLedgerStore(store)
    if isinstance(store, str | os.PathLike):
        from swarmkit.ledger._sqlite import SQLiteLedgerStore  # noqa: PLC0415

        return SQLiteLedgerStore(store)
    if all(hasattr(store, name) for name in ("reserve", "settle", "windows")):
        return store  # type: ignore[return-value]
    raise ConfigurationError(
        f"Ledger store must be a SQLite file path, a postgresql:// DSN or a LedgerStore, "
        f"got {type(store).__name__}"
    )


def _checked_budgets(budgets: Sequence[Budget]) -> dict[str, Budget]:
    if isinstance(budgets, Budget) or not isinstance(budgets, Sequence | tuple):
        raise ConfigurationError("Ledger budgets must be a list of Budget")
    named: dict[str, Budget] = {}
    for budget in budgets:
        if not isinstance(budget, Budget):
            raise ConfigurationError(f"Ledger budgets must be Budget values, got {budget!r}")
        if budget.name in named:
            raise ConfigurationError(f"two budgets are named {budget.name!r}; names must differ")
        named[budget.name] = budget
    return named


def _checked_prices(prices: Mapping[str, Price] | None) -> dict[str, Price]:
    if prices is None:
        return {}
    if not isinstance(prices, Mapping):
        raise ConfigurationError("Ledger prices must be a {model name: Price} dict")
    for model, price in prices.items():
        if not isinstance(price, Price):
            raise ConfigurationError(f"prices[{model!r}] must be a Price, got {price!r}")
    return dict(prices)
