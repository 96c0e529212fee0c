"""Handoffs: transfer_to_<name> tools, typed payloads, and the legacy handoff tool."""

from __future__ import annotations

import enum
import re
from datetime import date
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, Field

from swarmkit.agent import Agent
from swarmkit.exceptions import ConfigurationError, HandoffPayloadError
from swarmkit.handoffs import (
    Handoff,
    HandoffRequest,
    build_legacy_handoff_tool,
    build_transfer_tools,
    transfer_tool_name,
)
from tests.test_schema import assert_strict_schema

TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


class Severity(enum.Enum):
    LOW = "low"
    HIGH = "high"


class Customer(BaseModel):
    id: int
    email: str | None = None


class Escalation(BaseModel):
    """What billing needs to take a case over."""

    reason: str = Field(description="Why the case is escalated.")
    severity: Severity = Severity.LOW
    customer: Customer
    related: list[Customer] = []
    previous: Customer | None = None


class Notes(BaseModel):
    extra: dict[str, Any]


class StrictTicket(BaseModel):
    model_config = ConfigDict(strict=True)

    severity: Severity
    opened: date


def test_transfer_tool_names_are_prefixed_and_normalised() -> None:
    """Invalid characters become underscores."""
    assert transfer_tool_name("billing") == "transfer_to_billing"
    assert transfer_tool_name("Billing v2.1") == "transfer_to_Billing_v2_1"
    assert transfer_tool_name("ünïcode") == "transfer_to__n_code"


def test_long_names_are_cut_deterministically_and_stay_distinct() -> None:
    """A name over 64 characters is cut and suffixed with a hash of the full name."""
    first = transfer_tool_name("a" * 80 + "one")
    second = transfer_tool_name("a" * 80 + "two")
    assert len(first) == len(second) == 64
    assert TOOL_NAME.match(first) and TOOL_NAME.match(second)
    assert first != second
    assert first == transfer_tool_name("a" * 80 + "one")


def test_an_agent_never_gets_a_tool_to_transfer_to_itself() -> None:
    """The source is skipped among the targets."""
    tools = build_transfer_tools(
        "triage", [Handoff(agent="triage"), Handoff(agent="billing"), Handoff(agent="support")]
    )
    assert [t.target for t in tools] == ["billing", "support"]
    assert [t.name for t in tools] == ["transfer_to_billing", "transfer_to_support"]


def test_an_untyped_transfer_takes_an_optional_message() -> None:
    """The schema is strict: one nullable, required `message`."""
    (transfer,) = build_transfer_tools("triage", [Handoff(agent="billing")])
    spec = transfer.spec()
    assert spec.strict
    assert_strict_schema(spec.parameters)
    assert spec.parameters["required"] == ["message"]
    assert spec.parameters["properties"]["message"]["anyOf"] == [
        {"type": "string"},
        {"type": "null"},
    ]


def test_parsing_an_untyped_transfer_yields_the_message() -> None:
    """A message, null, "" and {} all parse; only real text is kept."""
    (transfer,) = build_transfer_tools("triage", [Handoff(agent="billing")])
    assert transfer.parse('{"message": "refund order 7"}', tool_call_id="c1") == HandoffRequest(
        target="billing", payload=None, message="refund order 7", tool_call_id="c1"
    )
    for raw in ('{"message": null}', '{"message": ""}', "{}", ""):
        assert transfer.parse(raw).message is None


def test_a_typed_transfer_uses_the_input_types_strict_schema() -> None:
    """Nested models, enums and optionals give a strict schema with resolvable refs."""
    (transfer,) = build_transfer_tools("triage", [Handoff(agent="billing", input_type=Escalation)])
    assert transfer.spec().strict
    assert_strict_schema(transfer.parameters)
    assert set(transfer.parameters["properties"]) == {
        "reason",
        "severity",
        "customer",
        "related",
        "previous",
    }
    assert transfer.parameters["$defs"]["Customer"]["additionalProperties"] is False


def test_parsing_a_typed_transfer_validates_the_payload() -> None:
    """Valid arguments become an instance of the input type."""
    (transfer,) = build_transfer_tools("triage", [Handoff(agent="billing", input_type=Escalation)])
    request = transfer.parse(
        '{"reason": "double charge", "severity": "high", "customer": {"id": 3, "email": null},'
        ' "related": null, "previous": null}'
    )
    assert request.target == "billing"
    assert request.message is None
    assert request.payload == Escalation(
        reason="double charge", severity=Severity.HIGH, customer=Customer(id=3)
    )


def test_a_strict_input_type_accepts_json_values() -> None:
    """Arguments are validated as JSON, so a strict model takes enum values and ISO dates."""
    (transfer,) = build_transfer_tools("triage", [Handoff(agent="ops", input_type=StrictTicket)])
    request = transfer.parse('{"severity": "high", "opened": "2024-05-01"}')
    assert request.payload == StrictTicket(severity=Severity.HIGH, opened=date(2024, 5, 1))


def test_invalid_typed_arguments_raise_a_model_readable_error() -> None:
    """The error says what was wrong, the expected fields, and to call again."""
    (transfer,) = build_transfer_tools("triage", [Handoff(agent="billing", input_type=Escalation)])
    with pytest.raises(HandoffPayloadError) as caught:
        transfer.parse('{"severity": "urgent", "customer": {"id": "x"}}')
    error = caught.value
    assert (error.tool_name, error.target) == ("transfer_to_billing", "billing")
    message = str(error)
    assert message.startswith("Error: invalid arguments for transfer_to_billing")
    assert "reason: Field required" in message
    assert "severity: Input should be 'low' or 'high'" in message
    assert "customer.id: Input should be a valid integer" in message
    assert "Expected a JSON object with fields: reason (string), " in message
    assert message.endswith("Call transfer_to_billing again with corrected arguments.")


