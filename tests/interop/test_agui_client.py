"""The official AG-UI client, ``@ag-ui/client`` from npm under Node, reads swarmkit's AG-UI
stream: three runs of one thread (a pause with a sub-run and reasoning, its resume, a next
turn) with no client error, in the order the protocol wants.

The client is installed from ``agui_js/package-lock.json`` by ``npm ci`` the first time the
test runs. Without Node the test fails in CI (``.ci/run`` installs it) and is skipped elsewhere.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from swarmkit import Agent, Swarm, tool
from swarmkit.agui import AgUiServer
from swarmkit.journal import InMemoryJournal
from swarmkit.models import Model
from tests.models.state_server import call, say, state_server
from tests.models.test_provider_state import anthropic

CLIENT = Path(__file__).parent / "agui_js"
TOKEN = "agui-js-token-0123456789abcdef"


@pytest.fixture(scope="session")
def node() -> str:
    """Node, with the client's locked packages installed (``npm ci``, again whenever the
    lock file is newer than the install)."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        if os.environ.get("CI"):
            pytest.fail("the AG-UI client test needs node and npm (apt-get install nodejs npm)")
        pytest.skip("node and npm are not installed (CI installs them)")
    installed = CLIENT / "node_modules" / ".package-lock.json"
    lock = CLIENT / "package-lock.json"
    if not installed.is_file() or installed.stat().st_mtime < lock.stat().st_mtime:
        command = [npm, "ci", "--no-audit", "--no-fund"]
        subprocess.run(command, cwd=CLIENT, check=True, capture_output=True, timeout=600)
    return node


@tool(needs_approval=True)
def refund(order: str) -> str:
    """Refund an order."""
    return f"refunded {order}"


def _desk(model: Model) -> Swarm:
    records = Agent(name="records", description="Reads an order's payments.", handoffs=[])
    desk = Agent(name="desk", tools=[records.as_tool(), refund], handoffs=[])
    return Swarm([desk, records], "desk", model=model)


async def _client_report(node: str, url: str) -> dict[str, Any]:
    script = str(CLIENT / "three_turns.mjs")
    process = await asyncio.create_subprocess_exec(
        node, script, url, TOKEN, cwd=CLIENT, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    out, err = await asyncio.wait_for(process.communicate(), timeout=120)
    assert process.returncode == 0, err.decode()
    report: dict[str, Any] = json.loads(out)
    return report


REASONING = [
    "REASONING_START",
    "REASONING_MESSAGE_START",
    "REASONING_MESSAGE_CONTENT",
    "REASONING_MESSAGE_END",
    "REASONING_ENCRYPTED_VALUE",
    "REASONING_END",
]
CALL = ["TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END"]
TEXT = ["TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END"]
STEP = ["STEP_STARTED", "STATE_SNAPSHOT"]
END = ["STATE_SNAPSHOT", "RUN_FINISHED"]

SEQUENCE = {
    "r1": ["RUN_STARTED", *STEP, *REASONING, *CALL,  # the desk asks the records agent
           "SUBAGENT_STARTED", "STEP_STARTED", *TEXT, *REASONING, "STEP_FINISHED",
           "SUBAGENT_FINISHED", "TOOL_CALL_RESULT",
           *REASONING, *CALL, "STEP_FINISHED", *END],  # the refund waits for approval
    "r2": ["RUN_STARTED", "TOOL_CALL_RESULT", *REASONING, *TEXT, *END],  # approved
    "r3": ["RUN_STARTED", *STEP, *TEXT, *REASONING, "STEP_FINISHED", *END],
}  # fmt: skip
"""Each run's events as the client saw them."""


@pytest.mark.slow  # a Node process: about 3 s
async def test_the_official_client_reads_a_paused_resumed_and_continued_thread(node: str) -> None:
    """Zero client errors or warnings; each run's events in order; the sub-run and the
    reasoning attributed; the interrupt answered by its call; no call left unanswered."""
    script = (
        call("ask_records", input="A1"),
        say("A1 was paid 5."),
        call("refund", order="A1"),
        say("Refunded A1."),
        say("You are welcome."),
    )
    async with (
        state_server(*script) as models,
        AgUiServer(_desk(anthropic(models)), InMemoryJournal(), token=TOKEN) as server,
    ):
        report = await _client_report(node, server.url)

    assert report["problems"] == []
    events = report["events"]
    for run, sequence in SEQUENCE.items():
        assert [e["type"] for e in events if e["runId"] == run] == sequence
    (started,) = [e for e in events if e["type"] == "SUBAGENT_STARTED"]
    ask, pay = [e for e in events if e["type"] == "TOOL_CALL_START"]
    assert (started["name"], started["parentToolCallId"]) == ("records", ask["toolCallId"])
    tagged = [e["type"] for e in events if e.get("subagentRunId") == started["subagentRunId"]]
    assert len(tagged) == 1 + 1 + len(TEXT) + len(REASONING) + 1 + 1
    assert report["interrupts"] == [
        {"id": "agui-desk-1", "reason": "tool", "toolCallId": pay["toolCallId"]}
    ]
    assert [e["outcome"] for e in events if e["type"] == "RUN_FINISHED"] == [
        "interrupt",
        "success",
        "success",
    ]
    _check_thread(report["messages"], report["state"])


def _check_thread(messages: list[dict[str, Any]], state: dict[str, Any]) -> None:
    """The thread as the client keeps it: every call answered, the reasoning with its
    signature as an opaque value, the state the last snapshot sent."""
    calls = {c["id"] for m in messages for c in m.get("toolCalls", ())}
    answered = {m["toolCallId"] for m in messages if m["role"] == "tool"}
    assert calls == answered == {"toolu_1_0", "toolu_3_0"}
    thoughts = [(m["content"], m["encryptedValue"]) for m in messages if m["role"] == "reasoning"]
    assert thoughts == [(f"plan {n}", f"sig-{n}") for n in range(1, 6)]
    said = [m["content"] for m in messages if m["role"] == "assistant" and "content" in m]
    assert said == ["A1 was paid 5.", "Refunded A1.", "You are welcome."]
    assert state == {"agent": "desk", "trail": ["desk"], "context": {}}
