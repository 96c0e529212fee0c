"""Rules speed: ``suggest_rules`` over 100,000 journaled sessions (about 150,000 model decisions,
30 context paths; target <= 10 s) and ``whatif`` over 10,000 sessions (target >= 2,000/s).

The corpus is written through the real journal API (``InMemoryJournal.append``, one step per
session), with records shaped exactly as a run writes them (``run_started`` with the context,
``agent_started``, ``model_call`` with its request summary and usage, ``handoff``,
``run_finished``), not through 100,000 swarm runs: a scripted run costs a few milliseconds,
which would make building the corpus the benchmark. Every second session routes twice
(triage, then the agent it chose hands on), so the corpus holds ~150,000 decisions.
The figures include reading the journal back (JSON decoding of every record).
Run: ``.venv/bin/python bench/rules.py [sessions]``.
"""

from __future__ import annotations

import asyncio
import random
import sys
import time
from typing import Any

from _size import size

from swarmkit import HandoffGraph
from swarmkit.journal import InMemoryJournal, JournalRecord
from swarmkit.rules import suggest_rules, whatif

SESSIONS = size(100_000, 50)
WHATIF_SESSIONS = size(10_000, 20)
SUGGEST_TARGET_S = 10.0
WHATIF_TARGET_PER_S = 2_000.0
CATEGORIES = ("billing", "sales", "tech", "other", "legal")
TIERS = ("free", "standard", "gold")
REGIONS = ("eu", "us", "apac", "latam")


def _context(rnd: random.Random) -> dict[str, Any]:
    context: dict[str, Any] = {
        "category": rnd.choice(CATEGORIES),
        "tier": rnd.choice(TIERS),
        "region": rnd.choice(REGIONS),
        "amount": rnd.randint(0, 1000),
        "tickets": rnd.randint(0, 30),
        "verified": rnd.random() < 0.7,
        "tags": rnd.sample(["urgent", "repeat", "vip", "new", "legacy"], k=rnd.randint(0, 2)),
        "customer": {"age_days": rnd.randint(0, 3000), "plan": rnd.choice(TIERS)},
        "api_key": "[redacted]",
    }
    for index in range(21):  # noise paths, to make 30 in all
        context[f"f{index:02d}"] = rnd.choice(("a", "b", "c")) if index % 2 else rnd.randint(0, 50)
    return context


def _route(context: dict[str, Any], rnd: random.Random) -> str:
    if rnd.random() < 0.01:
        return rnd.choice(("billing", "sales", "tech"))
    if context["tier"] == "gold" and context["amount"] >= 500:
        return "sales"
    if context["category"] in ("billing", "legal"):
        return "billing"
    if context["category"] == "other":
        return rnd.choice(("billing", "sales"))
    return str(context["category"])


def _session(index: int, rnd: random.Random) -> list[JournalRecord]:
    sid = f"bench-{index:06d}"
    context = _context(rnd)
    first = _route(context, rnd)
    steps: list[tuple[str, dict[str, Any]]] = [
        ("run_started", {"prompt": "help", "context": context, "entry_agent": "triage"}),
        *_turn("triage", 1, first, 0),
    ]
    trail, turn = [first], 2
    if index % 2 == 0:
        second = "legal" if context["category"] == "legal" else "tech"
        second = "billing" if first in ("tech", "legal") else second
        steps += _turn(first, turn, second, 1)
        trail.append(second)
        turn += 1
    steps += _answer(trail[-1], turn, len(trail))
    steps.append(("run_finished", {"stop_reason": "final_output", "trail": ["triage", *trail]}))
    return [
        JournalRecord(session_id=sid, seq=seq, kind=kind, data=data)
        for seq, (kind, data) in enumerate(steps)
    ]


def _turn(agent: str, turn: int, target: str, count: int) -> list[tuple[str, dict[str, Any]]]:
    tools = [
        f"transfer_to_{name}" for name in ("billing", "sales", "tech", "legal") if name != agent
    ]
    call = {"id": f"call_{turn}", "name": f"transfer_to_{target}", "arguments": "{}"}
    return [
        ("agent_started", {"agent": agent, "handoff_count": count}),
        (
            "model_call",
            {
                "agent": agent,
                "turn": turn,
                "digest": "0" * 64,
                "request": {"instructions": agent, "tools": tools, "messages": 2},
                "response": {
                    "content": None,
                    "tool_calls": [call],
                    "usage": {"prompt_tokens": 900, "completion_tokens": 12, "total_tokens": 912},
                },
            },
        ),
        (
            "handoff",
            {
                "source": agent,
                "target": target,
                "decided_by": "llm",
                "turn": turn,
                "number": count + 1,
                "payload": None,
                "message": None,
                "condition": None,
            },
        ),
    ]


def _answer(agent: str, turn: int, count: int) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("agent_started", {"agent": agent, "handoff_count": count}),
        (
            "model_call",
            {
                "agent": agent,
                "turn": turn,
                "digest": "0" * 64,
                "request": {"instructions": agent, "tools": [], "messages": 3},
                "response": {"content": "Done.", "tool_calls": [], "usage": {"total_tokens": 500}},
            },
        ),
    ]


async def _build(count: int) -> InMemoryJournal:
    journal = InMemoryJournal()
    rnd = random.Random(7)
    for index in range(count):
        await journal.append(_session(index, rnd))
    return journal


async def main(count: int) -> None:
    started = time.perf_counter()
    journal = await _build(count)
    built = time.perf_counter() - started
    started = time.perf_counter()
    for info in await journal.sessions():
        await journal.read(info.session_id)
    read_s = time.perf_counter() - started
    started = time.perf_counter()
    report = await suggest_rules(journal)
    suggest_s = time.perf_counter() - started
    decisions = sum(report.decisions.values())
    print(f"corpus: {count:,} sessions, {decisions:,} model decisions, built in {built:.1f} s")
    print(
        f"reading every session back from the journal alone: {read_s:.2f} s; suggest costs "
        f"{suggest_s / read_s:.1f}x that"
    )
    print(
        f"suggest: {suggest_s:.2f} s ({suggest_s / SUGGEST_TARGET_S:.2f} of the "
        f"{SUGGEST_TARGET_S:.0f} s target), {len(report.suggestions)} rules, "
        f"{len(report.inconsistencies)} inconsistencies"
    )
    for suggestion in report.suggestions:
        figures = f"precision {suggestion.precision:.3f}, support {suggestion.support}"
        print(f"  {suggestion.line}  # {figures}")

    small = await _build(min(WHATIF_SESSIONS, count))
    rules = HandoffGraph.from_dict(report.to_dict())
    started = time.perf_counter()
    outcome = await whatif(small, rules)
    whatif_s = time.perf_counter() - started
    rate = len(outcome.sessions) / whatif_s
    print(
        f"whatif: {len(outcome.sessions):,} sessions in {whatif_s:.2f} s = {rate:,.0f} sessions/s "
        f"({rate / WHATIF_TARGET_PER_S:.1f}x the {WHATIF_TARGET_PER_S:,.0f}/s target); "
        f"{outcome.count('same_route')} same route, {outcome.count('changed')} changed"
    )


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else SESSIONS))
