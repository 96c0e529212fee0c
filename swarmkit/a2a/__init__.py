"""swarmkit[a2a]: a swarm served as an A2A agent, and remote A2A agents as peers of a swarm.

Only this package imports ``a2a`` (the a2a-sdk); ``import swarmkit`` never loads it.
"""

from __future__ import annotations

from swarmkit.a2a._card import agent_card
from swarmkit.a2a._executor import SwarmExecutor, decision_of
from swarmkit.a2a._principals import Principal
from swarmkit.a2a._remote import RemoteA2AModel, remote_agent
from swarmkit.a2a._server import A2AServer, a2a_app
from swarmkit.a2a._tasks import DatabaseTasks, task_store

__all__ = [
    "A2AServer",
    "DatabaseTasks",
    "Principal",
    "RemoteA2AModel",
    "SwarmExecutor",
    "a2a_app",
    "agent_card",
    "decision_of",
    "remote_agent",
    "task_store",
]
