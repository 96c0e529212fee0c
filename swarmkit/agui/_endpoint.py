"""The AG-UI endpoint: a POSTed run input starts (or resumes) a swarm run, streamed as SSE.

The AG-UI thread is a swarmkit conversation (session ``agui-<thread id>``): each run on a thread
continues it. A run that pauses finishes with an ``interrupt`` outcome whose id is the paused
session; a later input whose ``resume`` entry answers that id (payload
``{"decision": "approve" | "reject" | "edit", ...}``) resumes it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

from ag_ui.core import ResumeEntry, RunAgentInput, UserMessage
from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from swarmkit.agui._resume import resumed_events
from swarmkit.agui._sse import SseStream
from swarmkit.bounds import load_json
from swarmkit.events import Event
from swarmkit.exceptions import InteropRequestError
from swarmkit.interrupts import Decision, reject
from swarmkit.journal import Journal, turn_of
from swarmkit.lowlevel import stream_written
from swarmkit.redaction import Redactor
from swarmkit.serving import (
    DECISION_SHAPES,
    DEFAULT_MAX_REQUEST_BYTES,
    AsgiServer,
    conversation_session,
    decision_from_request,
)
from swarmkit.swarm import Swarm

SESSION_PREFIX = "agui-"
"""What a thread's session id starts with, before the AG-UI thread id."""

SNAPSHOT_KEYS = ("agent", "trail", "context")
"""The keys of the state a run sends (``STATE_SNAPSHOT``) and takes back as input ``state``."""

SSE = "text/event-stream"
"""The stream's media type."""

MAX_THREAD_ID = 128
"""The longest AG-UI thread id taken as a conversation name."""


def agui_app(swarm: Swarm, journal: Journal) -> Starlette:
    """The ASGI app: ``POST /`` with an AG-UI ``RunAgentInput`` answers an SSE stream of the
    run's AG-UI events (no token check: serve it with ``AgUiServer`` or behind a TokenGuard);
    secret values hidden by the swarm's own ``redact_keys``."""
    redactor = Redactor.of(swarm.config.redact_keys)

    async def run(request: Request) -> Response:
        try:
            data = load_json((await request.body()).decode("utf-8", errors="replace"))
        except ValueError as exc:
            return JSONResponse({"error": f"the body is not JSON to read: {_first_line(exc)}"}, 400)
        try:
            run_input = RunAgentInput.model_validate(data)
            stream = SseStream(
                thread_id=run_input.thread_id,
                run_id=run_input.run_id,
                new_id=None,
                redactor=redactor,
            )
            events = _swarm_events(swarm, journal, run_input, stream.text)
        except ValidationError as exc:
            return JSONResponse({"error": _input_error(exc)}, status_code=422)
        except ValueError as exc:
            return JSONResponse({"error": _first_line(exc)}, status_code=422)
        return StreamingResponse(stream.messages(events), media_type=SSE)

    return Starlette(routes=[Route("/", run, methods=["POST"])])


class AgUiServer(AsgiServer):
    """Serves the AG-UI endpoint of a swarm on loopback, a bearer token checked on every
    request (``.token``; a host that is not loopback needs ``allow_remote=True``)."""

    def __init__(
        self,
        swarm: Swarm,
        journal: Journal,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        token: str | None = None,
        allow_remote: bool = False,
        max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES,
    ) -> None:
        super().__init__(
            lambda url: agui_app(swarm, journal),
            host=host,
            port=port,
            token=token,
            allow_remote=allow_remote,
            max_request_bytes=max_request_bytes,
        )


def _swarm_events(
    swarm: Swarm, journal: Journal, run_input: RunAgentInput, text: Callable[[str, str], str]
) -> AsyncIterator[Event | str]:
    """The run a run input asks for: a new turn of the thread, its answer's pieces written
    by ``text``; or the resumed run of an interrupt."""
    conversation = _conversation(run_input.thread_id)
    if run_input.resume:
        entry = _one_entry(run_input.resume)
        if turn_of(entry.interrupt_id)[0] != conversation:
            raise InteropRequestError(
                f"interrupt {entry.interrupt_id!r} is not a run of thread {run_input.thread_id!r}"
            )
        return resumed_events(swarm, journal, entry.interrupt_id, _decision(entry))
    return stream_written(
        swarm,
        _prompt(run_input),
        text=text,
        session_id=conversation,
        journal=journal,
        continue_session=True,
        context=_context(run_input.state),
    )


def _context(state: Any) -> dict[str, Any] | None:
    """The context update a run input's ``state`` carries: the ``context`` of a state snapshot
    sent back as it came (its ``agent`` and ``trail`` are the run's to set, never read back),
    and any other key of the state as a context entry of its own."""
    if not isinstance(state, Mapping) or not state:
        return None
    given = state.get("context", {})
    if not isinstance(given, Mapping):
        raise InteropRequestError("the run input's state.context must be an object")
    own = {key: value for key, value in state.items() if key not in SNAPSHOT_KEYS}
    return {**own, **given} or None


def _prompt(run_input: RunAgentInput) -> str:
    for message in reversed(run_input.messages):
        if isinstance(message, UserMessage):
            content = message.content
            if isinstance(content, str):
                return content
            texts = [getattr(part, "text", None) for part in content]
            return "\n".join(t for t in texts if isinstance(t, str))
    raise InteropRequestError("the run input has no user message to answer")


def _one_entry(entries: list[ResumeEntry]) -> ResumeEntry:
    if len(entries) != 1:
        raise InteropRequestError("a run resumes one interrupt at a time: send one resume entry")
    return entries[0]


def _decision(entry: ResumeEntry) -> Decision:
    if entry.status == "cancelled":
        return reject("cancelled by the user")
    payload = entry.payload if isinstance(entry.payload, Mapping) else {}
    decision = decision_from_request(payload)
    if decision is None:
        raise InteropRequestError(f"a resume payload must be {DECISION_SHAPES}")
    return decision


def _conversation(thread_id: str) -> str:
    return conversation_session(SESSION_PREFIX, thread_id, named="thread id", longest=MAX_THREAD_ID)


def _input_error(exc: ValidationError) -> str:
    problems = [
        f"{'.'.join(str(p) for p in e['loc']) or 'body'}: {e['msg']}" for e in exc.errors()[:5]
    ]
    return "not an AG-UI RunAgentInput: " + "; ".join(problems)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
