"""RunContext: what a tool or a dynamic instruction can see of the run it is part of."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from swarmkit.exceptions import ConfigurationError
from swarmkit.interrupts import Decision, decision_from_data, decision_to_data

_Model = TypeVar("_Model", bound=BaseModel)


@dataclass(frozen=True, kw_only=True, slots=True)
class Answer:
    """A person's answer to the question a tool asked, for the tool called again."""

    decision: Decision
    """What the person decided: ``edit(payload=...)`` carries the answer's fields, ``reject``
    declines to answer, ``approve`` answers with nothing."""
    asked: str
    """The output the tool returned when it asked (what it needs to pick the call up again)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class RunContext:
    """A read-only view of the run, injected into tools and instruction functions that ask for it.

    A tool parameter annotated ``RunContext`` is filled by the loop and never shown to the model.
    """

    context: Mapping[str, Any]
    """The run's context: the caller's ``context`` plus updates returned by tools."""
    agent: str
    """The name of the active agent."""
    session_id: str
    """The run's session id."""
    payload: BaseModel | None = None
    """The validated payload of the handoff that brought the active agent in, if typed."""
    handoff_count: int = 0
    """Handoffs performed so far in the run."""
    deps: Any = None
    """The caller's Python objects (clients, connections, secrets) passed as ``deps=``; never
    journaled, never seen by rules or the model, and handed again to resume and replay."""
    idempotency_key: str | None = None
    """For a tool call: ``{session}:{turn}:{tool_call_id}``, the same on every retry, resume and
    replay of that call, so a tool with side effects can deduplicate the step a crash repeats."""
    answer: Answer | None = None
    """For a tool called again after it asked a person (``ToolResult(ask=..., again=True)``):
    the person's decision, and what the tool returned when it asked."""

    def context_as(self, context_type: type[_Model]) -> _Model:
        """The context as ``context_type`` (a swarm's ``context_type``, say), validated now, so
        it includes every update tools made; a mismatch raises pydantic's ValidationError."""
        return context_type.model_validate(dict(self.context))


def context_to_data(context: RunContext) -> dict[str, Any]:
    """The run context as JSON-safe data, its payload's class named; ``deps`` stay behind."""
    payload = context.payload
    return {
        "context": dict(context.context),
        "agent": context.agent,
        "session_id": context.session_id,
        "payload": None if payload is None else payload.model_dump(mode="json"),
        "payload_type": None if payload is None else _class_path(type(payload)),
        "handoff_count": context.handoff_count,
        "idempotency_key": context.idempotency_key,
        # Only a tool called again with a person's answer has one: other data stays as it was.
        **_answer_data(context.answer),
    }


def _answer_data(answer: Answer | None) -> dict[str, Any]:
    if answer is None:
        return {}
    return {"answer": {"decision": decision_to_data(answer.decision), "asked": answer.asked}}


def _answer_from(data: object) -> Answer | None:
    if not isinstance(data, Mapping):
        return None
    decision = data.get("decision")
    if not isinstance(decision, Mapping):
        return None
    return Answer(decision=decision_from_data(decision), asked=str(data.get("asked", "")))


def context_from_data(
    data: Mapping[str, Any],
    payload_types: Mapping[str, type[BaseModel]] | None = None,
    *,
    deps: Any = None,
) -> RunContext:
    """The run context ``context_to_data`` described, with ``deps`` given again.

    ``payload_types`` maps the named payload class (``module:QualName``) to the class that
    validates it; without an entry the payload class is imported by that name.
    """
    payload = data.get("payload")
    payload_type = data.get("payload_type")
    model = None
    if payload is not None and isinstance(payload_type, str):
        model = _payload_class(payload_type, payload_types or {}).model_validate(payload)
    return RunContext(
        context=dict(data.get("context") or {}),
        agent=str(data["agent"]),
        session_id=str(data["session_id"]),
        payload=model,
        handoff_count=int(data.get("handoff_count", 0)),
        deps=deps,
        idempotency_key=data.get("idempotency_key"),
        answer=_answer_from(data.get("answer")),
    )


def _class_path(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def _payload_class(path: str, known: Mapping[str, type[BaseModel]]) -> type[BaseModel]:
    if path in known:
        return known[path]
    module_name, _, qualname = path.partition(":")
    import importlib  # noqa: PLC0415 - only payloads no caller registered need it

    try:
        value: Any = importlib.import_module(module_name)
        for part in qualname.split("."):
            value = getattr(value, part)
    except (ImportError, AttributeError) as exc:
        raise ConfigurationError(
            f"cannot find payload class {path!r}; pass it in payload_types={{{path!r}: Model}}"
        ) from exc
    if not (isinstance(value, type) and issubclass(value, BaseModel)):
        raise ConfigurationError(f"payload class {path!r} is not a pydantic model")
    return value


def json_safe(value: Any) -> Any:
    """``value`` as JSON-safe data, as a journal stores a context: what JSON cannot hold is
    written as its str()."""
    return to_jsonable_python(value, fallback=str)
