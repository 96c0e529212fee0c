"""Swarms the Temporal tests run, importable by name from worker processes."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from swarmkit import Agent, Budget, Handoff, HandoffGraph, Ledger, Swarm, filters, tool
from swarmkit.context import RunContext
from swarmkit.effects import Happened, NotDone
from swarmkit.messages import AssistantMessage, ToolCall, ToolMessage
from swarmkit.models import ModelRequest, ModelResponse, Usage
from swarmkit.testing import ScriptedModel, ScriptedTurn, text, tool_call, transfer

STATE_DIR = "SWARMKIT_TEST_STATE"
GATE_PORT = "SWARMKIT_TEST_GATE_PORT"
"""The loopback port of the test's gates (``tests.temporal.harness.gate_server``)."""
"""The environment variable naming the folder the kill tests' tools and model write to."""


class Refund(BaseModel):
    """What billing needs to refund an order."""

    order_id: str
    amount: float


@tool
def lookup_order(order_id: str) -> dict[str, object]:
    """Look an order up."""
    return {"order_id": order_id, "status": "delivered", "amount": 42.0}


@tool(durable=False)
def add(a: int, b: int) -> int:
    """Add two numbers (pure: runs inside the workflow)."""
    return a + b


def support_swarm(
    model: object = None, *, instructions: str = "Refund orders.", **options: Any
) -> Swarm:
    """Triage looks the order up and hands a typed refund to billing; a VIP rule never fires."""
    billing = Agent(name="billing", instructions=instructions)
    triage = Agent(
        name="triage",
        instructions="Route customers.",
        tools=[lookup_order, add],
        handoffs=[
            Handoff(agent=billing, input_type=Refund, input_filter=filters.remove_tool_calls)
        ],
    )
    graph = HandoffGraph()
    graph.add_edge("triage", "billing", when="context.vip == true")
    return Swarm(
        [triage, billing],
        "triage",
        graph=graph,
        model=ScriptedModel(name="scripted") if model is None else model,  # type: ignore[arg-type]
        **options,
    )


def support_script() -> list[ScriptedTurn]:
    """The model's turns for support_swarm: a tool, a typed handoff, an answer."""
    return [
        tool_call("lookup_order", order_id="A-1"),
        tool_call("add", a=40, b=2),
        transfer("billing", order_id="A-1", amount=42.0),
        text("Refunded 42.0 for A-1."),
    ]


support = support_swarm()
"""The support swarm as a registry entry (``tests.temporal.swarms:support``)."""


def routed_swarm() -> Swarm:
    """A router whose unconditional rule hands every session to the answerer."""
    graph = HandoffGraph()
    graph.add_edge("router", "answerer")
    router = Agent(name="router", instructions="Route.")
    answerer = Agent(name="answerer", instructions="Answer.")
    return Swarm([router, answerer], "router", graph=graph, model=ScriptedModel(name="scripted"))


# -- the kill tests: a tool and a model that block until the test opens a gate ---------------


def _state() -> Path:
    return Path(os.environ[STATE_DIR])


async def _gate(name: str) -> None:
    """Wait at gate ``name`` until the test opens it (``tests.temporal.harness.Gates``)."""
    import asyncio  # noqa: PLC0415

    reader, writer = await asyncio.open_connection("127.0.0.1", int(os.environ[GATE_PORT]))
    writer.write(f"{name}\n".encode())
    await writer.drain()
    await reader.readline()
    writer.close()


@tool
async def slow_lookup(order_id: str, context: RunContext) -> str:
    """Look an order up slowly, noting the idempotency key of each attempt."""
    with (_state() / "keys.txt").open("a") as keys:
        keys.write(f"{context.idempotency_key}\n")
    await _gate("tool")
    return f"order {order_id}: delivered"


class GatedModel:
    """A model whose answer follows from the request (so a new worker process continues it):
    first the tool, then the answer; the second call waits at a gate."""

    name = "gated"

    async def respond(self, request: ModelRequest) -> ModelResponse:
        """Call slow_lookup first; answer once its result is in."""
        done = sum(isinstance(m, ToolMessage) for m in request.messages)
        with (_state() / "calls.txt").open("a") as calls:
            calls.write(f"{done}\n")
        if done == 0:
            call = ToolCall(id="call_1", name="slow_lookup", arguments='{"order_id": "A-1"}')
            message = AssistantMessage(tool_calls=(call,))
        else:
            if os.environ.get("SWARMKIT_GATE_MODEL") == "1":
                await _gate("model")
            message = AssistantMessage(content="A-1 was delivered.")
        return ModelResponse(message=message, usage=Usage(total_tokens=1), model=self.name)


clerk = Swarm(
    [Agent(name="clerk", instructions="Look orders up.", tools=[slow_lookup])],
    "clerk",
    model=GatedModel(),
)
"""The kill tests' swarm (``tests.temporal.swarms:clerk``)."""


def metered() -> Swarm:
    """The clerk with a spend ledger in the state folder (``tests.temporal.swarms:metered``,
    built on the worker that serves it: the folder is the worker's)."""
    ledger = Ledger(_state() / "spend.sqlite", [Budget(name="calls", limit=10, unit="calls")])
    return clerk.with_ledger(ledger)


# -- the effect kill tests: a payment noted in a ledger file, then a gate -----------------------


def paid_keys() -> list[str]:
    """The idempotency keys of every payment the ledger received (the outside system)."""
    ledger = _state() / "ledger.txt"
    return ledger.read_text().split() if ledger.exists() else []


def _reconcile_payment(key: str, arguments: dict[str, Any]) -> Happened | NotDone:
    """Ask the ledger whether the payment with this key went through."""
    return Happened(result=f"paid {arguments['order']}") if key in paid_keys() else NotDone()


async def _pay(order: str, context: RunContext) -> str:
    """Take a payment for an order, then wait at the tool gate (where a test kills)."""
    with (_state() / "ledger.txt").open("a") as ledger:
        ledger.write(f"{context.idempotency_key}\n")
    await _gate("tool")
    return f"paid {order}"


class PayingModel:
    """Calls pay for order A-1 first; answers once its result is in."""

    name = "paying"

    async def respond(self, request: ModelRequest) -> ModelResponse:
        """The next step, decided from the request alone."""
        results = [m for m in request.messages if isinstance(m, ToolMessage)]
        if not results:
            call = ToolCall(id="call_pay", name="pay", arguments='{"order": "A-1"}')
            message = AssistantMessage(tool_calls=(call,))
        else:
            message = AssistantMessage(content=f"done: {results[-1].content}")
        return ModelResponse(message=message, usage=Usage(total_tokens=1), model=self.name)


def _cashier(reconcile: Any) -> Swarm:
    pay = tool(effect=True, reconcile=reconcile, name="pay")(_pay)
    agent = Agent(name="cashier", instructions="Take payments.", tools=[pay])
    return Swarm([agent], "cashier", model=PayingModel())


cashier = _cashier(_reconcile_payment)
"""Pays with a reconcile function (``tests.temporal.swarms:cashier``)."""
teller = _cashier(None)
"""Pays without one: a lost attempt waits for a person (``tests.temporal.swarms:teller``)."""
