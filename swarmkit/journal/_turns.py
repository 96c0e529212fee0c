"""A conversation's turns in a journal: each turn its own session, named after the first."""

from __future__ import annotations

from swarmkit.journal._records import Journal

TURN_MARK = "__turn_"
"""What separates a conversation's id from a later turn's number."""


def turn_session_id(conversation: str, turn: int) -> str:
    """The session id of a conversation's ``turn`` (1 is the conversation's own id)."""
    return conversation if turn == 1 else f"{conversation}{TURN_MARK}{turn}"


async def turn_sessions(journal: Journal, conversation: str) -> list[str]:
    """The journaled turns of a conversation, first to last."""
    turns: list[str] = []
    while await journal.next_seq(turn_session_id(conversation, len(turns) + 1)) != 0:
        turns.append(turn_session_id(conversation, len(turns) + 1))
    return turns
