"""A session paused in one process and resumed in another: the second trace links to the first."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from swarmkit.journal import SQLiteJournal
from tests.tracing_resume_app import SESSION

ROOT = Path(__file__).resolve().parent.parent


def _spans(phase: str, journal: Path) -> list[dict[str, Any]]:
    """The spans one phase's process recorded."""
    output = subprocess.run(
        [sys.executable, "-m", "tests.tracing_resume_app", phase, str(journal)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    spans: list[dict[str, Any]] = json.loads(output)
    return spans


def _run(spans: list[dict[str, Any]]) -> dict[str, Any]:
    [run] = [span for span in spans if span["name"] == "invoke_workflow billing"]
    return run


def _usage(spans: list[dict[str, Any]]) -> tuple[int, int]:
    chats = [span["attributes"] for span in spans if span["name"].startswith("chat")]
    return (
        sum(chat.get("gen_ai.usage.input_tokens", 0) for chat in chats),
        sum(chat.get("gen_ai.usage.output_tokens", 0) for chat in chats),
    )


@pytest.mark.slow  # two interpreters that import swarmkit and the SDK: about 3 s of CPU
async def test_a_run_resumed_in_another_process_links_to_the_paused_run_s_span(
    tmp_path: Path,
) -> None:
    """Process B's workflow span links to process A's (ids from the journal); usage summed over
    both traces equals the journal's."""
    journal = tmp_path / "journal.sqlite"

    paused = _spans("pause", journal)
    resumed = _spans("resume", journal)

    before, after = _run(paused), _run(resumed)
    assert before["attributes"]["swarmkit.stop_reason"] == "interrupted"
    assert after["attributes"]["swarmkit.stop_reason"] == "final_output"
    assert after["trace_id"] != before["trace_id"]
    assert after["links"] == [[before["trace_id"], before["span_id"]]]
    with SQLiteJournal(journal) as store:
        records = await store.read(SESSION)
    usages = [r.data["response"]["usage"] for r in records if r.kind == "model_call"]
    assert len(usages) == 2
    journaled = (
        sum(u["prompt_tokens"] for u in usages),
        sum(u["completion_tokens"] for u in usages),
    )
    assert (_usage(paused)[0] + _usage(resumed)[0], _usage(paused)[1] + _usage(resumed)[1]) == (
        journaled
    )
