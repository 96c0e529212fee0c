"""Shadow rules' speed: 20 shadow rules judged on a model-decided turn against none (target
<= 1.02x), and ``swarmkit.rules.status`` over a journal of 100,000 sessions (target <= 3 s).

The turn: triage answers with a scripted model that always says the same (no script to
rebuild between runs), no journal, then with an in-memory journal; each round runs both
swarms in turn (CPU time of this process, so other work on the machine counts less), and the
figures are the min, median and max of the per-round ratios. The status journal is written
through the real journal API, one step per session, shaped as a shadowed run writes it
(``run_started``, ``agent_started``, ``model_call`` with the 20 verdicts first and its usage,
the handoff and the answer), not by 100,000 runs, which would make building the
corpus the benchmark; status is timed (CPU) on an in-memory and on a SQLite journal whose
verdicts name their rule list by digest (as a run writing its own journal does), and on an
in-memory one whose verdicts carry the names (as an engine's in-workflow journal does).
Run: ``PYTHONPATH=. .venv/bin/python bench/rules_shadow.py [sessions]``.

CPU time on a shared machine moves by more than the 2% target (two identical swarms in the
same rounds differ by about 2% at the median), so ``--instructions [turns]`` counts the
machine instructions of a journaled turn instead, with valgrind's callgrind: each side runs
in a process of its own (hash seed fixed, 50 turns to warm up, the collector's survivors
frozen), and only the measured turns are counted.
"""

from __future__ import annotations

import asyncio
import functools
import gc
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _size import size

from swarmkit import Agent, HandoffGraph, Swarm
from swarmkit.conditions import Condition, compile_condition
from swarmkit.graph import Edge
from swarmkit.journal import InMemoryJournal, Journal, JournalRecord, SQLiteJournal
from swarmkit.messages import AssistantMessage
from swarmkit.models import ModelRequest, ModelResponse, Usage
from swarmkit.rules import status
from swarmkit.shadow import (
    RULE_SET,
    log_rule_change,
    rule_name,
    rule_set_digest,
    shadow_data,
    verdict_text,
)

SESSIONS = size(100_000, 20)
RULES = 20
ROUNDS = size(15)
RUNS = size(400, 2)
TURN_TARGET = 1.02
STATUS_TARGET_S = 3.0
CATEGORIES = ("billing", "sales", "tech", "other", "legal")


class Always:
    """A model that gives the same answer to every request."""

    name = "always"

    def __init__(self) -> None:
        self._answer = ModelResponse(
            message=AssistantMessage(content="Answered."),
            usage=Usage(prompt_tokens=90, completion_tokens=10, total_tokens=100),
        )

    async def respond(self, request: ModelRequest) -> ModelResponse:
        """The one answer."""
        return self._answer


def rules() -> HandoffGraph:
    """20 rules out of triage: category tests, thresholds and conjunctions."""
    graph = HandoffGraph()
    for index in range(RULES):
        category = CATEGORIES[index % len(CATEGORIES)]
        target = ("billing", "sales", "tech")[index % 3]
        graph.add_edge("triage", target, f"category == '{category}' and amount >= {index * 10}")
    return graph


def swarm(shadow: HandoffGraph | None, journal: Journal | None) -> Swarm:
    agents = [
        Agent(name=name, instructions=f"You are {name}.")
        for name in ("triage", "billing", "sales", "tech")
    ]
    return Swarm(agents, "triage", model=Always(), shadow=shadow, journal=journal)


async def _runs(target: Swarm) -> float:
    context = {"category": "billing", "amount": 120, "tier": "gold"}
    started = time.process_time()
    for _ in range(RUNS):
        await target.run("help", context=context)
    return (time.process_time() - started) / RUNS


def _counted_turns(variant: str, turns: int) -> None:
    """Run ``turns`` journaled turns of one side inside ``functools.reduce``, the one call
    callgrind counts (``--toggle-collect``), after the warm-up it does not."""
    target = swarm(rules() if variant == "shadow" else None, InMemoryJournal())
    loop = asyncio.new_event_loop()
    context = {"category": "billing", "amount": 120, "tier": "gold"}

    async def runs(count: int) -> None:
        for _ in range(count):
            await target.run("help", context=context)

    loop.run_until_complete(runs(50))
    gc.collect()
    gc.freeze()
    functools.reduce(lambda _, __: loop.run_until_complete(runs(turns)), range(1), None)


def instructions(turns: int) -> dict[str, float]:
    """Instructions a journaled turn takes without shadow rules and with the 20, by callgrind."""
    counted: dict[str, float] = {}
    for variant in ("none", "shadow"):
        with tempfile.TemporaryDirectory() as folder:
            out = Path(folder) / "callgrind.out"
            command = [
                "valgrind", "--tool=callgrind", "--collect-atstart=no",
                "--toggle-collect=*functools_reduce*", f"--callgrind-out-file={out}",
                sys.executable, __file__, "--turns", variant, str(turns),
            ]  # fmt: skip
            env = {**os.environ, "PYTHONHASHSEED": "0"}
            subprocess.run(command, check=True, capture_output=True, env=env)
            totals = next(
                line for line in out.read_text().splitlines() if line.startswith("totals:")
            )
            counted[variant] = int(totals.split()[1]) / turns
    return counted


