"""Function tools: `@tool` turns a function into a FunctionTool with a schema from its signature."""

from __future__ import annotations

import asyncio
import copy
import functools
import inspect
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import (
    TYPE_CHECKING,
    Annotated,
    Any,
    Literal,
    Protocol,
    TypedDict,
    get_origin,
    get_type_hints,
    overload,
)

import pydantic_core
from pydantic import BaseModel, ConfigDict, Field, PydanticUserError, create_model
from pydantic.fields import FieldInfo
from pydantic_core import to_jsonable_python

from swarmkit._schema import (
    TOOL_NAME_PATTERN,
    ArgumentProblem,
    ArgumentsSchema,
    arguments_schema,
    spec_of,
    to_strict_schema,
)
from swarmkit.bounds import value_problem
from swarmkit.conditions import Condition, compile_condition
from swarmkit.context import RunContext
from swarmkit.exceptions import (
    ConfigurationError,
    ToolArgumentsError,
    ToolError,
    ToolExecutionError,
)
from swarmkit.models import ToolSpec, Usage

if TYPE_CHECKING:
    from swarmkit.effects import Reconcile

_TOOL_NAME = re.compile(TOOL_NAME_PATTERN)
_SCHEMA_CONTEXT = "__swarmkit_run_context__"
"""Where a schema tool's RunContext rides among its arguments (no JSON field is named so)."""


@dataclass(frozen=True, kw_only=True)
class ToolResult:
    """What a tool may return instead of a plain value: output plus a context update or a goto."""

    output: Any = None
    """The value for the model: a str as is, anything else as JSON."""
    update: Mapping[str, Any] = field(default_factory=dict)
    """Keys merged into the run's context."""
    goto: str | None = None
    """The name of an agent to hand off to after this turn."""
    payload: Mapping[str, Any] | None = None
    """The handoff payload for ``goto``, validated by the loop against the target's input type."""
    ask: str | None = None
    """A question for a person: the run pauses (``pending.kind == "question"``) and the answer
    given on resume (``edit(payload={"answer": ...})``) becomes this call's result."""
    ask_schema: Mapping[str, Any] | None = None
    """With ``ask``: the JSON schema of the answer wanted (the pause's payload shows it as
    ``schema``); a person answers with ``edit(payload={...its fields...})``."""
    again: bool = False
    """With ``ask``: the answer does not become the result; the tool is called again with the
    same arguments and the answer in ``RunContext.answer``, and that call's result is the
    call's result (how an MCP tool's request for input is answered)."""

    def __post_init__(self) -> None:
        if self.goto is not None and (not isinstance(self.goto, str) or not self.goto):
            raise ConfigurationError("ToolResult.goto must be an agent name (a non-empty str)")
        if self.payload is not None and self.goto is None:
            raise ConfigurationError("ToolResult.payload needs goto: name the agent it is for")
        if type(self.update) is not dict and not isinstance(self.update, Mapping):
            raise ConfigurationError("ToolResult.update must be a mapping of context keys")
        if (self.again or self.ask_schema is not None) and self.ask is None:
            raise ConfigurationError("ToolResult.again and ask_schema need ask: the question")


@dataclass(frozen=True, kw_only=True)
class ToolOutcome:
    """The result of invoking a tool, successful or not; invoking never raises for bad calls."""

    content: str
    """The text for the tool-result message."""
    is_error: bool
    """Whether the call failed (bad arguments or the tool raised)."""
    result: ToolResult | None = None
    """On success, what the tool returned, a plain value wrapped as ``ToolResult(output=...)``."""
    error: ToolError | None = None
    """On failure, the error; a ToolExecutionError chains the tool's exception as its cause."""
    usage: Mapping[str, Usage] = field(default_factory=dict)
    """Model usage the call incurred per agent (a delegated sub-run's), counted in the run."""
    model_calls: int = 0
    """Model calls a delegated sub-run made (its own sub-runs' included), for the usage limits."""
    tool_calls: int = 0
    """Function tool calls a delegated sub-run made, for the usage limits."""