def test_malformed_handoff_json_raises_a_payload_error() -> None:
    """Bad JSON is reported the same way."""
    (transfer,) = build_transfer_tools("triage", [Handoff(agent="billing")])
    with pytest.raises(HandoffPayloadError, match="not valid JSON"):
        transfer.parse("{oops")


def test_an_input_type_strict_mode_cannot_express_gives_a_non_strict_tool() -> None:
    """A dict field falls back to strict=False instead of an invalid strict schema."""
    (transfer,) = build_transfer_tools("triage", [Handoff(agent="notes", input_type=Notes)])
    assert not transfer.spec().strict
    assert transfer.parse('{"extra": {"a": 1}}').payload == Notes(extra={"a": 1})


def test_default_descriptions_use_the_peers_description() -> None:
    """Hand off to <name>: <description>, from the mapping or the peer Agent."""
    billing = Agent(name="billing", description="Refunds and invoices.")
    tools = build_transfer_tools(
        "triage",
        [Handoff(agent=billing), Handoff(agent="support"), Handoff(agent="sales")],
        descriptions={"support": "Technical problems."},
    )
    assert [t.description for t in tools] == [
        "Hand off to billing: Refunds and invoices.",
        "Hand off to support: Technical problems.",
        "Hand off to sales.",
    ]


def test_custom_description_and_tool_name_are_used() -> None:
    """Handoff(description=..., tool_name=...) override the defaults."""
    (transfer,) = build_transfer_tools(
        "triage", [Handoff(agent="billing_v2", description="Money matters.", tool_name="to_money")]
    )
    assert (transfer.name, transfer.description) == ("to_money", "Money matters.")
    assert transfer.spec().name == "to_money"


def test_targets_colliding_after_normalisation_are_a_configuration_error() -> None:
    """'billing v2' and 'billing.v2' both normalise to one tool name; both are named."""
    with pytest.raises(ConfigurationError, match=r"'billing v2' and 'billing\.v2'"):
        build_transfer_tools("triage", [Handoff(agent="billing v2"), Handoff(agent="billing.v2")])


def test_a_custom_tool_name_colliding_with_another_is_a_configuration_error() -> None:
    """A tool_name equal to another target's default name is refused."""
    with pytest.raises(ConfigurationError, match="'billing' and 'sales'"):
        build_transfer_tools(
            "triage",
            [Handoff(agent="billing"), Handoff(agent="sales", tool_name="transfer_to_billing")],
        )


def test_handoff_validates_its_fields() -> None:
    """A bad peer, input type, filter or tool name is refused at construction."""
    with pytest.raises(ConfigurationError, match=r"Handoff\.agent"):
        Handoff(agent="")
    with pytest.raises(ConfigurationError, match="input_type"):
        Handoff(agent="billing", input_type=dict)  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="input_filter"):
        Handoff(agent="billing", input_filter="all")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="tool_name"):
        Handoff(agent="billing", tool_name="to billing")


def test_handoff_target_is_the_peers_name() -> None:
    """target reads the name from a str or an Agent."""
    assert Handoff(agent="billing").target == "billing"
    assert Handoff(agent=Agent(name="support")).target == "support"


def test_the_legacy_tool_offers_the_other_peers_as_an_enum() -> None:
    """handoff(target, message): target an enum of peers without the source, deduplicated."""
    legacy = build_legacy_handoff_tool(
        "triage", ["billing", "triage", "support", "billing"], descriptions={"billing": "Money."}
    )
    assert legacy is not None
    spec = legacy.spec()
    assert (spec.name, spec.strict) == ("handoff", True)
    assert legacy.targets == ("billing", "support")
    assert_strict_schema(spec.parameters)
    assert spec.parameters["properties"]["target"]["enum"] == ["billing", "support"]
    assert spec.parameters["required"] == ["target", "message"]
    assert (
        spec.description == "Hand off the conversation to another agent: billing (Money.); support."
    )


def test_the_legacy_tool_parses_target_and_message() -> None:
    """A valid call names the target and carries the optional message."""
    legacy = build_legacy_handoff_tool("triage", ["billing"], tool_name="pass_to")
    assert legacy is not None and legacy.name == "pass_to"
    assert legacy.parse('{"target": "billing", "message": "refund"}', tool_call_id="c9") == (
        HandoffRequest(target="billing", payload=None, message="refund", tool_call_id="c9")
    )
    assert legacy.parse('{"target": "billing", "message": null}').message is None


def test_the_legacy_tool_refuses_unknown_targets_and_bad_json() -> None:
    """An unknown target or malformed JSON raises HandoffPayloadError listing the choices."""
    legacy = build_legacy_handoff_tool("triage", ["billing", "support"])
    assert legacy is not None
    with pytest.raises(HandoffPayloadError, match="unknown agent 'triage'") as caught:
        legacy.parse('{"target": "triage"}')
    assert caught.value.target == "triage"
    assert "one of 'billing', 'support'" in str(caught.value)
    with pytest.raises(HandoffPayloadError, match="not valid JSON"):
        legacy.parse('{"target": ')
    with pytest.raises(HandoffPayloadError, match="target: Field required"):
        legacy.parse("{}")


def test_no_legacy_tool_when_no_target_remains() -> None:
    """With only the source (or nothing) to hand off to, there is no tool."""
    assert build_legacy_handoff_tool("triage", ["triage"]) is None
    assert build_legacy_handoff_tool("triage", []) is None


def test_an_invalid_legacy_tool_name_is_a_configuration_error() -> None:
    """The legacy tool's name follows the same rule as every tool name."""
    with pytest.raises(ConfigurationError, match="handoff tool name"):
        build_legacy_handoff_tool("triage", ["billing"], tool_name="hand off")
