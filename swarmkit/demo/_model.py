"""DemoModel: a deterministic offline stand-in for an LLM, written for the support swarm."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from swarmkit.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from swarmkit.models import ModelDelta, ModelRequest, ModelResponse, TextDelta, Usage

DEMO_MODEL_NAME = "offline-demo-model (deterministic stand-in, not an LLM)"
"""How the stand-in names itself wherever a model name is shown."""

_INVOICE = re.compile(r"\bINV-\d+\b", re.IGNORECASE)
_PAYLOAD = re.compile(r"^Handoff payload \(\w+\): (\{.*\})$", re.MULTILINE)
_SERVICES = ("dashboard", "api", "email", "billing-portal")


@dataclass(frozen=True, kw_only=True, slots=True)
class _Reading:
    """What the stand-in takes from a request, as a model would read it."""

    agent: str
    """The agent the request is for."""
    ticket: str
    """The customer's latest message."""
    tools: frozenset[str]
    """The names of the tools offered."""
    results: Mapping[str, dict[str, Any]] = field(default_factory=dict)
    """The latest result of each tool in the conversation; ``{"error": ...}`` for a failure."""
    payload: dict[str, Any] | None = None
    """The typed handoff payload the agent received, if any."""


@dataclass(frozen=True, kw_only=True, slots=True)
class _Act:
    """What the stand-in answers: text, or one tool call."""

    text: str | None = None
    """The answer's text."""
    tool: str | None = None
    """The tool to call."""
    arguments: Mapping[str, Any] = field(default_factory=dict)
    """The tool call's arguments."""


class DemoModel:
    """A deterministic stand-in for an LLM, so the demo runs offline; it is not a language model.

    It reads what a model would read (the agent, the conversation and the tools offered) and
    does what a sensible model would do with the support swarm's instructions: triage looks up
    an invoice and hands a refund to billing with a typed payload, billing issues it, tech
    support checks the service and opens a ticket, the human desk opens a ticket. Token counts
    are derived from text lengths, so they are deterministic too.
    """

    def __init__(self) -> None:
        self.name = DEMO_MODEL_NAME
        """The stand-in's name, saying what it is."""
        self.requests: list[ModelRequest] = []
        """Every request it answered, in order."""

    async def respond(self, request: ModelRequest) -> ModelResponse:
        """Decide this turn from the request alone."""
        self.requests.append(request)
        act = _decide(_read(request))
        calls: tuple[ToolCall, ...] = ()
        if act.tool is not None:
            call_id = f"call_{request.agent}_{len(request.messages)}"
            arguments = json.dumps(dict(act.arguments))
            calls = (ToolCall(id=call_id, name=act.tool, arguments=arguments),)
        message = AssistantMessage(content=act.text, tool_calls=calls)
        return ModelResponse(
            message=message,
            usage=_usage(request, message),
            finish_reason="tool_calls" if calls else "stop",
            model="offline-demo-model",
        )

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelDelta | ModelResponse]:
        """The same answer, its text as one delta, then the response."""
        response = await self.respond(request)
        if response.message.content:
            yield TextDelta(text=response.message.content)
        yield response


# -- reading a request ---------------------------------------------------------------------


def _read(request: ModelRequest) -> _Reading:
    return _Reading(
        agent=request.agent,
        ticket=_latest_user_text(request.messages),
        tools=frozenset(spec.name for spec in request.tools),
        results=_tool_results(request.messages),
        payload=_payload(request.messages),
    )


def _latest_user_text(messages: tuple[Message, ...]) -> str:
    for message in reversed(messages):
        if isinstance(message, UserMessage):
            return message.content
    return ""


def _tool_results(messages: tuple[Message, ...]) -> dict[str, dict[str, Any]]:
    results: dict[str, dict[str, Any]] = {}
    for message in messages:
        if isinstance(message, ToolMessage):
            results[message.name] = _parsed_result(message)
    return results


def _parsed_result(message: ToolMessage) -> dict[str, Any]:
    if message.is_error:
        return {"error": message.content}
    try:
        value = json.loads(message.content)
    except ValueError:
        return {"text": message.content}
    return value if isinstance(value, dict) else {"value": value}


def _payload(messages: tuple[Message, ...]) -> dict[str, Any] | None:
    # The loop tells a receiving agent its payload in the system message, as a model reads it.
    system = messages[0] if messages else None
    if not isinstance(system, SystemMessage):
        return None
    found = _PAYLOAD.search(system.content)
    if found is None:
        return None
    value = json.loads(found.group(1))
    return value if isinstance(value, dict) else None


# -- deciding ------------------------------------------------------------------------------


def _decide(reading: _Reading) -> _Act:
    match reading.agent:
        case "triage":
            return _triage(reading)
        case "billing":
            return _billing(reading)
        case "tech_support":
            return _tech_support(reading)
        case "human":
            return _human(reading)
        case _:
            return _Act(
                text=f"(offline demo model) I only play the support demo's agents, "
                f"not {reading.agent!r}."
            )


