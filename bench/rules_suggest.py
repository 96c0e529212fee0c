"""``suggest_rules`` over a large SQLite journal whose routing depends on the message too.

Target: 100,000 sessions (about 150,000 model decisions, 30 context paths, user messages of
about 40 words) in <= 10 s and <= 300 MB peak memory, reading the journal back included.

The journal is written through the real journal API (``SQLiteJournal.append``, one step per
session, a run's records as a run writes them: ``run_started`` with the prompt and the
context, ``agent_started``, ``model_call``, ``handoff``, ``run_finished``), not through
100,000 swarm runs: a scripted run costs milliseconds, which would make building the corpus
the benchmark. The routing the model follows is known: "refund"/"invoice" in the message go
to billing, "price"/"quote" to sales, a gold customer's large amount to sales, otherwise the
ticket's category; 1% of decisions are noise. Every second session routes twice.

``suggest`` runs in a fresh interpreter (``--suggest PATH``), so its peak RSS is its own.
Run: ``.venv/bin/python bench/rules_suggest.py [--sessions N] [--journal PATH]``; a small
``--sessions`` (say 2000) runs in seconds, for CI.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SESSIONS = 100_000
TARGET_S = 10.0
TARGET_MB = 300.0
KEYS = {"refund": "billing", "invoice": "billing", "price": "sales", "quote": "sales"}
SYLLABLES = ("ka", "lo", "mi", "ne", "su", "ta", "ri", "po", "de", "vu", "sha", "qen")


def _vocabulary(rnd: random.Random) -> list[str]:
    """2,000 made-up filler words (and a few common ones every message may hold)."""
    words = {"the", "my", "i", "a", "please", "help", "thanks", "with", "is", "it"}
    while len(words) < 2_000:
        words.add("".join(rnd.choice(SYLLABLES) for _ in range(rnd.randint(2, 4))))
    return sorted(words)


def _message(rnd: random.Random, vocabulary: list[str]) -> tuple[str, str | None]:
    """About 40 words, with at most one key word (a third of messages hold none)."""
    words = rnd.choices(vocabulary, k=rnd.randint(34, 44))
    key = rnd.choice([*KEYS, None, None])
    if key is not None:
        words.insert(rnd.randrange(len(words)), key.capitalize() if rnd.random() < 0.5 else key)
    return " ".join(words) + ".", key


def _route(context: dict[str, Any], key: str | None, rnd: random.Random) -> str:
    if rnd.random() < 0.01:
        return rnd.choice(("billing", "sales", "tech"))
    if key is not None:
        return KEYS[key]
    if context["tier"] == "gold" and context["amount"] >= 500:
        return "sales"
    if context["category"] in ("billing", "legal"):
        return "billing"
    if context["category"] == "other":
        return rnd.choice(("billing", "sales"))
    return str(context["category"])


def _session(index: int, rnd: random.Random, vocabulary: list[str]) -> list[Any]:
    from rules import _answer, _context, _turn  # noqa: PLC0415 - bench/rules.py's corpus, alike

    from swarmkit.journal import JournalRecord  # noqa: PLC0415 - the parent needs no swarmkit

    sid = f"bench-{index:06d}"
    context = _context(rnd)
    message, key = _message(rnd, vocabulary)
    first = _route(context, key, rnd)
    steps: list[tuple[str, dict[str, Any]]] = [
        ("run_started", {"prompt": message, "context": context, "entry_agent": "triage"}),
        *_turn("triage", 1, first, 0),
    ]
    trail, turn = [first], 2
    if index % 2 == 0:
        second = "billing" if first in ("tech", "legal") else "tech"
        steps += _turn(first, turn, second, 1)
        trail.append(second)
        turn += 1
    steps += _answer(trail[-1], turn, len(trail))
    steps.append(("run_finished", {"stop_reason": "final_output", "trail": ["triage", *trail]}))
    return [
        JournalRecord(session_id=sid, seq=seq, kind=kind, data=data)
        for seq, (kind, data) in enumerate(steps)
    ]


async def build(path: Path, count: int) -> float:
    """Write ``count`` sessions to a fresh SQLite journal at ``path``; seconds taken."""
    from swarmkit.journal import SQLiteJournal  # noqa: PLC0415

    started = time.perf_counter()
    rnd = random.Random(7)
    vocabulary = _vocabulary(rnd)
    with SQLiteJournal(path) as journal:
        for index in range(count):
            await journal.append(_session(index, rnd, vocabulary))
    return time.perf_counter() - started


async def suggest(path: Path) -> dict[str, Any]:
    """Run suggest on the journal at ``path``; its figures (this process's peak RSS too)."""
    from swarmkit.journal import SQLiteJournal  # noqa: PLC0415
    from swarmkit.rules import suggest_rules  # noqa: PLC0415

    with SQLiteJournal(path, read_only=True) as journal:
        started, cpu = time.perf_counter(), time.process_time()
        report = await suggest_rules(journal)
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "seconds": seconds,
        "cpu_seconds": cpu,
        "peak_mb": peak_kb / 1024,
        "sessions": report.sessions,
        "decisions": sum(report.decisions.values()),
        "rules": [s.line + f"  # precision {s.precision:.3f}" for s in report.suggestions],
    }


def _measure(path: Path) -> dict[str, Any]:
    """``suggest`` in a fresh interpreter, so the peak memory is suggest's alone."""
    root = str(Path(__file__).resolve().parent.parent)  # this tree's swarmkit, not an installed one
    out = subprocess.run(
        [sys.executable, __file__, "--suggest", str(path)],
        env={**os.environ, "PYTHONPATH": root},
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    figures: dict[str, Any] = json.loads(out)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sessions", type=int, default=SESSIONS, help="sessions to journal")
    parser.add_argument("--journal", type=Path, help="keep (or reuse) the journal here")
    parser.add_argument("--suggest", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.suggest is not None:
        print(json.dumps(asyncio.run(suggest(args.suggest))))
        return
    with tempfile.TemporaryDirectory() as scratch:
        path = args.journal or Path(scratch) / "rules.sqlite"
        if not path.exists():
            built = asyncio.run(build(path, args.sessions))
            print(f"journal: {args.sessions:,} sessions written in {built:.1f} s ({path})")
        figures = _measure(path)
    print(
        f"suggest: {figures['sessions']:,} sessions, {figures['decisions']:,} model decisions "
        f"in {figures['seconds']:.2f} s ({figures['seconds'] / TARGET_S:.2f}x the "
        f"{TARGET_S:.0f} s target; CPU {figures['cpu_seconds']:.2f} s, "
        f"{figures['cpu_seconds'] / TARGET_S:.2f}x), peak RSS {figures['peak_mb']:.0f} MB "
        f"({figures['peak_mb'] / TARGET_MB:.2f}x the {TARGET_MB:.0f} MB target)"
    )
    for line in figures["rules"]:
        print(f"  {line}")


if __name__ == "__main__":
    main()
