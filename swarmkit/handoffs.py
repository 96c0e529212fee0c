"""Handoffs: per-peer `transfer_to_<name>` tools (typed or not) and the legacy `handoff` tool."""

from __future__ import annotations

import copy
import hashlib
import inspect
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NoReturn

from pydantic import BaseModel, ConfigDict, Field

from swarmkit._schema import (
    TOOL_NAME_PATTERN,
    ArgumentProblem,
    ArgumentsSchema,
    arguments_schema,
    spec_of,
)
from swarmkit.conditions import Condition, compile_condition
from swarmkit.exceptions import ConfigurationError, HandoffPayloadError
from swarmkit.models import ToolSpec

if TYPE_CHECKING:
    from swarmkit.agent import Agent

InputFilter = Callable[..., Any]
"""Decides what history a receiving agent sees; the Swarm loop defines the calling convention."""

OnHandoff = Callable[..., Any]
"""Called as a handoff is performed: ``(context)`` or ``(context, payload)``, sync or async."""

_TOOL_NAME = re.compile(TOOL_NAME_PATTERN)
_INVALID_NAME_CHARACTERS = re.compile(r"[^a-zA-Z0-9_-]")
_TRANSFER_PREFIX = "transfer_to_"
_MAX_TOOL_NAME = 64
_NO_DESCRIPTIONS: Mapping[str, str] = MappingProxyType({})


@dataclass(frozen=True)
class Handoff:
    """How an agent hands off to one peer (the Swarm fields of jeevesagent, a Python agent
    framework whose Swarm and Handoff keywords swarmkit keeps).

    ``agent`` and ``input_type`` may be given by position, as jeevesagent's plain fields allow
    (``Handoff(billing, Refund)``); the rest are keyword-only.
    """

    agent: Agent | str
    """The peer: an Agent, or a peer's name."""
    input_type: type[BaseModel] | None = None
    """The payload the model must send; its schema becomes the transfer tool's parameters."""
    _: KW_ONLY
    input_filter: InputFilter | None = None
    """Decides what history the peer sees; None follows the swarm's default."""
    description: str | None = None
    """The transfer tool's description; None builds one from the peer's description."""
    tool_name: str | None = None
    """The transfer tool's name; None means ``transfer_to_<peer name>``."""
    available_when: str | None = None
    """A condition (the HandoffGraph's language, on the same state): the transfer tool is
    offered only on turns where it holds. None offers it always."""
    on_handoff: OnHandoff | None = None
    """Called as the handoff is performed, with the run context and (if it takes a second
    argument) the validated payload; sync or async. If it raises, the handoff is refused and
    the error goes back to the model, as a tool's error does."""
    raise_errors: bool = False
    """Raise ToolExecutionError when ``on_handoff`` raises, instead of refusing the handoff."""
    condition: Condition | None = field(default=None, init=False, repr=False, compare=False)
    """``available_when`` compiled (at construction: a syntax error raises here)."""

    def __post_init__(self) -> None:
        _check_peer(self.agent)
        _check_on_handoff(self.target, self.on_handoff)
        if self.available_when is not None:
            object.__setattr__(self, "condition", compile_condition(self.available_when))
        if self.input_type is not None and not (
            isinstance(self.input_type, type) and issubclass(self.input_type, BaseModel)
        ):
            raise ConfigurationError(
                f"Handoff to {self.target!r}: input_type must be a pydantic BaseModel subclass"
            )
        if self.input_filter is not None and not callable(self.input_filter):
            raise ConfigurationError(f"Handoff to {self.target!r}: input_filter must be callable")
        if self.tool_name is not None and not _is_tool_name(self.tool_name):
            raise ConfigurationError(
                f"Handoff to {self.target!r}: tool_name {self.tool_name!r} must be 1-64 "
                "letters, digits, '_' or '-'"
            )

    @property
    def target(self) -> str:
        """The peer's name."""
        return self.agent if isinstance(self.agent, str) else self.agent.name


@dataclass(frozen=True, kw_only=True)
class HandoffRequest:
    """A parsed, validated handoff call."""

    target: str
    """The peer to hand off to."""
    payload: BaseModel | None
    """The validated ``input_type`` instance, for a typed handoff."""
    message: str | None
    """The free-text note for the peer, for an untyped or legacy handoff."""
    tool_call_id: str | None = None
    """The id of the tool call that asked for the handoff."""


class _TransferMessage(BaseModel):
    """The arguments of an untyped transfer tool."""

    model_config = ConfigDict(extra="forbid", title="transfer", defer_build=True)

    message: str | None = Field(
        default=None,
        description="Optional note for the receiving agent: what to do next and what you know.",
    )


