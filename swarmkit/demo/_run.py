"""run_demo: three support tickets run live and journaled, then replayed with zero model calls."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from swarmkit.console import LiveView
from swarmkit.demo._model import DemoModel
from swarmkit.demo._support import build_support_swarm
from swarmkit.exceptions import ReplayDivergenceError, SwarmkitError
from swarmkit.journal import Journal, SQLiteJournal
from swarmkit.models import Model, ModelRequest, ModelResponse
from swarmkit.result import RunResult
from swarmkit.swarm import Swarm

_RULE = "=" * 78


@dataclass(frozen=True, kw_only=True, slots=True)
class Ticket:
    """One customer ticket the demo runs."""

    slug: str
    """Short name, the start of its session id."""
    shows: str
    """What the ticket demonstrates."""
    prompt: str
    """The customer's message."""
    context: Mapping[str, Any]
    """What the caller already knows; the rules read it."""


TICKETS = (
    Ticket(
        slug="outage",
        shows="a known category, routed by a rule: triage makes no model call",
        prompt="Since about 9:15 our dashboard shows 502 errors and nobody on my team can log "
        "in. Is something down?",
        context={"category": "outage", "customer_id": "C-311"},
    ),
    Ticket(
        slug="refund",
        shows="routed by the LLM, with a typed RefundRequest payload",
        prompt="Hi, I was charged twice for invoice INV-1042 this month. Please refund the "
        "duplicate charge.",
        context={"customer_id": "C-1042"},
    ),
    Ticket(
        slug="escalation",
        shows="escalated by the LLM to a person on the support team",
        prompt="This is the third time I am writing about closing my account. I want to speak "
        "to a person, not a bot.",
        context={"customer_id": "C-877"},
    ),
)
"""The demo's tickets, in the order they run."""


class _NoModelCalls:
    """A model that refuses every call: replay must take every answer from the journal."""

    name = "no-model-calls"

    def __init__(self) -> None:
        self.calls = 0

    async def respond(self, request: ModelRequest) -> ModelResponse:
        self.calls += 1
        raise SwarmkitError(f"replay tried to call the model for agent {request.agent!r}")


async def run_demo(out: TextIO, *, journal_path: Path, model: Model | None = None) -> int:
    """Run the support demo, writing a live view to ``out``; 0 when every replay reproduced.

    Without ``model`` the offline DemoModel stands in for the LLM. Each ticket's run is
    journaled to the SQLite file at ``journal_path`` (its folder is created), then replayed
    from it with a model that refuses to be called.
    """
    chosen: Model = model if model is not None else DemoModel()
    swarm = build_support_swarm(chosen)
    journal_path.parent.mkdir(parents=True, exist_ok=True)
    with SQLiteJournal(journal_path) as journal:
        _write(out, _header(chosen, journal_path))
        results = [await _run_ticket(out, swarm, journal, ticket, n) for n, ticket in _numbered()]
        _write(
            out,
            [
                "",
                _RULE,
                "Replay: each session again from the journal, with a model "
                "that refuses to be called",
                _RULE,
            ],
        )
        reproduced = [await _replay(out, swarm, journal, result) for result in results]
    _write(out, _footer(journal_path, results))
    return 0 if all(reproduced) else 1


def _numbered() -> list[tuple[int, Ticket]]:
    return list(enumerate(TICKETS, start=1))


def _header(model: Model, journal_path: Path) -> list[str]:
    if isinstance(model, DemoModel):
        about = f"{model.name}; set OPENAI_API_KEY to run it live"
    else:
        about = f"{getattr(model, 'name', type(model).__name__)} (live, through the API)"
    return [
        "swarmkit demo: a customer-support swarm",
        "  agents:  triage -> billing | tech_support | human",
        "  rules:   category == 'billing' -> billing; category == 'outage' -> tech_support",
        f"  model:   {about}",
        f"  journal: {journal_path}",
    ]


async def _run_ticket(
    out: TextIO, swarm: Swarm, journal: Journal, ticket: Ticket, number: int
) -> RunResult:
    session_id = await _fresh_session_id(journal, f"demo-{ticket.slug}")
    _write(
        out,
        [
            "",
            _RULE,
            f"Ticket {number}/{len(TICKETS)}: {ticket.shows}",
            _RULE,
            f"  ticket:  {ticket.prompt}",
            f"  context: {json.dumps(dict(ticket.context))}",
        ],
    )
    events = swarm.stream(
        ticket.prompt, context=ticket.context, session_id=session_id, journal=journal
    )
    return await LiveView(out, swarm).follow(events)


async def _fresh_session_id(journal: Journal, base: str) -> str:
    # Numbered, not random, so a first demo run names its sessions the same on every machine.
    taken = {info.session_id for info in await journal.sessions()}
    number = 1
    while f"{base}-{number}" in taken:
        number += 1
    return f"{base}-{number}"


async def _replay(out: TextIO, swarm: Swarm, journal: Journal, live: RunResult) -> bool:
    guard = _NoModelCalls()
    try:
        replayed = await swarm.with_model(guard).replay(live.session_id, journal)
    except ReplayDivergenceError as exc:
        _write(out, [f"  {live.session_id}: replay DIVERGED", *str(exc).splitlines()])
        return False
    same = _same_run(live, replayed)
    verdict = "same answer, trail and handoffs" if same else "DIFFERENT from the live run"
    _write(
        out,
        [
            f"  {live.session_id}: {guard.calls} model calls made; {replayed.turns} answers "
            f"served from the journal; {verdict} ({' -> '.join(replayed.trail)})"
        ],
    )
    return same and guard.calls == 0


def _same_run(live: RunResult, replayed: RunResult) -> bool:
    return (
        live.final_output == replayed.final_output
        and live.stop_reason == replayed.stop_reason
        and live.trail == replayed.trail
        and live.handoffs == replayed.handoffs
    )


def _footer(journal_path: Path, results: list[RunResult]) -> list[str]:
    journal = f"--journal {journal_path}"
    first = results[0].session_id if results else "SESSION"
    return [
        "",
        "Explore the journal:",
        f"  swarmkit sessions {journal}",
        f"  swarmkit show {first} {journal}",
        f"  swarmkit draw --session {first} {journal}",
        f"  swarmkit replay {first} --swarm swarmkit.demo:support_swarm {journal}",
        "  swarmkit draw swarmkit.demo:support_swarm",
        f"  swarmkit ui --swarm swarmkit.demo:support_swarm {journal}",
    ]


def _write(out: TextIO, lines: list[str]) -> None:
    out.write("".join(line + "\n" for line in lines))
    out.flush()