def _triage(reading: _Reading) -> _Act:
    text = reading.ticket.lower()
    invoice = _invoice_id(reading.ticket)
    if _asks_for_a_person(text) and "transfer_to_human" in reading.tools:
        summary = f"Customer asks for a person: {_first_sentence(reading.ticket)}"
        return _Act(tool="transfer_to_human", arguments={"message": summary})
    if "refund" in text and invoice and "transfer_to_billing" in reading.tools:
        found = reading.results.get("lookup_invoice")
        if found is None:
            return _Act(tool="lookup_invoice", arguments={"invoice_id": invoice})
        if "error" not in found:
            refund = {"invoice_id": invoice, "amount_eur": found["amount_eur"]}
            return _Act(tool="transfer_to_billing", arguments={**refund, "reason": _reason(text)})
    if _reports_a_fault(text) and "transfer_to_tech_support" in reading.tools:
        note = f"Possible outage: {_first_sentence(reading.ticket)}"
        return _Act(tool="transfer_to_tech_support", arguments={"message": note})
    return _Act(
        text="Thanks for getting in touch! Could you tell me the invoice number, or which "
        "service is not working, so I can pass you to the right specialist?"
    )


def _billing(reading: _Reading) -> _Act:
    refund = reading.results.get("issue_refund")
    if refund is not None:
        return _Act(text=_refund_answer(refund))
    if reading.payload is not None and "issue_refund" in reading.tools:
        return _Act(tool="issue_refund", arguments=reading.payload)
    invoice = reading.results.get("lookup_invoice")
    number = _invoice_id(reading.ticket)
    if invoice is None and number:
        return _Act(tool="lookup_invoice", arguments={"invoice_id": number})
    if invoice is not None and "error" not in invoice:
        return _Act(text=_charge_answer(invoice))
    return _Act(
        text="Could you send me the invoice number (it starts with INV-)? Then I can "
        "check the charge for you."
    )


def _tech_support(reading: _Reading) -> _Act:
    service = _service(reading.ticket.lower())
    status = reading.results.get("check_service_status")
    if status is None:
        return _Act(tool="check_service_status", arguments={"service": service})
    if status.get("status", "operational") == "operational":
        return _Act(
            text=f"The {service} is fully operational on our side. Please sign out, clear "
            "your browser cache and try again; if it still fails, reply with a screenshot."
        )
    ticket = reading.results.get("open_ticket")
    if ticket is None:
        summary = f"{status.get('incident')}: {service} {status.get('status')} for customer"
        arguments = {"queue": "tech", "summary": summary, "priority": "high"}
        return _Act(tool="open_ticket", arguments=arguments)
    return _Act(
        text=f"You're right: incident {status.get('incident')} is open since "
        f"{status.get('since')}. {status.get('summary')} I opened ticket "
        f"{ticket.get('ticket_id')} so you get an update {ticket.get('first_response')}."
    )


def _human(reading: _Reading) -> _Act:
    ticket = reading.results.get("open_ticket")
    if ticket is None:
        summary = _first_sentence(reading.ticket)
        arguments = {"queue": "human", "summary": summary, "priority": "normal"}
        return _Act(tool="open_ticket", arguments=arguments)
    return _Act(
        text=f"I'm sorry this took several messages. A person from our support team will "
        f"contact you {ticket.get('first_response')}; your ticket is {ticket.get('ticket_id')}."
    )


def _refund_answer(refund: Mapping[str, Any]) -> str:
    if "error" in refund:
        return f"I could not issue the refund ({refund['error']}); a colleague will follow up."
    return (
        f"Done: refund {refund['refund_id']} of {refund['amount_eur']:.2f} EUR for invoice "
        f"{refund['invoice_id']} is issued and reaches your card within "
        f"{refund['arrives_in_days']} business days."
        + (" Sorry about the double charge!" if refund.get("reason") == "duplicate_charge" else "")
    )


def _charge_answer(invoice: Mapping[str, Any]) -> str:
    items = "; ".join(f"{name}: {amount:.2f} EUR" for name, amount in invoice["line_items"])
    return (
        f"Invoice {invoice['invoice_id']} totals {invoice['amount_eur']:.2f} EUR: {items}. "
        "The extra seats were added this month, which is why it is higher than usual."
    )


# -- reading the ticket ----------------------------------------------------------------------


def _invoice_id(text: str) -> str | None:
    found = _INVOICE.search(text)
    return found.group(0).upper() if found else None


def _asks_for_a_person(text: str) -> bool:
    return any(word in text for word in ("a person", "a human", "speak to", "manager"))


def _reports_a_fault(text: str) -> bool:
    words = ("down", "error", "502", "500", "outage", "not loading", "can't log", "cannot log")
    return any(word in text for word in words)


def _reason(text: str) -> str:
    if "twice" in text or "duplicate" in text or "double" in text:
        return "duplicate_charge"
    if "cancel" in text:
        return "cancelled_subscription"
    if "outage" in text or "down" in text:
        return "service_outage"
    return "other"


def _service(text: str) -> str:
    return next((service for service in _SERVICES if service in text), "dashboard")


def _first_sentence(text: str) -> str:
    sentence = re.split(r"(?<=[.!?])\s", text.strip(), maxsplit=1)[0]
    return sentence if len(sentence) <= 120 else sentence[:117] + "..."


def _usage(request: ModelRequest, message: AssistantMessage) -> Usage:
    # About four characters a token, as for English text; only determinism matters here.
    read = sum(len(str(getattr(m, "content", "") or "")) for m in request.messages)
    read += sum(len(json.dumps(dict(spec.parameters))) for spec in request.tools)
    written = len(message.content or "") + sum(len(c.arguments) for c in message.tool_calls)
    prompt, completion = read // 4 + 1, written // 4 + 1
    return Usage(
        prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion
    )
