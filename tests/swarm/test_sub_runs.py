"""Delegated sub-runs inside the delegating run: their events in its stream, its budget."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import Any

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from swarmkit import Agent, Swarm, UsageLimits, tool
from swarmkit.events import Event, SubRunEvent, event_from_data, event_to_data
from swarmkit.journal import InMemoryJournal
from swarmkit.models import ModelRequest, ModelResponse
from swarmkit.testing import NeverCalledModel, ScriptedModel, text, turn
from swarmkit.testing import tool_call as call
from swarmkit.tracing import RunTracing


@tool
def lookup(city: str) -> str:
    """Look a city up."""
    return f"{city}: sunny"


class Recorder:
    """An observer that keeps every event it passes on."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    async def __call__(self, events: AsyncGenerator[Event, None]) -> AsyncGenerator[Event, None]:
        async for event in events:
            self.events.append(event)
            yield event


def _planner(
    *,
    observers: list[Any] | None = None,
    journal: InMemoryJournal | None = None,
    **models: Any,
) -> Swarm:
    """A planner that asks flights and hotels at once; flights uses a tool."""
    flights = Agent(name="flights", tools=[lookup], handoffs=[], model=models.get("flights"))
    hotels = Agent(name="hotels", handoffs=[], model=models.get("hotels"))
    planner = Agent(
        name="planner",
        tools=[flights.as_tool(), hotels.as_tool()],
        handoffs=[],
        model=models.get("planner"),
    )
    return Swarm(
        [planner, flights, hotels],
        "planner",
        journal=journal or InMemoryJournal(),
        observers=observers or [],
    )


def _scripts() -> dict[str, Any]:
    return {
        "planner": ScriptedModel(
            turn(call("ask_flights", input="LIS to OSL"), call("ask_hotels", input="Oslo")),
            text("Booked."),
        ),
        "flights": ScriptedModel(call("lookup", city="Oslo"), text("TP1234")),
        "hotels": ScriptedModel(text("Hotel Bristol")),
    }


def _shape(events: list[Event]) -> list[tuple[str, ...]]:
    """(kind, ...) per event; a sub-run's as (sub_run, its session, its call, inner kind)."""
    shaped: list[tuple[str, ...]] = []
    for event in events:
        if isinstance(event, SubRunEvent):
            shaped.append(("sub_run", event.session_id, event.tool_call_id, event.event.kind))
        else:
            shaped.append((event.kind,))
    return shaped


async def test_a_supervisors_stream_shows_each_sub_run_in_call_order_between_call_and_result() -> (
    None
):
    """Sub-runs' events arrive wrapped with their session and call, one sub-run after another."""
    swarm = _planner(**_scripts())

    events = [event async for event in swarm.stream("plan a trip", session_id="trip")]

    shape = _shape(events)
    flights, hotels = "trip__swarm_flights_0_call_1", "trip__swarm_hotels_0_call_2"
    start = shape.index(("tool_called",))
    assert shape[start : start + 2] == [("tool_called",), ("tool_called",)]
    subs = [s for s in shape if s[0] == "sub_run"]
    assert [s[1] for s in subs] == sorted((s[1] for s in subs), key=[flights, hotels].index)
    flights_kinds = [s[3] for s in subs if s[1] == flights]
    assert flights_kinds[0] == "run_started" and flights_kinds[-1] == "run_finished"
    assert {"tool_called", "tool_resulted"} <= set(flights_kinds)
    assert {s[2] for s in subs if s[1] == flights} == {"call_1"}
    assert [s[3] for s in subs if s[1] == hotels][-1] == "run_finished"
    last_sub = max(i for i, s in enumerate(shape) if s[0] == "sub_run")
    assert shape[last_sub + 1 : last_sub + 3] == [("tool_resulted",), ("tool_resulted",)]
    assert all(e.agent == "planner" for e in events if isinstance(e, SubRunEvent))
    assert events[-1].kind == "run_finished"


async def test_a_replayed_delegating_session_streams_the_same_events() -> None:
    """Replay (zero model calls) yields the live run's event sequence, sub-runs included."""
    journal = InMemoryJournal()
    live = Recorder()
    await _planner(observers=[live], journal=journal, **_scripts()).run("plan", session_id="t")
    replayed = Recorder()
    empty = ScriptedModel()  # named like the live ones, and with no turn to give
    swarm = _planner(observers=[replayed], planner=empty, flights=empty, hotels=empty)

    await swarm.replay("t", journal)

    def comparable(events: list[Event]) -> list[Any]:
        return [_without_replay_flag(event_to_data(event)) for event in events]

    assert any(isinstance(e, SubRunEvent) for e in live.events)
    assert comparable(replayed.events) == comparable(live.events)


def _without_replay_flag(data: dict[str, Any]) -> dict[str, Any]:
    if data["kind"] == "sub_run":
        return {**data, "event": _without_replay_flag(data["event"])}
    return {k: v for k, v in data.items() if k not in ("replay", "replayed")}


