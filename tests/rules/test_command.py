"""``swarmkit rules suggest|whatif``: reports, rules files, and one clear line for bad input."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from swarmkit import HandoffGraph
from swarmkit.cli import main
from swarmkit.journal import JournalRecord, SQLiteJournal
from tests.rules import corpus

SWARM = "tests.rules.corpus:support"


async def _journal(tmp_path: Path, count: int) -> Path:
    memory, _ = await corpus.build(count)
    path = tmp_path / "journal.sqlite"
    with SQLiteJournal(path) as stored:
        await corpus.copy(memory, stored)
    return path


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["rules", *argv])
    out, err = capsys.readouterr()
    return code, out, err


async def test_suggest_prints_rules_and_writes_a_file_whatif_reads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """suggest shows the paste-ready line and writes the rules; whatif replays them offline."""
    path = await _journal(tmp_path, 300)
    rules = tmp_path / "rules.json"
    options = ["--swarm", SWARM, "--journal", str(path)]
    code, out, _ = await _in_thread(
        capsys,
        "suggest",
        *options,
        "--min-precision",
        "0.9",
        "--min-support",
        "10",
        "--out",
        str(rules),
    )
    assert code == 0
    assert "graph.add_edge('triage', 'billing', when=\"category == 'billing'\", priority=-1)" in out
    assert "Inconsistent routing" in out and "category == 'other'" in out
    assert "api_key" in out  # listed as left out, never in a condition
    assert HandoffGraph.from_dict(json.loads(rules.read_text()))
    code, out, _ = await _in_thread(capsys, "whatif", *options, "--rules", str(rules))
    assert code == 0
    assert "0 model calls" in out and "cannot be known offline" in out


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "is not JSON"),
        ('{"format": "nope"}', "is not a HandoffGraph's data"),
        (
            json.dumps(
                {
                    "format": "swarmkit.handoff_graph",
                    "version": 1,
                    "edges": [{"source": "triage", "target": "nobody", "when": None}],
                }
            ),
            "names agents the swarm does not have: nobody",
        ),
        (
            '{"format": ' + "[" * 100_000 + "]" * 100_000 + "}",
            "the JSON nests 100001 levels deep, more than the 64 allowed",
        ),
    ],
    ids=["not-json", "not-a-graph", "unknown-agent", "nested-100000-deep"],
)
async def test_whatif_refuses_a_bad_rules_file_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, message: str
) -> None:
    """A rules file that does not parse, or names unknown agents: exit 2 and what to fix."""
    path = await _journal(tmp_path, 3)
    rules = tmp_path / "rules.json"
    rules.write_text(content)
    code, _, err = await _in_thread(
        capsys, "whatif", "--swarm", SWARM, "--journal", str(path), "--rules", str(rules)
    )
    assert code == 2
    assert message in err and "Traceback" not in err


async def test_suggest_refuses_too_few_decisions_for_the_support_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Twelve sessions cannot support rules of 20 held-out decisions: exit 2, say so."""
    path = await _journal(tmp_path, 12)
    code, _, err = await _in_thread(capsys, "suggest", "--swarm", SWARM, "--journal", str(path))
    assert code == 2
    assert "too few for --min-support 20" in err


async def test_suggest_refuses_a_journal_without_model_decided_handoffs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Sessions the existing rule routed (vip only) hold nothing a rule could save."""
    memory, _ = await corpus.build(21)
    path = tmp_path / "journal.sqlite"
    with SQLiteJournal(path) as stored:
        for session_id in ("s0000", "s0010", "s0020"):
            await stored.append(await memory.read(session_id))
    code, _, err = await _in_thread(capsys, "suggest", "--swarm", SWARM, "--journal", str(path))
    assert code == 2
    assert "no model-decided handoffs" in err


async def test_suggest_refuses_a_context_that_is_not_an_object(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run_started context that is not a JSON object is named with its session and record."""
    path = tmp_path / "journal.sqlite"
    with SQLiteJournal(path) as stored:
        record = JournalRecord(session_id="odd", seq=0, kind="run_started", data={"context": [1]})
        await stored.append([record])
    code, _, err = await _in_thread(capsys, "suggest", "--swarm", SWARM, "--journal", str(path))
    assert code == 2
    assert "session 'odd' record 0 (run_started) holds a context that is a JSON list" in err


def _damage(kind: str, key: str, value: object, *, inside: str | None = None) -> Damage:
    """A change to the first ``kind`` record of a session: ``key`` (in ``inside``) set."""

    def change(record: JournalRecord) -> JournalRecord:
        data = dict(record.data)
        if inside is None:
            data[key] = value
        else:
            data[inside] = {**data[inside], key: value}
        return dataclasses.replace(record, data=data)

    return kind, change


