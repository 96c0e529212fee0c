"""The commands that only read or copy journals (sessions, export, import): no run machinery."""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TextIO

from swarmkit.cli._journal_file import journal_path, open_for_reading, open_for_writing
from swarmkit.cli._usage import EXIT_FAILED, EXIT_OK, UsageError
from swarmkit.console import one_line, plural
from swarmkit.exceptions import JournalError, SessionBusyError, SessionNotFoundError
from swarmkit.journal import (
    Conversation,
    Journal,
    JournalRecord,
    SessionInfo,
    export_jsonl,
    group_turns,
    import_jsonl_sessions,
    session_status,
    turn_sessions,
)
from swarmkit.lowlevel import EVAL_RUN_MARK, EVAL_RUN_STATE, journal_label


async def _sessions(args: argparse.Namespace) -> int:
    path = journal_path(args.journal)
    with open_for_reading(path) as journal:
        infos = await journal.sessions()
        states = await _states(journal, infos)
    if args.state:
        infos = tuple(info for info in infos if states[info.session_id] == args.state)
    if not infos:
        print(f"no sessions in {journal_label(path)}")
        return EXIT_OK
    started = _local_times()
    paint = _painter(sys.stdout)
    if args.threads:
        print(_table(_thread_rows(group_turns(infos), started, states), paint, column=2))
        return EXIT_OK
    header = ("SESSION", "STATE", "STOP", "RECORDS", "STARTED", "PROMPT")
    rows = [header, *(_session_row(info, started, states) for info in infos)]
    print(_table(rows, paint, column=1))
    print(f"({plural(len(infos), 'session')} in {journal_label(path)}{_sealed_note(infos)})")
    return EXIT_OK


def _sealed_note(infos: Sequence[SessionInfo]) -> str:
    """How many sessions listed are sealed with no key to open them (their prompt says so)."""
    sealed = sum(1 for info in infos if (info.prompt or "").startswith("[encrypted"))
    if not sealed:
        return ""
    return f"; {sealed} encrypted with a key $SWARMKIT_JOURNAL_KEYS does not hold"


async def _delete(args: argparse.Namespace) -> int:
    path = journal_path(args.journal)
    label = journal_label(path)
    records = await _read_session(args.journal, args.session)
    sessions = [args.session]
    if args.thread:
        with open_for_reading(path) as reader:
            sessions = await turn_sessions(reader, args.session) or sessions
    what = (
        f"session {args.session}"
        if len(sessions) == 1
        else (f"conversation {args.session} ({plural(len(sessions), 'turn')})")
    )
    if not args.yes and not _confirmed(f"delete {what} from {label}? [y/N] "):
        print(f"kept {args.session}; nothing was deleted")
        return EXIT_FAILED
    with open_for_writing(path) as journal:
        for session in sessions:
            await _delete_one(journal, session)
    count = plural(len(records), "record") if len(sessions) == 1 else plural(len(sessions), "turn")
    print(f"deleted {args.session} ({count}) from {label}")
    return EXIT_OK


async def _delete_one(journal: Journal, session: str) -> None:
    """Delete one session while holding its lease, so a session a live run writes is refused."""
    owner = f"swarmkit delete {os.getpid()}"
    try:
        await journal.acquire_lease(session, owner=owner, ttl=60.0)
    except SessionBusyError as exc:
        raise UsageError(
            f"session {session!r} is being written by {exc.owner}; it is not deleted "
            "(stop that run, or wait for its lease to expire if its process died)"
        ) from exc
    try:
        await journal.delete(session)
    finally:
        await journal.release_lease(session, owner=owner)


def _confirmed(question: str) -> bool:
    try:
        answer = input(question)
    except EOFError:
        return False
    return answer.strip().lower() in ("y", "yes")


async def _states(journal: Journal, infos: Sequence[SessionInfo]) -> dict[str, str]:
    """Each session's state in the viewer's words. A summary keeps no Ctrl-C flag, so one that
    says waiting may be cancelled: those few sessions' records tell the two apart. An eval
    run's manifest lists trials and is never a run: it reads ``eval run``."""
    states: dict[str, str] = {}
    for info in infos:
        state: str = info.state
        if info.session_id.startswith(EVAL_RUN_MARK):
            state = EVAL_RUN_STATE
        if state == "waiting":
            # A session sealed without the key to read (or with a damaged record) is listed
            # with the summary's word, as the viewer lists it.
            with contextlib.suppress(JournalError):
                state = session_status(await journal.read(info.session_id))
        states[info.session_id] = state
    return states


