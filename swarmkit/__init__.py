"""swarmkit: multi-agent swarms with rule-first handoffs, exact limits and replayable journals."""

import typing as _typing

from swarmkit._lazy import lazy_getattr as _lazy_getattr

if _typing.TYPE_CHECKING:
    from swarmkit import filters, queues, testing
    from swarmkit.agent import Agent
    from swarmkit.conditions import Condition, compile_condition
    from swarmkit.config import SwarmConfig
    from swarmkit.context import RunContext
    from swarmkit.conversation import NextTurn
    from swarmkit.exceptions import (
        ConditionSyntaxError,
        ConfigurationError,
        GraphCycleError,
        HandoffCycleError,
        HandoffPayloadError,
        InputFilterError,
        JournalError,
        LedgerError,
        MaxHandoffsExceeded,
        MaxTurnsExceeded,
        ModelError,
        PeopleQueueError,
        ReplayDivergenceError,
        RunError,
        SessionBusyError,
        SessionNotFoundError,
        SwarmkitError,
        ToolArgumentsError,
        ToolError,
        ToolExecutionError,
        ToolServerError,
    )
    from swarmkit.factory import swarm_factory
    from swarmkit.graph import Edge, HandoffGraph, RouteExplanation
    from swarmkit.handoffs import Handoff
    from swarmkit.interrupts import FieldProblem, PendingDecision, approve, edit, reject
    from swarmkit.journal import InMemoryJournal, SQLiteJournal
    from swarmkit.ledger import Budget, Ledger, Price
    from swarmkit.limits import LimitBreach, UsageLimits
    from swarmkit.models import (
        AnthropicModel,
        GeminiModel,
        Model,
        ModelSettings,
        OpenAIModel,
        OpenAIResponsesModel,
        RetryPolicy,
        Timeouts,
    )
    from swarmkit.people import PeopleQueue
    from swarmkit.result import HandoffRecord, NextTurnDecision, RuleDecision, RunResult
    from swarmkit.swarm import Swarm
    from swarmkit.testing import RecordingModel, ScriptedModel
    from swarmkit.tools import FunctionTool, ToolResult, tool

__version__ = "0.2.0"
"""The version of the distribution ``swarmkit-agents`` (the import name is ``swarmkit``)."""

__all__ = [
    "Agent",
    "AnthropicModel",
    "Budget",
    "Condition",
    "ConditionSyntaxError",
    "ConfigurationError",
    "Edge",
    "FieldProblem",
    "FunctionTool",
    "GeminiModel",
    "GraphCycleError",
    "Handoff",
    "HandoffCycleError",
    "HandoffGraph",
    "HandoffPayloadError",
    "HandoffRecord",
    "InMemoryJournal",
    "InputFilterError",
    "JournalError",
    "Ledger",
    "LedgerError",
    "LimitBreach",
    "MaxHandoffsExceeded",
    "MaxTurnsExceeded",
    "Model",
    "ModelError",
    "ModelSettings",
    "NextTurn",
    "NextTurnDecision",
    "OpenAIModel",
    "OpenAIResponsesModel",
    "PendingDecision",
    "PeopleQueue",
    "PeopleQueueError",
    "Price",
    "RecordingModel",
    "ReplayDivergenceError",
    "RetryPolicy",
    "RouteExplanation",
    "RuleDecision",
    "RunContext",
    "RunError",
    "RunResult",
    "SQLiteJournal",
    "ScriptedModel",
    "SessionBusyError",
    "SessionNotFoundError",
    "Swarm",
    "SwarmConfig",
    "SwarmkitError",
    "Timeouts",
    "ToolArgumentsError",
    "ToolError",
    "ToolExecutionError",
    "ToolResult",
    "ToolServerError",
    "UsageLimits",
    "__version__",
    "approve",
    "compile_condition",
    "edit",
    "filters",
    "queues",
    "reject",
    "swarm_factory",
    "testing",
    "tool",
]


# Where each public name lives: `import swarmkit` loads none of them, so a command that only
# prints its help (or lists sessions) does not pay for Pydantic models it never uses.
_HOMES: dict[str, str] = {
    "Agent": "swarmkit.agent",
    "Condition": "swarmkit.conditions",
    "compile_condition": "swarmkit.conditions",
    "RunContext": "swarmkit.context",
    **dict.fromkeys(
        [
            "ConditionSyntaxError",
            "ConfigurationError",
            "GraphCycleError",
            "HandoffCycleError",
            "HandoffPayloadError",
            "InputFilterError",
            "JournalError",
            "LedgerError",
            "MaxHandoffsExceeded",
            "MaxTurnsExceeded",
            "ModelError",
            "PeopleQueueError",
            "ReplayDivergenceError",
            "RunError",
            "SessionBusyError",
            "SessionNotFoundError",
            "SwarmkitError",
            "ToolArgumentsError",
            "ToolError",
            "ToolExecutionError",
            "ToolServerError",
        ],
        "swarmkit.exceptions",
    ),
    "swarm_factory": "swarmkit.factory",
    "Edge": "swarmkit.graph",
    "HandoffGraph": "swarmkit.graph",
    "RouteExplanation": "swarmkit.graph",
    "Handoff": "swarmkit.handoffs",
    "FieldProblem": "swarmkit.interrupts",
    "PendingDecision": "swarmkit.interrupts",
    "approve": "swarmkit.interrupts",
    "edit": "swarmkit.interrupts",
    "reject": "swarmkit.interrupts",
    "InMemoryJournal": "swarmkit.journal",
    "Budget": "swarmkit.ledger",
    "Ledger": "swarmkit.ledger",
    "Price": "swarmkit.ledger",
    "SQLiteJournal": "swarmkit.journal",
    "LimitBreach": "swarmkit.limits",
    "UsageLimits": "swarmkit.limits",
    "AnthropicModel": "swarmkit.models",
    "GeminiModel": "swarmkit.models",
    "Model": "swarmkit.models",
    "ModelSettings": "swarmkit.models",
    "NextTurn": "swarmkit.conversation",
    "NextTurnDecision": "swarmkit.result",
    "OpenAIModel": "swarmkit.models",
    "OpenAIResponsesModel": "swarmkit.models",
    "RetryPolicy": "swarmkit.models",
    "Timeouts": "swarmkit.models",
    "HandoffRecord": "swarmkit.result",
    "RuleDecision": "swarmkit.result",
    "RunResult": "swarmkit.result",
    "Swarm": "swarmkit.swarm",
    "SwarmConfig": "swarmkit.config",
    "RecordingModel": "swarmkit.testing",
    "ScriptedModel": "swarmkit.testing",
    "filters": "swarmkit.filters",
    "queues": "swarmkit.queues",
    "PeopleQueue": "swarmkit.people",
    "testing": "swarmkit.testing",
    "FunctionTool": "swarmkit.tools",
    "ToolResult": "swarmkit.tools",
    "tool": "swarmkit.tools",
}


# Each public name loads its module on first use (a model adapter loads its SDK).
__getattr__ = _lazy_getattr(__name__, _HOMES)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
