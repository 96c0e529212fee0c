"""Agent: a named peer with instructions, tools, the peers it may hand off to, and a model."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from pydantic import BaseModel

from swarmkit.context import RunContext
from swarmkit.delegation import AgentTool, agent_tool
from swarmkit.exceptions import ConfigurationError
from swarmkit.handoffs import Handoff, build_transfer_tools
from swarmkit.models import Model, ModelSettings
from swarmkit.tools import FunctionTool

Instructions: TypeAlias = str | Callable[[RunContext], str | Awaitable[str]]
"""An agent's system prompt: a string, or a sync or async function of the run context."""


# eq=False: agents compare and hash by identity, so they can key dicts and sets (their fields
# hold mappings, which would make a value hash fail).
@dataclass(frozen=True, kw_only=True, eq=False)
class Agent:
    """A peer of a swarm; validated at construction so mistakes surface before any model call."""

    name: str
    """The agent's unique name in its swarm; transfer tools are named after it."""
    instructions: Instructions = ""
    """The system prompt, or a function of the run context that returns it."""
    tools: Sequence[FunctionTool | AgentTool] = ()
    """The function tools the agent may call, and agents it delegates to (``other.as_tool()``);
    stored as a tuple."""
    handoffs: Sequence[str | Agent | Handoff] | None = None
    """The peers it may hand off to: None means every other peer of the swarm, [] none."""
    description: str = ""
    """What the agent does, shown in other agents' transfer tool descriptions."""
    model: Model | str | None = None
    """A model (or model name) for this agent instead of the swarm's."""
    handoff_budget: int | None = None
    """How many handoffs this agent may make in one run; None means no limit."""
    then: str | None = None
    """With a ``handoff_budget``: the agent to continue to once the budget is spent, as a
    recorded decision, instead of having to answer."""
    model_settings: ModelSettings = field(default_factory=ModelSettings)
    """Sampling and tool-use settings for this agent's model calls."""
    output_type: type[BaseModel] | None = None
    """A Pydantic model the agent's final answer must validate into (``RunResult.final_output``
    then holds the value); None means the answer is plain text."""
    structured_output: bool = True
    """Send ``output_type``'s strict JSON schema as the API's structured output; False for
    servers that reject it (the answer is validated either way)."""
    max_output_retries: int = 2
    """How many times an answer that does not validate is sent back with the error before the
    run stops with ``invalid_output``."""
    memory: Literal["shared", "own", "none"] = "shared"
    """What the agent remembers when it is handed the conversation again: ``"shared"`` (what
    the handoff's input filter gives it), ``"own"``: its own earlier turns too (its
    messages, tool calls and their results, from every turn of the conversation), even when
    the filter forwarded only the last message, or ``"none"``: nothing of the conversation's
    earlier turns, only what was said in this one."""

    def __post_init__(self) -> None:
        _check_name(self.name)
        _check_instructions(self.name, self.instructions)
        object.__setattr__(self, "tools", _checked_tools(self.name, self.tools))
        object.__setattr__(self, "handoffs", _checked_handoffs(self.name, self.handoffs))
        _check_fields(self)
        _check_tool_names(self)

    async def render_instructions(self, context: RunContext) -> str:
        """The system prompt for this turn: the string, or what the function returns."""
        if isinstance(self.instructions, str):
            return self.instructions
        rendered = self.instructions(context)
        if inspect.isawaitable(rendered):
            rendered = await rendered
        if not isinstance(rendered, str):
            raise ConfigurationError(
                f"the instructions function of agent {self.name!r} returned "
                f"{type(rendered).__name__}; it must return a str"
            )
        return rendered

    def as_tool(self, *, name: str | None = None, description: str | None = None) -> AgentTool:
        """This agent as a tool for a supervisor: it answers and control returns to the caller.

        The tool is ``ask_<name>`` with one ``input`` string; its description defaults to this
        agent's description. The agent must also be a member of the swarm.
        """
        return agent_tool(self.name, name=name, description=description or self.description)

    def handoff_configs(self) -> tuple[Handoff, ...] | None:
        """The handoffs as Handoff objects (names and Agents wrapped); None when unrestricted."""
        if self.handoffs is None:
            return None
        return tuple(_as_handoff(peer) for peer in self.handoffs)


def _as_handoff(peer: str | Agent | Handoff) -> Handoff:
    return peer if isinstance(peer, Handoff) else Handoff(agent=peer)


def _check_name(name: object) -> None:
    if not isinstance(name, str) or not name.strip():
        raise ConfigurationError(f"Agent name must be a non-empty str, got {name!r}")


def _check_instructions(name: str, instructions: object) -> None:
    if not isinstance(instructions, str) and not callable(instructions):
        raise ConfigurationError(
            f"agent {name!r}: instructions must be a str or a function of the run context, "
            f"got {type(instructions).__name__}"
        )


