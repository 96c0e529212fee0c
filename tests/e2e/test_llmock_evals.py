"""An eval run live against llmock, a third-party OpenAI-compatible server on loopback."""

from __future__ import annotations

from swarmkit import InMemoryJournal
from swarmkit.evals import TaskSet, evaluate, replay
from swarmkit.evals.support_desk import build_swarm, tasks
from swarmkit.models import OpenAIResponsesModel
from tests.e2e.conftest import LLMockServer


async def test_a_live_eval_against_an_openai_compatible_server(llmock_api: LLMockServer) -> None:
    """The desk runs live over HTTP; the trial passes, then replays with the server unused."""
    refund = {"order_id": "O-101", "amount": 40.0, "reason": "damaged"}
    llmock_api.script(
        {"type": "reply", "tool_calls": [{"name": "transfer_to_billing", "arguments": refund}]},
        {"type": "reply", "tool_calls": [{"name": "issue_refund", "arguments": refund}]},
        {"type": "reply", "text": "Refund issued: 40.00 EUR on O-101."},
    )
    model = OpenAIResponsesModel("gpt-4o", base_url=llmock_api.base_url, api_key="sk-llmock-key")
    desk = tasks()
    one = TaskSet(domain=desk.domain, tasks=(desk.task("refund-damaged"),))
    journal = InMemoryJournal()

    report = await evaluate(one, build_swarm(model), journal=journal, run_id="llmock")

    assert report.trials[0].passed, report.trials[0].detail
    assert report.trials[0].tokens > 0
    seen = len(llmock_api.requests())
    again = await replay("llmock", one, build_swarm(model), journal)
    assert again.trials[0].passed and not again.drifted
    assert len(llmock_api.requests()) == seen == 3
