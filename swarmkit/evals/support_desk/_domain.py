"""The support desk's database, tools, agents and swarm."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from swarmkit.agent import Agent
from swarmkit.context import RunContext
from swarmkit.evals._loading import load_tasks
from swarmkit.evals._tasks import Domain, TaskSet
from swarmkit.factory import swarm_factory
from swarmkit.graph import HandoffGraph
from swarmkit.handoffs import Handoff
from swarmkit.journal import Journal
from swarmkit.models import Model
from swarmkit.swarm import Swarm
from swarmkit.tools import ToolResult, tool

TASKS_FILE = Path(__file__).with_name("tasks.json")

POLICY = (
    "Refunds are issued only for paid orders, never above the amount paid, and only after a "
    "supervisor approves. Email changes need the customer id. Anything else becomes a ticket."
)


class RefundRequest(BaseModel):
    """What billing needs to refund an order; triage fills it in when it hands over."""

    order_id: str = Field(description="The order to refund, e.g. O-101.")
    amount: float = Field(description="The amount to refund, in euros.")
    reason: Literal["damaged", "late", "duplicate", "other"] = Field(description="Why.")


def _db(ctx: RunContext) -> dict[str, Any]:
    database: dict[str, Any] = ctx.deps
    return database


@tool
def lookup_order(ctx: RunContext, order_id: str) -> dict[str, Any]:
    """Look up an order by id: its customer, amount and status."""
    order = _db(ctx)["orders"].get(order_id)
    if order is None:
        raise ValueError(f"no order {order_id}")
    return {"order_id": order_id, **order}


@tool(needs_approval=True)
def issue_refund(ctx: RunContext, order_id: str, amount: float, reason: str) -> str:
    """Refund a paid order (a supervisor approves each refund)."""
    orders = _db(ctx)["orders"]
    order = orders.get(order_id)
    if order is None:
        raise ValueError(f"no order {order_id}")
    if order["status"] != "paid":
        raise ValueError(f"order {order_id} is {order['status']}, not paid")
    if amount > order["amount"]:
        raise ValueError(f"{amount} is more than the {order['amount']} paid")
    order["status"] = "refunded"
    _db(ctx)["refunds"].append({"order_id": order_id, "amount": amount, "reason": reason})
    return f"refunded {amount:.2f} EUR on {order_id}"


@tool
def update_email(ctx: RunContext, customer_id: str, email: str) -> str:
    """Change a customer's email address."""
    customer = _db(ctx)["customers"].get(customer_id)
    if customer is None:
        raise ValueError(f"no customer {customer_id}")
    customer["email"] = email
    return f"email of {customer_id} is now {email}"


@tool
def open_ticket(
    ctx: RunContext, summary: str, priority: Literal["low", "high"] = "low"
) -> ToolResult:
    """Open a ticket for the engineers."""
    tickets = _db(ctx)["tickets"]
    ticket = {"id": f"T-{len(tickets) + 1}", "summary": summary, "priority": priority}
    tickets.append(ticket)
    return ToolResult(output=f"ticket {ticket['id']} opened", update={"ticket": ticket["id"]})


DATABASE: dict[str, Any] = {
    "customers": {
        "C-1": {"name": "Ada Byrne", "email": "ada@example.org", "tier": "standard"},
        "C-2": {"name": "Lin Osei", "email": "lin@example.org", "tier": "business"},
        "C-3": {"name": "Marta Quist", "email": "marta@example.org", "tier": "standard"},
    },
    "orders": {
        "O-101": {"customer": "C-1", "amount": 40.0, "status": "paid"},
        "O-102": {"customer": "C-1", "amount": 15.5, "status": "refunded"},
        "O-103": {"customer": "C-2", "amount": 220.0, "status": "paid"},
        "O-104": {"customer": "C-3", "amount": 9.99, "status": "pending"},
        "O-105": {"customer": "C-3", "amount": 75.0, "status": "paid"},
    },
    "refunds": [],
    "tickets": [],
}

DOMAIN = Domain(
    name="support_desk",
    tools=(lookup_order, issue_refund, update_email, open_ticket),
    database=DATABASE,
    policy=POLICY,
)
"""The support desk domain: its tools, database and policy."""


def build_swarm(model: Model | str | None = None, *, journal: Journal | None = None) -> Swarm:
    """The desk: triage hands refunds to billing (typed), account matters to accounts; a rule
    sends everything from the account portal straight to accounts, with no model call."""
    from swarmkit.evals.support_desk._model import DeskModel  # noqa: PLC0415 - a peer module

    billing = Agent(
        name="billing",
        instructions=f"You issue refunds from the request you are handed. {POLICY}",
        tools=[issue_refund],
        handoffs=[],
    )
    accounts = Agent(
        name="accounts",
        instructions=f"You change account details and open tickets. {POLICY}",
        tools=[update_email, open_ticket],
        handoffs=[],
    )
    triage = Agent(
        name="triage",
        instructions=f"You greet customers, look up orders and route them. {POLICY}",
        tools=[lookup_order],
        handoffs=[Handoff(billing, input_type=RefundRequest), accounts],
    )
    graph = HandoffGraph()
    graph.add_edge("triage", "accounts", when="channel == 'account_portal'")
    return Swarm(
        [triage, billing, accounts],
        "triage",
        model=model if model is not None else DeskModel(),
        graph=graph,
        journal=journal,
        max_handoffs=3,
    )


@swarm_factory
def offline_swarm() -> Swarm:
    """The desk on DeskModel, for the command: ``swarmkit eval TASKS --swarm`` naming it."""
    return build_swarm()


def tasks() -> TaskSet:
    """The desk's tasks (``tasks.json`` beside this module)."""
    return load_tasks(TASKS_FILE, domain=DOMAIN)
