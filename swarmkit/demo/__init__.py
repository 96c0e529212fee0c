"""The offline demo: a customer-support swarm, a deterministic stand-in model, and its runner.

``swarmkit demo`` calls [run_demo][swarmkit.demo.run_demo]; ``swarmkit.demo:support_swarm`` can be
run, drawn and replayed with the ``swarmkit`` command like any user's swarm.
"""

from __future__ import annotations

from swarmkit.demo._model import DEMO_MODEL_NAME, DemoModel
from swarmkit.demo._run import TICKETS, Ticket, run_demo
from swarmkit.demo._support import (
    RefundRequest,
    build_support_swarm,
    check_service_status,
    issue_refund,
    lookup_invoice,
    open_ticket,
    support_graph,
)
from swarmkit.factory import swarm_factory
from swarmkit.swarm import Swarm


@swarm_factory
def support_swarm() -> Swarm:
    """The support swarm on DemoModel, for ``swarmkit draw swarmkit.demo:support_swarm``."""
    return build_support_swarm(DemoModel())


__all__ = [
    "DEMO_MODEL_NAME",
    "DemoModel",
    "RefundRequest",
    "TICKETS",
    "Ticket",
    "build_support_swarm",
    "check_service_status",
    "issue_refund",
    "lookup_invoice",
    "open_ticket",
    "run_demo",
    "support_graph",
    "support_swarm",
]
