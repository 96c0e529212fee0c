"""DeskModel: a deterministic offline stand-in for an LLM, written for the support desk."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Sequence
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

_ORDER = re.compile(r"\bO-\d+\b")
_CUSTOMER = re.compile(r"\bC-\d+\b")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+\.[\w.]+")
_AMOUNT = re.compile(r"(\d+(?:\.\d+)?)\s*(?:eur|euros|€)", re.IGNORECASE)
_PAYLOAD = re.compile(r"^Handoff payload \(\w+\): (\{.*\})$", re.MULTILINE)
_REASONS = ("damaged", "late", "duplicate")


class DeskModel:
    """Reads what a model would read (agent, conversation, tools offered) and does what a
    careful model would do at the desk; not a language model. Tokens follow text lengths."""

    name = "desk-model"

    async def respond(self, request: ModelRequest) -> ModelResponse:
        """Decide this turn from the request alone."""
        text, call = _decide(request)
        calls = (
            ()
            if call is None
            else (
                ToolCall(
                    id=f"call_{len(request.messages)}", name=call[0], arguments=json.dumps(call[1])
                ),
            )
        )
        message = AssistantMessage(content=text, tool_calls=calls)
        size = sum(len(str(getattr(m, "content", "") or "")) for m in request.messages) // 4
        out = len(text or "") // 4 + 8 * len(calls)
        return ModelResponse(
            message=message,
            usage=Usage(prompt_tokens=size, completion_tokens=out, total_tokens=size + out),
            finish_reason="tool_calls" if calls else "stop",
            model=self.name,
        )

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelDelta | ModelResponse]:
        """The same answer as one delta."""
        response = await self.respond(request)
        if response.message.content:
            yield TextDelta(text=response.message.content)
        yield response


Act = tuple[str | None, tuple[str, dict[str, Any]] | None]


def _decide(request: ModelRequest) -> Act:
    said = _latest_user(request.messages)
    results = _results_since_user(request.messages)
    tools = {spec.name for spec in request.tools}
    if request.agent == "billing":
        return _billing(_payload(request.messages), results)
    if request.agent == "accounts":
        return _accounts(said, results)
    return _triage(said, results, tools)


def _triage(said: str, results: dict[str, ToolMessage], tools: set[str]) -> Act:
    lowered = said.lower()
    if (
        "email" in lowered or "ticket" in lowered or "broken" in lowered
    ) and "transfer_to_accounts" in tools:
        return None, ("transfer_to_accounts", {})
    order = _ORDER.search(said)
    if "refund" in lowered or "money back" in lowered:
        if order is None:
            return "Which order is it about? Please give the order id.", None
        found = results.get("lookup_order")
        if found is None:
            return None, ("lookup_order", {"order_id": order.group()})
        if found.is_error:
            return f"I could not find order {order.group()}.", None
        data = json.loads(found.content)
        if data["status"] != "paid":
            return f"Order {order.group()} is {data['status']}, so it cannot be refunded.", None
        amount = _AMOUNT.search(said)
        reason = next((r for r in _REASONS if r in lowered), "other")
        value = float(amount.group(1)) if amount else data["amount"]
        return None, (
            "transfer_to_billing",
            {"order_id": order.group(), "amount": value, "reason": reason},
        )
    if order is not None:
        found = results.get("lookup_order")
        if found is None:
            return None, ("lookup_order", {"order_id": order.group()})
        if found.is_error:
            return f"I could not find order {order.group()}.", None
        return f"Order {order.group()} is {json.loads(found.content)['status']}.", None
    return "Hello! How can I help you today?", None


def _billing(payload: dict[str, Any] | None, results: dict[str, ToolMessage]) -> Act:
    if payload is None:
        return "I need a refund request to act on.", None
    done = results.get("issue_refund")
    if done is None:
        return None, ("issue_refund", dict(payload))
    if done.is_error:
        return f"The refund on {payload['order_id']} could not be issued: {done.content}", None
    return f"Refund issued: {payload['amount']:.2f} EUR on {payload['order_id']}.", None


def _accounts(said: str, results: dict[str, ToolMessage]) -> Act:
    email, customer = _EMAIL.search(said), _CUSTOMER.search(said)
    if "email" in said.lower():
        if email is None or customer is None:
            return "Please give your customer id and the new email address.", None
        done = results.get("update_email")
        if done is None:
            return None, ("update_email", {"customer_id": customer.group(), "email": email.group()})
        return (
            "Email updated."
            if not done.is_error
            else f"The email could not be changed: {done.content}"
        ), None
    ticket = results.get("open_ticket")
    if ticket is None:
        priority = "high" if "urgent" in said.lower() else "low"
        return None, ("open_ticket", {"summary": said[:80], "priority": priority})
    return f"I opened {ticket.content.split()[1]} for our engineers.", None


def _latest_user(messages: Sequence[Message]) -> str:
    return next((m.content for m in reversed(messages) if isinstance(m, UserMessage)), "")


def _results_since_user(messages: Sequence[Message]) -> dict[str, ToolMessage]:
    results: dict[str, ToolMessage] = {}
    for message in reversed(messages):
        if isinstance(message, UserMessage):
            break
        if isinstance(message, ToolMessage) and message.name not in results:
            results[message.name] = message
    return results


def _payload(messages: Sequence[Message]) -> dict[str, Any] | None:
    system = messages[0] if messages else None
    if not isinstance(system, SystemMessage):
        return None
    found = _PAYLOAD.search(system.content)
    return None if found is None else dict(json.loads(found.group(1)))
