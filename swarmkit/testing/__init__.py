"""Test kit for users' own tests: a model that plays a script instead of calling an API.

```python
model = ScriptedModel(
    transfer("billing", invoice_id="A-1"),   # triage's turn
    text("Refund issued."),                   # billing's turn
)
result = await Swarm([triage, billing], "triage", model=model).run("refund A-1")
model.assert_exhausted()
```
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from swarmkit.exceptions import ConfigurationError, SwarmkitError
from swarmkit.handoffs import transfer_tool_name
from swarmkit.journal import InMemoryJournal, export_jsonl, import_jsonl
from swarmkit.messages import AssistantMessage, ToolCall
from swarmkit.models import (
    Model,
    ModelDelta,
    ModelRequest,
    ModelResponse,
    StreamingModel,
    TextDelta,
    ToolCallDelta,
    Usage,
)
from swarmkit.result import RunResult
from swarmkit.runtime import Runtime
from swarmkit.swarm import Swarm

DEFAULT_USAGE = Usage(prompt_tokens=10, completion_tokens=5, total_tokens=15)
"""The usage a scripted turn reports unless told otherwise."""


class ScriptExhaustedError(SwarmkitError, AssertionError):
    """The scripted model was asked for a turn its script does not have."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ScriptedCall:
    """One tool call of a scripted turn."""

    name: str
    """The tool name."""
    arguments: str
    """The arguments as raw JSON text (may be deliberately malformed)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ScriptedTurn:
    """One model answer of a script: text, tool calls, or both."""

    content: str | None = None
    """The answer's text."""
    calls: tuple[ScriptedCall, ...] = ()
    """The tool calls, in order."""
    usage: Usage = DEFAULT_USAGE
    """Tokens to report for this turn."""
    agent: str | None = None
    """When set (``for_agent=`` in the builders), the turn fails if another agent asks for it."""


def text(content: str, *, usage: Usage | None = None, for_agent: str | None = None) -> ScriptedTurn:
    """A turn that answers with plain text (a final output)."""
    return ScriptedTurn(content=content, agent=for_agent, usage=usage or DEFAULT_USAGE)


def tool_call(name: str, /, *, for_agent: str | None = None, **arguments: Any) -> ScriptedTurn:
    """A turn that calls one tool with keyword arguments."""
    call = ScriptedCall(name=name, arguments=json.dumps(arguments))
    return ScriptedTurn(calls=(call,), agent=for_agent)


def raw_tool_call(name: str, arguments: str, *, for_agent: str | None = None) -> ScriptedTurn:
    """A turn that calls one tool with arguments exactly as given (e.g. malformed JSON)."""
    return ScriptedTurn(calls=(ScriptedCall(name=name, arguments=arguments),), agent=for_agent)


def transfer(target: str, /, *, for_agent: str | None = None, **payload: Any) -> ScriptedTurn:
    """A turn that calls ``transfer_to_<target>`` with the payload fields as arguments."""
    return tool_call(transfer_tool_name(target), for_agent=for_agent, **payload)


def turn(
    *parts: ScriptedTurn, content: str | None = None, for_agent: str | None = None
) -> ScriptedTurn:
    """One turn made of several calls: ``turn(tool_call("a"), transfer("b"))``."""
    calls = tuple(call for part in parts for call in part.calls)
    return ScriptedTurn(content=content, calls=calls, agent=for_agent)


SCRIPTED_PROVIDER = "swarmkit.scripted"
"""The provider the test models declare (a value of our own: no listed provider applies)."""


