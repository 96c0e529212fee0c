"""swarmkit: multi-agent swarms with rule-first handoffs, exact limits and replayable journals."""

from typing import TYPE_CHECKING, Any

from swarmkit import filters
from swarmkit.agent import Agent
from swarmkit.conditions import Condition, compile_condition
from swarmkit.context import RunContext
from swarmkit.exceptions import (
    ConditionSyntaxError,
    ConfigurationError,
    GraphCycleError,
    HandoffCycleError,
    HandoffPayloadError,
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
)
from swarmkit.graph import Edge, HandoffGraph, RouteExplanation
from swarmkit.handoffs import Handoff
from swarmkit.interrupts import PendingDecision, approve, edit, reject
from swarmkit.limits import LimitBreach, UsageLimits
from swarmkit.models import Model, ModelSettings, Timeouts
from swarmkit.result import HandoffRecord, RuleDecision, RunResult
from swarmkit.swarm import Swarm
from swarmkit.tools import FunctionTool, ToolResult, tool

if TYPE_CHECKING:
    from swarmkit.models import OpenAIModel, RetryPolicy

__version__ = "0.1.0"

__all__ = [
    "Agent",
    "Condition",
    "ConditionSyntaxError",
    "ConfigurationError",
    "Edge",
    "FunctionTool",
    "GraphCycleError",
    "Handoff",
    "HandoffCycleError",
    "HandoffGraph",
    "HandoffPayloadError",
    "HandoffRecord",
    "JournalError",
    "LimitBreach",
    "MaxHandoffsExceeded",
    "MaxTurnsExceeded",
    "Model",
    "ModelError",
    "ModelSettings",
    "OpenAIModel",
    "PendingDecision",
    "ReplayDivergenceError",
    "RetryPolicy",
    "RouteExplanation",
    "RuleDecision",
    "RunContext",
    "RunError",
    "RunResult",
    "SessionBusyError",
    "SessionNotFoundError",
    "Swarm",
    "SwarmkitError",
    "Timeouts",
    "ToolArgumentsError",
    "ToolError",
    "ToolExecutionError",
    "ToolResult",
    "UsageLimits",
    "__version__",
    "approve",
    "compile_condition",
    "edit",
    "filters",
    "reject",
    "tool",
]


def __getattr__(name: str) -> Any:
    """``OpenAIModel`` and ``RetryPolicy`` load ``openai`` only when first asked for."""
    if name in ("OpenAIModel", "RetryPolicy"):
        from swarmkit import models  # noqa: PLC0415 - the lazy names live there

        value = getattr(models, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