class _LegacyArguments(BaseModel):
    """The arguments of the legacy handoff tool; the target enum is added to its schema."""

    model_config = ConfigDict(extra="forbid", title="handoff", defer_build=True)

    target: str = Field(description="The name of the agent to hand off to.")
    message: str | None = Field(
        default=None,
        description="Optional note for the receiving agent: what to do next and what you know.",
    )


@dataclass(frozen=True, kw_only=True)
class TransferTool:
    """The ``transfer_to_<name>`` tool an agent calls to hand off to one peer."""

    target: str
    """The peer's name."""
    name: str
    """The tool name, e.g. ``transfer_to_billing``."""
    description: str
    """What the tool does, for the model."""
    parameters: Mapping[str, Any]
    """The JSON schema of the arguments: the input type's, or an optional ``message``."""
    handoff: Handoff
    """The configuration this tool was built from."""
    strict: bool = True
    """Whether ``parameters`` is valid for OpenAI strict mode (False only for an input type
    whose fields strict mode cannot express, such as ``dict`` or ``Any``)."""
    _arguments: ArgumentsSchema[BaseModel] = field(repr=False)
    """Validates the model's raw arguments into the input type (or the message model)."""

    def spec(self) -> ToolSpec:
        """The tool as offered to a model."""
        return spec_of(self)

    def parse(self, arguments: str, *, tool_call_id: str | None = None) -> HandoffRequest:
        """Validate a call's raw JSON arguments; HandoffPayloadError tells the model what to fix."""
        validated = self._arguments.validate(arguments)
        if isinstance(validated, ArgumentProblem):
            raise HandoffPayloadError(
                f"Error: invalid arguments for {self.name} (handoff to {self.target!r}): "
                f"{validated.message} Call {self.name} again with corrected arguments.",
                tool_name=self.name,
                target=self.target,
            )
        if isinstance(validated, _TransferMessage):
            # An empty note is no note: the peer should not see a blank message.
            message = validated.message or None
            return HandoffRequest(
                target=self.target, payload=None, message=message, tool_call_id=tool_call_id
            )
        return HandoffRequest(
            target=self.target, payload=validated, message=None, tool_call_id=tool_call_id
        )


@dataclass(frozen=True, kw_only=True)
class LegacyHandoffTool:
    """jeevesagent's single tool ``handoff(target, message="")`` for several peers at once."""

    name: str
    """The tool name, ``handoff`` unless configured."""
    targets: tuple[str, ...]
    """The peers the tool may hand off to; the schema's ``target`` enum."""
    description: str = ""
    """What the tool does, for the model."""
    parameters: Mapping[str, Any] = field(default_factory=dict)
    """The JSON schema of the arguments, strict-mode valid."""
    _arguments: ArgumentsSchema[_LegacyArguments] = field(repr=False)
    """Validates the model's raw arguments."""

    def spec(self) -> ToolSpec:
        """The tool as offered to a model."""
        return ToolSpec(
            name=self.name, description=self.description, parameters=self.parameters, strict=True
        )

    def parse(self, arguments: str, *, tool_call_id: str | None = None) -> HandoffRequest:
        """Validate a call's raw JSON arguments; an unknown target is a HandoffPayloadError."""
        validated = self._arguments.validate(arguments)
        if isinstance(validated, ArgumentProblem):
            self._refuse("", validated.message)
        if validated.target not in self.targets:
            self._refuse(validated.target, f"target: unknown agent {validated.target!r}.")
        return HandoffRequest(
            target=validated.target,
            payload=None,
            message=validated.message or None,
            tool_call_id=tool_call_id,
        )

    def _refuse(self, target: str, problem: str) -> NoReturn:
        choices = ", ".join(repr(name) for name in self.targets)
        raise HandoffPayloadError(
            f"Error: invalid arguments for {self.name}: {problem} The target must be one of "
            f"{choices}. Call {self.name} again with corrected arguments.",
            tool_name=self.name,
            target=target,
        )


def transfer_tool_name(agent_name: str) -> str:
    """``transfer_to_<name>``, made to fit the API's tool-name rule ``^[a-zA-Z0-9_-]{1,64}$``.

    Characters outside the rule become ``_``; a name too long is cut and given a short hash of
    the full agent name, so distinct long names stay distinct and the result is deterministic.
    """
    name = _TRANSFER_PREFIX + _INVALID_NAME_CHARACTERS.sub("_", agent_name)
    if len(name) <= _MAX_TOOL_NAME:
        return name
    digest = hashlib.sha256(agent_name.encode()).hexdigest()[:8]
    return f"{name[: _MAX_TOOL_NAME - len(digest) - 1]}_{digest}"


