"""A spend ledger in front of a real model server (llmock): a call a budget has no room for
never reaches the server."""

from __future__ import annotations

from pathlib import Path

from swarmkit import Agent, Budget, Ledger, Price, Swarm, tool
from tests.e2e.conftest import LLMockServer
from tests.e2e.test_llmock_responses import responses_model

PRICES = {"gpt-4o": Price(input=2.5, output=10.0)}


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"21C in {city}"


def _swarm(server: LLMockServer, ledger: Ledger) -> Swarm:
    agent = Agent(name="weather", instructions="Help with the weather.", tools=[get_weather])
    return Swarm([agent], "weather", model=responses_model(server), ledger=ledger)


async def test_the_server_receives_nothing_when_the_tightest_budget_is_spent(
    llmock_api: LLMockServer, tmp_path: Path
) -> None:
    """Of three budgets the money one has no room: no request is sent, the run says why."""
    ledger = Ledger(
        tmp_path / "spend.db",
        [
            Budget(name="tokens", limit=1_000_000, tenant="*"),
            Budget(name="calls", limit=100, unit="calls", agent="weather"),
            Budget(name="eur", limit=0.000001, unit="money", model="gpt-4o"),
        ],
        prices=PRICES,
        tenant="tenant",
    )

    result = await _swarm(llmock_api, ledger).run("Weather in Paris?", context={"tenant": "acme"})

    assert result.stop_reason == "budget"
    assert result.limit is not None and result.limit.budget is not None
    assert result.limit.budget.startswith("eur||")
    assert llmock_api.requests() == []
    assert await ledger.store.calls() == []


async def test_a_run_stops_between_calls_when_its_budget_runs_out(
    llmock_api: LLMockServer, tmp_path: Path
) -> None:
    """One call fits the call budget: the server sees exactly that one; its real usage is
    charged, and the run stops before the second."""
    ledger = Ledger(
        tmp_path / "spend.db",
        [Budget(name="calls", limit=1, unit="calls"), Budget(name="eur", limit=5, unit="money")],
        prices=PRICES,
    )

    result = await _swarm(llmock_api, ledger).run("What's the weather in Paris?")

    assert result.stop_reason == "budget"
    assert result.turns == 1
    assert len(llmock_api.requests()) == 1
    calls = await ledger.store.calls()
    assert [c.total_tokens for c in calls] == [result.usage["weather"].total_tokens]
    assert calls[0].cost == PRICES["gpt-4o"].of(result.usage["weather"])
