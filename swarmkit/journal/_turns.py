"""A conversation's turns in a journal: each turn its own session, named after the first.

The first turn is the conversation's own id; later ones are ``{id}__turn_2``, ``__turn_3``...
(``swarm.run(..., continue_session=True)`` names them so). ``conversations`` groups a
journal's sessions into threads of turns, the way ``swarmkit sessions --threads`` lists them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from swarmkit.journal._records import Journal, SessionInfo

TURN_MARK = "__turn_"
"""What separates a conversation's id from a later turn's number."""

EVAL_RUN_MARK = "evalrun__"
"""What an eval run's manifest session id starts with (the rest is the run's id): a list of
the run's trials, never a run itself, so it is shown as ``EVAL_RUN_STATE``."""

EVAL_RUN_STATE = "eval run"
"""The state every listing shows for an eval run's manifest session."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Conversation:
    """A thread: a conversation's journaled turns, first to last."""

    conversation_id: str
    """The conversation's id: its first turn's session id."""
    turns: tuple[SessionInfo, ...]
    """Its turns' sessions, in turn order."""

    @property
    def latest(self) -> SessionInfo:
        """The latest turn: its status is the conversation's."""
        return self.turns[-1]

    @property
    def started_at(self) -> float:
        """When its first turn started (unix seconds)."""
        return min(turn.started_at for turn in self.turns)

    @property
    def updated_at(self) -> float:
        """When any of its turns last changed (unix seconds)."""
        return max(turn.updated_at for turn in self.turns)


def turn_session_id(conversation: str, turn: int) -> str:
    """The session id of a conversation's ``turn`` (1 is the conversation's own id)."""
    return conversation if turn == 1 else f"{conversation}{TURN_MARK}{turn}"


def turn_of(session_id: str) -> tuple[str, int]:
    """The conversation a session id is a turn of, and the turn's number (1 for the first)."""
    head, mark, number = session_id.rpartition(TURN_MARK)
    if mark and head and number.isdigit() and number == str(int(number)) and int(number) >= 2:
        return head, int(number)
    return session_id, 1


async def turn_sessions(journal: Journal, conversation: str) -> list[str]:
    """The journaled turns of a conversation, first to last."""
    turns: list[str] = []
    while await journal.next_seq(turn_session_id(conversation, len(turns) + 1)) != 0:
        turns.append(turn_session_id(conversation, len(turns) + 1))
    return turns


def group_turns(sessions: Sequence[SessionInfo]) -> list[Conversation]:
    """Sessions grouped into conversations, the most recently active first."""
    threads: dict[str, list[tuple[int, SessionInfo]]] = {}
    for info in sessions:
        conversation, number = turn_of(info.session_id)
        threads.setdefault(conversation, []).append((number, info))
    grouped = [
        Conversation(
            conversation_id=conversation,
            turns=tuple(info for _, info in sorted(turns, key=lambda turn: turn[0])),
        )
        for conversation, turns in threads.items()
    ]
    return sorted(grouped, key=lambda thread: thread.updated_at, reverse=True)


async def conversations(journal: Journal) -> list[Conversation]:
    """The journal's conversations, each with its turns, the most recently active first."""
    return group_turns(await journal.sessions())
