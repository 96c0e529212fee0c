"""What a hostile or sloppy model answer does to a run through the real openai client: a lone
surrogate, repeated call ids, a tiny API key (issue 33, finding 6)."""

from __future__ import annotations

import json
from contextlib import aclosing
from pathlib import Path
from typing import Any, cast

import httpx
import pytest
import respx
from openai import AsyncOpenAI

from swarmkit import Agent, ModelError, SQLiteJournal, Swarm, tool
from swarmkit.messages import UserMessage
from swarmkit.models import ModelRequest, OpenAIModel

from ..models.fake_openai import (
    BASE_URL,
    EXACT_POLICY,
    MODEL,
    call_piece,
    chunk,
    completion,
    error,
    fake_api,
    sse,
    tool_call_json,
)

LOOKED_UP: list[str] = []


@tool
def lookup(query: str) -> str:
    """Look something up."""
    LOOKED_UP.append(query)
    return f"found {query}"


def _streamed_call(name: str) -> httpx.Response:
    piece = call_piece(0, arguments='{"query": "x"}', call_id="c1", name=name)
    return sse(
        chunk(tool_calls=[piece]),
        chunk(finish_reason="tool_calls"),
        chunk(usage=(1, 1), choices=False),
    )


def _streamed_text(text: str) -> httpx.Response:
    return sse(chunk(content=text), chunk(finish_reason="stop"), chunk(usage=(1, 1), choices=False))


async def test_a_lone_surrogate_in_a_tool_name_does_not_crash_stream(tmp_path: Path) -> None:
    """stream() answers the bad name with a tool error, sends it on as valid UTF-8 (U+FFFD),
    and the session journaled that way replays."""
    journal = SQLiteJournal(tmp_path / "j.db")
    api = fake_api(_streamed_call("look\ud800up"), _streamed_text("sorry"))
    swarm = Swarm([Agent(name="a", tools=[lookup])], "a", model=api.model, journal=journal)

    kinds = [event.kind async for event in swarm.stream("hi", session_id="s")]
    replayed = await swarm.replay("s")

    assert kinds[-1] == "run_finished"
    sent = api.body(1)["messages"]
    assert sent[2]["tool_calls"][0]["function"]["name"] == "look\ufffdup"
    assert "unknown tool" in sent[3]["content"].lower() or "no tool" in sent[3]["content"].lower()
    assert replayed.final_output == "sorry"


async def test_a_run_cut_after_a_surrogate_call_resumes(tmp_path: Path) -> None:
    """A streamed run its reader left right after the bad call's result resumes live."""
    journal = SQLiteJournal(tmp_path / "j.db")
    first = fake_api(_streamed_call("look\ud800up"))
    swarm = Swarm([Agent(name="a", tools=[lookup])], "a", model=first.model, journal=journal)
    async with aclosing(swarm.stream("hi", session_id="s")) as events:
        async for event in events:
            if event.kind == "tool_resulted":
                break

    api = fake_api(completion("done"))
    resumed = await swarm.with_model(api.model).resume("s")

    assert resumed.final_output == "done"
    assert api.body(0)["messages"][2]["tool_calls"][0]["function"]["name"] == "look\ufffdup"


async def test_repeated_call_ids_get_one_result_each() -> None:
    """Two calls with one id both run, and the model gets each result under its own id."""
    LOOKED_UP.clear()
    calls = [
        tool_call_json("c1", "lookup", '{"query": "a"}'),
        tool_call_json("c1", "lookup", '{"query": "b"}'),
    ]
    api = fake_api(completion(None, tool_calls=calls, finish_reason="tool_calls"), completion("ok"))
    swarm = Swarm([Agent(name="a", tools=[lookup])], "a", model=api.model)

    await swarm.run("hi")

    sent = api.body(1)["messages"]
    ids = [c["id"] for c in sent[2]["tool_calls"]]
    results = {m["tool_call_id"]: m["content"] for m in sent[3:]}
    assert LOOKED_UP == ["a", "b"]
    assert len(set(ids)) == 2 and ids[0] == "c1"
    assert [results[i] for i in ids] == ["found a", "found b"]


async def test_a_one_character_key_does_not_mangle_error_messages() -> None:
    """An API key of one letter is not masked (with a warning), so messages stay readable:
    the "k" of "make" is not turned into "***"."""
    router = respx.Router(base_url=BASE_URL, assert_all_mocked=True)
    router.post("/chat/completions").mock(side_effect=[error(400, "make the parameter right")])
    http = httpx.AsyncClient(transport=httpx.MockTransport(router.async_handler))
    client = AsyncOpenAI(api_key="k", base_url=BASE_URL, http_client=cast(Any, http))
    model = OpenAIModel(MODEL, client=client, retry=EXACT_POLICY)

    with (
        pytest.warns(UserWarning, match="shorter than 8 characters") as warned,
        pytest.raises(ModelError) as failed,
    ):
        await model.respond(ModelRequest(messages=(UserMessage(content="hi"),)))

    # Filed under the package, not a line of its source: Python prints the text alone.
    assert {w.filename for w in warned if "shorter than" in str(w.message)} == {"swarmkit"}
    assert "make the parameter right" in str(failed.value)
    assert "***" not in str(failed.value)
    json.dumps(str(failed.value))
