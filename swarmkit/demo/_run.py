"""run_demo: three support tickets run live and journaled, then replayed with zero model calls."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from swarmkit.console import LiveView, plural
from swarmkit.demo._model import DemoModel
from swarmkit.demo._support import build_support_swarm
from swarmkit.exceptions import ReplayDivergenceError, SwarmkitError
from swarmkit.journal import Journal, open_journal
from swarmkit.lowlevel import journal_label
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


async def run_demo(
    out: TextIO,
    *,
    journal_path: Path | str,
    model: Model | None = None,
    program: str = "swarmkit",
) -> int:
    """Run the support demo, writing a live view to ``out``; 0 when every run finished and
    every replay reproduced it, 1 when a run failed (a wrong key, a server that is down) or a
    replay differed.

    Without ``model`` the offline DemoModel stands in for the LLM. Each ticket's run is
    journaled to the SQLite file at ``journal_path`` (its folder is created), or to the
    ``postgresql://`` URL, then replayed from it with a model that refuses to be called.
    ``program`` is how the closing hints call the command (a path such as
    ``.venv/bin/swarmkit`` when it is not on PATH).
    """
    chosen: Model = model if model is not None else DemoModel()
    swarm = build_support_swarm(chosen)
    if isinstance(journal_path, Path):
        journal_path.parent.mkdir(parents=True, exist_ok=True)
    with open_journal(journal_path) as journal:
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
    failed = [r for r in results if r.stop_reason == "error"]
    _write(out, _failures(failed, program) if failed else _footer(journal_path, results, program))
    return 0 if all(reproduced) and not failed else 1


def _numbered() -> list[tuple[int, Ticket]]:
    return list(enumerate(TICKETS, start=1))


def _header(model: Model, journal_path: Path | str) -> list[str]:
    if isinstance(model, DemoModel):
        about = f"{model.name}; set OPENAI_API_KEY to run it live"
    else:
        about = f"{getattr(model, 'name', type(model).__name__)} (live, through the API)"
    return [
        "swarmkit demo: a customer-support swarm",
        "  agents:  triage -> billing | tech_support | human",
        "  rules:   category == 'billing' -> billing; category == 'outage' -> tech_support",
        f"  model:   {about}",
        f"  journal: {journal_label(journal_path)}",
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
    if live.stop_reason == "error":
        # A failed run has no answer to reproduce; replay only shows it fails the same way.
        verdict = "the live run FAILED, and replay fails the same way; no answer to compare"
    else:
        verdict = "same answer, trail and handoffs" if same else "DIFFERENT from the live run"
    _write(
        out,
        [
            f"  {live.session_id}: {plural(guard.calls, 'model call')} made; "
            f"{plural(replayed.turns, 'answer')} served from the journal; {verdict} "
            f"({' -> '.join(replayed.trail)})"
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


def _failures(failed: list[RunResult], program: str) -> list[str]:
    first = failed[0].error
    return [
        "",
        f"The demo FAILED: {plural(len(failed), 'run')} of {len(TICKETS)} ended in an error.",
        f"  first error: {first}" if first is not None else "  first error: unknown",
        f"  check OPENAI_API_KEY and OPENAI_BASE_URL, or run offline: {program} demo --offline",
    ]


def _footer(journal_path: Path | str, results: list[RunResult], program: str) -> list[str]:
    journal = f"--journal {journal_label(journal_path)}"
    first = results[0].session_id if results else "SESSION"
    lines = ["", "Explore the journal:"]
    if program != "swarmkit":
        activate = Path(program).parent / "activate"
        lines.append(f"  (the command is {program} here; or `. {activate}` first, then swarmkit)")
    return [
        *lines,
        f"  {program} sessions {journal}",
        f"  {program} show {first} {journal}",
        f"  {program} draw --session {first} {journal}",
        f"  {program} replay {first} --swarm swarmkit.demo:support_swarm {journal}",
        f"  {program} draw swarmkit.demo:support_swarm",
        f"  {program} ui --swarm swarmkit.demo:support_swarm {journal}",
    ]


def _write(out: TextIO, lines: list[str]) -> None:
    out.write("".join(line + "\n" for line in lines))
    out.flush()
