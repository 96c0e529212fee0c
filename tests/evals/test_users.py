"""Simulated users: scripted choices, and a model-driven user whose turns replay."""

from __future__ import annotations

from swarmkit import InMemoryJournal, RecordingModel
from swarmkit.evals import ModelUser, Reply, TaskSet, evaluate, next_scripted, replay
from swarmkit.evals.support_desk import DeskModel, build_swarm, tasks
from swarmkit.testing import ScriptedModel, text


def test_a_scripted_user_answers_what_the_agent_asked() -> None:
    """A conditional reply is chosen when the agent's answer contains its text."""
    turns = (Reply(say="hi"), Reply(say="O-1", when="which order"), Reply(say="bye"))
    assert next_scripted(turns, []) == "hi"
    assert next_scripted(turns, ["Which order is it?"]) == "O-1"
    assert next_scripted(turns, ["Hello"]) == "bye"
    assert next_scripted(turns, ["Hello", "Which order?"]) == "O-1"
    assert next_scripted(turns, ["Hello", "x", "y"]) is None


async def test_a_model_driven_user_is_journaled_and_replays_without_calls() -> None:
    """The user's model calls are journaled; replay serves both sides from the journal."""
    desk = tasks()
    greeting = TaskSet(domain=desk.domain, tasks=(desk.task("order-status"),))
    user_model = ScriptedModel(text("Where is my order O-104?"), text("###DONE###"))
    journal = InMemoryJournal()
    report = await evaluate(
        greeting, build_swarm(), journal=journal, user=ModelUser(user_model), run_id="u1"
    )
    user_model.assert_exhausted()
    assert report.trials[0].passed
    sessions = {s.session_id for s in await journal.sessions()}
    assert {"eval-u1-order-status-1__user_1", "eval-u1-order-status-1__user_2"} <= sessions
    silent = RecordingModel(DeskModel())
    again = await replay(
        "u1", greeting, build_swarm(silent), journal, user=ModelUser(RecordingModel(DeskModel()))
    )
    assert silent.calls == 0 and not again.drifted and again.trials[0].passed
