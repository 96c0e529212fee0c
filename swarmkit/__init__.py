"""swarmkit: multi-agent swarms with rule-first handoffs, exact limits and replayable journals."""

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
)

__version__ = "0.1.0"

__all__ = [
    "ConditionSyntaxError",
    "ConfigurationError",
    "GraphCycleError",
    "HandoffCycleError",
    "HandoffPayloadError",
    "JournalError",
    "MaxHandoffsExceeded",
    "MaxTurnsExceeded",
    "ModelError",
    "ReplayDivergenceError",
    "RunContext",
    "RunError",
    "SessionNotFoundError",
    "SwarmkitError",
    "ToolArgumentsError",
    "ToolError",
    "ToolExecutionError",
    "__version__",
]
