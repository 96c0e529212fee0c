"""LiveView: a run's events as plain text while it happens, for the demo and `swarmkit run`."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import TextIO, assert_never

from swarmkit.console._text import compact_json, one_line, result_lines, tokens
from swarmkit.events import (
    AgentStarted,
    Event,
    HandoffPerformed,
    HandoffRefused,
    ModelAttemptDiscarded,
    ModelCallFinished,
    ModelCallStarted,
    RuleEvaluated,
    RunFinished,
    RunStarted,
    SubRunEvent,
    TextDelta,
    ToolCalled,
    ToolResulted,
)
from swarmkit.result import RunResult
from swarmkit.swarm import Swarm

_LABEL_WIDTH = 7


class LiveView:
    """Writes each event of a run as it arrives: who is active, rules, model calls and tokens,
    tool calls and results, handoffs (marked rule or LLM, with payloads) and the final answer.

    Plain text with no colour codes, so it reads the same in a terminal, a pipe or a log file.
    """

    def __init__(self, out: TextIO, swarm: Swarm) -> None:
        self._out = out
        self._swarm = swarm
        self._width = max(len(name) for name in swarm.agents)
        self._said: dict[str, list[str]] = {}
        self._unsaid: str | None = None
        self._routers_shown: set[str] = set()
        self.result: RunResult | None = None
        """The run's result, once its RunFinished event was shown."""
        self.session_id: str | None = None
        """The run's session id, once its RunStarted event was shown."""

    async def follow(self, events: AsyncGenerator[Event, None]) -> RunResult:
        """Show every event of a run as it arrives; return the run's result."""
        # If showing fails (say, a closed pipe), the run ends now, while its journal is open.
        async with aclosing(events):
            async for event in events:
                self.show(event)
        if self.result is None:
            raise RuntimeError("the run's events ended without RunFinished")
        return self.result

    def show(self, event: Event) -> None:
        """Write the lines for one event and flush, so a slow model call shows progress."""
        held, self._unsaid = self._unsaid, None
        lines = self._lines(event)
        if held is not None and not isinstance(event, RunFinished):
            # Text followed by more work was said on the way; text that ends the run is the
            # answer, which the result shows in full.
            lines.insert(0, held)
        for line in lines:
            self._out.write(line + "\n")
        self._out.flush()

    def _lines(self, event: Event) -> list[str]:
        match event:
            case RunStarted(session_id=session_id):
                self.session_id = session_id
                return [f"  session: {session_id}"]
            case ModelCallStarted():
                return []
            case AgentStarted(agent=agent, handoff_count=count):
                self._routers_shown.discard(agent)
                how = "entry agent" if count == 0 else f"after handoff #{count}"
                return [self._row(agent, "active", how)]
            case RuleEvaluated():
                return self._rule(event)
            case TextDelta(agent=agent, text=text):
                self._said.setdefault(agent, []).append(text)
                return []
            case ModelAttemptDiscarded(agent=agent):
                self._said.pop(agent, None)
                return []
            case ModelCallFinished():
                return self._model_call(event)
            case ToolCalled(agent=agent, name=name, arguments=arguments):
                return [self._row(agent, "tool", f"{name} {one_line(arguments)}")]
            case ToolResulted(agent=agent, content=content, is_error=is_error):
                lines = self._decided(event)
                label = "error" if is_error else "result"
                return [*lines, self._row(agent, label, one_line(content))]
            case HandoffPerformed():
                return self._handoff(event)
            case HandoffRefused(source=source, target=target, reason=reason, detail=detail):
                return [self._row(source, "refused", f"-> {target} ({reason}): {one_line(detail)}")]
            case RunFinished(result=result):
                self.result = result
                return result_lines(result)
            case SubRunEvent():
                return self._sub_run(event)
            case _:
                assert_never(event)

    def _sub_run(self, event: SubRunEvent) -> list[str]:
        """A delegate's step, shown as its own agent's rows; its start and end in one row each."""
        inner: Event = event.event
        while isinstance(inner, SubRunEvent):
            inner = inner.event
        match inner:
            case RunStarted(entry_agent=agent):
                return [self._row(agent, "asked", f"by {event.agent} ({event.tool_name})")]
            case RunFinished(result=result):
                why = result.stop_reason
                return [self._row(result.final_agent, "done", f"{why}, for {event.agent}")]
            case TextDelta() | ModelAttemptDiscarded() | ModelCallStarted():
                return []
            case _:
                return self._lines(inner)

    def _rule(self, event: RuleEvaluated) -> list[str]:
        graph = self._swarm.graph
        if event.target is None:
            # Agents with no rules of their own are consulted too; only say so for real routers.
            if graph is None or not graph.edges(event.agent):
                return []
            if event.agent in self._routers_shown:
                return []
            self._routers_shown.add(event.agent)
            return [self._row(event.agent, "rule", "no rule matched; the model decides")]
        when = event.condition or "always"
        return [self._row(event.agent, "rule", f"{when} -> {event.target} (no model call)")]

    def _model_call(self, event: ModelCallFinished) -> list[str]:
        lines = [self._row(event.agent, "model", f"call {event.turn}: {tokens(event.usage)}")]
        said = "".join(self._said.pop(event.agent, []))
        if said.strip():
            self._unsaid = self._row(event.agent, "says", one_line(said, limit=300))
        return lines

    def _handoff(self, event: HandoffPerformed) -> list[str]:
        decided = {"rule": "a rule", "llm": "the LLM", "tool": "a tool"}[event.decided_by]
        line = f"#{event.number} -> {event.target}, decided by {decided}"
        if event.decided_by == "rule":
            line += f" ({event.condition or 'always'})"
        lines = [self._row(event.source, "handoff", line)]
        if event.payload is not None:
            kind = event.payload_type or "payload"
            lines.append(
                self._row(event.source, "payload", f"{kind} {compact_json(event.payload)}")
            )
        if event.message:
            lines.append(self._row(event.source, "message", one_line(event.message)))
        return lines

    def _decided(self, event: ToolResulted) -> list[str]:
        """A person's decision on the call, and the arguments it ran with when edited."""
        decision = event.decision
        if decision is None:
            return []
        verb = {"approve": "approved", "reject": "rejected", "edit": "edited"}.get(
            str(decision.get("kind")), str(decision.get("kind"))
        )
        who = decision.get("decided_by") or "a person"
        lines = [self._row(event.agent, verb, f"by {who}")]
        if event.arguments is not None:
            lines.append(self._row(event.agent, "ran", f"{event.name} {one_line(event.arguments)}"))
        return lines

    def _row(self, agent: str, label: str, text: str) -> str:
        return f"  {agent:<{self._width}} | {label:<{_LABEL_WIDTH}} {text}".rstrip()