class ScriptedModel:
    """A model that answers from a script and records every request it was sent.

    Give turns in the order the run will ask for them, or a script per agent with
    ``per_agent={"triage": [...], "billing": [...]}``. A request beyond the script raises
    [ScriptExhaustedError][swarmkit.testing.ScriptExhaustedError] showing the request. It also
    streams: text in word-sized deltas and tool calls in two argument pieces.
    """

    def __init__(
        self,
        *turns: ScriptedTurn,
        per_agent: Mapping[str, Sequence[ScriptedTurn]] | None = None,
        name: str = "scripted",
        provider: str = SCRIPTED_PROVIDER,
    ) -> None:
        self.name = name
        self.provider = provider
        """Who serves it, as traces name it: ``swarmkit.scripted`` unless it plays another."""
        self.requests: list[ModelRequest] = []
        self._queue = _checked_turns(turns, "ScriptedModel(*turns)")
        self._per_agent = {
            agent: _checked_turns(script, f"per_agent[{agent!r}]")
            for agent, script in (per_agent or {}).items()
        }
        self._calls = 0

    async def respond(self, request: ModelRequest) -> ModelResponse:
        """Serve the next scripted turn for this request."""
        self.requests.append(request)
        scripted = self._next_turn(request)
        return ModelResponse(
            message=AssistantMessage(content=scripted.content, tool_calls=self._calls_of(scripted)),
            usage=_total(scripted.usage),
            finish_reason="tool_calls" if scripted.calls else "stop",
            model=self.name,
        )

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelDelta | ModelResponse]:
        """Serve the next turn as deltas, then the complete response."""
        response = await self.respond(request)
        for piece in _words(response.message.content or ""):
            yield TextDelta(text=piece)
        for index, call in enumerate(response.message.tool_calls):
            half = len(call.arguments) // 2
            yield ToolCallDelta(
                index=index, id=call.id, name=call.name, arguments=call.arguments[:half]
            )
            yield ToolCallDelta(index=index, arguments=call.arguments[half:])
        yield response

    def assert_exhausted(self) -> None:
        """Fail unless every scripted turn was served."""
        left = len(self._queue) + sum(len(s) for s in self._per_agent.values())
        if left:
            raise ScriptExhaustedError(f"{left} scripted turn(s) were never requested")

    def _next_turn(self, request: ModelRequest) -> ScriptedTurn:
        queue = self._per_agent.get(request.agent, self._queue)
        if not queue:
            raise ScriptExhaustedError(_describe_unexpected(request))
        scripted = queue.pop(0)
        if scripted.agent is not None and scripted.agent != request.agent:
            raise ScriptExhaustedError(
                f"turn scripted for agent {scripted.agent!r} was requested by {request.agent!r}"
            )
        return scripted

    def _calls_of(self, scripted: ScriptedTurn) -> tuple[ToolCall, ...]:
        calls = []
        for call in scripted.calls:
            self._calls += 1
            calls.append(
                ToolCall(id=f"call_{self._calls}", name=call.name, arguments=call.arguments)
            )
        return tuple(calls)


def _checked_turns(turns: Sequence[Any], where: str) -> list[ScriptedTurn]:
    """The turns as a list, or ConfigurationError naming the first that is not a turn."""
    if isinstance(turns, str | bytes):
        turns = [turns]
    for turn_ in turns:
        if not isinstance(turn_, ScriptedTurn):
            hint = (
                " (pass turns one by one: ScriptedModel(*turns))"
                if isinstance(turn_, list | tuple)
                else ""
            )
            raise ConfigurationError(
                f"{where} takes turns built with text(), tool_call(), transfer() or turn(); "
                f"got {type(turn_).__name__} {turn_!r:.60}{hint}"
            )
    return list(turns)


class RecordingModel:
    """Wraps a model, passing every request on and keeping it: count calls, inspect requests."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self.requests: list[ModelRequest] = []

    @property
    def provider(self) -> str | None:
        """The wrapped model's provider, so traces name who really answers."""
        declared = getattr(self.model, "provider", None)
        return declared if isinstance(declared, str) else None

    @property
    def calls(self) -> int:
        """How many requests were passed on."""
        return len(self.requests)

    async def respond(self, request: ModelRequest) -> ModelResponse:
        """Record the request, then answer it with the wrapped model."""
        self.requests.append(request)
        return await self.model.respond(request)

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelDelta | ModelResponse]:
        """Record the request, then stream the wrapped model's answer, so a streamed run stays
        streamed (a model that cannot stream gives its answer whole)."""
        self.requests.append(request)
        if not isinstance(self.model, StreamingModel):
            yield await self.model.respond(request)
            return
        async for item in self.model.stream(request):
            yield item


class NeverCalledModel:
    """A model that fails the test if it is ever asked anything (for replays: zero calls)."""

    provider = SCRIPTED_PROVIDER
    """Traced like a scripted model."""

    async def respond(self, request: ModelRequest) -> ModelResponse:
        """Fail loudly, showing the request that should not have happened."""
        unexpected = _describe_unexpected(request)
        raise ScriptExhaustedError(f"no model call was expected; got {unexpected}")


