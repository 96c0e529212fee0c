"""swarmkit: multi-agent swarms with rule-first handoffs, exact limits and replayable journals."""

from typing import TYPE_CHECKING, Any

from swarmkit import filters, testing
from swarmkit.agent import Agent
from swarmkit.conditions import Condition, compile_condition
from swarmkit.context import RunContext
from swarmkit.exceptions import (
    ConditionSyntaxError,
    ConfigurationError,
    GraphCycleError,
    HandoffCycleError,
    HandoffPayloadError,
    InputFilterError,
    JournalError,
    MaxHandoffsExceeded,
    MaxTurnsExceeded,
    ModelError,
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
from swarmkit.interrupts import PendingDecision, approve, edit, reject
from swarmkit.journal import InMemoryJournal, SQLiteJournal
from swarmkit.limits import LimitBreach, UsageLimits
from swarmkit.models import Model, ModelSettings, Timeouts
from swarmkit.result import HandoffRecord, RuleDecision, RunResult
from swarmkit.swarm import Swarm
from swarmkit.testing import RecordingModel, ScriptedModel
from swarmkit.tools import FunctionTool, ToolResult, tool

if TYPE_CHECKING:
    from swarmkit.models import (
        AnthropicModel,
        GeminiModel,
        OpenAIModel,
        OpenAIResponsesModel,
        RetryPolicy,
    )

__version__ = "0.1.0"
"""The version of the distribution ``swarmkit-agents`` (the import name is ``swarmkit``)."""

__all__ = [
    "Agent",
    "AnthropicModel",
    "Condition",
    "ConditionSyntaxError",
    "ConfigurationError",
    "Edge",
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
    "LimitBreach",
    "MaxHandoffsExceeded",
    "MaxTurnsExceeded",
    "Model",
    "ModelError",
    "ModelSettings",
    "OpenAIModel",
    "OpenAIResponsesModel",
    "PendingDecision",
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
    "reject",
    "swarm_factory",
    "testing",
    "tool",
]


_LAZY_MODELS = frozenset(
    {"AnthropicModel", "GeminiModel", "OpenAIModel", "OpenAIResponsesModel", "RetryPolicy"}
)


def __getattr__(name: str) -> Any:
    """The model adapters and ``RetryPolicy`` load their SDK only when first asked for."""
    if name in _LAZY_MODELS:
        from swarmkit import models  # noqa: PLC0415 - the lazy names live there

        value = getattr(models, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
