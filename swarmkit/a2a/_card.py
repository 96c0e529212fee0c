"""The A2A agent card of a swarm: its name, what it does, one skill per agent."""

from __future__ import annotations

from collections.abc import Sequence

from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    HTTPAuthSecurityScheme,
    SecurityRequirement,
    SecurityScheme,
    StringList,
)
from a2a.utils.constants import PROTOCOL_VERSION_0_3, PROTOCOL_VERSION_CURRENT, TransportProtocol

from swarmkit.exceptions import ConfigurationError
from swarmkit.swarm import Swarm

BEARER = "bearer"
"""The name of the card's security scheme."""

COMPAT_VERSIONS = (PROTOCOL_VERSION_0_3,)
"""The earlier A2A protocol versions a served swarm can speak besides the current one."""


def check_compat(compat: Sequence[str]) -> tuple[str, ...]:
    """The earlier protocol versions to serve, checked (ConfigurationError names the known)."""
    if isinstance(compat, str):
        compat = (compat,)
    unknown = [v for v in compat if v not in COMPAT_VERSIONS]
    if unknown:
        raise ConfigurationError(
            f"compat names A2A versions to serve besides the current one: "
            f"{', '.join(map(repr, COMPAT_VERSIONS))}, got {unknown[0]!r}"
        )
    return tuple(dict.fromkeys(compat))


def agent_card(
    swarm: Swarm,
    *,
    url: str,
    name: str | None = None,
    description: str | None = None,
    version: str = "1.0.0",
    bearer: bool = True,
    extended: bool = False,
    compat: Sequence[str] = (),
) -> AgentCard:
    """The card another agent reads before calling the swarm at ``url`` (JSON-RPC, streaming).

    ``name`` defaults to the entry agent's name and ``description`` to its description. The
    public card (anyone may read it) has one skill, the entry agent, and says an extended card
    is there for a caller with a token; the ``extended`` card has a skill per agent, each
    described by its own ``description``. With ``bearer`` the card says every request needs
    ``Authorization: Bearer <token>``. Each version in ``compat`` (``"0.3"``) adds an
    interface at the same URL for clients of that version.
    """
    entry = swarm.agents[swarm.entry_agent]
    card = AgentCard(
        name=name or entry.name,
        description=description or entry.description or f"A swarm entered at {entry.name}",
        version=version,
        supported_interfaces=[
            AgentInterface(
                url=url, protocol_binding=TransportProtocol.JSONRPC, protocol_version=version
            )
            for version in (PROTOCOL_VERSION_CURRENT, *check_compat(compat))
        ],
        capabilities=AgentCapabilities(
            streaming=True, push_notifications=False, extended_agent_card=True
        ),
        default_input_modes=["text/plain", "application/json"],
        default_output_modes=["text/plain", "application/json"],
        skills=[_skill(agent, swarm) for agent in swarm.agents if extended or _entry(agent, swarm)],
    )
    if bearer:
        card.security_schemes[BEARER].CopyFrom(
            SecurityScheme(http_auth_security_scheme=HTTPAuthSecurityScheme(scheme="Bearer"))
        )
        card.security_requirements.append(
            SecurityRequirement(schemes={BEARER: StringList(list=[])})
        )
    return card


def _entry(agent_name: str, swarm: Swarm) -> bool:
    return agent_name == swarm.entry_agent


def _skill(agent_name: str, swarm: Swarm) -> AgentSkill:
    agent = swarm.agents[agent_name]
    tags = ["entry"] if _entry(agent_name, swarm) else ["peer"]
    return AgentSkill(
        id=agent_name,
        name=agent_name,
        description=agent.description or f"The {agent_name} agent of the swarm",
        tags=tags,
    )
