"""JSONL export and import of a session: format, stability, round trips and line-numbered errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from swarmkit.exceptions import JournalError
from swarmkit.journal import (
    InMemoryJournal,
    JournalRecord,
    SQLiteJournal,
    export_jsonl,
    import_jsonl,
)
from tests.journal.test_journal_contract import record, step

HEADER = '{"session_id": "s", "swarmkit_journal": 1}'
NAN = '{"x": NaN}'


def line(seq: int, kind: str = "k", data: str = "{}", session_id: str = "s") -> str:
    """One record line as export_jsonl writes it."""
    return f'{{"data": {data}, "kind": "{kind}", "seq": {seq}, "session_id": "{session_id}"}}'


def test_export_writes_a_header_then_one_sorted_record_per_line() -> None:
    """The format is exactly a header line and a line per record, keys sorted, newline-ended."""
    records = [record("s", 0, "run_started", prompt="hi ✓"), record("s", 1, z=1, a=[1.5, None])]
    assert export_jsonl(records) == "\n".join(
        [
            HEADER,
            line(0, "run_started", '{"prompt": "hi ✓"}'),
            line(1, "model_call", '{"a": [1.5, null], "z": 1}'),
            "",
        ]
    )


def test_export_is_the_same_whatever_the_key_order_of_the_data() -> None:
    """Keys are sorted at every depth, so a diff shows only real changes."""
    one = JournalRecord(session_id="s", seq=0, kind="k", data={"b": 1, "a": {"y": 2, "x": 3}})
    two = JournalRecord(session_id="s", seq=0, kind="k", data={"a": {"x": 3, "y": 2}, "b": 1})
    assert export_jsonl([one]) == export_jsonl([two])


async def test_sqlite_to_jsonl_to_memory_round_trips_the_records(tmp_path: Path) -> None:
    """A session exported from SQLite and imported into memory reads back equal."""
    with SQLiteJournal(tmp_path / "j.sqlite3") as disk:
        await disk.append([record("s", 0, "run_started", prompt="日本", context={"n": [1, 2]})])
        await disk.append(step("s", 1, "model_call", "tool_call"))
        await disk.append([record("s", 3, "run_finished", stop_reason="final_output")])
        original = await disk.read("s")
    memory = InMemoryJournal()
    await memory.append(import_jsonl(export_jsonl(original)))
    assert await memory.read("s") == original


def test_blank_lines_and_a_missing_final_newline_are_accepted() -> None:
    """Hand-edited files with spacing still import."""
    text = f"\n{HEADER}\n\n{line(0)}\n   \n{line(1)}"
    assert [r.seq for r in import_jsonl(text)] == [0, 1]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        pytest.param("", "line 1: empty input", id="empty"),
        pytest.param("{not json\n", "line 1: not valid JSON", id="header-not-json"),
        pytest.param("[1]\n", "line 1: expected a JSON object", id="header-not-object"),
        pytest.param('{"session_id": "s"}\n', "line 1: not a swarmkit journal", id="no-version"),
        pytest.param(
            '{"session_id": "s", "swarmkit_journal": true}\n' + line(0),
            "line 1: not a swarmkit journal",
            id="bool-version",
        ),
        pytest.param(
            '{"session_id": "s", "swarmkit_journal": 2}\n' + line(0),
            "line 1: journal format version 2.*upgrade swarmkit",
            id="newer-version",
        ),
        pytest.param('{"swarmkit_journal": 1}\n' + line(0), "line 1: .*session_id", id="no-id"),
        pytest.param(HEADER + "\n", "line 2: no records after the header", id="no-records"),
        pytest.param(f"{HEADER}\n{line(0)}\n{{oops", "line 3: not valid JSON", id="bad-json"),
        pytest.param(f"{HEADER}\n{line(0)}\n[]", "line 3: expected a JSON object", id="array"),
        pytest.param(
            f'{HEADER}\n{{"seq": 0, "kind": "k", "data": {{}}}}',
            "line 2: a record has exactly the keys",
            id="missing-key",
        ),
        pytest.param(
            f'{HEADER}\n{line(0)[:-1]}, "extra": 1}}',
            "line 2: a record has exactly the keys",
            id="extra-key",
        ),
        pytest.param(
            f"{HEADER}\n{line(0, session_id='t')}", "line 2: session 't'", id="other-session"
        ),
        pytest.param(f"{HEADER}\n{line(1)}", "line 2: expected seq 0", id="not-from-zero"),
        pytest.param(f"{HEADER}\n{line(0)}\n{line(2)}", "line 3: expected seq 1", id="gap"),
        pytest.param(f"{HEADER}\n{line(0)}\n{line(0)}", "line 3: expected seq 1", id="repeat"),
        pytest.param(
            HEADER + '\n{"data": {}, "kind": "k", "seq": "0", "session_id": "s"}',
            "line 2: expected seq 0",
            id="seq-as-text",
        ),
        pytest.param(f"{HEADER}\n{line(0, kind='')}", "line 2: kind must be", id="empty-kind"),
        pytest.param(f"{HEADER}\n{line(0, data='[1]')}", "line 2: data must be", id="data-list"),
        pytest.param(f"{HEADER}\n{line(0, data=NAN)}", "line 2: not valid JSON", id="nan"),
    ],
)
def test_bad_input_is_refused_naming_the_line(text: str, problem: str) -> None:
    """Every malformed line is a JournalError that says which line and what is wrong."""
    with pytest.raises(JournalError, match=problem):
        import_jsonl(text)


def test_export_of_nothing_is_refused() -> None:
    """An export holds one whole session, so an empty one has nothing to say."""
    with pytest.raises(JournalError, match="nothing to export"):
        export_jsonl([])


def test_export_of_two_sessions_is_refused() -> None:
    """One file is one session."""
    with pytest.raises(JournalError, match="one session"):
        export_jsonl([record("a", 0), record("b", 1)])


def test_export_of_a_partial_session_is_refused() -> None:
    """An export starts at seq 0, so import can always read it back."""
    with pytest.raises(JournalError, match="first seq is 0"):
        export_jsonl(step("s", 2, "k"))


def test_export_of_non_json_data_names_the_record() -> None:
    """Data JSON cannot hold is refused with the record's seq and kind."""
    with pytest.raises(JournalError, match=r"record 0 \('tool_call'\)"):
        export_jsonl([record("s", 0, "tool_call", result=object())])
