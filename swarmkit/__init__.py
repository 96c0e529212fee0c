"""swarmkit: multi-agent swarms with rule-first handoffs, exact limits and replayable journals."""

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
    SessionNotFoundError,
    SwarmkitError,
    ToolArgumentsError,
    ToolError,
    ToolExecutionError,
)
from swarmkit.factory import swarm_factory
from swarmkit.graph import Edge, HandoffGraph, RouteExplanation
from swarmkit.handoffs import Handoff
from swarmkit.interrupts import PendingDecision, approve, edit, reject
from swarmkit.journal import InMemoryJournal, SQLiteJournal
from swarmkit.models import Model, ModelSettings, OpenAIModel, RetryPolicy
from swarmkit.result import HandoffRecord, RuleDecision, RunResult
from swarmkit.swarm import Swarm
from swarmkit.testing import RecordingModel, ScriptedModel
from swarmkit.tools import FunctionTool, ToolResult, tool

__version__ = "0.1.0"
"""The version of the distribution ``swarmkit-agents`` (the import name is ``swarmkit``)."""

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
    "InMemoryJournal",
    "InputFilterError",
    "JournalError",
    "MaxHandoffsExceeded",
    "MaxTurnsExceeded",
    "Model",
    "ModelError",
    "ModelSettings",
    "OpenAIModel",
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
    "SessionNotFoundError",
    "Swarm",
    "SwarmkitError",
    "ToolArgumentsError",
    "ToolError",
    "ToolExecutionError",
    "ToolResult",
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