@dataclass(frozen=True, kw_only=True)
class FunctionTool:
    """A Python function offered to a model as a tool; build one with `tool`."""

    name: str
    """The tool name the model calls."""
    description: str
    """What the tool does, for the model."""
    parameters: Mapping[str, Any]
    """The JSON schema of the arguments object."""
    strict: bool
    """Whether ``parameters`` is valid for OpenAI strict mode."""
    raise_errors: bool = False
    """Raise ToolArgumentsError / ToolExecutionError instead of returning an error outcome."""
    run_in_thread: bool = False
    """Run a sync function in a worker thread (for blocking I/O) instead of inline."""
    needs_approval: bool = False
    """Pause the run for a human before each call (resume with approve, reject or edit)."""
    available_when: str | None = None
    """A condition (the HandoffGraph's language, on the run's state): the tool is offered only
    on turns where it holds; a call on another turn is refused. None offers it always."""
    condition: Condition | None = field(default=None, init=False, repr=False, compare=False)
    """``available_when`` compiled (at construction: a syntax error raises here)."""
    durable: bool = True
    """May do I/O: on a durable engine (Temporal) it runs as an activity; False marks a pure
    function that may run inside the workflow."""
    effect: bool = False
    """Changes the outside world once (a payment, an order): its intent is journaled and
    committed before each call, and an intent found without an outcome is reconciled or
    paused for a person, never run again silently (see ``swarmkit.effects``)."""
    reconcile: Reconcile | None = field(default=None, repr=False)
    """For an effect: ``reconcile(idempotency_key, arguments)`` asks the outside system whether
    the call happened and answers ``Happened(result=...)`` or ``NotDone()``."""
    _function: Callable[..., Any] = field(repr=False)
    """The decorated function."""
    _arguments: ArgumentsSchema[BaseModel] = field(repr=False)
    """The arguments model and its schemas; validates the model's raw arguments."""
    _context_parameter: str | None = field(default=None, repr=False)
    """The parameter that receives the RunContext, if the function asks for one."""
    _positional_only: tuple[str, ...] = field(default=(), repr=False)
    """Positional-only parameters, in order: they cannot be passed by keyword."""

    def __post_init__(self) -> None:
        _check_tool_name(self.name)
        if self.available_when is not None:
            object.__setattr__(self, "condition", compile_condition(self.available_when))
        _check_effect(self.name, self.effect, self.reconcile, self.durable)

    @classmethod
    def from_schema(
        cls,
        *,
        name: str,
        description: str,
        parameters: Mapping[str, Any],
        function: Callable[..., Awaitable[Any]],
        strict: bool = True,
        raise_errors: bool = False,
        needs_approval: bool = False,
        with_context: bool = False,
    ) -> FunctionTool:
        """A tool from a JSON schema and an async function taking the arguments as one dict.

        For tools described elsewhere (an MCP server, an HTTP API): ``parameters`` is their own
        object schema. With ``strict=True`` it is reshaped for strict mode when it can be (an
        optional field becomes nullable, and a null the model sends for it is dropped again
        before the call), else offered as given. The arguments reach ``function`` parsed as a
        JSON object; checking them against the schema is left to the function's owner.
        ``with_context=True`` passes the call's [RunContext][swarmkit.RunContext] second.
        """
        _check_tool_name(name)
        problem = value_problem(parameters)  # before deepcopy and the reshaping recurse
        if problem is not None:
            raise ConfigurationError(f"the parameters schema of tool {name!r}: {problem}")
        source = copy.deepcopy(dict(parameters))  # the tool owns its schema from here on
        shaped = to_strict_schema(source) if strict else None
        schema: ArgumentsSchema[BaseModel] = ArgumentsSchema(
            model=_AnyArguments,
            parameters=shaped if shaped is not None else source,
            strict=shaped is not None,
            source=source,
        )

        async def call(**arguments: Any) -> Any:
            context = arguments.pop(_SCHEMA_CONTEXT, None)
            return await (function(arguments, context) if with_context else function(arguments))

        return cls(
            name=name,
            description=description,
            parameters=schema.parameters,
            strict=schema.strict,
            raise_errors=raise_errors,
            needs_approval=needs_approval,
            _function=call,
            _arguments=schema,
            _context_parameter=_SCHEMA_CONTEXT if with_context else None,
        )

    def spec(self) -> ToolSpec:
        """The tool as offered to a model."""
        return spec_of(self)

    def arguments_problem(self, arguments: str) -> str | None:
        """Why raw JSON ``arguments`` would be refused by this tool, or None when they validate."""
        validated = self._arguments.validate(arguments)
        return validated.message if isinstance(validated, ArgumentProblem) else None

    async def invoke(self, arguments: str, context: RunContext) -> ToolOutcome:
        """Validate the model's raw JSON arguments, call the function and describe the result."""
        validated = self._arguments.validate(arguments)
        if isinstance(validated, ArgumentProblem):
            message = f"Error: invalid arguments for tool {self.name!r}: {validated.message}"
            return self._failed(ToolArgumentsError(message, tool_name=self.name))
        try:
            value = await self._call(validated, context)
        except Exception as exc:
            error = ToolExecutionError(_exception_text(exc), tool_name=self.name)
            error.__cause__ = exc
            return self._failed(error)
        result = value if isinstance(value, ToolResult) else ToolResult(output=value)
        return ToolOutcome(content=serialize_output(result.output), is_error=False, result=result)

    def _failed(self, error: ToolError) -> ToolOutcome:
        if self.raise_errors:
            raise error
        return ToolOutcome(content=str(error), is_error=True, error=error)

    async def _call(self, arguments: BaseModel, context: RunContext) -> Any:
        # getattr, not model_dump: nested models must reach the function as instances.
        values = {name: getattr(arguments, name) for name in type(arguments).model_fields}
        values.update(arguments.model_extra or {})  # from_schema tools take every field as extra
        if self._context_parameter is not None:
            values[self._context_parameter] = context
        positional = [values.pop(name) for name in self._positional_only]
        if self.run_in_thread and not inspect.iscoroutinefunction(self._function):
            result = await asyncio.to_thread(self._function, *positional, **values)
        else:
            result = self._function(*positional, **values)
        if inspect.isawaitable(result):
            result = await result
        return result


