"""swarmkit: multi-agent swarms with rule-first handoffs, exact limits and replayable journals."""

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
    SessionNotFoundError,
    SwarmkitError,
    ToolArgumentsError,
    ToolError,
    ToolExecutionError,
    ToolServerError,
)
from swarmkit.graph import Edge, HandoffGraph, RouteExplanation
from swarmkit.handoffs import Handoff
from swarmkit.interrupts import PendingDecision, approve, edit, reject
from swarmkit.models import Model, ModelSettings, OpenAIModel, RetryPolicy
from swarmkit.result import HandoffRecord, RuleDecision, RunResult
from swarmkit.swarm import Swarm
from swarmkit.tools import FunctionTool, ToolResult, tool

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
    "SessionNotFoundError",
    "Swarm",
    "SwarmkitError",
    "ToolArgumentsError",
    "ToolError",
    "ToolExecutionError",
    "ToolResult",
    "ToolServerError",
    "__version__",
    "approve",
    "compile_condition",
    "edit",
    "filters",
    "reject",
    "tool",
]
