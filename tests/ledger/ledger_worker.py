"""A worker process sharing a spend ledger, for the tests that need several processes.

Run as ``python -m tests.ledger.ledger_worker COMMAND STORE ...``; each prints one line:

- ``runs STORE COUNT TOKENS``: run COUNT one-call sessions against a shared ``tokens`` budget of
  TOKENS (each call is estimated and charged 15 tokens); prints ``done FINISHED STOPPED``.
- ``hang STORE``: start a run whose model call never returns (it reads stdin); prints
  ``in call`` once the call's estimate is held, and stays there until killed.
"""

from __future__ import annotations

import asyncio
import sys

from swarmkit import Agent, Budget, Ledger, Swarm
from swarmkit.models import ModelRequest, ModelResponse, Usage
from swarmkit.testing import ScriptedModel, text

CALL = Usage(prompt_tokens=10, completion_tokens=5, total_tokens=15)


def ledger(store: str, tokens: float) -> Ledger:
    """The ledger every worker shares: one tokens budget, estimates exact."""
    return Ledger(store, [Budget(name="shared", limit=tokens)], estimate=lambda _: CALL)


class HangingModel:
    """A model whose call is under way until the process is killed."""

    name = "hanging"

    async def respond(self, request: ModelRequest) -> ModelResponse:
        print("in call", flush=True)
        await asyncio.to_thread(sys.stdin.readline)
        raise SystemExit(0)


async def runs(store: str, count: int, tokens: float) -> None:
    shared = ledger(store, tokens)
    finished = stopped = 0
    for _ in range(count):
        model = ScriptedModel(text("ok", usage=CALL))
        result = await Swarm([Agent(name="a")], "a", model=model, ledger=shared).run("x")
        finished += result.stop_reason == "final_output"
        stopped += result.stop_reason == "budget"
    print(f"done {finished} {stopped}", flush=True)


async def hang(store: str) -> None:
    swarm = Swarm([Agent(name="a")], "a", model=HangingModel(), ledger=ledger(store, 1000))
    await swarm.run("x")


if __name__ == "__main__":
    command, store, *rest = sys.argv[1:]
    if command == "runs":
        asyncio.run(runs(store, int(rest[0]), float(rest[1])))
    else:
        asyncio.run(hang(store))
