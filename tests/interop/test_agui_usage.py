"""RUN_FINISHED's usage has one entry per provider and model, in the objects and on the wire."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from swarmkit import Agent, Swarm
from swarmkit.agui import ag_ui_events, ag_ui_sse
from swarmkit.models import Usage
from swarmkit.testing import ScriptedModel, ScriptedTurn, text, tool_call, transfer

TRIAGE = Usage(prompt_tokens=11, completion_tokens=2, cache_read_tokens=4)
BILLING = Usage(prompt_tokens=30, completion_tokens=9, cache_write_tokens=6)
HELPER = Usage(prompt_tokens=5, completion_tokens=1)


def _swarm() -> Swarm:
    """Triage on one provider hands to billing on another, which asks a helper on a third
    model of the first provider, then answers: four calls, three (provider, model) pairs."""
    helper = Agent(
        name="helper",
        handoffs=[],
        model=ScriptedModel(text("42", usage=HELPER), name="gpt-mini", provider="openai"),
    )
    billing = Agent(
        name="billing",
        tools=[helper.as_tool()],
        handoffs=[],
        model=ScriptedModel(
            _with(tool_call("ask_helper", input="how much?"), BILLING),
            text("It is 42.", usage=BILLING),
            name="claude-x",
            provider="anthropic",
        ),
    )
    triage = Agent(
        name="triage",
        handoffs=[billing],
        model=ScriptedModel(_with(transfer("billing"), TRIAGE), name="gpt-big", provider="openai"),
    )
    return Swarm([triage, billing, helper], "triage")


def _with(turn: ScriptedTurn, usage: Usage) -> ScriptedTurn:
    """A scripted turn reporting ``usage``."""
    return dataclasses.replace(turn, usage=usage)


EXPECTED = [
    {
        "provider": "openai",
        "model": "gpt-big",
        "inputTokens": 11,
        "outputTokens": 2,
        "totalTokens": 13,
        "cachedInputTokens": 4,
        "cacheWriteInputTokens": 0,
    },
    {
        "provider": "anthropic",
        "model": "claude-x",
        "inputTokens": 60,
        "outputTokens": 18,
        "totalTokens": 78,
        "cachedInputTokens": 0,
        "cacheWriteInputTokens": 12,
    },
    {
        "provider": "openai",
        "model": "gpt-mini",
        "inputTokens": 5,
        "outputTokens": 1,
        "totalTokens": 6,
        "cachedInputTokens": 0,
        "cacheWriteInputTokens": 0,
    },
]
"""Billing's two calls add up; the helper's sub-run counts; the same provider's two models
stay apart."""


def _by_model(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(entries, key=lambda entry: (entry["provider"], entry["model"]))


async def test_usage_is_split_by_provider_and_model_with_sub_runs_counted() -> None:
    """ag_ui_events' RUN_FINISHED carries the three entries."""
    objects = [
        event async for event in ag_ui_events(_swarm().stream("refund"), thread_id="t", run_id="r")
    ]
    finished = objects[-1]
    assert finished["type"] == "RUN_FINISHED"
    assert _by_model(finished["usage"]) == _by_model(EXPECTED)


async def test_the_sse_form_carries_the_same_usage() -> None:
    """ag_ui_sse writes the entries directly; read back, they are the objects' entries."""
    messages = [m async for m in ag_ui_sse(_swarm().stream("refund"), thread_id="t", run_id="r")]
    finished = json.loads(messages[-1].removeprefix("data: ").strip())
    assert finished["type"] == "RUN_FINISHED"
    assert _by_model(finished["usage"]) == _by_model(EXPECTED)
