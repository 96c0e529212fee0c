"""Budgets on a SQLite ledger: bad settings refused up front, calls reserved and settled."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from swarmkit import (
    Agent,
    Budget,
    ConfigurationError,
    Ledger,
    Price,
    ReplayDivergenceError,
    Swarm,
    tool,
)
from swarmkit.journal import SQLiteJournal
from swarmkit.ledger import Window
from swarmkit.models import Usage
from swarmkit.testing import ScriptedModel, text, tool_call

NOON = 1_795_000_000.0  # a fixed moment: periods are read from the ledger's clock


@tool
def look() -> str:
    """Look around."""
    return "seen"


def _ledger(store: Path | str, *budgets: Budget, **options: object) -> Ledger:
    where = store / "spend.db" if isinstance(store, Path) else store
    return Ledger(where, list(budgets), clock=lambda: NOON, **options)  # type: ignore[arg-type]


def _swarm(model: ScriptedModel, ledger: Ledger, **options: object) -> Swarm:
    return Swarm([Agent(name="a", tools=[look])], "a", model=model, ledger=ledger, **options)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"limit": -1}, "limit must be >= 0"),
        ({"limit": "10"}, "limit must be a number"),
        ({"limit": float("nan")}, "limit must be a number"),
        ({"limit": True}, "limit must be a number"),
        ({"limit": 5, "period": "week"}, "period must be one of minute, hour, day, month"),
        ({"limit": 5, "unit": "euros"}, "unit must be one of tokens, calls, money"),
        ({"limit": 5, "tenant": ""}, "tenant must be a non-empty string"),
    ],
)
def test_a_bad_budget_is_refused_when_it_is_built(options: dict[str, object], words: str) -> None:
    """Negative, non-numeric or non-finite limits, unknown periods and units raise at once."""
    with pytest.raises(ConfigurationError, match=words):
        Budget(name="b", **options)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("build", "words"),
    [
        (lambda: Price(input=-1, output=2), "Price input must be a number >= 0, got -1"),
        (lambda: Price(input=1, output=True), "Price output must be a number >= 0, got True"),
        (
            lambda: Window(start="0", end=5),  # type: ignore[arg-type]
            "Window start must be seconds since the epoch",
        ),
        (lambda: Window(start=0, end=False), "Window end must be seconds since the epoch"),
        (lambda: Window(start=5, end=1), "Window end 1 must be after start 5"),
    ],
)
def test_a_bad_price_or_window_is_refused_when_it_is_built(
    build: Callable[[], object], words: str
) -> None:
    """A price or window bound that is not a number (a bool is not one), or a negative
    price, or a window that closes before it opens, raises at once."""
    with pytest.raises(ConfigurationError, match=re.escape(words)):
        build()


def test_a_money_budget_needs_a_price_for_every_model_it_counts(tmp_path: Path) -> None:
    """The swarm is refused when it is built, before any run, naming the model to price."""
    ledger = _ledger(tmp_path, Budget(name="eur", limit=5, unit="money"))
    with pytest.raises(ConfigurationError, match="no price for model 'scripted'"):
        _swarm(ScriptedModel(), ledger)
    priced = _ledger(
        tmp_path,
        Budget(name="eur", limit=5, unit="money"),
        prices={"scripted": Price(input=1, output=2)},
    )
    _swarm(ScriptedModel(), priced)
    # A money budget for another model needs no price for this one.
    other = _ledger(tmp_path, Budget(name="eur", limit=5, unit="money", model="gpt-4o"))
    _swarm(ScriptedModel(), other)


def test_budget_names_must_differ(tmp_path: Path) -> None:
    """Two budgets with one name could not be told apart in a report: refused."""
    with pytest.raises(ConfigurationError, match="two budgets are named 'b'"):
        _ledger(tmp_path, Budget(name="b", limit=1), Budget(name="b", limit=2))


async def test_the_tightest_budget_stops_the_run_before_the_call(
    tmp_path: Path, store: str
) -> None:
    """Two calls fit the call budget, the token budget is looser: the third call is not made,
    and the run stops with its own reason, the budget and figures journaled."""
    ledger = _ledger(
        store,
        Budget(name="tokens", limit=1_000_000, unit="tokens"),
        Budget(name="calls", limit=2, unit="calls", agent="a"),
    )
    model = ScriptedModel(tool_call("look"), tool_call("look"))
    journal = SQLiteJournal(tmp_path / "j.db")

    result = await _swarm(model, ledger, journal=journal).run("x")

    assert result.stop_reason == "budget"
    assert result.limit is not None
    assert (result.limit.limit, result.limit.allowed, result.limit.used) == ("budget", 2, 2)
    assert result.limit.budget == "calls||2026-11-18"
    assert result.turns == 2
    model.assert_exhausted()
    records = await journal.read(result.session_id)
    stop = [r for r in records if r.kind == "limit_reached"]
    assert stop[0].data["budget"] == "calls||2026-11-18"
    assert (stop[0].data["allowed"], stop[0].data["used"]) == (2, 2)


async def test_settled_spend_is_the_real_usage(tmp_path: Path, store: str) -> None:
    """Each call holds its estimate, then is charged exactly what it used."""
    ledger = _ledger(
        store,
        Budget(name="tokens", limit=1_000_000, unit="tokens"),
        Budget(name="eur", limit=1, unit="money"),
        prices={"scripted": Price(input=2.0, output=4.0)},
    )
    model = ScriptedModel(
        tool_call("look"),
        text("done", usage=Usage(prompt_tokens=7, completion_tokens=3, total_tokens=10)),
    )

    result = await _swarm(model, ledger).run("x")

    assert result.stop_reason == "final_output"
    windows = {w["budget"]: w for w in await ledger.store.windows(now=NOON)}
    assert windows["tokens"]["spent"] == 25
    assert windows["tokens"]["held"] == 0
    assert windows["eur"]["spent"] == pytest.approx((17 * 2.0 + 8 * 4.0) / 1e6)
    calls = await ledger.store.calls()
    assert [(c.agent, c.model, c.total_tokens) for c in calls] == [
        ("a", "scripted", 15),
        ("a", "scripted", 10),
    ]


async def test_each_tenant_has_its_own_budget(tmp_path: Path, store: str) -> None:
    """tenant='*' caps each tenant apart; a context without the path counts as the default."""
    ledger = _ledger(
        store, Budget(name="per-tenant", limit=1, unit="calls", tenant="*"), tenant="org.id"
    )

    first = await _swarm(ScriptedModel(text("hi")), ledger).run(
        "x", context={"org": {"id": "acme"}}
    )
    second = await _swarm(ScriptedModel(), ledger).run("x", context={"org": {"id": "acme"}})
    other = await _swarm(ScriptedModel(text("hi")), ledger).run(
        "x", context={"org": {"id": "globex"}}
    )
    nameless = await _swarm(ScriptedModel(text("hi")), ledger).run("x")

    assert [r.stop_reason for r in (first, second, other, nameless)] == [
        "final_output",
        "budget",
        "final_output",
        "final_output",
    ]
    assert second.limit is not None and second.limit.budget == "per-tenant|tenant=acme|2026-11-18"
    scopes = sorted(w["scope"] for w in await ledger.store.windows(now=NOON))
    assert scopes == ["tenant=acme", "tenant=default", "tenant=globex"]


async def test_a_fixed_window_applies_only_inside_it(tmp_path: Path, store: str) -> None:
    """Outside its window a budget does not count; inside it, it does."""
    closed = Budget(name="old", limit=0, unit="calls", period=Window(start=0, end=NOON - 1))
    ledger = _ledger(store, closed)
    assert (await _swarm(ScriptedModel(text("hi")), ledger).run("x")).stop_reason == "final_output"
    open_ = Budget(name="now", limit=0, unit="calls", period=Window(start=NOON - 1, end=NOON + 1))
    ledger = _ledger(store, open_)
    assert (await _swarm(ScriptedModel(), ledger).run("x")).stop_reason == "budget"


async def test_a_budget_stop_resumes_once_the_budget_is_raised(tmp_path: Path, store: str) -> None:
    """The stopped session resumes on a swarm whose ledger has room, and goes on."""
    journal = SQLiteJournal(tmp_path / "j.db")
    tight = _ledger(store, Budget(name="calls", limit=1, unit="calls"))
    stopped = await _swarm(ScriptedModel(tool_call("look")), tight, journal=journal).run("x")
    assert stopped.stop_reason == "budget"

    raised = _ledger(store, Budget(name="calls", limit=5, unit="calls"))
    resumed = await _swarm(ScriptedModel(text("done")), raised, journal=journal).resume(
        stopped.session_id
    )

    assert resumed.stop_reason == "final_output"
    assert resumed.final_output == "done"
    windows = await raised.store.windows(now=NOON)
    assert [(w["budget"], w["spent"]) for w in windows] == [("calls", 2)]


async def test_replay_charges_nothing(tmp_path: Path, store: str) -> None:
    """Replaying a journaled run makes no reservation and no charge, even with no room left."""
    journal = SQLiteJournal(tmp_path / "j.db")
    ledger = _ledger(store, Budget(name="calls", limit=2, unit="calls"))
    swarm = _swarm(ScriptedModel(tool_call("look"), text("done")), ledger, journal=journal)
    result = await swarm.run("x")
    assert result.stop_reason == "final_output"

    replayed = await swarm.replay(result.session_id)

    assert replayed.final_output == "done"
    assert len(await ledger.store.calls()) == 2
    windows = await ledger.store.windows(now=NOON)
    assert [(w["spent"], w["held"]) for w in windows] == [(2, 0)]


async def test_what_if_charges_nothing(tmp_path: Path, store: str) -> None:
    """A what-if, reproduced or diverged, reserves nothing and charges nothing."""
    journal = SQLiteJournal(tmp_path / "j.db")
    ledger = _ledger(store, Budget(name="calls", limit=2, unit="calls"))
    swarm = _swarm(ScriptedModel(tool_call("look"), text("done")), ledger, journal=journal)
    result = await swarm.run("x")

    same = await swarm.what_if(result.session_id, journal)
    with pytest.raises(ReplayDivergenceError):
        await swarm.what_if(result.session_id, journal, prompt="something else")

    assert same.stop_reason == "final_output"
    windows = await ledger.store.windows(now=NOON)
    assert [(w["spent"], w["held"]) for w in windows] == [(2, 0)]
    assert len(await ledger.store.calls()) == 2


async def test_a_per_day_stop_resumes_once_the_day_has_turned(tmp_path: Path) -> None:
    """A run a per-day budget stopped stays stopped while the day lasts, and its session
    goes on, charged to the new day, once the ledger's clock has passed midnight."""
    now = [NOON]
    ledger = Ledger(
        tmp_path / "spend.db",
        [Budget(name="daily", limit=1, unit="calls", period="day")],
        clock=lambda: now[0],
    )
    journal = SQLiteJournal(tmp_path / "j.db")
    stopped = await _swarm(ScriptedModel(tool_call("look")), ledger, journal=journal).run("x")
    assert stopped.stop_reason == "budget"

    now[0] = NOON + 3600  # an hour later: the same UTC day, still no room
    again = await _swarm(ScriptedModel(), ledger, journal=journal).resume(stopped.session_id)
    assert again.stop_reason == "budget"
    assert again.limit is not None
    assert again.limit.budget == "daily||2026-11-18"

    now[0] = NOON + 86_400  # the next day: the budget starts afresh
    resumed = await _swarm(ScriptedModel(text("done")), ledger, journal=journal).resume(
        stopped.session_id
    )

    assert resumed.stop_reason == "final_output"
    assert resumed.final_output == "done"
    calls = await ledger.store.calls()
    assert [call.day for call in calls] == ["2026-11-18", "2026-11-19"]
