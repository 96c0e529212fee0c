"""Who may do what to a swarm served over A2A: the public card, the decision permission, late
decisions, and tasks scoped to the principal that created them (a2a-sdk client, loopback)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import httpx
import pytest
from a2a.client import Client
from a2a.types.a2a_pb2 import (
    CancelTaskRequest,
    GetTaskRequest,
    ListTasksRequest,
    SubscribeToTaskRequest,
    Task,
    TaskState,
)
from a2a.utils.errors import TaskNotFoundError, UnsupportedOperationError

from swarmkit import Agent, ConfigurationError, Handoff, Swarm
from swarmkit.a2a import A2AServer, Principal
from swarmkit.journal import InMemoryJournal, Journal
from swarmkit.testing import ScriptedModel, text, transfer
from tests.interop.a2a_helpers import a2a_client, decision, responses, user_message
from tests.interop.leases import assert_no_session_leased
from tests.interop.test_a2a_server import Refund

TOKEN = "run-token-0123456789abcdef"
DECISION_TOKEN = "decision-token-0123456789abcdef"
OTHER_TOKEN = "other-team-token-0123456789abcdef"


def _refunds(model: ScriptedModel, journal: Journal) -> Swarm:
    """A swarm that pauses before paying a refund."""
    billing = Agent(name="billing", description="Pays refunds.")
    triage = Agent(name="triage", handoffs=[Handoff(agent=billing, input_type=Refund)])
    return Swarm(
        [triage, billing], "triage", model=model, interrupt_before=["billing"], journal=journal
    )


@contextlib.asynccontextmanager
async def _paused_refund(
    model: ScriptedModel, journal: InMemoryJournal
) -> AsyncIterator[tuple[Client, Client, Task]]:
    """A served refund swarm whose first task waits for a decision: the caller's client, the
    decider's, and the task."""
    async with (
        A2AServer(
            _refunds(model, journal), journal, token=TOKEN, decision_token=DECISION_TOKEN
        ) as server,
        a2a_client(server.url, TOKEN, streaming=False) as caller,
        a2a_client(server.url, DECISION_TOKEN, streaming=False) as decider,
    ):
        (first,) = await responses(caller, user_message("refund 50"))
        yield caller, decider, first.task


async def test_the_public_card_needs_no_token_and_the_rest_does() -> None:
    """Discovery works without a token; JSON-RPC and the extended card still need one."""
    swarm = _refunds(ScriptedModel(), InMemoryJournal())
    async with (
        A2AServer(swarm, InMemoryJournal(), token=TOKEN) as server,
        httpx.AsyncClient() as http,
    ):
        card = await http.get(server.url + ".well-known/agent-card.json")
        extended = await http.post(
            server.url,
            json={"jsonrpc": "2.0", "id": 1, "method": "GetExtendedAgentCard", "params": {}},
        )

    assert card.status_code == 200
    assert card.json()["name"] == "triage"
    assert extended.status_code == 401


async def test_a_run_token_cannot_decide_and_a_decision_token_can() -> None:
    """The caller cannot approve its own paused refund; the decider can, and the journal
    names the decider."""
    journal = InMemoryJournal()
    model = ScriptedModel(transfer("billing", amount=50), text("Refunded 50."))
    async with _paused_refund(model, journal) as (caller, decider, task):
        approve = decision(task, "approve")
        with pytest.raises(UnsupportedOperationError, match="decision token"):
            await responses(caller, approve)
        still = await caller.get_task(GetTaskRequest(id=task.id))
        await assert_no_session_leased(journal)
        (decided,) = await responses(decider, approve)

    assert still.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    assert decided.task.status.state == TaskState.TASK_STATE_COMPLETED
    records = await journal.read(f"a2a-{task.context_id}")
    (resumed,) = [r.data for r in records if r.kind == "resumed"]
    assert (resumed["kind"], resumed["decided_by"]) == ("approve", "a2a:decider")


