"""Swarms for the audit-trail command tests: `swarmkit run tests.audit_app:<name>`."""

from __future__ import annotations

from swarmkit import Agent, Swarm, swarm_factory, tool
from swarmkit.journal import SQLiteJournal
from swarmkit.messages import AssistantMessage, ToolCall, ToolMessage
from swarmkit.models import ModelRequest, ModelResponse, Usage


@tool(needs_approval=True)
def refund(amount: float) -> str:
    """Refund money."""
    return f"refunded {amount}"


class RefundModel:
    """Asks for a refund of 80, then answers "Done." once the tool has run."""

    name = "refund-model"

    async def respond(self, request: ModelRequest) -> ModelResponse:
        if isinstance(request.messages[-1], ToolMessage):
            message = AssistantMessage(content="Done.")
        else:
            call = ToolCall(id="c1", name="refund", arguments='{"amount": 80}')
            message = AssistantMessage(content=None, tool_calls=(call,))
        return ModelResponse(message=message, usage=Usage(prompt_tokens=3, completion_tokens=2))


@swarm_factory
def shop() -> Swarm:
    """Billing with an approval, journaling to its own file, shop.sqlite (in the current folder)."""
    billing = Agent(name="billing", tools=[refund])
    return Swarm([billing], "billing", model=RefundModel(), journal=SQLiteJournal("shop.sqlite"))
