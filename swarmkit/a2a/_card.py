"""The A2A agent card of a swarm: its name, what it does, one skill per agent."""

from __future__ import annotations

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
from a2a.utils.constants import PROTOCOL_VERSION_CURRENT, TransportProtocol

from swarmkit.swarm import Swarm

BEARER = "bearer"
"""The name of the card's security scheme."""


def agent_card(
    swarm: Swarm,
    *,
    url: str,
    name: str | None = None,
    description: str | None = None,
    version: str = "1.0.0",
    bearer: bool = True,
    extended: bool = False,
) -> AgentCard:
    """The card another agent reads before calling the swarm at ``url`` (JSON-RPC, streaming).

    ``name`` defaults to the entry agent's name and ``description`` to its description. The
    public card (anyone may read it) has one skill, the entry agent, and says an extended card
    is there for a caller with a token; the ``extended`` card has a skill per agent, each
    described by its own ``description``. With ``bearer`` the card says every request needs
    ``Authorization: Bearer <token>``.
    """
    entry = swarm.agents[swarm.entry_agent]
    card = AgentCard(
        name=name or entry.name,
        description=description or entry.description or f"A swarm entered at {entry.name}",
        version=version,
        supported_interfaces=[
            AgentInterface(
                url=url,
                protocol_binding=TransportProtocol.JSONRPC,
                protocol_version=PROTOCOL_VERSION_CURRENT,
            )
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
