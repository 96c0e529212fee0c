"""One run of a swarm: its state, the limits on its handoffs, and the loop that drives it."""

from swarmkit._run._loop import RunLoop
from swarmkit._run._state import RESERVED_KEY, RunState

__all__ = ["RESERVED_KEY", "RunLoop", "RunState"]
