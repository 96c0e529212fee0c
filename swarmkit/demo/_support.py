"""The demo's customer-support swarm: triage hands tickets to billing, tech support or a human."""

from __future__ import annotations

import hashlib
from typing import Any, Literal

from pydantic import BaseModel, Field

from swarmkit.agent import Agent
from swarmkit.graph import HandoffGraph
from swarmkit.handoffs import Handoff
from swarmkit.models import Model
from swarmkit.swarm import Swarm
from swarmkit.tools import tool

RefundReason = Literal["duplicate_charge", "service_outage", "cancelled_subscription", "other"]
"""Why a customer is owed a refund."""

Service = Literal["api", "dashboard", "email", "billing-portal"]
"""The services whose status tech support can check."""


class RefundRequest(BaseModel):
    """What billing needs to issue a refund; triage fills it in when it hands a refund over."""

    invoice_id: str = Field(description="The invoice to refund, e.g. INV-1042.")
    amount_eur: float = Field(description="The amount to refund, in euros.")
    reason: RefundReason = Field(description="Why the customer is owed the refund.")


# The demo's back office: fixed data, so every run of the demo tells the same story.
_INVOICES: dict[str, dict[str, Any]] = {
    "INV-1042": {
        "invoice_id": "INV-1042",
        "customer": "Dana Ruiz",
        "plan": "Team (monthly)",
        "amount_eur": 49.0,
        "status": "paid",
        "times_charged": 2,
        "line_items": [["Team plan, May", 49.0]],
    },
    "INV-2001": {
        "invoice_id": "INV-2001",
        "customer": "Sam Okafor",
        "plan": "Team (monthly)",
        "amount_eur": 99.0,
        "status": "paid",
        "times_charged": 1,
        "line_items": [["Team plan, May", 49.0], ["5 extra seats", 50.0]],
    },
}

_INCIDENTS: dict[str, dict[str, Any]] = {
    "dashboard": {
        "status": "degraded",
        "incident": "INC-2207",
        "since": "09:12 UTC",
        "summary": "Dashboard logins fail with HTTP 502 for some EU customers.",
    },
}


@tool
def lookup_invoice(invoice_id: str) -> dict[str, Any]:
    """Look up an invoice: customer, plan, amount, status and how many times it was charged.

    Args:
        invoice_id: The invoice number, e.g. INV-1042.
    """
    return dict(_invoice(invoice_id))


@tool
def issue_refund(invoice_id: str, amount_eur: float, reason: RefundReason) -> dict[str, Any]:
    """Refund part or all of a paid invoice to the customer's card.

    Args:
        invoice_id: The invoice to refund.
        amount_eur: The amount to refund in euros; at most the invoice amount.
        reason: Why the refund is owed.
    """
    invoice = _invoice(invoice_id)
    if not 0 < amount_eur <= invoice["amount_eur"]:
        raise ValueError(
            f"amount {amount_eur:.2f} EUR is not between 0 and the invoice's "
            f"{invoice['amount_eur']:.2f} EUR"
        )
    return {
        "refund_id": "RF-" + _digits(invoice["invoice_id"], reason),
        "invoice_id": invoice["invoice_id"],
        "amount_eur": amount_eur,
        "reason": reason,
        "status": "issued",
        "arrives_in_days": 5,
    }


@tool
def check_service_status(service: Service) -> dict[str, Any]:
    """The current status of one Acme Cloud service, with the open incident if there is one.

    Args:
        service: The service the customer has trouble with.
    """
    incident = _INCIDENTS.get(service)
    if incident is None:
        return {"service": service, "status": "operational"}
    return {"service": service, **incident}


@tool
def open_ticket(
    queue: Literal["tech", "human"], summary: str, priority: Literal["low", "normal", "high"]
) -> dict[str, Any]:
    """Open a support ticket so the customer gets updates; returns its id and response time.

    Args:
        queue: "tech" for engineers, "human" for a person from the support team.
        summary: One line saying what the customer needs.
        priority: How urgent it is.
    """
    first_response = {"high": "within 2 hours", "normal": "within 1 business day"}
    return {
        "ticket_id": "T-" + _digits(queue, summary),
        "queue": queue,
        "priority": priority,
        "first_response": first_response.get(priority, "within 3 business days"),
    }


