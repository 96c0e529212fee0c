"""swarmkit[a2a]: a swarm served as an A2A agent, and remote A2A agents as peers of a swarm.

``A2AServer`` serves a swarm: each A2A context is a journaled conversation, each task one
turn. The message that starts a task reaches the run's context under ``CONTEXT_KEY``
(``a2a``: its id and metadata). A paused run's task waits in ``input-required`` with the
pause's ``INTERRUPT_ID``, which the decision names. Tasks are kept in a task store
(``task_store``): by default in the journal's SQLite file (``TASKS_TABLE``), so they outlive
a restart. ``compat=["0.3"]`` also serves A2A 0.3 clients.

Only this package imports ``a2a`` (the a2a-sdk); ``import swarmkit`` never loads it.
"""

from __future__ import annotations

from swarmkit.a2a._card import agent_card
from swarmkit.a2a._executor import CONTEXT_KEY, SwarmExecutor, decision_of
from swarmkit.a2a._principals import INTERRUPT_ID, Principal
from swarmkit.a2a._remote import RemoteA2AModel, remote_agent
from swarmkit.a2a._server import A2AServer, a2a_app
from swarmkit.a2a._tasks import TASKS_TABLE, DatabaseTasks, task_store

__all__ = [
    "A2AServer",
    "CONTEXT_KEY",
    "DatabaseTasks",
    "INTERRUPT_ID",
    "Principal",
    "RemoteA2AModel",
    "SwarmExecutor",
    "TASKS_TABLE",
    "a2a_app",
    "agent_card",
    "decision_of",
    "remote_agent",
    "task_store",
]
