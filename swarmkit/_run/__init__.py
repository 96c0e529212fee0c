"""One run of a swarm: its state, the limits on its handoffs, and the loop that drives it.

What the rest of the core uses of a run is exported here; the modules stay private to it.
"""

from swarmkit._run._conversation import (
    Continuation,
    History,
    answered,
    choose_agent,
    continuation,
    start_from_data,
)
from swarmkit._run._decisions import check_decision, decision_problems
from swarmkit._run._loop import RunLoop, Streaming
from swarmkit._run._state import RESERVED_KEY, RunState, build_result

__all__ = [
    "answered",
    "build_result",
    "RESERVED_KEY",
    "Continuation",
    "History",
    "RunLoop",
    "RunState",
    "Streaming",
    "check_decision",
    "choose_agent",
    "continuation",
    "decision_problems",
    "start_from_data",
]
