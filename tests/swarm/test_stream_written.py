"""A run streamed for a server that writes the answer's text in its own wire form."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

import pytest

from swarmkit import Agent, ConfigurationError, Swarm
from swarmkit.events import Event, RunFinished, TextDelta
from swarmkit.lowlevel import stream_written
from swarmkit.testing import ScriptedModel, text


def _swarm() -> Swarm:
    return Swarm([Agent(name="solo")], "solo", model=ScriptedModel(text("Hello there, friend.")))


async def test_each_piece_of_the_answer_is_what_the_writer_wrote_in_its_deltas_place() -> None:
    """The stream is ``stream``'s, each TextDelta replaced by the writer's value for it."""
    told = [event async for event in _swarm().stream("hi", session_id="s")]
    written = [
        item
        async for item in stream_written(
            _swarm(), "hi", text=lambda agent, piece: f"<{agent}:{piece}>", session_id="s"
        )
    ]

    expected = [f"<{e.agent}:{e.text}>" if isinstance(e, TextDelta) else type(e) for e in told]
    assert [i if isinstance(i, str) else type(i) for i in written] == expected
    assert "".join(i for i in written if isinstance(i, str)).count("<solo:") == 3
    last = written[-1]
    assert isinstance(last, RunFinished) and last.result.final_output == "Hello there, friend."


async def test_an_observed_swarm_streams_its_text_as_events() -> None:
    """Observers read every TextDelta, so with them the writer is not called."""
    seen: list[Event] = []

    async def watch(events: AsyncGenerator[Event, None]) -> AsyncGenerator[Event, None]:
        async for event in events:
            seen.append(event)
            yield event

    swarm = _swarm().with_observers(watch)
    items = [item async for item in stream_written(swarm, "hi", text=lambda agent, piece: piece)]

    assert not any(isinstance(item, str) for item in items)
    assert [type(e) for e in seen].count(TextDelta) == 3


def test_a_writer_that_is_not_a_function_is_refused() -> None:
    """A text that cannot be called is a configuration mistake, told before the run."""
    not_a_writer: Any = "sse"
    with pytest.raises(ConfigurationError, match="function of \\(agent, piece\\)"):
        stream_written(_swarm(), "hi", text=not_a_writer)