def _invoice(invoice_id: str) -> dict[str, Any]:
    invoice = _INVOICES.get(invoice_id.strip().upper())
    if invoice is None:
        raise LookupError(f"no invoice {invoice_id!r}; ask the customer for the number on it")
    return invoice


def _digits(*parts: str) -> str:
    return str(int(hashlib.sha256("|".join(parts).encode()).hexdigest()[:8], 16) % 100000).zfill(5)


TRIAGE_INSTRUCTIONS = """\
You are the triage agent of Acme Cloud's customer support. Read the customer's ticket and route \
it to the right specialist; do not solve it yourself.
- A refund request that names an invoice: look the invoice up with lookup_invoice, then call \
transfer_to_billing with the invoice id, the amount to refund in euros and the reason.
- An outage, an error or anything that stopped working: transfer_to_tech_support.
- A customer who asks for a person, a complaint, or closing an account: transfer_to_human with \
a one-line summary.
- If you cannot tell what the customer needs, ask one short clarifying question."""

BILLING_INSTRUCTIONS = """\
You are Acme Cloud's billing specialist; you can look up invoices and issue refunds.
When you receive a RefundRequest, issue the refund with issue_refund and tell the customer the \
refund id, the amount and when it arrives. For a question about a charge, look the invoice up \
and explain its line items. Escalate to a human only for a dispute you cannot resolve. Answer \
in two or three sentences."""

TECH_SUPPORT_INSTRUCTIONS = """\
You are Acme Cloud's technical support engineer. Check the affected service with \
check_service_status. If there is an incident, open a high-priority ticket in the "tech" queue \
with open_ticket so the customer gets updates, and tell them the incident id, what is affected \
and the ticket id. If the service is operational, suggest one concrete troubleshooting step. \
Answer in two or three sentences."""

HUMAN_INSTRUCTIONS = """\
You are the hand-over desk to a person on the support team. Open a ticket in the "human" queue \
with open_ticket summarising the request, then tell the customer when a person will contact \
them, quoting the ticket id. Do not try to resolve the request yourself."""


def support_graph() -> HandoffGraph:
    """The rules: tickets the caller already categorised skip triage's model call."""
    graph = HandoffGraph()
    graph.add_edge("triage", "billing", when="category == 'billing'")
    graph.add_edge("triage", "tech_support", when="category == 'outage'")
    return graph


def build_support_swarm(model: Model) -> Swarm:
    """The customer-support swarm: triage -> billing / tech_support / human, on ``model``."""
    refund = Handoff(
        agent="billing",
        input_type=RefundRequest,
        description="Hand a refund request to billing, with the invoice, amount and reason.",
    )
    triage = Agent(
        name="triage",
        instructions=TRIAGE_INSTRUCTIONS,
        tools=[lookup_invoice],
        handoffs=[refund, "tech_support", "human"],
        description="Reads new tickets and routes them.",
    )
    billing = Agent(
        name="billing",
        instructions=BILLING_INSTRUCTIONS,
        tools=[lookup_invoice, issue_refund],
        handoffs=["human"],
        description="Invoices, charges and refunds.",
    )
    tech_support = Agent(
        name="tech_support",
        instructions=TECH_SUPPORT_INSTRUCTIONS,
        tools=[check_service_status, open_ticket],
        handoffs=["human"],
        description="Outages, errors and anything that stopped working.",
    )
    human = Agent(
        name="human",
        instructions=HUMAN_INSTRUCTIONS,
        tools=[open_ticket],
        handoffs=[],
        description="A person from the support team, for complaints and account closures.",
    )
    agents = [triage, billing, tech_support, human]
    return Swarm(agents, "triage", model=model, graph=support_graph(), max_handoffs=3)
