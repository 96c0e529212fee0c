"""swarmkit: multi-agent swarms with rule-first handoffs, exact limits and replayable journals."""

from swarmkit.conditions import Condition, compile_condition
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
)
from swarmkit.graph import Edge, HandoffGraph, RouteExplanation

__version__ = "0.1.0"

__all__ = [
    "Condition",
    "ConditionSyntaxError",
    "ConfigurationError",
    "Edge",
    "GraphCycleError",
    "HandoffCycleError",
    "HandoffGraph",
    "HandoffPayloadError",
    "JournalError",
    "MaxHandoffsExceeded",
    "MaxTurnsExceeded",
    "ModelError",
    "ReplayDivergenceError",
    "RouteExplanation",
    "RunError",
    "SessionNotFoundError",
    "SwarmkitError",
    "ToolArgumentsError",
    "ToolError",
    "ToolExecutionError",
    "__version__",
    "compile_condition",
]
