"""Seed 001's research loop: deep_searcher -> progress_checker <-> deep_searcher -> doc_generator.

progress_checker decides whether the research is done. It may send the searcher back at most
twice (``handoff_budget=2``); once the budget is spent the workflow continues to the next
level, ``then="doc_generator"``, as a recorded decision with no model call (seed 001's "continue
when the limit is reached"). The swarm's ``max_revisits=3`` lets the loop return to the same
agents on purpose (otherwise the first return would be refused as a cycle).

Here the checker sends the searcher back twice; the third time it gets the findings, its
budget is spent, so the run goes straight on to doc_generator, which writes the document.

Run it offline (a scripted model plays the LLM):   python examples/research_loop.py
or live:   OPENAI_API_KEY=sk-... [SWARMKIT_MODEL=gpt-4o] python examples/research_loop.py
"""

from __future__ import annotations

import asyncio
import os

from swarmkit import Agent, Model, OpenAIModel, RunResult, Swarm, tool
from swarmkit.testing import RecordingModel, ScriptedModel, text, tool_call, transfer, turn

NOTES = {
    "overview": "SQLite is an embedded SQL database; one file, no server.",
    "concurrency": "WAL mode lets readers run while one writer commits.",
    "limits": "Databases up to 281 TB; one writer at a time.",
}

DOCUMENT = (
    "# SQLite in brief\n"
    "- An embedded SQL database: one file, no server.\n"
    "- WAL mode: readers never block the single writer.\n"
    "- Scales to 281 TB, but writes are serialised."
)


@tool
def search(topic: str) -> str:
    """Search the notes (a stand-in for a web search).

    Args:
        topic: One of overview, concurrency, limits.
    """
    return NOTES.get(topic, f"nothing on {topic!r}; try: {', '.join(NOTES)}")


deep_searcher = Agent(
    name="deep_searcher",
    instructions="Research the question with search, then hand off to progress_checker.",
    tools=[search],
    handoffs=["progress_checker"],
)
progress_checker = Agent(
    name="progress_checker",
    instructions=(
        "Judge the findings. If something is missing, hand off to deep_searcher saying what. "
        "If they suffice, hand off to doc_generator."
    ),
    handoffs=["deep_searcher", "doc_generator"],
    handoff_budget=2,
    then="doc_generator",
)
doc_generator = Agent(
    name="doc_generator",
    instructions="Write a short document from the findings.",
    handoffs=[],
)


def offline_model() -> ScriptedModel:
    """The scripted model plays the LLM's part offline: the turns a real model would take."""
    found = [
        turn(tool_call("search", topic=t), transfer("progress_checker"))
        for t in ("overview", "concurrency", "limits")
    ]
    return ScriptedModel(
        per_agent={
            "deep_searcher": found,
            "progress_checker": [
                transfer("deep_searcher", message="How does it handle concurrent writes?"),
                transfer("deep_searcher", message="What are its size limits?"),
            ],
            "doc_generator": [text(DOCUMENT)],
        }
    )


def pick_model() -> Model:
    """The real API when OPENAI_API_KEY is set, else the scripted stand-in."""
    if os.environ.get("OPENAI_API_KEY"):
        return OpenAIModel(os.environ.get("SWARMKIT_MODEL", "gpt-4o-mini"))
    return offline_model()


def report(result: RunResult, model: RecordingModel) -> None:
    """Print the handoffs (the last decided by the spent budget), then the document."""
    checker_calls = sum(r.agent == "progress_checker" for r in model.requests)
    print(f"progress_checker made {checker_calls} model calls; its budget decided the rest")
    moves = [f"{h.source} -> {h.target} ({h.decided_by})" for h in result.handoffs]
    print("handoffs:\n  " + "\n  ".join(moves))
    print(f"stop: {result.stop_reason}; model calls: {result.turns}\n\n{result.final_output}")


async def main() -> tuple[RunResult, RecordingModel]:
    """Run the loop once and print it; returns the result and the requests the model saw."""
    model = RecordingModel(pick_model())
    swarm = Swarm(
        [deep_searcher, progress_checker, doc_generator],
        "deep_searcher",
        model=model,
        max_revisits=3,
    )
    result = await swarm.run("Write a one-page brief on SQLite for our team.")
    report(result, model)
    return result, model


if __name__ == "__main__":
    asyncio.run(main())