class ToolRunner(Protocol):
    """Where the loop runs a function tool call: in process by default, elsewhere on an engine."""

    async def invoke(self, tool: FunctionTool, arguments: str, context: RunContext) -> ToolOutcome:
        """Run ``tool`` on the model's raw JSON ``arguments``; bad calls become error outcomes."""
        ...


class InProcessToolRunner:
    """Runs each tool call in this process, on the run's event loop (the default)."""

    async def invoke(self, tool: FunctionTool, arguments: str, context: RunContext) -> ToolOutcome:
        """Call the tool here."""
        return await tool.invoke(arguments, context)


ToolErrorKind = Literal["arguments", "execution"]
"""Which ToolError an outcome carries: the model's arguments, or the tool's own failure."""


def outcome_to_data(outcome: ToolOutcome) -> dict[str, Any]:
    """A tool outcome as JSON-safe data that ``outcome_from_data`` turns back into an equal one.

    The error keeps its kind and message (its Python cause stays behind); a successful result
    keeps its output as the text the model saw, its context update, goto and payload.
    """
    result = outcome.result
    error = outcome.error
    return {
        "content": outcome.content,
        "is_error": outcome.is_error,
        "update": to_jsonable_python(dict(result.update), fallback=str) if result else {},
        "goto": result.goto if result else None,
        "ask": result.ask if result else None,
        # Only a question to answer by calling again has these: other records stay as they were.
        **_again_data(result),
        "payload": to_jsonable_python(dict(result.payload)) if result and result.payload else None,
        "error": None if error is None else {"kind": _error_kind(error), "tool": error.tool_name},
        "usage": {agent: to_jsonable_python(used) for agent, used in outcome.usage.items()},
        # Only a delegation's outcome has calls: other records stay as they always were.
        **_calls_data(outcome),
    }


def _again_data(result: ToolResult | None) -> dict[str, Any]:
    if result is None or (not result.again and result.ask_schema is None):
        return {}
    schema = None if result.ask_schema is None else to_jsonable_python(dict(result.ask_schema))
    return {"again": result.again, "ask_schema": schema}


class _Counted(TypedDict):
    model_calls: int
    tool_calls: int


def _calls_data(outcome: ToolOutcome) -> dict[str, Any]:
    if not (outcome.model_calls or outcome.tool_calls):
        return {}
    return {"calls": {"model": outcome.model_calls, "tool": outcome.tool_calls}}


_NOT_COUNTED = _Counted(model_calls=0, tool_calls=0)
"""A call that made no model or tool calls of its own (every call but a delegation's)."""


