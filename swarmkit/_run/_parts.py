"""What every step of a run works with: the compiled spec, the state, the step writer, the seams."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NoReturn

from swarmkit._log import log
from swarmkit._run import _budget as budget
from swarmkit._run._state import RunState, StopRun
from swarmkit.limits import LimitBreach
from swarmkit.lowlevel import StepWriter
from swarmkit.spec import RunSeams, SwarmSpec


@dataclass(frozen=True, kw_only=True, slots=True)
class RunParts:
    """One run's parts, handed to each step function (the state is the only mutable one)."""

    swarm: SwarmSpec
    """The compiled swarm."""
    state: RunState
    """What changes during the run."""
    tape: StepWriter
    """Journals each step, or serves it back from the journal."""
    seams: RunSeams
    """Tool runner, decision source and runtime."""
    streaming: bool
    """Whether text deltas are streamed."""
    quiet: bool
    """Whether nobody reads per-step events (model call and tool events are not built)."""
    limited: bool
    """Whether usage or time limits are configured; without them a live step skips their
    checks (a replayed one still asks the journal for its stops)."""
    timed: bool
    """Whether a run or agent timeout is configured."""

    def log(self, event: str, **fields: Any) -> None:
        """A structlog event with the session, the active agent and the turn bound."""
        state = self.state
        log(
            "swarmkit.run",
            event,
            session_id=state.session_id,
            agent=state.agent,
            turn=state.budget.turns,
            **fields,
        )

    def time_left(self) -> float | None:
        """Seconds until the nearer deadline, or None without time limits."""
        if not self.timed:
            return None
        return budget.time_left(self.swarm, self.state, self.seams.runtime.clock())

    def expired(self) -> LimitBreach | None:
        """The time limit a call in flight was cancelled at."""
        now = self.seams.runtime.clock()
        return budget.time_breach(self.swarm, self.state, now, expired=True)

    def limit_hit(self, breach: LimitBreach | None) -> LimitBreach | None:
        """The stop at this point: what the journal held for it when the step is replayed (a
        replay runs in no time, so it stops exactly where the recorded run stopped and passes
        a stop a resume went on from); else ``breach``, or a time limit that ran out."""
        held = self.tape.held_stop()
        if held is not None:
            return LimitBreach.from_data(held.data) if held.data is not None else None
        if breach is None and self.timed:
            return budget.time_breach(self.swarm, self.state, self.seams.runtime.clock())
        return breach

    async def stop(self, breach: LimitBreach) -> NoReturn:
        """End the run at a limit: journal it, then unwind to the step's end."""
        budget.stopped(self.state, breach)
        await self.tape.note("limit_reached", breach.to_data())
        self.log("limit_reached", limit=breach.limit, allowed=breach.allowed, used=breach.used)
        raise StopRun(breach.stop_reason)
