"""The A2A protocol at a served swarm's edge: A2A 0.3 clients when asked for, and the
protocol's error codes for requests that cannot be served (a2a-sdk clients, raw JSON-RPC)."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.helpers import get_text_parts
from a2a.types.a2a_pb2 import TaskState
from a2a.utils.errors import InvalidParamsError, TaskNotFoundError

from swarmkit import Agent, ConfigurationError, Swarm
from swarmkit.a2a import A2AServer, Principal
from swarmkit.journal import InMemoryJournal
from swarmkit.testing import ScriptedModel, text, transfer
from tests.interop.a2a_helpers import a2a_client, decision, responses, user_message
from tests.interop.leases import assert_no_session_leased
from tests.interop.test_a2a_trust import _refunds

TOKEN = "run-token-0123456789abcdef"
DECISION_TOKEN = "decision-token-0123456789abcdef"
OTHER_TOKEN = "other-team-token-0123456789abcdef"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
CURRENT = {**AUTH, "A2A-Version": "1.0"}


def _hello() -> Swarm:
    return Swarm([Agent(name="support")], "support", model=ScriptedModel(text("Hello.")))


def _send_03(text: str) -> dict[str, Any]:
    """A JSON-RPC ``message/send`` request as an A2A 0.3 client writes it."""
    message = {
        "kind": "message",
        "role": "user",
        "messageId": "m-03",
        "parts": [{"kind": "text", "text": text}],
    }
    return {"jsonrpc": "2.0", "id": 7, "method": "message/send", "params": {"message": message}}


async def test_a_0_3_client_is_served_when_compat_asks_for_it() -> None:
    """With compat=["0.3"] the card offers a 0.3 interface, and the a2a-sdk's 0.3 client
    (picked by that interface, sending 0.3's method names) gets the completed task."""
    methods: list[str] = []

    async def record(request: httpx.Request) -> None:
        if request.method == "POST":
            methods.append(json.loads(request.content)["method"])

    async with (
        A2AServer(_hello(), InMemoryJournal(), token=TOKEN, compat=["0.3"]) as server,
        httpx.AsyncClient(headers=AUTH, event_hooks={"request": [record]}) as http,
    ):
        card = await A2ACardResolver(http, server.url).get_agent_card()
        versions = [i.protocol_version for i in card.supported_interfaces]
        del card.supported_interfaces[0]  # a client that speaks 0.3 only
        client = ClientFactory(ClientConfig(httpx_client=http, streaming=False)).create(card)
        (reply,) = await responses(client, user_message("hello"))
        await client.close()

    assert versions == ["1.0", "0.3"]
    assert methods == ["message/send"]
    assert reply.task.status.state == TaskState.TASK_STATE_COMPLETED
    assert get_text_parts(reply.task.artifacts[0].parts) == ["Hello."]


async def test_0_3_method_names_are_unknown_unless_compat_is_on() -> None:
    """A raw 0.3 ``message/send`` completes with compat on; without it the method is unknown
    (-32601), and the card offers the current version only."""
    async with (
        A2AServer(_hello(), InMemoryJournal(), token=TOKEN, compat=["0.3"]) as served,
        A2AServer(_hello(), InMemoryJournal(), token=TOKEN) as plain,
        httpx.AsyncClient(headers=AUTH) as http,
    ):
        answered = (await http.post(served.url, json=_send_03("hello"))).json()
        refused = (await http.post(plain.url, json=_send_03("hello"))).json()
        card = (await http.get(plain.url + ".well-known/agent-card.json")).json()

    assert answered["result"]["kind"] == "task"
    assert answered["result"]["status"]["state"] == "completed"
    assert refused["error"]["code"] == -32601
    assert [i["protocolVersion"] for i in card["supportedInterfaces"]] == ["1.0"]


def test_an_unknown_compat_version_is_refused() -> None:
    """compat names versions the server can speak; another is refused at construction."""
    with pytest.raises(ConfigurationError, match=r"'0\.3', got '0\.2'"):
        A2AServer(_hello(), InMemoryJournal(), compat=["0.2"])


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"{not json", -32700),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "tasks/teleport", "params": {}}', -32601),
        (b'{"jsonrpc": "1.0", "id": 1, "method": "GetTask", "params": {}}', -32600),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": 5}}', -32602),
        (b'[{"jsonrpc": "2.0", "id": 1, "method": "GetTask"}]', -32600),
    ],
)
async def test_malformed_json_rpc_gets_the_protocol_error_code(body: bytes, code: int) -> None:
    """Bad JSON, an unknown method, a wrong version, a mistyped param, a batch: each its
    JSON-RPC error code, and nothing runs."""
    journal = InMemoryJournal()
    async with (
        A2AServer(_hello(), journal, token=TOKEN) as server,
        httpx.AsyncClient(headers=CURRENT) as http,
    ):
        reply = await http.post(server.url, content=body)

    assert reply.status_code == 200
    assert reply.json()["error"]["code"] == code
    assert await journal.sessions() == ()


async def test_a_message_for_another_principals_task_is_not_found() -> None:
    """Sending on another principal's task id (even with a decision) is "task not found":
    the task stays waiting and its owner's session is untouched."""
    journal = InMemoryJournal()
    swarm = _refunds(ScriptedModel(transfer("billing", amount=50)), journal)
    other = Principal(name="other-team", token=OTHER_TOKEN, decides=True)
    async with (
        A2AServer(swarm, journal, token=TOKEN, principals=[other]) as server,
        a2a_client(server.url, TOKEN, streaming=False) as caller,
        a2a_client(server.url, OTHER_TOKEN, streaming=False) as stranger,
    ):
        (first,) = await responses(caller, user_message("refund 50"))
        with pytest.raises(TaskNotFoundError):
            await responses(stranger, decision(first.task, "approve"))
        await assert_no_session_leased(journal)

    (info,) = await journal.sessions()
    assert info.stop_reason == "interrupted"


async def test_a_decision_that_names_no_interrupt_is_invalid() -> None:
    """A decision must name the pause it decides: one without an interrupt id gets the
    invalid-params error, saying where to put it, and the task keeps waiting."""
    journal = InMemoryJournal()
    swarm = _refunds(ScriptedModel(transfer("billing", amount=50)), journal)
    async with (
        A2AServer(swarm, journal, token=TOKEN, decision_token=DECISION_TOKEN) as server,
        a2a_client(server.url, TOKEN, streaming=False) as caller,
        a2a_client(server.url, DECISION_TOKEN, streaming=False) as decider,
    ):
        (first,) = await responses(caller, user_message("refund 50"))
        task = first.task
        bare = user_message("approve", task_id=task.id, context_id=task.context_id)
        with pytest.raises(InvalidParamsError, match="interrupt_id"):
            await responses(decider, bare)
        await assert_no_session_leased(journal)

    (info,) = await journal.sessions()
    assert info.stop_reason == "interrupted"