async def test_a_sub_run_of_a_sub_run_arrives_wrapped_twice_and_round_trips() -> None:
    """Nesting is kept: the grandchild's events are SubRunEvents inside SubRunEvents."""
    weather = Agent(name="weather", handoffs=[], model=ScriptedModel(text("sunny")))
    guide = Agent(
        name="guide",
        tools=[weather.as_tool()],
        handoffs=[],
        model=ScriptedModel(call("ask_weather", input="Oslo?"), text("Go, it is sunny.")),
    )
    boss = Agent(
        name="boss",
        tools=[guide.as_tool()],
        handoffs=[],
        model=ScriptedModel(call("ask_guide", input="Should I go?"), text("Yes.")),
    )
    swarm = Swarm([boss, guide, weather], "boss", journal=InMemoryJournal())

    events = [event async for event in swarm.stream("trip?", session_id="b")]

    nested = [e for e in events if isinstance(e, SubRunEvent) and isinstance(e.event, SubRunEvent)]
    assert nested
    assert {(e.session_id, e.event.session_id) for e in nested} == {  # type: ignore[union-attr]
        ("b__swarm_guide_0_call_1", "b__swarm_guide_0_call_1__swarm_weather_0_call_1")
    }
    assert [event_from_data(event_to_data(e)) for e in events] == events


async def test_tracing_nests_a_sub_runs_spans_under_the_delegating_tool_call() -> None:
    """The sub-run's run span is a child of the execute_tool span of the call that asked it."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    swarm = _planner(observers=[RunTracing(tracer_provider=provider)], **_scripts())

    await swarm.run("plan a trip", session_id="trip")

    spans = {span.context.span_id: span for span in exporter.get_finished_spans()}
    runs = [s for s in spans.values() if s.name.startswith("invoke_workflow")]
    parents = {
        (s.attributes or {})["swarmkit.session_id"]: spans[s.parent.span_id].name
        for s in runs
        if s.parent is not None
    }
    assert parents == {
        "trip__swarm_flights_0_call_1": "execute_tool ask_flights",
        "trip__swarm_hotels_0_call_2": "execute_tool ask_hotels",
    }
    lookups = [s for s in spans.values() if s.name == "execute_tool lookup"]
    assert len({s.context.trace_id for s in spans.values()}) == 1
    assert lookups and lookups[0].context.trace_id == runs[0].context.trace_id


async def test_a_supervisors_max_model_calls_counts_its_delegates_calls() -> None:
    """Three calls allowed: the planner's first and its two delegates' use them all up."""
    journal = InMemoryJournal()
    scripts = _scripts()
    scripts["flights"] = ScriptedModel(text("TP1234"))
    limits = UsageLimits(max_model_calls=3)

    result = await _planner(journal=journal, **scripts).run(
        "plan a trip", session_id="trip", limits=limits
    )

    assert result.stop_reason == "usage_limit"
    assert result.limit is not None
    assert (result.limit.limit, result.limit.used) == ("max_model_calls", 3)
    assert set(result.usage) == {"planner", "flights", "hotels"}
    never = NeverCalledModel()
    replay = _planner(journal=journal, planner=never, flights=never, hotels=never)
    assert await replay.replay("trip", journal) == result


async def test_a_supervisors_max_tool_calls_counts_its_delegates_tool_calls() -> None:
    """The delegate's lookup used the one tool call allowed: the planner's own is refused."""
    planner_model = ScriptedModel(
        call("ask_flights", input="LIS to OSL"), call("lookup", city="Lisbon"), text("Done.")
    )
    flights = Agent(
        name="flights",
        tools=[lookup],
        handoffs=[],
        model=ScriptedModel(call("lookup", city="Oslo"), text("TP1234")),
    )
    planner = Agent(
        name="planner", tools=[flights.as_tool(), lookup], handoffs=[], model=planner_model
    )
    swarm = Swarm([planner, flights], "planner", limits=UsageLimits(max_tool_calls=1))

    result = await swarm.run("plan a trip")

    assert result.stop_reason == "usage_limit"
    assert result.limit is not None
    assert (result.limit.limit, result.limit.used, result.limit.agent) == (
        "max_tool_calls",
        1,
        "planner",
    )


async def test_a_delegate_that_runs_out_of_the_shared_budget_stops_and_says_so() -> None:
    """A sub-run that would go past the supervisor's budget stops; the supervisor is told."""
    planner_model = ScriptedModel(call("ask_flights", input="LIS to OSL"), text("Sorry."))
    flights_model = ScriptedModel(
        turn(call("lookup", city="Oslo"), call("lookup", city="Bergen")), text("TP1234")
    )
    flights = Agent(name="flights", tools=[lookup], handoffs=[], model=flights_model)
    planner = Agent(name="planner", tools=[flights.as_tool()], handoffs=[], model=planner_model)
    swarm = Swarm([planner, flights], "planner", limits=UsageLimits(max_tool_calls=1))

    result = await swarm.run("plan a trip")

    told = [m for m in planner_model.requests[1].messages if m.kind == "tool"]
    assert told[0].is_error
    assert "flights" in told[0].content and "max_tool_calls=1 reached" in told[0].content
    assert (result.stop_reason, result.final_output) == ("final_output", "Sorry.")


async def test_the_first_sub_runs_events_stream_while_the_others_still_run() -> None:
    """hotels answers only once the reader has seen flights' answer: events arrive live."""
    seen = asyncio.Event()

    class WaitsForTheReader(ScriptedModel):
        async def respond(self, request: ModelRequest) -> ModelResponse:
            await seen.wait()
            return await super().respond(request)

    scripts = _scripts()
    scripts["hotels"] = WaitsForTheReader(text("Hotel Bristol"))
    swarm = _planner(**scripts)
    kinds: list[str] = []

    async def read() -> None:
        async for event in swarm.stream("plan a trip", session_id="trip"):
            if isinstance(event, SubRunEvent) and event.event.kind == "run_finished":
                kinds.append(event.session_id)
                seen.set()

    await asyncio.wait_for(read(), timeout=30)  # a guard: held events would never set it

    assert kinds == ["trip__swarm_flights_0_call_1", "trip__swarm_hotels_0_call_2"]
