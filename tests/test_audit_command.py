"""The command's side of the audit trail: the swarm's own journal, resume --by, show, export,
delete, and the exits a person relies on."""

from __future__ import annotations

import asyncio
import io
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import structlog

from swarmkit.cli import main
from swarmkit.journal import JournalRecord, SQLiteJournal, import_jsonl

Capture = pytest.CaptureFixture[str]
SHOP = "tests.audit_app:shop"


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """Each test runs in its own folder, with no journal variable and no leaked structlog."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [str(Path(__file__).parents[1]), *sys.path])
    monkeypatch.delenv("SWARMKIT_JOURNAL", raising=False)
    configured, config = structlog.is_configured(), structlog.get_config()
    yield
    structlog.reset_defaults()
    if configured:
        structlog.configure(**config)


@pytest.fixture
def edited(capsys: Capture) -> str:
    """Session "s1" on the shop's own journal: a refund of 80 that dana edited to 40."""
    assert main(["run", SHOP, "refund me", "--session-id", "s1"]) == 0
    assert main(["resume", SHOP, "s1", "--edit", '{"amount": 40}', "--by", "dana"]) == 0
    capsys.readouterr()
    return "s1"


def test_a_swarm_with_its_own_journal_writes_there(edited: str, capsys: Capture) -> None:
    """Without --journal, run and resume use the swarm's SQLiteJournal, not the default file."""
    assert Path("shop.sqlite").is_file()
    assert not Path(".swarmkit/journal.sqlite").exists()
    assert main(["sessions", "--journal", "shop.sqlite"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[1].startswith("s1") and "(1 session in shop.sqlite)" in out


def test_run_says_how_to_resume_and_resume_streams_its_steps(capsys: Capture) -> None:
    """The paused run prints its exact resume line; resume shows its steps and what ran."""
    assert main(["run", SHOP, "refund me", "--session-id", "s1"]) == 0
    paused = capsys.readouterr().out
    assert "next:   swarmkit resume s1 --swarm tests.audit_app:shop --journal shop.sqlite" in paused

    assert main(["resume", "s1", "--swarm", SHOP, "--edit", '{"amount": 40}', "--by", "dana"]) == 0
    resumed = capsys.readouterr().out
    assert "edited  by dana" in resumed and 'ran     refund {"amount": 40}' in resumed
    assert "result  refunded 40.0" in resumed and "answer: Done." in resumed


def test_show_and_export_hold_the_executed_arguments_and_the_proposal(
    edited: str, capsys: Capture
) -> None:
    """show says 40 ran, edited by dana, 80 proposed; export's record holds the same."""
    assert main(["show", edited, "--journal", "shop.sqlite"]) == 0
    shown = capsys.readouterr().out
    assert 'tool     billing refund {"amount": 40}' in shown
    assert "edited by dana at " in shown and 'model proposed {"amount": 80}' in shown
    assert "time: " in shown and "journal: shop.sqlite" in shown

    assert main(["export", edited, "--journal", "shop.sqlite"]) == 0
    records = import_jsonl(capsys.readouterr().out)
    tool = next(r for r in records if r.kind == "tool_call")
    assert json.loads(tool.data["arguments"]) == {"amount": 40}
    assert tool.data["decision"]["decided_by"] == "dana"
    assert all(r.at is not None for r in records)


def test_import_keeps_the_original_times(edited: str, capsys: Capture) -> None:
    """An exported session imported elsewhere keeps each record's time."""
    assert main(["export", edited, "--journal", "shop.sqlite"]) == 0
    exported = capsys.readouterr().out
    Path("s1.jsonl").write_text(exported, encoding="utf-8")

    assert main(["import", "s1.jsonl", "--journal", "copy.sqlite"]) == 0
    assert main(["export", edited, "--journal", "copy.sqlite"]) == 0
    again = capsys.readouterr().out.splitlines()[-len(exported.splitlines()) :]

    assert [r.at for r in import_jsonl("\n".join(again))] == [r.at for r in import_jsonl(exported)]


def test_delete_asks_and_removes_the_session(
    edited: str, capsys: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """delete asks first: no keeps it (exit 1); --yes removes it; then it is gone (exit 2)."""
    monkeypatch.setattr("sys.stdin", _Answer("n\n"))
    assert main(["delete", edited, "--journal", "shop.sqlite"]) == 1
    assert main(["delete", edited, "--journal", "shop.sqlite", "--yes"]) == 0
    assert "deleted s1 (9 records)" in capsys.readouterr().out
    assert main(["show", edited, "--journal", "shop.sqlite"]) == 2


def test_delete_refuses_a_session_a_live_run_holds(edited: str, capsys: Capture) -> None:
    """A session whose lease another writer holds is not deleted (exit 2)."""
    import asyncio  # noqa: PLC0415

    from swarmkit.journal import SQLiteJournal  # noqa: PLC0415

    with SQLiteJournal("shop.sqlite") as journal:
        asyncio.run(journal.acquire_lease(edited, owner="a live run", ttl=600))
        assert main(["delete", edited, "--journal", "shop.sqlite", "--yes"]) == 2
    assert "being written by a live run" in capsys.readouterr().err


def test_sessions_lists_the_ones_in_a_state(edited: str, capsys: Capture) -> None:
    """--state failed lists the failed session only; --state finished the finished one."""
    journal = ["--journal", "shop.sqlite"]
    assert main(["run", "tests.cli_app:failing_swarm", "hi", *journal, "--session-id", "f1"]) == 1
    capsys.readouterr()

    assert main(["sessions", "--state", "failed", *journal]) == 0
    failed = capsys.readouterr().out.splitlines()
    assert main(["sessions", "--state", "finished", *journal]) == 0
    finished = capsys.readouterr().out.splitlines()

    assert [line.split()[0] for line in failed[1:-1]] == ["f1"]
    assert [line.split()[0] for line in finished[1:-1]] == ["s1"]


def test_replay_with_a_changed_context_says_where_it_first_matters(capsys: Capture) -> None:
    """replay --context: offline, the step the change first alters and its diff; exit 0."""
    outage = "Our dashboard shows 502 errors since 9:15. Is something down?"
    run = ["run", "tests.cli_app:swarm", outage, "--context", '{"category": "outage"}']
    assert main([*run, "--session-id", "o1"]) == 0
    capsys.readouterr()

    argv = ["replay", "tests.cli_app:swarm", "o1", "--context", '{"category": "billing"}']
    assert main(argv) == 0
    out = capsys.readouterr().out

    assert out.startswith("what-if o1: the change first matters at step 2")
    assert '+  "target": "billing",' in out and "0 model calls" in out


def test_replay_live_forks_a_labelled_session_and_rules_off_stops_offline(
    capsys: Capture,
) -> None:
    """replay --live forks SESSION__whatif_N where the change matters and runs it on the
    swarm's model; --rules-off alone stops offline at the rule's step."""
    outage = "Our dashboard shows 502 errors since 9:15. Is something down?"
    run = ["run", "tests.cli_app:swarm", outage, "--context", '{"category": "outage"}']
    assert main([*run, "--session-id", "o1"]) == 0
    capsys.readouterr()

    change = ["--context", '{"category": "billing"}', "--live"]
    assert main(["replay", "tests.cli_app:swarm", "o1", *change]) == 0
    assert main(["replay", "tests.cli_app:swarm", "o1", "--rules-off"]) == 0
    assert main(["replay", "tests.cli_app:swarm", "o1", "--live"]) == 2
    out = capsys.readouterr().out.splitlines()

    assert out[0].startswith("what-if o1: forked live as o1__whatif_2: final_output (billing)")
    assert out[1] == "what-if o1: the change first matters at step 2"
    assert main(["show", "o1__whatif_2"]) == 0


def test_checking_a_swarm_leaves_no_journal_file(capsys: Capture) -> None:
    """A module that builds SQLiteJournal(path) creates no file when only checked or drawn."""
    assert main(["check", SHOP]) == 0
    assert main(["draw", SHOP]) == 0
    assert not Path("shop.sqlite").exists()


def test_the_swarm_is_positional_or_an_option_but_once(edited: str, capsys: Capture) -> None:
    """replay takes the swarm positionally or as --swarm; both, or none, is a usage error."""
    assert main(["replay", SHOP, edited]) == 0
    assert main(["replay", edited, "--swarm", SHOP]) == 0
    assert "0 model calls" in capsys.readouterr().out
    assert main(["replay", SHOP, edited, "--swarm", "tests.cli_app:swarm"]) == 2
    assert main(["replay", edited]) == 2


class _Answer:
    """Stands in for stdin with one typed answer."""

    def __init__(self, text: str) -> None:
        self._lines = iter(text.splitlines(keepends=True))

    def readline(self) -> str:
        return next(self._lines, "")


def _four_states(edited: str, capsys: Capture) -> list[str]:
    """Sessions s1 (finished), f1 (failed), w1 (waiting) and c1 (cancelled by Ctrl-C)."""
    journal = ["--journal", "shop.sqlite"]
    assert main(["run", "tests.cli_app:failing_swarm", "hi", *journal, "--session-id", "f1"]) == 1
    assert main(["run", SHOP, "refund me", "--session-id", "w1"]) == 0
    cancelled: list[tuple[str, dict[str, Any]]] = [
        ("run_started", {"prompt": "stop me", "entry_agent": "billing", "context": {}}),
        ("run_finished", {"stop_reason": "interrupted", "cancelled": True}),
    ]
    with SQLiteJournal("shop.sqlite") as store:
        records = [
            JournalRecord(session_id="c1", seq=n, kind=kind, data=data)
            for n, (kind, data) in enumerate(cancelled)
        ]
        asyncio.run(store.append(records))
    capsys.readouterr()
    return journal


def _states_listed(out: str) -> dict[str, str]:
    return {line.split()[0]: line.split()[1] for line in out.splitlines()[1:-1]}


def test_sessions_lists_each_state_in_the_viewers_words(edited: str, capsys: Capture) -> None:
    """The STATE column says finished, failed, waiting and cancelled, as the viewer does."""
    journal = _four_states(edited, capsys)

    assert main(["sessions", *journal]) == 0
    out = capsys.readouterr().out

    assert out.splitlines()[0].split()[:3] == ["SESSION", "STATE", "STOP"]
    assert _states_listed(out) == {
        "s1": "finished",
        "f1": "failed",
        "w1": "waiting",
        "c1": "cancelled",
    }
    assert "\033[" not in out


def test_sessions_state_filter_tells_cancelled_from_waiting(edited: str, capsys: Capture) -> None:
    """--state waiting lists the paused session only; --state cancelled the Ctrl-C one."""
    journal = _four_states(edited, capsys)

    assert main(["sessions", "--state", "waiting", *journal]) == 0
    waiting = _states_listed(capsys.readouterr().out)
    assert main(["sessions", "--state", "cancelled", *journal]) == 0
    cancelled = _states_listed(capsys.readouterr().out)

    assert (waiting, cancelled) == ({"w1": "waiting"}, {"c1": "cancelled"})


class _Terminal(io.StringIO):
    """Standard output that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def test_sessions_colours_states_on_a_terminal_unless_no_color(
    edited: str, capsys: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a terminal failed is red and finished green; NO_COLOR turns colour off."""
    journal = _four_states(edited, capsys)
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stdout", terminal)
    assert main(["sessions", *journal]) == 0
    coloured = terminal.getvalue()
    monkeypatch.setenv("NO_COLOR", "1")
    plain = _Terminal()
    monkeypatch.setattr(sys, "stdout", plain)
    assert main(["sessions", *journal]) == 0

    assert "\033[31mfailed" in coloured and "\033[32mfinished" in coloured
    assert "\033[" not in plain.getvalue() and "failed" in plain.getvalue()


def test_export_says_which_journal_it_read_on_stderr(edited: str, capsys: Capture) -> None:
    """export names the journal file on stderr; stdout stays the JSONL export alone."""
    assert main(["export", edited, "--journal", "shop.sqlite"]) == 0
    out, err = capsys.readouterr()

    assert err.strip() == "journal: shop.sqlite"
    assert import_jsonl(out)[0].kind == "run_started"
