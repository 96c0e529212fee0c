"""Simulated users: a scripted one for CI, a model-driven one whose calls are journaled too."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from swarmkit.agent import Agent
from swarmkit.evals._tasks import Reply, Task
from swarmkit.exceptions import ConfigurationError
from swarmkit.journal import Journal
from swarmkit.models import Model
from swarmkit.swarm import Swarm


@dataclass(frozen=True, kw_only=True, slots=True)
class UserTurn:
    """What a simulated user knows when it is its turn to speak."""

    task: Task
    """The task being played."""
    number: int
    """1 for the opening message, 2 for the reply to the swarm's first answer, ..."""
    agent_said: tuple[str, ...]
    """The swarm's answers so far, one per earlier turn."""
    user_said: tuple[str, ...]
    """The user's own messages so far."""
    session_id: str
    """Where a user that calls a model journals this turn."""
    journal: Journal | None
    """The trial's journal."""


class User(Protocol):
    """A simulated user: the next message of the dialogue, or None to end it."""

    async def speak(self, turn: UserTurn) -> str | None:
        """The user's next message (live)."""
        ...

    async def replay(self, turn: UserTurn) -> str | None:
        """The same message again from the journal, with zero model calls."""
        ...


class ScriptedUser:
    """Plays a task's ``turns``: a reply whose ``when`` text the swarm's last answer contains,
    else the next unconditional one; the dialogue ends when none is left."""

    def __init__(self, turns: Sequence[Reply | str] | None = None) -> None:
        self.turns = None if turns is None else tuple(_reply(t) for t in turns)
        """Fixed turns for every task; None plays each task's own ``turns``."""

    async def speak(self, turn: UserTurn) -> str | None:
        """The next scripted message."""
        return next_scripted(
            self.turns if self.turns is not None else turn.task.turns, turn.agent_said
        )

    async def replay(self, turn: UserTurn) -> str | None:
        """A script needs no journal: the same choice again."""
        return await self.speak(turn)


def next_scripted(turns: Sequence[Reply], agent_said: Sequence[str]) -> str | None:
    """The scripted user's message after ``agent_said``: each choice is made again in order, so
    the script needs no state of its own."""
    used: set[int] = set()
    choice = _pick(turns, used, None)
    for answer in agent_said:
        if choice is None:
            return None
        choice = _pick(turns, used, answer.lower())
    return None if choice is None else turns[choice].say


def _pick(turns: Sequence[Reply], used: set[int], answer: str | None) -> int | None:
    if answer is not None:
        for i, reply in enumerate(turns):
            if i not in used and reply.when is not None and reply.when.lower() in answer:
                used.add(i)
                return i
    for i, reply in enumerate(turns):
        if i not in used and reply.when is None:
            used.add(i)
            return i
    return None


def _reply(turn: Reply | str) -> Reply:
    return Reply(say=turn) if isinstance(turn, str) else turn


DEFAULT_STOP_WORD = "###DONE###"
"""What a model-driven user says when its goal is met (or cannot be)."""


class ModelUser:
    """A user played by any Model from the task's scenario; each of its turns is a journaled
    one-agent session, so a stored dialogue replays with zero calls on both sides."""

    def __init__(
        self,
        model: Model | str,
        *,
        instructions: str = "",
        stop_word: str = DEFAULT_STOP_WORD,
        max_turns: int = 10,
    ) -> None:
        if not stop_word:
            raise ConfigurationError("ModelUser needs a non-empty stop_word")
        if max_turns < 1:
            raise ConfigurationError(f"ModelUser max_turns must be at least 1, got {max_turns}")
        self.model = model
        """The model that plays the user."""
        self.instructions = instructions
        """How to play users in general; the task's scenario is added to it."""
        self.stop_word = stop_word
        """Ends the dialogue when the user's message contains it."""
        self.max_turns = max_turns
        """The most messages the user sends."""

    async def speak(self, turn: UserTurn) -> str | None:
        """Ask the model for the user's next message, journaled as ``turn.session_id``."""
        if turn.number > self.max_turns:
            return None
        result = await self._swarm(turn).run(
            self._prompt(turn), session_id=turn.session_id, journal=turn.journal
        )
        return self._message(result.final_output_text or str(result.final_output or ""))

    async def replay(self, turn: UserTurn) -> str | None:
        """The journaled message; a changed dialogue raises ReplayDivergenceError."""
        if turn.number > self.max_turns:
            return None
        swarm = self._swarm(turn)
        result = await swarm.replay(turn.session_id, turn.journal, prompt=self._prompt(turn))
        return self._message(result.final_output_text or str(result.final_output or ""))

    def _swarm(self, turn: UserTurn) -> Swarm:
        rules = (
            f"{self.instructions}\n\nYou are the customer in this scenario:\n{turn.task.scenario}\n"
            f"Write only your next message to the support desk. When your request is settled "
            f"or cannot be, reply with {self.stop_word} alone."
        )
        return Swarm(
            [Agent(name="user", instructions=rules.strip(), handoffs=[])], "user", model=self.model
        )

    def _prompt(self, turn: UserTurn) -> str:
        if not turn.agent_said:
            return "Start the conversation."
        lines = []
        for said, answer in zip(turn.user_said, turn.agent_said, strict=False):
            lines += [f"You: {said}", f"Support: {answer}"]
        return "\n".join(lines) + "\nYour next message:"

    def _message(self, text: str) -> str | None:
        return None if self.stop_word in text or not text.strip() else text.strip()