def build_transfer_tools(
    source: str,
    targets: Sequence[Handoff],
    *,
    descriptions: Mapping[str, str] = _NO_DESCRIPTIONS,
) -> tuple[TransferTool, ...]:
    """One transfer tool per target except ``source`` itself, in the order given.

    ``descriptions`` maps peer names to their ``Agent.description`` for the default tool
    description. Two targets whose tool names coincide (after normalisation, or by a custom
    ``tool_name``) are a ConfigurationError naming both.
    """
    tools: list[TransferTool] = []
    owners: dict[str, str] = {}
    for handoff in targets:
        if handoff.target == source:
            continue
        built = _build_transfer_tool(handoff, descriptions)
        if built.name in owners:
            raise ConfigurationError(
                f"agent {source!r}: handoffs to {owners[built.name]!r} and {handoff.target!r} "
                f"both make a tool named {built.name!r}; rename an agent or set tool_name"
            )
        owners[built.name] = handoff.target
        tools.append(built)
    return tuple(tools)


def build_legacy_handoff_tool(
    source: str,
    targets: Sequence[str],
    *,
    tool_name: str = "handoff",
    descriptions: Mapping[str, str] = _NO_DESCRIPTIONS,
) -> LegacyHandoffTool | None:
    """jeevesagent's ``handoff(target, message)`` tool for the peers other than ``source``.

    Returns None when no target remains. ``descriptions`` (peer name -> description) are listed
    in the tool's description so the model knows whom to pick.
    """
    if not _is_tool_name(tool_name):
        raise ConfigurationError(
            f"handoff tool name {tool_name!r} must be 1-64 letters, digits, '_' or '-'"
        )
    peers = tuple(dict.fromkeys(target for target in targets if target != source))
    if not peers:
        return None
    schema = arguments_schema(_LegacyArguments)
    return LegacyHandoffTool(
        name=tool_name,
        targets=peers,
        description=_legacy_description(peers, descriptions),
        parameters=_with_target_enum(schema.parameters, peers),
        _arguments=schema,
    )


def _build_transfer_tool(handoff: Handoff, descriptions: Mapping[str, str]) -> TransferTool:
    schema = arguments_schema(handoff.input_type or _TransferMessage)
    return TransferTool(
        target=handoff.target,
        name=handoff.tool_name or transfer_tool_name(handoff.target),
        description=handoff.description or _transfer_description(handoff, descriptions),
        parameters=schema.parameters,
        handoff=handoff,
        strict=schema.strict,
        _arguments=schema,
    )


def _transfer_description(handoff: Handoff, descriptions: Mapping[str, str]) -> str:
    peer = descriptions.get(handoff.target) or (
        "" if isinstance(handoff.agent, str) else handoff.agent.description
    )
    return f"Hand off to {handoff.target}: {peer}" if peer else f"Hand off to {handoff.target}."


def legacy_peer_description(agent: Agent, *, limit: int = 100) -> str:
    """How the legacy tool describes a peer: its description, else the start of its
    instructions (as jeevesagent does), else nothing (instructions that are a function)."""
    if agent.description:
        return agent.description
    if not isinstance(agent.instructions, str):
        return ""
    start = " ".join(agent.instructions.split())
    return start if len(start) <= limit else start[: limit - 3].rstrip() + "..."


def _legacy_description(peers: Sequence[str], descriptions: Mapping[str, str]) -> str:
    listed = "; ".join(
        f"{peer} ({descriptions[peer]})" if descriptions.get(peer) else peer for peer in peers
    )
    return f"Hand off the conversation to another agent: {listed}."


def _with_target_enum(parameters: Mapping[str, Any], peers: Sequence[str]) -> dict[str, Any]:
    shaped = copy.deepcopy(dict(parameters))
    shaped["properties"]["target"]["enum"] = list(peers)
    return shaped


def _check_peer(agent: object) -> None:
    # Duck-typed (anything with a str name): importing Agent here would be an import cycle.
    name = agent if isinstance(agent, str) else getattr(agent, "name", None)
    if not isinstance(name, str) or not name:
        raise ConfigurationError(
            f"Handoff.agent must be an Agent or a peer's name, got {agent!r:.80}"
        )


def _is_tool_name(name: object) -> bool:
    return isinstance(name, str) and _TOOL_NAME.match(name) is not None


def _check_on_handoff(target: str, callback: object) -> None:
    if callback is None:
        return
    if not callable(callback):
        raise ConfigurationError(f"Handoff to {target!r}: on_handoff must be callable")
    if on_handoff_arity(callback) not in (1, 2):
        raise ConfigurationError(
            f"Handoff to {target!r}: on_handoff must take (context) or (context, payload)"
        )


def on_handoff_arity(callback: Callable[..., Any]) -> int:
    """How many arguments an on_handoff callback takes (1 or 2; anything else is invalid)."""
    try:
        parameters = inspect.signature(callback).parameters.values()
    except (TypeError, ValueError):
        return 2
    if any(p.kind is p.VAR_POSITIONAL for p in parameters):
        return 2
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return sum(1 for p in parameters if p.kind in positional)