def outcome_from_data(data: Mapping[str, Any]) -> ToolOutcome:
    """The outcome ``outcome_to_data`` described (journals written before errors had kinds too)."""
    content = str(data["content"])
    used = data.get("usage")
    usage = {str(agent): Usage(**spent) for agent, spent in used.items()} if used else {}
    calls = data.get("calls")
    counted = (
        _NOT_COUNTED
        if not calls
        else _Counted(model_calls=int(calls.get("model", 0)), tool_calls=int(calls.get("tool", 0)))
    )
    if not data["is_error"]:
        result = ToolResult(
            output=content,
            update=data.get("update") or {},
            goto=data.get("goto"),
            payload=data.get("payload"),
            ask=data.get("ask"),
            ask_schema=data.get("ask_schema"),
            again=bool(data.get("again", False)),
        )
        return ToolOutcome(content=content, is_error=False, result=result, usage=usage, **counted)
    described = data.get("error")
    if not isinstance(described, Mapping):
        return ToolOutcome(content=content, is_error=True, usage=usage, **counted)
    kind = described.get("kind")
    error_type = ToolArgumentsError if kind == "arguments" else ToolExecutionError
    error = error_type(content, tool_name=str(described.get("tool", "")))
    return ToolOutcome(content=content, is_error=True, error=error, usage=usage, **counted)


def _error_kind(error: ToolError) -> ToolErrorKind:
    return "arguments" if isinstance(error, ToolArgumentsError) else "execution"


@overload
def tool(
    func: Callable[..., Any],
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    strict: bool = True,
    raise_errors: bool = False,
    run_in_thread: bool = False,
    needs_approval: bool = False,
    available_when: str | None = None,
    durable: bool = True,
    effect: bool = False,
    reconcile: Reconcile | None = None,
) -> FunctionTool: ...


@overload
def tool(
    func: None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    strict: bool = True,
    raise_errors: bool = False,
    run_in_thread: bool = False,
    needs_approval: bool = False,
    available_when: str | None = None,
    durable: bool = True,
    effect: bool = False,
    reconcile: Reconcile | None = None,
) -> Callable[[Callable[..., Any]], FunctionTool]: ...


def tool(
    func: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    strict: bool = True,
    raise_errors: bool = False,
    run_in_thread: bool = False,
    needs_approval: bool = False,
    available_when: str | None = None,
    durable: bool = True,
    effect: bool = False,
    reconcile: Reconcile | None = None,
) -> FunctionTool | Callable[[Callable[..., Any]], FunctionTool]:
    """Turn a sync or async function into a FunctionTool; use as ``@tool`` or ``@tool(...)``.

    The name is the function's, the description its docstring (without the parameter sections),
    and the schema comes from the signature, with per-parameter descriptions from a Google-style
    ``Args:`` section or reST ``:param x:`` fields. A parameter annotated ``RunContext`` is filled
    by the loop and not shown to the model. Sync functions run inline, since most tools are
    quick; pass ``run_in_thread=True`` for one that blocks on I/O. ``strict=True`` asks for an
    OpenAI strict-mode schema and falls back to a plain one when the types cannot be strict
    (``Any``, ``dict``, tuples); the tool's ``strict`` field says which it got.
    ``needs_approval=True`` pauses the run for a human before every call of the tool.
    ``available_when="condition"`` offers the tool only on turns where the condition holds on
    the run's state (the HandoffGraph's language and state).
    ``durable=False`` marks a pure function (no I/O) that a durable engine may run in place
    instead of as an activity.
    ``effect=True`` (with an optional ``reconcile``) declares a call that changes the world
    once: see [swarmkit.effects][swarmkit.effects].
    """

    def decorate(function: Callable[..., Any]) -> FunctionTool:
        return _build_tool(
            function,
            name=name,
            description=description,
            strict=strict,
            raise_errors=raise_errors,
            run_in_thread=run_in_thread,
            needs_approval=needs_approval,
            available_when=available_when,
            durable=durable,
            effect=effect,
            reconcile=reconcile,
        )

    return decorate if func is None else decorate(func)


def serialize_output(value: Any) -> str:
    """A tool's return value as text for the model: a str as is, anything else as JSON."""
    if isinstance(value, str):
        return value
    # Values pydantic cannot serialise fall back to str() rather than failing the call.
    return pydantic_core.to_json(value, fallback=str).decode()


# -- building a tool --------------------------------------------------------------------------


class _AnyArguments(BaseModel):
    """Any JSON object, every field kept as an extra: the arguments of a `from_schema` tool."""

    model_config = ConfigDict(extra="allow", defer_build=True)


@dataclass(frozen=True, kw_only=True)
class _Parameters:
    """What a signature contributes to a tool."""

    fields: dict[str, Any]
    """Pydantic field definitions ``name -> (annotation, FieldInfo)`` for the arguments model."""
    context: str | None
    """The RunContext parameter, if any."""
    positional_only: tuple[str, ...]
    """Positional-only parameters, in order."""


