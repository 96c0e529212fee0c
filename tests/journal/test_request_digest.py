"""Request digests are a stable function of the request, however the history is handed over."""

from __future__ import annotations

import dataclasses
import json

from hypothesis import given
from hypothesis import strategies as st

from swarmkit.journal._digest import RequestDigester, _message_text
from swarmkit.lowlevel import RequestHistory
from swarmkit.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from swarmkit.models import ModelRequest, ModelSettings, OutputSchema, ToolSpec

SYSTEM = SystemMessage(content="You check invoices.")
LOOKUP = ToolSpec(
    name="lookup",
    description="Look up an invoice.",
    parameters={"type": "object", "properties": {"invoice_id": {"type": "string"}}},
)
# The digest of _request(_history()) as swarmkit 6a66d5e computed it: journals recorded
# before the incremental digest must still replay, so this value may never change.
PINNED = "5ef85c2618e10fca262bda60030d754d219202ce8fde904ee5c51cafd4880c72"


def _history() -> list[Message]:
    return [
        UserMessage(content="check A-1 and B-2 ü"),
        AssistantMessage(
            content=None,
            tool_calls=(ToolCall(id="c1", name="lookup", arguments='{"invoice_id": "A-1"}'),),
        ),
        ToolMessage(tool_call_id="c1", name="lookup", content="A-1: paid"),
    ]


def _request(messages: tuple[Message, ...]) -> ModelRequest:
    return ModelRequest(messages=messages, tools=(LOOKUP,), settings=ModelSettings(), agent="clerk")


def _turn(number: int) -> list[Message]:
    call = ToolCall(id=f"c{number}", name="lookup", arguments=f'{{"invoice_id": "A-{number}"}}')
    return [
        AssistantMessage(content=None, tool_calls=(call,)),
        ToolMessage(tool_call_id=call.id, name="lookup", content=f"A-{number}: paid"),
    ]


def test_a_request_digest_is_the_one_journals_were_recorded_with() -> None:
    """The whole request and its history-by-reference form both give the pinned digest."""
    history = _history()
    by_reference = RequestHistory(view=(), items=history, count=len(history))

    assert RequestDigester().digest(_request((SYSTEM, *history))) == PINNED
    assert RequestDigester().digest(_request((SYSTEM,)), by_reference) == PINNED
    # With a history, only the request's system message is read (a live request holds all).
    assert RequestDigester().digest(_request((SYSTEM, *history)), by_reference) == PINNED


def test_a_growing_history_digests_as_if_each_request_were_whole() -> None:
    """Turn after turn (and after a new view), the incremental digest equals a fresh one."""
    digester = RequestDigester()
    view = tuple(_history())
    items: list[Message] = []
    for number in range(2, 40):
        items.extend(_turn(number))
        if number == 20:
            view, items = (*view, *items), []  # another agent starts with what came before
        history = RequestHistory(view=view, items=items, count=len(items))
        whole = _request((SYSTEM, *view, *items))
        assert digester.digest(_request((SYSTEM,)), history) == RequestDigester().digest(whole)


def test_a_history_edited_in_place_is_digested_again() -> None:
    """A list whose last hashed message was replaced is not trusted as a continuation."""
    digester = RequestDigester()
    items = _history()
    digester.digest(_request((SYSTEM,)), RequestHistory(view=(), items=items, count=len(items)))
    items[-1] = ToolMessage(tool_call_id="c1", name="lookup", content="A-1: refunded")
    items.extend(_turn(2))
    edited = RequestHistory(view=(), items=items, count=len(items))

    assert digester.digest(_request((SYSTEM,)), edited) == RequestDigester().digest(
        _request((SYSTEM, *items))
    )


def test_a_shorter_count_of_the_same_list_is_digested_afresh() -> None:
    """Digesting fewer items than last time gives the digest of exactly those items."""
    digester = RequestDigester()
    items = [*_history(), *_turn(2)]
    digester.digest(_request((SYSTEM,)), RequestHistory(view=(), items=items, count=len(items)))
    shorter = RequestHistory(view=(), items=items, count=3)

    assert digester.digest(_request((SYSTEM,)), shorter) == PINNED


ANY_TEXT = st.text(st.characters(exclude_categories=()))  # lone surrogates included


@given(
    content=st.one_of(st.none(), ANY_TEXT),
    calls=st.lists(st.tuples(ANY_TEXT, ANY_TEXT, ANY_TEXT), max_size=3),
    other=ANY_TEXT,
)
def test_a_message_digests_its_text_exactly_as_the_json_encoder_writes_it(
    content: str | None, calls: list[tuple[str, str, str]], other: str
) -> None:
    """The directly written canonical text of every message kind (odd unicode, lone surrogates,
    quotes, control characters) is byte for byte what ``json.dumps`` writes, so digests hold."""
    tool_calls = tuple(ToolCall(id=i, name=n, arguments=a) for i, n, a in calls)
    cases: list[tuple[Message, list[object]]] = [
        (SystemMessage(content=other), ["system", other]),
        (UserMessage(content=other), ["user", other]),
        (
            AssistantMessage(content=content, tool_calls=tool_calls),
            ["assistant", content, [list(call) for call in calls]],
        ),
        (
            ToolMessage(tool_call_id=other, name="lookup", content=other),
            ["tool", other, "lookup", other],
        ),
    ]
    for message, parts in cases:
        expected = json.dumps(parts, ensure_ascii=False).encode("utf-8", "surrogatepass")
        assert _message_text(message) == expected


def test_a_whole_request_keeps_every_field_of_its_head() -> None:
    """RequestHistory.sent_with copies each of the head's fields (none is left behind when
    ModelRequest gains one) and puts the history after the system message."""
    head = ModelRequest(
        messages=(SYSTEM,),
        tools=(ToolSpec(name="t", description="d", parameters={"type": "object"}),),
        settings=ModelSettings(temperature=0.5, tool_choice="required"),
        agent="a",
        output_schema=OutputSchema(name="O", schema={"type": "object"}, strict=True),
        handoff_payload={"sku": "A-1"},
    )
    items = [UserMessage(content="hi")]
    whole = RequestHistory(view=(), items=items, count=1).sent_with(head)

    assert whole == dataclasses.replace(head, messages=(SYSTEM, *items))
    assert {f.name for f in dataclasses.fields(ModelRequest)} == {
        "messages", "tools", "settings", "agent", "output_schema", "handoff_payload"
    }  # fmt: skip
