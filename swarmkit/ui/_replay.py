"""Replay from the page: the outcome, or the divergence as a side-by-side diff."""

from __future__ import annotations

from typing import Any

from swarmkit.exceptions import ReplayDivergenceError
from swarmkit.journal import Journal
from swarmkit.swarm import Swarm


async def replay_session(
    swarm: Swarm, journal: Journal, session_id: str, prompt: str | None = None
) -> dict[str, Any]:
    """Replay ``session_id`` against ``swarm``'s current code with zero model calls; with a
    ``prompt``, as if it had been asked that (where the change first matters)."""
    try:
        if prompt:
            result = await swarm.what_if(session_id, journal, prompt=prompt)
        else:
            result = await swarm.replay(session_id, journal)
    except ReplayDivergenceError as exc:
        return {
            "outcome": "diverged",
            "step": exc.step,
            "message": str(exc).split("\n", 1)[0],
            "rows": side_by_side(exc.diff),
        }
    return {
        "outcome": "reproduced",
        "stop_reason": result.stop_reason,
        "final_agent": result.final_agent,
        "trail": list(result.trail),
        "handoffs": len(result.handoffs),
        "turns": result.turns,
        "final_output": result.final_output,
    }


def side_by_side(diff: str) -> list[dict[str, str]]:
    """A unified diff as rows of (journal, current code), each marked same/changed/removed/added.

    Consecutive removed and added lines pair up row by row, so a changed line reads across.
    """
    rows: list[dict[str, str]] = []
    removed: list[str] = []
    added: list[str] = []

    def settle() -> None:
        for index in range(max(len(removed), len(added))):
            left = removed[index] if index < len(removed) else ""
            right = added[index] if index < len(added) else ""
            change = "changed" if index < len(removed) and index < len(added) else ""
            change = change or ("removed" if index < len(removed) else "added")
            rows.append({"left": left, "right": right, "change": change})
        removed.clear()
        added.clear()

    for line in diff.splitlines():
        if line.startswith(("---", "+++", "@@")):
            continue
        if line.startswith("-"):
            removed.append(line[1:])
        elif line.startswith("+"):
            added.append(line[1:])
        else:
            settle()
            rows.append({"left": line[1:], "right": line[1:], "change": "same"})
    settle()
    return rows
