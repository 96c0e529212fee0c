"""What a ledger holds, summed: spend by tenant, agent, model and day, and each budget's room."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from swarmkit.exceptions import ConfigurationError
from swarmkit.ledger._store import LedgerStore

GROUPS = ("tenant", "agent", "model", "provider", "day")
"""What spend can be grouped by."""


async def spend_report(
    store: LedgerStore, *, by: Sequence[str] = ("tenant", "agent", "model", "day"), now: float
) -> dict[str, Any]:
    """Settled spend grouped ``by`` (calls, tokens, cost), then every budget window with its
    limit, what was spent, what is held by calls under way, and what is left."""
    unknown = [key for key in by if key not in GROUPS]
    if unknown or not by:
        raise ConfigurationError(
            f"spend can be grouped by {', '.join(GROUPS)}; got {', '.join(unknown) or 'nothing'}"
        )
    groups: dict[tuple[str, ...], dict[str, Any]] = {}
    for call in await store.calls():
        key = tuple(str(getattr(call, name)) for name in by)
        row = groups.setdefault(
            key,
            {
                **dict(zip(by, key, strict=True)),
                "calls": 0,
                "input_tokens": 0,
                "output_tokens": 0,
                "total_tokens": 0,
                "cost": 0.0,
            },
        )
        for name in ("calls", "input_tokens", "output_tokens", "total_tokens", "cost"):
            row[name] += getattr(call, name)
    specs = {name: json.loads(spec) for name, spec in (await store.budgets()).items()}
    budgets = []
    for window in await store.windows(now=now):
        spec = specs.get(window["budget"], {})
        limit = spec.get("limit")
        used = float(window["spent"]) + float(window["held"])
        budgets.append(
            {
                "budget": window["budget"],
                "scope": window["scope"],
                "period": window["period"],
                "unit": spec.get("unit"),
                "limit": limit,
                "spent": float(window["spent"]),
                "held": float(window["held"]),
                "left": None if limit is None else max(float(limit) - used, 0.0),
            }
        )
    return {"spend": [groups[key] for key in sorted(groups)], "budgets": budgets}