Damage = tuple[str, Callable[[JournalRecord], JournalRecord]]
DAMAGES = {
    "number-many": _damage("handoff", "number", "many"),
    "response-string": _damage("model_call", "response", "a string"),
    "usage-list": _damage("model_call", "usage", [1, 2], inside="response"),
    "turn-float": _damage("model_call", "turn", 1.5),
    "agent-number": _damage("agent_started", "agent", 7),
    "target-null": _damage("handoff", "target", None),
    "update-list": _damage("state_edited", "context_update", ["x"]),
}


async def _copy_damaged(source: SQLiteJournal, target: SQLiteJournal, name: str) -> None:
    """Session s0001 copied as ``bad-<name>`` with the named damage done to one record."""
    kind, change = DAMAGES[name]
    records = [dataclasses.replace(r, session_id=f"bad-{name}") for r in await source.read("s0001")]
    if kind == "state_edited":  # a forked session's edit, after the run's start
        edit = JournalRecord(session_id=f"bad-{name}", seq=1, kind=kind, data={})
        records = [records[0], edit, *(dataclasses.replace(r, seq=r.seq + 1) for r in records[1:])]
    at = next(i for i, record in enumerate(records) if record.kind == kind)
    records[at] = change(records[at])
    await target.append(records)


async def test_one_damaged_record_leaves_its_session_out_of_suggest_and_whatif(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Sessions with a handoff number of "many", a string response, a list usage, ... are
    left out and listed by both commands, which report on the rest (no traceback)."""
    path = await _journal(tmp_path, 300)
    with SQLiteJournal(path) as journal:
        for name in DAMAGES:
            await _copy_damaged(journal, journal, name)
    rules = tmp_path / "rules.json"
    options = ["--swarm", SWARM, "--journal", str(path)]
    thresholds = ["--min-precision", "0.9", "--min-support", "10"]

    suggested = await _in_thread(capsys, "suggest", *options, *thresholds, "--out", str(rules))
    replayed = await _in_thread(capsys, "whatif", *options, "--rules", str(rules), "--json")

    code, out, err = suggested
    assert (code, err) == (0, "")
    assert "Read 300 sessions" in out and "graph.add_edge('triage', 'billing'" in out
    assert (
        "session 'bad-number-many' record 3 (handoff) has number 'many', not a whole number" in out
    )
    assert "session 'bad-response-string' record 2 (model_call) holds a response that is" in out
    assert "session 'bad-usage-list' record 2 (model_call) holds a usage that is a JSON list" in out
    code, out, err = replayed
    report = json.loads(out)
    assert (code, err, report["sessions"]) == (0, "", 300)
    assert sorted(report["damaged"]) == sorted(f"bad-{name}" for name in DAMAGES)


async def test_suggest_refuses_an_unknown_agent_and_bad_filters(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--agent must name an agent of the swarm; --since and --tag must parse."""
    path = await _journal(tmp_path, 3)
    options = ["--swarm", SWARM, "--journal", str(path)]
    code, _, err = await _in_thread(capsys, "suggest", *options, "--agent", "ghost")
    assert code == 2 and "'ghost' is not an agent of the swarm" in err
    code, _, err = await _in_thread(capsys, "suggest", *options, "--since", "yesterday")
    assert code == 2 and "--since takes Unix seconds or an ISO 8601 time" in err
    code, _, err = await _in_thread(capsys, "suggest", *options, "--tag", "tier")
    assert code == 2 and "--tag takes PATH=VALUE" in err


async def _in_thread(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    # The command runs its own event loop: give it a thread, away from the test's loop.
    return await asyncio.to_thread(_run, capsys, *argv)


async def test_whatif_summary_counts_exactly_the_turns_rules_decide_and_agree(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The noise tickets a rule routes differently are changed sessions, not agreeing turns."""
    memory, plans = await corpus.build(120)
    path = tmp_path / "journal.sqlite"
    with SQLiteJournal(path) as stored:
        await corpus.copy(memory, stored)
    rules = HandoffGraph()
    rules.add_edge("triage", "billing", "category == 'billing'", priority=-1)
    (tmp_path / "rules.json").write_text(json.dumps(rules.to_dict()))
    options = ["--swarm", SWARM, "--journal", str(path), "--rules", str(tmp_path / "rules.json")]
    code, out, _ = await _in_thread(capsys, "whatif", *options)

    agreeing = sum(p.context["category"] == p.target == "billing" for p in plans)
    noise = sum(p.noise and p.target is not None for p in plans)
    assert code == 0 and agreeing and noise
    assert (
        f"  same route  {agreeing} (rules decide {agreeing} turns the model decided, and agree)"
        in out
    )
    assert f"  changed     {noise} (a rule routes differently)" in out