def _build_tool(
    func: Callable[..., Any],
    *,
    name: str | None,
    description: str | None,
    strict: bool,
    raise_errors: bool,
    run_in_thread: bool,
    needs_approval: bool,
    available_when: str | None = None,
    durable: bool = True,
    effect: bool = False,
    reconcile: Reconcile | None = None,
) -> FunctionTool:
    if not callable(func):
        raise ConfigurationError(f"@tool needs a function, got {type(func).__name__}")
    tool_name = name if name is not None else getattr(func, "__name__", "")
    _check_tool_name(tool_name)
    docs = _parse_docstring(inspect.getdoc(func) or "")
    parameters = _parameters(func, tool_name, docs.parameters)
    schema = _arguments_schema(tool_name, parameters.fields, strict=strict)
    return FunctionTool(
        name=tool_name,
        description=docs.description if description is None else description,
        parameters=schema.parameters,
        strict=schema.strict,
        raise_errors=raise_errors,
        run_in_thread=run_in_thread,
        needs_approval=needs_approval,
        available_when=available_when,
        durable=durable,
        effect=effect,
        reconcile=reconcile,
        _function=func,
        _arguments=schema,
        _context_parameter=parameters.context,
        _positional_only=parameters.positional_only,
    )


def _check_tool_name(name: object) -> None:
    if not isinstance(name, str) or not _TOOL_NAME.match(name):
        raise ConfigurationError(
            f"tool name {name!r} is not allowed: use 1-64 letters, digits, '_' or '-' "
            "(pass name=... to @tool)"
        )


def _check_effect(name: str, effect: bool, reconcile: object, durable: bool) -> None:
    if reconcile is not None and not effect:
        raise ConfigurationError(
            f"tool {name!r} has a reconcile function but is not an effect: pass effect=True"
        )
    if reconcile is not None and not callable(reconcile):
        raise ConfigurationError(
            f"the reconcile function of tool {name!r} must be callable as "
            "reconcile(idempotency_key, arguments)"
        )
    if effect and not durable:
        raise ConfigurationError(
            f"tool {name!r} is an effect, which changes the outside world: drop durable=False"
        )


def _parameters(
    func: Callable[..., Any], tool_name: str, descriptions: Mapping[str, str]
) -> _Parameters:
    hints = _type_hints(func, tool_name)
    fields: dict[str, Any] = {}
    context: str | None = None
    positional_only: list[str] = []
    for parameter in inspect.signature(func).parameters.values():
        annotation = _annotation(parameter, hints, tool_name)
        if parameter.kind is inspect.Parameter.POSITIONAL_ONLY:
            positional_only.append(parameter.name)
        if annotation is RunContext:
            if context is not None:
                raise ConfigurationError(f"tool {tool_name!r} asks for the RunContext twice")
            context = parameter.name
            continue
        description = None if _described(annotation) else descriptions.get(parameter.name)
        fields[parameter.name] = (annotation, _field_info(parameter, description))
    return _Parameters(fields=fields, context=context, positional_only=tuple(positional_only))


def _type_hints(func: Callable[..., Any], tool_name: str) -> dict[str, Any]:
    target: Any = func
    while isinstance(target, functools.partial):
        target = target.func
    if not inspect.isroutine(target):
        target = type(target).__call__  # a callable object: its __call__ holds the annotations
    try:
        return get_type_hints(target, include_extras=True)
    except Exception as exc:
        raise ConfigurationError(
            f"cannot resolve the annotations of tool {tool_name!r} ({exc}); define the types "
            "it uses at module level"
        ) from exc


def _annotation(parameter: inspect.Parameter, hints: Mapping[str, Any], tool_name: str) -> Any:
    where = f"parameter {parameter.name!r} of tool {tool_name!r}"
    if parameter.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
        raise ConfigurationError(f"{where}: *args and **kwargs cannot be tool arguments")
    if parameter.name.startswith("_") and hints.get(parameter.name) is not RunContext:
        raise ConfigurationError(f"{where}: names starting with '_' cannot be tool arguments")
    if parameter.name not in hints:
        raise ConfigurationError(f"{where} needs a type annotation (use Any for any JSON value)")
    return hints[parameter.name]


def _described(annotation: Any) -> bool:
    # A description given with Annotated[..., Field(description=...)] is more specific than the
    # docstring's, and passing the docstring's as well would replace it.
    if get_origin(annotation) is not Annotated:
        return False
    return any(isinstance(meta, FieldInfo) and meta.description for meta in annotation.__metadata__)


