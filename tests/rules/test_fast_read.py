"""Suggest's fast read (the values SQLite extracts) gives what reading every record gives."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from swarmkit.journal import AESGCMCipher, InMemoryJournal, JournalRecord, SQLiteJournal
from swarmkit.rules import suggest_rules
from swarmkit.rules._rows import Decisions, context_of, facts_of, read_decisions
from tests.rules import corpus, text_corpus

TOOLS = ["transfer_to_billing", "transfer_to_sales"]


def _call(turn: Any = 1, **data: Any) -> tuple[str, dict[str, Any]]:
    found = {
        "agent": "triage",
        "turn": turn,
        "request": {"tools": TOOLS, "messages": 2},
        "response": {"content": None, "usage": {"total_tokens": 50}},
    }
    return "model_call", {**found, **data}


def _handoff(target: Any = "billing", **data: Any) -> tuple[str, dict[str, Any]]:
    return "handoff", {"target": target, "decided_by": "llm", "number": 1, **data}


def _session(sid: str, *steps: tuple[str, dict[str, Any]], context: Any = None) -> list[Any]:
    started: dict[str, Any] = {
        "prompt": "Refund my invoice",
        "context": context or {"tier": "gold"},
    }
    kinds = [("run_started", started), ("agent_started", {"agent": "triage"}), *steps]
    return [
        JournalRecord(session_id=sid, seq=seq, kind=kind, data=data)
        for seq, (kind, data) in enumerate(kinds)
    ]


SESSIONS = [
    _session("plain", _call(), _handoff(), ("run_finished", {})),
    _session("failed-call", _call(error="timeout"), _call(2), _handoff()),
    _session("error-null", _call(error=None), _call(2), _handoff()),
    _session("no-usage", _call(response={"content": None}), _handoff()),
    _session("tool-update", _call(), ("tool_call", {"name": "t", "outcome": {"update": {"x": 1}}})),
    _session("edited", ("state_edited", {"context_update": {"tier": "free"}}), _call(), _handoff()),
    _session("rule", ("rule", {"turn": 1}), _handoff(decided_by="rule", payload={"n": 1})),
    _session("bad-number", _call(), _handoff(number="two")),
    _session("bad-target", _call(), _handoff(target=7)),
    _session("bad-turn", _call(turn=True), _handoff()),
    _session("tools-text", _call(request={"tools": "all"}), _handoff()),
    _session("null-context", _call(), _handoff(message="hi"), context={"a": None}),
    _session("odd-text", _call(), _handoff(), context={"note": 'caf\u00e9 \ud800 "q" \\'}),
    _session("no-turns", ("run_finished", {})),
    _session("list-context", _call(), _handoff(), context=["x"]),
    _session("answer", _call(), ("run_finished", {}), ("agent_started", {"agent": 3})),
]


def _rows(decisions: Decisions) -> list[Any]:
    """The decisions with every point's context and facts unpacked, to compare."""
    return [
        (
            *row[:5],
            [(*spot[:3], context_of(spot), facts_of(spot)) for spot in row.points],
        )
        for row in decisions.rows
    ]


async def test_the_fast_read_gives_every_session_as_the_full_reader_does(tmp_path: Path) -> None:
    """Sessions the fast read covers and those it leaves to the full reader (failed calls,
    tool updates, rule records, damaged values) read the same from SQLite as from memory."""
    memory = InMemoryJournal()
    with SQLiteJournal(tmp_path / "j.sqlite3") as sqlite:
        for records in SESSIONS:
            await memory.append(records)
            await sqlite.append(records)
        fast, full = await read_decisions(sqlite), await read_decisions(memory)
    assert _rows(fast) == _rows(full)
    assert (fast.turns, fast.sessions, fast.damaged) == (full.turns, full.sessions, full.damaged)
    assert set(fast.damaged) == {
        "bad-number",
        "bad-target",
        "bad-turn",
        "tools-text",
        "list-context",
        "answer",
    }
    [plain] = [row for row in fast.rows if row.session_id == "plain"]
    assert isinstance(plain.points[0].context, str)  # the fast read's: the context extracted


async def test_suggest_reports_the_same_from_sqlite_sealed_sqlite_and_memory(
    tmp_path: Path,
) -> None:
    """The support corpus (tool updates, an existing rule) and the text corpus: one report
    whether the journal is extracted from, sealed (read whole) or in memory."""
    made, _ = await corpus.build(60)
    words, _ = await text_corpus.build(40)
    cipher = AESGCMCipher({"k1": bytes(range(32))})
    memory = InMemoryJournal()
    with (
        SQLiteJournal(tmp_path / "clear.sqlite3") as clear,
        SQLiteJournal(tmp_path / "sealed.sqlite3", cipher=cipher) as sealed,
    ):
        for target in (clear, sealed, memory):
            await corpus.copy(made, target)
            await corpus.copy(words, target)
        assert await sealed.read_paths(["s0001"], {"run_started": ("$.context",)}) is None
        reports = [
            await suggest_rules(journal, graph=corpus.graph(), min_support=4, min_precision=0.9)
            for journal in (clear, sealed, memory)
        ]
    assert reports[0] == reports[1] == reports[2]
    assert reports[0].suggestions
    assert reports[0].sessions == 100