def _thread_rows(
    threads: Sequence[Conversation],
    started: Callable[[float], str],
    states: Mapping[str, str],
) -> list[tuple[str, ...]]:
    """One row per conversation (its latest turn's state), then one per turn under it."""
    rows: list[tuple[str, ...]] = [("CONVERSATION", "TURNS", "STATE", "STOP", "STARTED", "PROMPT")]
    for thread in threads:
        turns = thread.turns
        count, first = str(len(turns)), started(thread.started_at)
        state = _state_cells(thread.latest, states)
        rows.append((thread.conversation_id, count, *state, first, _prompt(turns[0])))
        if len(turns) > 1:
            rows += [
                (
                    f"  {n}. {turn.session_id}",
                    "",
                    *_state_cells(turn, states),
                    started(turn.started_at),
                    _prompt(turn),
                )
                for n, turn in enumerate(turns, start=1)
            ]
    return rows


async def _export(args: argparse.Namespace) -> int:
    records = await _read_session(args.journal, args.session)
    # Which file was read goes to stderr: stdout is the exported data.
    print(f"journal: {journal_label(journal_path(args.journal))}", file=sys.stderr)
    sys.stdout.write(export_jsonl(records))
    if args.thread:  # the conversation's later turns, each an export of its own, in order
        with open_for_reading(journal_path(args.journal)) as journal:
            for session_id in (await turn_sessions(journal, args.session))[1:]:
                sys.stdout.write(export_jsonl(await journal.read(session_id)))
    return EXIT_OK


async def _import_session(args: argparse.Namespace) -> int:
    text = sys.stdin.read() if args.file == "-" else _read_text(Path(args.file))
    sessions = import_jsonl_sessions(text)
    path = journal_path(args.journal)
    with open_for_writing(path) as journal:
        for records in sessions:  # every session checked before the first is written
            session_id = records[0].session_id
            if await journal.next_seq(session_id):
                raise UsageError(
                    f"session {session_id!r} is already in {journal_label(path)}; delete it "
                    f"there first: swarmkit delete {session_id} --journal {journal_label(path)}"
                )
        for records in sessions:
            await journal.append(records)  # one step: the whole session or nothing
            label = f"{records[0].session_id} ({plural(len(records), 'record')})"
            print(f"imported {label} into {journal_label(path)}")
    return EXIT_OK


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {exc}") from exc


async def _read_session(option: str | Path | None, session_id: str) -> tuple[JournalRecord, ...]:
    path = option if isinstance(option, Path) else journal_path(option)
    with open_for_reading(path) as journal:
        try:
            return await journal.read(session_id)
        except SessionNotFoundError as exc:
            raise UsageError(f"{exc} (swarmkit sessions --journal {journal_label(path)})") from exc


def _session_row(
    info: SessionInfo, started: Callable[[float], str], states: Mapping[str, str]
) -> tuple[str, ...]:
    return (
        info.session_id,
        states[info.session_id],
        info.stop_reason or "-",
        str(info.records),
        started(info.started_at),
        one_line(info.prompt or "", limit=48),
    )


def _state_cells(info: SessionInfo, states: Mapping[str, str]) -> tuple[str, str]:
    return states[info.session_id], info.stop_reason or "-"


# The viewer's colour per state, as terminal colours: failed red, waiting yellow, limited
# magenta, running blue, finished green, cancelled grey.
_COLOURS = {
    "failed": "31",
    "waiting": "33",
    "limited": "35",
    "running": "34",
    "finished": "32",
    "cancelled": "90",
}


def _painter(out: TextIO) -> Callable[[str], str] | None:
    """How a state cell is coloured: only on a terminal, and never with NO_COLOR set."""
    if os.environ.get("NO_COLOR") or not out.isatty():
        return None

    def paint(cell: str) -> str:
        colour = _COLOURS.get(cell.strip())
        return cell if colour is None else f"\033[{colour}m{cell}\033[0m"

    return paint


def _prompt(info: SessionInfo) -> str:
    return one_line(info.prompt or "", limit=48)


def _local_times() -> Callable[[float], str]:
    """Unix seconds as local ``YYYY-MM-DD HH:MM:SS``, each minute's part formatted once:
    a listing's start times crowd into few minutes, and formatting was a third of it."""
    minutes: dict[int, str] = {}

    def local_time(seconds: float) -> str:
        minute, second = divmod(math.floor(round(seconds, 6)), 60)
        prefix = minutes.get(minute)
        if prefix is None:
            at = time.localtime(minute * 60)
            if at.tm_sec:  # a zone offset of odd seconds (old local mean times): no sharing
                return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(seconds))
            prefix = minutes[minute] = time.strftime("%Y-%m-%d %H:%M", at)
        return f"{prefix}:{second:02d}"

    return local_time


def _table(
    rows: Sequence[Sequence[str]], paint: Callable[[str], str] | None = None, column: int = -1
) -> str:
    """Rows in aligned columns; ``paint`` colours the cells of ``column`` below the header
    (after padding, so colour codes never shift the columns)."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for number, row in enumerate(rows):
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=True)]
        if paint is not None and number > 0 and 0 <= column < len(cells):
            cells[column] = paint(cells[column])
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)
