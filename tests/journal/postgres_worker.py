"""A worker process on a shared Postgres journal, for the tests that need several machines.

Run as ``python -m tests.journal.postgres_worker COMMAND DSN ...``; each command prints one
line that the test reads:

- ``sessions DSN PREFIX COUNT``: run COUNT scripted sessions, one ``run_sync`` (and so one
  fresh event loop) each; prints ``done COUNT``.
- ``hold DSN SESSION OWNER TTL``: take the session's lease and hold it until killed; prints
  ``acquired``, or ``busy HOLDER`` and exits 3.
- ``take DSN SESSION OWNER TTL``: ask for the lease once; prints ``acquired`` or ``busy HOLDER``.

``LEASE_CLOCK_OFFSET`` (seconds, in the environment) moves the journal's lease clock ahead,
so a test reaches "after the dead holder's lease expired" without waiting for it.
- ``pause DSN SESSION``: run the refund swarm until it pauses for approval.
- ``resume DSN SESSION``: approve and finish the paused run; prints its output and trail.
- ``limited DSN SESSION``: run the invoice clerk until its one allowed model call is spent;
  prints ``usage_limit``, a stop that resumes.
- ``continue DSN SESSION TURNS``: resume the clerk's session with the comma-separated live
  model turns (``wait``: call ``wait_here``; ``answer``: the final text). ``wait_here`` prints
  ``in tool`` and returns the next line of stdin, so with nothing written there the process
  stays mid-run until it is killed. Prints the output and trail, or ``busy HOLDER`` and
  exits 3.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time

from pydantic import BaseModel

from swarmkit import Agent, Handoff, Swarm, UsageLimits, approve, tool
from swarmkit.exceptions import SessionBusyError
from swarmkit.journal import PostgresJournal
from swarmkit.testing import ScriptedModel, ScriptedTurn, text, tool_call, transfer

EXIT_BUSY = 3


class Refund(BaseModel):
    """A refund to hand to billing."""

    amount: int


def refund_swarm(turns: list[ScriptedTurn], journal: PostgresJournal) -> Swarm:
    """Triage hands a typed refund to billing, pausing first for a human's approval."""
    billing = Agent(name="billing", handoffs=[])
    triage = Agent(name="triage", handoffs=[Handoff(agent=billing, input_type=Refund)])
    return Swarm(
        [triage, billing],
        "triage",
        model=ScriptedModel(*turns),
        journal=journal,
        interrupt_before=["billing"],
    )


def chat_swarm(journal: PostgresJournal) -> Swarm:
    """Triage hands off to billing, which answers: two model calls, one handoff."""
    billing = Agent(name="billing", handoffs=[])
    triage = Agent(name="triage")
    model = ScriptedModel(transfer("billing"), text("Refunded."))
    return Swarm([triage, billing], "triage", model=model, journal=journal)


@tool
def lookup(invoice_id: str) -> str:
    """Look up an invoice."""
    return f"{invoice_id}: paid"


@tool
def wait_here() -> str:
    """Say so, then wait for the test's word on stdin (forever, if it never comes)."""
    print("in tool", flush=True)
    return sys.stdin.readline().strip()


CLERK_TURNS = {"wait": tool_call("wait_here"), "answer": text("All paid.")}
"""The clerk's live model turns after its first call, by the names ``continue`` takes."""


def clerk_swarm(turns: list[ScriptedTurn], journal: PostgresJournal) -> Swarm:
    """One agent with two tools: a quick lookup and a tool that waits on stdin."""
    clerk = Agent(name="clerk", instructions="Check the invoice.", tools=[lookup, wait_here])
    return Swarm([clerk], "clerk", model=ScriptedModel(*turns), journal=journal)


def run_limited(journal: PostgresJournal, session_id: str) -> None:
    swarm = clerk_swarm([tool_call("lookup", invoice_id="A-1")], journal)
    limits = UsageLimits(max_model_calls=1)
    result = asyncio.run(swarm.run("check A-1", session_id=session_id, limits=limits))
    print(result.stop_reason, flush=True)


def continue_clerk(journal: PostgresJournal, session_id: str, turns: str) -> int:
    swarm = clerk_swarm([CLERK_TURNS[name] for name in turns.split(",")], journal)
    limits = UsageLimits(max_model_calls=10)
    try:
        result = asyncio.run(swarm.resume(session_id, limits=limits))
    except SessionBusyError as exc:
        print(f"busy {exc.owner}", flush=True)
        return EXIT_BUSY
    print(f"{result.final_output} {'>'.join(result.trail)}", flush=True)
    return 0


def run_sessions(journal: PostgresJournal, prefix: str, count: int) -> None:
    for n in range(count):
        result = chat_swarm(journal).run_sync(f"refund {n}", session_id=f"{prefix}-{n}")
        assert result.final_output == "Refunded.", result
    print(f"done {count}", flush=True)


def hold(journal: PostgresJournal, session_id: str, owner: str, ttl: float) -> int:
    async def keep() -> int:
        if not await _acquire(journal, session_id, owner, ttl):
            return EXIT_BUSY
        await asyncio.Event().wait()  # a live writer: it holds the lease until it is killed
        return 0

    return asyncio.run(keep())


def take(journal: PostgresJournal, session_id: str, owner: str, ttl: float) -> int:
    got = asyncio.run(_acquire(journal, session_id, owner, ttl))
    return 0 if got else EXIT_BUSY


async def _acquire(journal: PostgresJournal, session_id: str, owner: str, ttl: float) -> bool:
    try:
        await journal.acquire_lease(session_id, owner=owner, ttl=ttl)
    except SessionBusyError as exc:
        print(f"busy {exc.owner}", flush=True)
        return False
    print("acquired", flush=True)
    return True


def pause(journal: PostgresJournal, session_id: str) -> None:
    swarm = refund_swarm([transfer("billing", amount=50)], journal)
    result = swarm.run_sync("refund 50", session_id=session_id)
    print(result.stop_reason, flush=True)


def resume(journal: PostgresJournal, session_id: str) -> None:
    swarm = refund_swarm([text("Refunded 50.")], journal)
    result = asyncio.run(swarm.resume(session_id, decision=approve()))
    print(f"{result.final_output} {'>'.join(result.trail)}", flush=True)


def main(argv: list[str]) -> int:
    command, dsn, *rest = argv
    offset = float(os.environ.get("LEASE_CLOCK_OFFSET", "0"))
    journal = PostgresJournal(dsn, clock=lambda: time.time() + offset)
    match command:
        case "sessions":
            run_sessions(journal, rest[0], int(rest[1]))
        case "hold":
            return hold(journal, rest[0], rest[1], float(rest[2]))
        case "take":
            return take(journal, rest[0], rest[1], float(rest[2]))
        case "pause":
            pause(journal, rest[0])
        case "resume":
            resume(journal, rest[0])
        case "limited":
            run_limited(journal, rest[0])
        case "continue":
            return continue_clerk(journal, rest[0], rest[1])
        case _:
            raise SystemExit(f"unknown command {command!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