async def turn_ratio(journaled: bool) -> tuple[list[float], float, float]:
    """The per-round ratios shadow / none, and each side's median CPU seconds per run."""
    none = swarm(None, InMemoryJournal() if journaled else None)
    shadowed = swarm(rules(), InMemoryJournal() if journaled else None)
    await _runs(none)  # warm up
    await _runs(shadowed)
    ratios: list[float] = []
    plain: list[float] = []
    shadow: list[float] = []
    for index in range(ROUNDS):
        pair = (none, shadowed) if index % 2 == 0 else (shadowed, none)
        first, second = await _runs(pair[0]), await _runs(pair[1])
        a, b = (first, second) if index % 2 == 0 else (second, first)
        plain.append(a)
        shadow.append(b)
        ratios.append(b / a)
    return ratios, statistics.median(plain), statistics.median(shadow)


def _session(
    index: int, rnd: random.Random, edges: list[tuple[Edge, Condition]], named: bool
) -> list[JournalRecord]:
    sid = f"live-{index:06d}"
    context = {"category": rnd.choice(CATEGORIES), "amount": rnd.randint(0, 300)}
    target = "billing" if context["category"] in ("billing", "legal") else "sales"
    trials = [(edge, condition(context)) for edge, condition in edges]
    call = {"id": "call_1", "name": f"transfer_to_{target}", "arguments": "{}"}
    usage = {"prompt_tokens": 900, "completion_tokens": 12, "total_tokens": 912}
    data = shadow_data("triage", 1, trials, target, tokens=usage["total_tokens"])
    # As a run writing its own journal does (named): the list by digest; else by its names.
    digest = rule_set_digest("triage", data["rules"]) if named else None
    verdicts = verdict_text(
        data["tokens"], data["fired"], data["agrees"], target, digest=digest, names=data["rules"]
    )
    steps: list[tuple[str, dict[str, Any]]] = [
        ("run_started", {"prompt": "help", "context": context, "entry_agent": "triage"}),
        ("agent_started", {"agent": "triage", "handoff_count": 0}),
        (
            "model_call",
            {
                "shadow": verdicts,
                "agent": "triage",
                "turn": 1,
                "digest": "0" * 64,
                "response": {"content": None, "tool_calls": [call], "usage": usage},
            },
        ),
        ("handoff", {"source": "triage", "target": target, "decided_by": "llm", "turn": 1}),
        ("agent_started", {"agent": target, "handoff_count": 1}),
        (
            "model_call",
            {
                "agent": target,
                "turn": 2,
                "digest": "0" * 64,
                "response": {"content": "Done.", "tool_calls": [], "usage": usage},
            },
        ),
        ("run_finished", {"stop_reason": "final_output"}),
    ]
    return [
        JournalRecord(session_id=sid, seq=seq, kind=kind, data=data)
        for seq, (kind, data) in enumerate(steps)
    ]


async def status_seconds(journal: Journal, count: int, named: bool) -> tuple[float, float, int]:
    """CPU seconds to build the journal, of ``status``, and the verdicts it counted; ``named``:
    the verdicts name the rule list by digest, the rules log names its rules once."""
    edges = [(edge, compile_condition(edge.when or "true")) for edge in rules().edge_list()]
    rnd = random.Random(5)
    started = time.process_time()
    if named:
        names = [rule_name(edge) for edge, _ in edges]
        listed = {"set": rule_set_digest("triage", names), "agent": "triage", "rules": names}
        await log_rule_change(journal, RULE_SET, listed, at=time.time())
    for index in range(count):
        await journal.append(_session(index, rnd, edges, named))
    built = time.process_time() - started
    started = time.process_time()
    report = await status(journal, swarm(rules(), None))
    took = time.process_time() - started
    return built, took, sum(rule.decisions for rule in report.rules)


async def main(count: int) -> None:
    for journaled in (False, True):
        ratios, plain, shadow = await turn_ratio(journaled)
        where = "in-memory journal" if journaled else "no journal"
        print(
            f"model-decided turn, {where}: {RULES} shadow rules {shadow * 1e6:.0f} us vs none "
            f"{plain * 1e6:.0f} us per run (CPU): ratio min {min(ratios):.3f}x, median "
            f"{statistics.median(ratios):.3f}x, max {max(ratios):.3f}x "
            f"(target <= {TURN_TARGET}x)"
        )
    with tempfile.TemporaryDirectory() as folder:
        for name, journal, named in (
            ("in-memory", InMemoryJournal(), True),
            ("in-memory, rule names in each verdict", InMemoryJournal(), False),
            ("SQLite", SQLiteJournal(Path(folder) / "status.sqlite3"), True),
        ):
            built, took, verdicts = await status_seconds(journal, count, named)
            print(
                f"status over {count:,} sessions, {name} journal ({verdicts:,} verdicts; built "
                f"in {built:.1f} s): {took:.2f} s CPU ({took / STATUS_TARGET_S:.2f} of the "
                f"{STATUS_TARGET_S:.0f} s target)"
            )


if __name__ == "__main__":
    if sys.argv[1:2] == ["--turns"]:
        _counted_turns(sys.argv[2], int(sys.argv[3]))
    elif sys.argv[1:2] == ["--instructions"]:
        found = instructions(int(sys.argv[2]) if len(sys.argv) > 2 else 300)
        print(
            f"instructions a journaled turn: {RULES} shadow rules {found['shadow']:,.0f} vs none "
            f"{found['none']:,.0f}: {found['shadow'] / found['none']:.4f}x "
            f"(target <= {TURN_TARGET}x)"
        )
    else:
        asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else SESSIONS))