async def test_without_a_decision_token_nobody_decides_and_is_told_how() -> None:
    """A server without a decision token refuses every decision, saying how to allow them."""
    journal = InMemoryJournal()
    swarm = _refunds(ScriptedModel(transfer("billing", amount=50)), journal)
    async with (
        A2AServer(swarm, journal, token=TOKEN) as server,
        a2a_client(server.url, TOKEN, streaming=False) as caller,
    ):
        (first,) = await responses(caller, user_message("refund 50"))
        task = first.task
        approve = decision(task, data={"decision": "approve"})
        with pytest.raises(UnsupportedOperationError, match=r"decision_token=.*--allow-decisions"):
            await responses(caller, approve)
        await assert_no_session_leased(journal)

    (info,) = await journal.sessions()
    assert info.stop_reason == "interrupted"


async def test_racing_decisions_resume_once_and_the_task_stays_completed() -> None:
    """Four approvals at once: one resumes the run, the others get the protocol's error,
    no new turn starts and the completed task stays completed."""
    journal = InMemoryJournal()
    model = ScriptedModel(transfer("billing", amount=50), text("Refunded 50."))
    async with _paused_refund(model, journal) as (caller, decider, task):
        approve = decision(task, "approve")
        sent = [responses(decider, approve) for _ in range(4)]
        outcomes = await asyncio.gather(*sent, return_exceptions=True)
        late = await asyncio.gather(responses(decider, approve), return_exceptions=True)
        final = await caller.get_task(GetTaskRequest(id=task.id))
        await assert_no_session_leased(journal)

    done = [o for o in outcomes if isinstance(o, list)]
    refused = [o for o in [*outcomes, *late] if isinstance(o, UnsupportedOperationError)]
    assert [r.task.status.state for (r,) in done] == [TaskState.TASK_STATE_COMPLETED]
    assert len(refused) == 4
    assert final.status.state == TaskState.TASK_STATE_COMPLETED
    assert len(model.requests) == 2
    assert [info.session_id for info in await journal.sessions()] == [f"a2a-{task.context_id}"]


async def test_each_principal_sees_only_its_own_tasks() -> None:
    """Another token is another principal: it cannot get, list, cancel or subscribe to the
    caller's task, and the caller's list holds only its own."""
    journal = InMemoryJournal()
    swarm = _refunds(ScriptedModel(text("Hello."), text("Hi.")), journal)
    other = Principal(name="other-team", token=OTHER_TOKEN)
    async with (
        A2AServer(swarm, journal, token=TOKEN, principals=[other]) as server,
        a2a_client(server.url, TOKEN, streaming=False) as caller,
        a2a_client(server.url, OTHER_TOKEN, streaming=True) as stranger,
    ):
        (mine,) = await responses(caller, user_message("hello"))
        theirs, *_ = await responses(stranger, user_message("hi"))
        task_id = mine.task.id
        with pytest.raises(TaskNotFoundError):
            await stranger.get_task(GetTaskRequest(id=task_id))
        with pytest.raises(TaskNotFoundError):
            await stranger.cancel_task(CancelTaskRequest(id=task_id))
        with pytest.raises(TaskNotFoundError):
            _ = [e async for e in stranger.subscribe(SubscribeToTaskRequest(id=task_id))]
        await assert_no_session_leased(journal)
        listed = await caller.list_tasks(ListTasksRequest())
        their_list = await stranger.list_tasks(ListTasksRequest())

    assert [t.id for t in listed.tasks] == [task_id]
    assert [t.id for t in their_list.tasks] == [theirs.task.id]


def test_principals_need_names_and_tokens_of_their_own() -> None:
    """A principal named like the server's own, or sharing a token, is refused at once."""
    swarm = _refunds(ScriptedModel(), InMemoryJournal())
    with pytest.raises(ConfigurationError, match="already named 'caller'"):
        A2AServer(swarm, InMemoryJournal(), principals=[Principal(name="caller", token=TOKEN)])
    twins = [Principal(name="a", token=OTHER_TOKEN), Principal(name="b", token=OTHER_TOKEN)]
    with pytest.raises(ConfigurationError, match="token of its own"):
        A2AServer(swarm, InMemoryJournal(), principals=twins)