def _total(usage: Usage) -> Usage:
    """``usage`` with its total filled in when the script left it out (cache counts kept)."""
    if usage.total_tokens:
        return usage
    return replace(usage, total_tokens=usage.prompt_tokens + usage.completion_tokens)


def _words(content: str) -> list[str]:
    pieces = content.split(" ")
    return [p + " " for p in pieces[:-1]] + [pieces[-1]] if content else []


def _describe_unexpected(request: ModelRequest) -> str:
    last = request.messages[-1] if request.messages else None
    tools = ", ".join(t.name for t in request.tools) or "none"
    return (
        f"the script has no turn left for agent {request.agent!r} "
        f"(request #{len(request.messages)} messages, tools: {tools}); last message: {last!r}"
    )


class FixedRuntime:
    """A runtime whose ids count up, whose clock moves only when the run sleeps or the test
    moves it, and whose randomness is a constant: two runs of one script draw exactly the
    same values.

    A call in flight under a ``run_timeout`` or ``agent_timeout`` is cancelled when the clock
    passes its deadline, so a test lets time pass where it happens: a model or tool that
    "takes a minute" does ``fixed.now += 60``. A call that only waits (a mocked HTTP client,
    a thread) takes no time on this clock.
    """

    def __init__(self, *, start: float = 1_700_000_000.0, prefix: str = "id") -> None:
        self._ids = itertools.count(1)
        self._prefix = prefix
        self._now = start
        self._waiters: list[tuple[float, asyncio.Future[None]]] = []
        self.sleeps: list[float] = []
        """Every sleep the run asked for, in order (none of them waited)."""

    @property
    def now(self) -> float:
        """The frozen clock's reading; advance it (``fixed.now += 6``) to let time pass."""
        return self._now

    @now.setter
    def now(self, value: float) -> None:
        self._now = value
        due = [waiter for waiter in self._waiters if waiter[0] <= value]
        self._waiters = [waiter for waiter in self._waiters if waiter[0] > value]
        for _, woken in due:
            if not woken.done():
                woken.set_result(None)

    def new_id(self) -> str:
        """``id-1``, ``id-2``, ..."""
        return f"{self._prefix}-{next(self._ids)}"

    def clock(self) -> float:
        """The frozen time."""
        return self._now

    async def sleep(self, seconds: float) -> None:
        """Record the sleep and move the clock on, without waiting."""
        self.sleeps.append(seconds)
        self.now += seconds

    async def sleep_until(self, when: float) -> None:
        """Wait until the clock is moved to ``when`` (by a sleep of the run, or by the test)."""
        if self._now >= when:
            return
        woken = asyncio.get_running_loop().create_future()
        waiter = (when, woken)
        self._waiters.append(waiter)
        try:
            await woken
        finally:
            if waiter in self._waiters:
                self._waiters.remove(waiter)

    @staticmethod
    def random() -> float:
        """Always 0.5."""
        return 0.5

    def runtime(self) -> Runtime:
        """The ``Runtime`` to hand to a Swarm or a run."""
        return Runtime(
            new_id=self.new_id,
            clock=self.clock,
            sleep=self.sleep,
            random=self.random,
            sleep_until=self.sleep_until,
        )


async def replay_fixture(swarm: Swarm, path: str | os.PathLike[str]) -> RunResult:
    """Replay a journaled session kept as a JSONL file (a test fixture) against ``swarm``.

    Record a session once (against a real API or a scripted model), export it with
    ``swarmkit export SESSION --format jsonl > tests/fixtures/name.jsonl``, commit the file,
    and call this in a test: a code change that alters what the swarm asks or decides fails
    with ReplayDivergenceError and its diff, with zero model calls.
    """
    records = import_jsonl(Path(path).read_bytes())
    journal = InMemoryJournal()
    await journal.append(records)
    return await swarm.replay(records[0].session_id, journal)


async def record_fixture(
    swarm: Swarm, prompt: str, path: str | os.PathLike[str], **run_options: Any
) -> RunResult:
    """Run ``swarm`` once and write its journal to ``path`` as JSONL, for replay_fixture."""
    journal = InMemoryJournal()
    result = await swarm.run(prompt, journal=journal, **run_options)
    text = export_jsonl(await journal.read(result.session_id))
    Path(path).write_text(text, encoding="utf-8")
    return result
