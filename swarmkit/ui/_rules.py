"""The viewer's rules page data: suggestions, shadow and active rules over time, the rules log.

Everything comes from the public rules API (``suggest_rules``, ``status``) and the journal's
rules log; the answer is cached until the journal changes (a session appended, the log grown),
so a page reload does not read the journal again.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from swarmkit.exceptions import RuleLearningError
from swarmkit.journal import Journal
from swarmkit.rules import SuggestReport, status, suggest_rules, wilson
from swarmkit.shadow import AUDITED, RULES_LOG, read_rules_log
from swarmkit.swarm import Swarm

DAY = 86_400.0
"""Seconds in one bucket of the agreement series (UTC days)."""

MAX_DAYS = 30
"""The most recent days with sessions that the series shows."""


@dataclass(frozen=True, kw_only=True, slots=True)
class RulesQuery:
    """The suggest thresholds the page asks for."""

    min_support: int = 20
    """Held-out decisions a suggestion needs."""
    min_precision: float = 0.98
    """Held-out precision a suggestion needs."""


class RulesPage:
    """Builds and caches the rules page's data for one journal (and the swarm, if given)."""

    def __init__(self, journal: Journal, swarm: Swarm | None) -> None:
        self.journal = journal
        self.swarm = swarm
        self._cache: dict[tuple[object, ...], dict[str, Any]] = {}

    async def data(self, query: RulesQuery) -> dict[str, Any]:
        """The page's data; computed again only when the journal changed since last time."""
        infos = [info for info in await self.journal.sessions() if info.session_id != RULES_LOG]
        version = (len(infos), max((i.updated_at for i in infos), default=0.0))
        log = await read_rules_log(self.journal)
        key = (version, len(log), query)
        cached = self._cache.get(key)
        if cached is None:
            days = sorted({_day(info.started_at) for info in infos})[-MAX_DAYS:]
            cached = {
                "sessions": len(infos),
                "suggest": await self._suggest(query),
                **await self._rules(days),
                "log": _log(log),
                "computed_at": time.time(),
            }
            self._cache = {key: cached}  # one entry: an older one is stale
        return cached

    async def _suggest(self, query: RulesQuery) -> dict[str, Any]:
        graph = self.swarm.graph if self.swarm is not None else None
        try:
            report = await suggest_rules(
                self.journal,
                graph=graph,
                min_support=query.min_support,
                min_precision=query.min_precision,
            )
        except RuleLearningError as exc:
            return {"note": str(exc), "suggestions": [], "withheld": []}
        return _suggest_data(report, query)

    async def _rules(self, days: list[float]) -> dict[str, Any]:
        try:
            whole = await status(self.journal, self.swarm)
        except RuleLearningError as exc:
            return {"rules": [], "rules_note": str(exc)}
        series: dict[str, list[dict[str, Any]]] = {rule.rule: [] for rule in whole.rules}
        for day in days:
            try:
                part = await status(self.journal, since=day, until=day + DAY)
            except RuleLearningError:
                continue  # a day whose sessions hold no verdict
            for rule in part.rules:
                if rule.rule in series and rule.evidence.fired:
                    series[rule.rule].append({"day": _date(day), **rule.evidence.to_data()})
        rules = [{**rule.to_data(), "series": series[rule.rule]} for rule in whole.rules]
        return {"rules": rules, "rules_note": None}


def _suggest_data(report: SuggestReport, query: RulesQuery) -> dict[str, Any]:
    return {
        "note": None,
        "sessions": report.sessions,
        "held_out_sessions": report.held_out_sessions,
        "min_support": query.min_support,
        "min_precision": query.min_precision,
        "suggestions": [
            {**dataclasses.asdict(s), "line": s.line, "bounds": wilson(s.agreed, s.support)}
            for s in report.suggestions
        ],
        "withheld": [
            {
                "source": w.source,
                "target": w.target,
                "when": w.when,
                "reason": w.reason,
                "why": w.why,
                "support": w.support,
                "agreed": w.agreed,
            }
            for w in report.withheld
        ],
    }


def _log(log: tuple[Any, ...]) -> list[dict[str, Any]]:
    """Promotions and demotions with their records (each audit only counts)."""
    return [
        {"seq": record.seq, "kind": record.kind, "at": record.at, **_plain(record.data)}
        for record in log
        if record.kind != AUDITED
    ]


def _plain(data: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in data.items() if key not in ("seq", "kind", "at")}


def _day(at: float) -> float:
    return at - at % DAY


def _date(day: float) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(day))
