"""The offline demo: a customer-support swarm, a deterministic stand-in model, and its runner.

``swarmkit demo`` calls :func:`run_demo`. The package also holds the plain-text views the demo
and the ``swarmkit`` command share: :class:`LiveView` (a run's events as they happen) and
:func:`timeline` (a journaled session, step by step).
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
from swarmkit.demo._timeline import timeline
from swarmkit.demo._view import LiveView, compact_json, one_line, result_lines, tokens
from swarmkit.swarm import Swarm


def support_swarm() -> Swarm:
    """The support swarm on DemoModel, for ``swarmkit draw swarmkit.demo:support_swarm``."""
    return build_support_swarm(DemoModel())


__all__ = [
    "DEMO_MODEL_NAME",
    "DemoModel",
    "LiveView",
    "RefundRequest",
    "TICKETS",
    "Ticket",
    "build_support_swarm",
    "check_service_status",
    "compact_json",
    "issue_refund",
    "lookup_invoice",
    "one_line",
    "open_ticket",
    "result_lines",
    "run_demo",
    "support_graph",
    "support_swarm",
    "timeline",
    "tokens",
]