def _field_info(parameter: inspect.Parameter, description: str | None) -> FieldInfo:
    if isinstance(parameter.default, FieldInfo):
        return parameter.default
    default = ... if parameter.default is inspect.Parameter.empty else parameter.default
    # Field(description=None) would also erase an Annotated description; leave it unset.
    field_info: FieldInfo = (
        Field(default, description=description) if description else Field(default)
    )
    return field_info


def _arguments_schema(
    tool_name: str, fields: dict[str, Any], *, strict: bool
) -> ArgumentsSchema[BaseModel]:
    model_name = "".join(part[:1].upper() + part[1:] for part in re.split(r"[_-]", tool_name))
    # extra="forbid" so a misspelt argument is reported instead of silently ignored.
    config = ConfigDict(extra="forbid", protected_namespaces=())
    try:
        model = create_model(f"{model_name}Arguments", __config__=config, **fields)
        return arguments_schema(model, strict=strict)
    except PydanticUserError as exc:
        raise ConfigurationError(
            f"tool {tool_name!r} has a parameter type pydantic cannot describe: {exc}"
        ) from exc


def _exception_text(exc: Exception) -> str:
    detail = str(exc)
    return f"Error: {type(exc).__name__}: {detail}" if detail else f"Error: {type(exc).__name__}"


# -- docstrings -------------------------------------------------------------------------------

_ARGUMENT_SECTIONS = frozenset(
    {"args", "arguments", "parameters", "params", "keyword args", "keyword arguments"}
)
_SECTION = re.compile(
    r"^(args|arguments|parameters|params|keyword args|keyword arguments|returns?|yields?|"
    r"raises|examples?|notes?|attributes|see also|warnings?|todo)\s*:\s*$",
    re.IGNORECASE,
)
_GOOGLE_ARGUMENT = re.compile(r"^\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_REST_PARAM = re.compile(r"^:param\s+(?:[^:]*\s)?(\w+)\s*:\s*(.*)$")
_REST_FIELD = re.compile(r"^:\w+")


@dataclass(frozen=True, kw_only=True)
class _Docstring:
    """A docstring split into the tool description and per-parameter descriptions."""

    description: str
    """The text before the first section (summary and any extended description)."""
    parameters: dict[str, str]
    """Each documented parameter's description, continuation lines joined."""


def _parse_docstring(text: str) -> _Docstring:
    """Split a Google-style (``Args:``) or reST (``:param x:``) docstring."""
    reader = _DocstringReader()
    for line in inspect.cleandoc(text).splitlines():
        reader.feed(line)
    description = "\n".join(reader.description).strip()
    return _Docstring(description=description, parameters=reader.parameters)


class _DocstringReader:
    """Reads a docstring line by line, tracking the section each line belongs to."""

    def __init__(self) -> None:
        self.description: list[str] = []
        self.parameters: dict[str, str] = {}
        self._section: str | None = None  # None while still in the description
        self._current: str | None = None  # the parameter that continuation lines extend
        self._indent: int | None = None  # the indentation of entries in an Args: section

    def feed(self, line: str) -> None:
        stripped = line.strip()
        if header := _SECTION.match(line):
            self._start(header.group(1).lower())
        elif field_ := _REST_PARAM.match(stripped):
            self._section = "rest"
            self._add(field_.group(1), field_.group(2))
        elif _REST_FIELD.match(stripped):
            self._start(":field")
        elif self._section is None:
            self.description.append(line)
        elif stripped and self._section == "args":
            self._read_entry(line, stripped)
        elif stripped and self._section == "rest":
            self._extend(stripped)

    def _start(self, section: str) -> None:
        self._section = "args" if section in _ARGUMENT_SECTIONS else "other"
        self._current = self._indent = None

    def _read_entry(self, line: str, stripped: str) -> None:
        # Entries share the first entry's indentation; deeper lines continue the last entry.
        indent = len(line) - len(line.lstrip())
        self._indent = indent if self._indent is None else self._indent
        entry = _GOOGLE_ARGUMENT.match(stripped)
        if entry and indent == self._indent:
            self._add(entry.group(1), entry.group(2))
        else:
            self._extend(stripped)

    def _add(self, name: str, text: str) -> None:
        self._current = name
        self.parameters[name] = text.strip()

    def _extend(self, text: str) -> None:
        if self._current is not None:
            self.parameters[self._current] = f"{self.parameters[self._current]} {text}".strip()
