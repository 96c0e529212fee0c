"""Swarms for the CLI tests, imported by `swarmkit run tests.cli_app:<name>` and friends."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

from swarmkit import Agent, ModelError, Swarm, swarm_factory
from swarmkit.demo import DemoModel, build_support_swarm, support_graph
from swarmkit.models import ModelRequest, ModelResponse
from swarmkit.testing import ScriptedModel, text

swarm = build_support_swarm(DemoModel())
"""The demo's support swarm on the offline stand-in model."""

not_a_swarm = {"agents": ["triage"]}
"""Something that is not a Swarm."""


@swarm_factory
def make_swarm() -> Swarm:
    """A marked factory with no arguments, as `swarmkit run tests.cli_app:make_swarm` accepts."""
    return build_support_swarm(DemoModel())


def swarm_for(customer: str) -> Swarm:
    """A factory that needs an argument, which the CLI cannot call."""
    return build_support_swarm(DemoModel())


def _changed() -> Swarm:
    agents = [
        replace(agent, instructions="Route tickets.") if name == "triage" else agent
        for name, agent in swarm.agents.items()
    ]
    return Swarm(agents, "triage", model=DemoModel(), graph=support_graph())


changed_swarm = _changed()
"""The support swarm with triage's instructions changed: replaying its sessions diverges."""


class _UnreachableModel:
    """A model whose API is down for good."""

    name = "unreachable"

    async def respond(self, request: ModelRequest) -> ModelResponse:
        raise ModelError("the API is unreachable", model=self.name, attempts=3)


failing_swarm = Swarm(
    [Agent(name="solo", instructions="Answer.")], "solo", model=_UnreachableModel()
)
"""A swarm whose every run stops with stop_reason="error"."""


approval_swarm = Swarm(
    list(swarm.agents.values()),
    "triage",
    model=DemoModel(),
    graph=support_graph(),
    interrupt_before=["billing"],
)
"""The support swarm pausing for a human before each handoff to billing."""


class _HangingModel:
    """A model that says it was called (on stdout, for the test to see) and never answers."""

    name = "hanging"

    async def respond(self, request: ModelRequest) -> ModelResponse:
        print("hanging model called", flush=True)
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


_SOLO = [Agent(name="solo", instructions="Answer.")]

hanging_swarm = Swarm(_SOLO, "solo", model=_HangingModel())
"""A swarm whose model call waits until the run is stopped (Ctrl-C)."""

answering_swarm = Swarm(_SOLO, "solo", model=ScriptedModel(text("the answer")))
"""The same agents on a model that answers: the swarm a stopped session is resumed on."""


@swarm_factory
def wrong_factory() -> Any:
    """A marked factory that returns something that is not a Swarm."""
    return {"agents": ["solo"]}


served_swarm = Swarm(
    [Agent(name="greeter", description="Says hello.")],
    "greeter",
    model=ScriptedModel(text("Hello from the served swarm.")),
)
"""A one-answer swarm for `swarmkit serve a2a` and `swarmkit serve ag-ui`."""
