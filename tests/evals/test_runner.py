"""Trials that could run nothing: a task with no opening turn, a user who says nothing."""

from __future__ import annotations

import pytest

from swarmkit import ConfigurationError, InMemoryJournal
from swarmkit.evals import Reply, ScriptedUser, Task, TaskSet, UserTurn, evaluate, regrade
from swarmkit.evals.support_desk import DOMAIN, build_swarm


async def test_a_task_with_no_turns_is_refused_before_any_trial() -> None:
    """The scripted user has nothing to say: evaluate raises, and nothing is journaled."""
    silent = TaskSet(domain=DOMAIN, tasks=(Task(id="silent", scenario="wants nothing"),))
    journal = InMemoryJournal()

    with pytest.raises(ConfigurationError, match="'silent': the scripted user has nothing"):
        await evaluate(silent, build_swarm(), journal=journal)

    assert not await journal.sessions()


async def test_only_conditional_turns_are_no_opening_either() -> None:
    """Turns that all wait for the agent's words leave the dialogue unopened: refused."""
    waits = Task(id="waits", scenario="s", turns=(Reply(say="O-1", when="which order"),))
    tasks = TaskSet(domain=DOMAIN, tasks=(waits,))

    with pytest.raises(ConfigurationError, match="nothing to say first"):
        await evaluate(tasks, build_swarm())
    with pytest.raises(ConfigurationError, match="nothing to say first"):
        await evaluate(tasks, build_swarm(), user=ScriptedUser([]))


class _Mute:
    """A user who never says anything."""

    async def speak(self, turn: UserTurn) -> str | None:
        return None

    async def replay(self, turn: UserTurn) -> str | None:
        return None


async def test_a_trial_in_which_the_user_says_nothing_fails_and_stays_failed() -> None:
    """No dialogue is a failed trial with the reason, live and when regraded."""
    tasks = TaskSet(domain=DOMAIN, tasks=(Task(id="mute", scenario="s"),))
    journal = InMemoryJournal()

    report = await evaluate(tasks, build_swarm(), journal=journal, user=_Mute(), run_id="m1")
    again = await regrade("m1", tasks, journal)

    for trial in (report.trials[0], again.trials[0]):
        assert trial.status == "failed" and "the swarm never ran" in trial.detail
    assert report.pass_rate == 0.0 and again.pass_rate == 0.0