def _checked_tools(name: str, tools: object) -> tuple[FunctionTool | AgentTool, ...]:
    if isinstance(tools, str | bytes) or not isinstance(tools, Sequence):
        raise ConfigurationError(f"agent {name!r}: tools must be a list of @tool functions")
    for item in tools:
        if isinstance(item, AgentTool) and item.agent == name:
            raise ConfigurationError(f"agent {name!r} cannot delegate to itself")
        if not isinstance(item, FunctionTool | AgentTool):
            raise ConfigurationError(
                f"agent {name!r}: tool {item!r:.80} is not a FunctionTool; decorate it with @tool"
            )
    return tuple(tools)


def _checked_handoffs(name: str, handoffs: object) -> tuple[str | Agent | Handoff, ...] | None:
    if handoffs is None:
        return None
    if isinstance(handoffs, str | bytes) or not isinstance(handoffs, Sequence):
        raise ConfigurationError(
            f"agent {name!r}: handoffs must be a list of peer names, Agents or Handoffs (or None)"
        )
    for peer in handoffs:
        target = _peer_name(name, peer)
        if target == name:
            raise ConfigurationError(
                f"agent {name!r} lists itself in handoffs; remove it (an agent never transfers "
                "to itself)"
            )
    return tuple(handoffs)


def _peer_name(name: str, peer: object) -> str:
    if isinstance(peer, Agent | Handoff):
        return peer.name if isinstance(peer, Agent) else peer.target
    if isinstance(peer, str) and peer:
        return peer
    raise ConfigurationError(
        f"agent {name!r}: handoff {peer!r:.80} must be a peer name, an Agent or a Handoff"
    )


def _check_fields(agent: Agent) -> None:
    budget = agent.handoff_budget
    if budget is not None and (isinstance(budget, bool) or not isinstance(budget, int)):
        raise ConfigurationError(f"agent {agent.name!r}: handoff_budget must be an int or None")
    if budget is not None and budget < 0:
        raise ConfigurationError(f"agent {agent.name!r}: handoff_budget must be 0 or more")
    if not isinstance(agent.description, str):
        raise ConfigurationError(f"agent {agent.name!r}: description must be a str")
    if agent.then is not None and (budget is None or not isinstance(agent.then, str)):
        raise ConfigurationError(
            f"agent {agent.name!r}: then= names the agent to continue to once handoff_budget "
            "is spent: give both, then= as an agent name"
        )
    if agent.then == agent.name:
        raise ConfigurationError(f"agent {agent.name!r}: then= cannot name the agent itself")
    if agent.model is not None and not isinstance(agent.model, str | Model):
        raise ConfigurationError(
            f"agent {agent.name!r}: model must be a Model (e.g. OpenAIModel('gpt-4o')), a model "
            f"name such as 'gpt-4o', or None; got {type(agent.model).__name__}"
        )
    if not isinstance(agent.model_settings, ModelSettings):
        raise ConfigurationError(
            f"agent {agent.name!r}: model_settings must be a ModelSettings, e.g. "
            f"ModelSettings(temperature=0.2); got {type(agent.model_settings).__name__}"
        )
    _check_output(agent)
    if agent.memory not in ("shared", "own", "none"):
        raise ConfigurationError(
            f"agent {agent.name!r}: memory must be 'shared', 'own' or 'none', got {agent.memory!r}"
        )


def _check_output(agent: Agent) -> None:
    output_type = agent.output_type
    if output_type is not None and not (
        isinstance(output_type, type) and issubclass(output_type, BaseModel)
    ):
        raise ConfigurationError(
            f"agent {agent.name!r}: output_type must be a Pydantic model class, got {output_type!r}"
        )
    retries = agent.max_output_retries
    if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
        raise ConfigurationError(f"agent {agent.name!r}: max_output_retries must be an int >= 0")


def _check_tool_names(agent: Agent) -> None:
    names = [tool.name for tool in agent.tools]
    configs = agent.handoff_configs()
    # With an explicit list the transfer tools are known now; building them also reports two
    # peers whose tool names collide.
    if configs is not None:
        names += [transfer.name for transfer in build_transfer_tools(agent.name, configs)]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise ConfigurationError(
            f"agent {agent.name!r} has several tools named {', '.join(map(repr, duplicates))}; "
            "tool names must be unique (rename with @tool(name=...))"
        )
    _check_tool_choice(agent, names)


def _check_tool_choice(agent: Agent, names: list[str]) -> None:
    """A tool_choice is a mode or names a tool the agent has; the swarm, which knows every
    handoff tool, checks a name it adds (``transfer_to_<peer>``, the single ``handoff``)."""
    choice = agent.model_settings.tool_choice
    if choice is None or choice in _TOOL_CHOICE_MODES or choice in names:
        return
    if choice.startswith("transfer_to_") or choice == "handoff":
        return
    tools = ", ".join(repr(name) for name in names) or "it has none"
    raise ConfigurationError(
        f"agent {agent.name!r}: tool_choice {choice!r} is neither a mode nor one of its tools; "
        f"use 'auto', 'required', 'none' or the name of one of its tools ({tools})"
    )


_TOOL_CHOICE_MODES = ("auto", "required", "none")
