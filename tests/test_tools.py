"""@tool and FunctionTool: schemas from signatures, validation, invocation and error outcomes."""

from __future__ import annotations

import enum
import json
import threading
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field

from swarmkit.context import RunContext
from swarmkit.exceptions import ConfigurationError, ToolArgumentsError, ToolExecutionError
from swarmkit.tools import FunctionTool, ToolOutcome, ToolResult, tool
from tests.test_schema import assert_strict_schema

CONTEXT = RunContext(context={"user": "ada"}, agent="triage", session_id="s1")


class Units(enum.Enum):
    CELSIUS = "celsius"
    FAHRENHEIT = "fahrenheit"


class Line(BaseModel):
    sku: str
    quantity: int = 1


class Basket(BaseModel):
    lines: list[Line]
    note: str | None = None


@tool
def get_weather(city: str, units: Units = Units.CELSIUS, days: int | None = None) -> str:
    """Get the weather forecast for a city.

    Use it before planning outdoor activities.

    Args:
        city: The city name, e.g. "Paris".
        units: Temperature units.
        days: How many days ahead;
            omit for today only.

    Returns:
        The forecast as text.
    """
    return f"{city}: 20 {units.value} for {days or 0} days"


async def _run(tool_: FunctionTool, arguments: str) -> ToolOutcome:
    return await tool_.invoke(arguments, CONTEXT)


def test_name_and_description_come_from_the_function() -> None:
    """The name is the function's; the description is the docstring before its sections."""
    assert get_weather.name == "get_weather"
    assert get_weather.description == (
        "Get the weather forecast for a city.\n\nUse it before planning outdoor activities."
    )


def test_google_style_argument_descriptions_reach_the_schema() -> None:
    """Args: entries, continuation lines included, describe the parameters."""
    properties = get_weather.parameters["properties"]
    assert properties["city"]["description"] == 'The city name, e.g. "Paris".'
    assert properties["days"]["description"] == "How many days ahead; omit for today only."
    assert properties["units"]["description"] == "Temperature units."


def test_rest_style_param_fields_describe_the_parameters() -> None:
    """`:param x:` fields describe parameters and stay out of the description."""

    @tool
    def convert(amount: float, currency: str) -> float:
        """Convert an amount to euros.

        :param amount: How much money.
        :param str currency: ISO code
            of the source currency.
        :returns: The amount in euros.
        """
        return amount

    assert convert.description == "Convert an amount to euros."
    properties = convert.parameters["properties"]
    assert properties["amount"]["description"] == "How much money."
    assert properties["currency"]["description"] == "ISO code of the source currency."


def test_an_annotated_description_wins_over_the_docstring() -> None:
    """A description given with Annotated[..., Field(description=...)] is kept."""

    @tool
    def greet(name: Annotated[str, Field(description="Who to greet.")]) -> str:
        """Greet someone.

        Args:
            name: Ignored in favour of the annotation.
        """
        return f"hello {name}"

    assert greet.parameters["properties"]["name"]["description"] == "Who to greet."


def test_signature_schema_is_strict_with_enums_optionals_and_defaults() -> None:
    """Enums, optionals and defaults produce a strict-mode schema."""
    parameters = get_weather.parameters
    assert get_weather.strict
    assert_strict_schema(parameters)
    assert parameters["required"] == ["city", "units", "days"]
    units = parameters["properties"]["units"]
    assert units["anyOf"][0]["enum"] == ["celsius", "fahrenheit"]


def test_spec_offers_the_tool_with_its_strictness() -> None:
    """spec() carries name, description, schema and the strict flag."""
    spec = get_weather.spec()
    assert (spec.name, spec.strict) == ("get_weather", True)
    assert spec.parameters == get_weather.parameters
    assert spec.description == get_weather.description


async def test_a_sync_tool_is_called_with_validated_arguments() -> None:
    """Arguments are parsed into their types before the call; nulls fall back to defaults."""
    outcome = await _run(get_weather, '{"city": "Oslo", "units": "fahrenheit", "days": 3}')
    assert outcome == ToolOutcome(
        content="Oslo: 20 fahrenheit for 3 days",
        is_error=False,
        result=ToolResult(output="Oslo: 20 fahrenheit for 3 days"),
    )
    defaulted = await _run(get_weather, '{"city": "Oslo", "units": null, "days": null}')
    assert defaulted.content == "Oslo: 20 celsius for 0 days"


async def test_an_async_tool_is_awaited() -> None:
    """An async function is awaited and its value serialised."""

    @tool
    async def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    outcome = await _run(add, '{"a": 2, "b": 3}')
    assert (outcome.content, outcome.is_error) == ("5", False)


async def test_nested_models_reach_the_function_as_instances() -> None:
    """A BaseModel parameter arrives as a model, lists of models included."""
    seen: list[Basket] = []

    @tool
    def checkout(basket: Basket, express: bool = False) -> dict[str, Any]:
        """Check a basket out."""
        seen.append(basket)
        return {"lines": len(basket.lines), "express": express}

    assert_strict_schema(checkout.parameters)
    outcome = await _run(
        checkout,
        '{"basket": {"lines": [{"sku": "A", "quantity": null}], "note": null}, "express": true}',
    )
    assert json.loads(outcome.content) == {"lines": 1, "express": True}
    assert seen == [Basket(lines=[Line(sku="A")])]


async def test_the_run_context_is_injected_and_not_exposed() -> None:
    """A RunContext parameter is filled by the loop and absent from the schema."""

    @tool
    def whoami(ctx: RunContext, greeting: str = "hi") -> str:
        """Say who the user is."""
        return f"{greeting} {ctx.context['user']} from {ctx.agent}"

    assert list(whoami.parameters["properties"]) == ["greeting"]
    outcome = await _run(whoami, '{"greeting": "hello"}')
    assert outcome.content == "hello ada from triage"


def test_private_parameter_names_are_refused_except_for_the_context() -> None:
    """A `_x` argument cannot be a pydantic field; a `_ctx: RunContext` is fine."""

    def hidden(_secret: str) -> str:
        return _secret

    def with_context(_ctx: RunContext, city: str) -> str:
        return city

    with pytest.raises(ConfigurationError, match="starting with '_'"):
        tool(hidden)
    assert list(tool(with_context).parameters["properties"]) == ["city"]


async def test_a_tool_without_parameters_accepts_empty_arguments() -> None:
    """ "" and {} both call a parameterless tool."""

    @tool
    def ping() -> str:
        """Check the service."""
        return "pong"

    assert ping.parameters["properties"] == {}
    assert_strict_schema(ping.parameters)
    for raw in ("", "{}"):
        assert (await _run(ping, raw)).content == "pong"


async def test_malformed_json_is_an_error_outcome() -> None:
    """Unparseable arguments come back to the model as an error, with the expected shape."""
    outcome = await _run(get_weather, '{"city": "Oslo"')
    assert outcome.is_error
    assert outcome.content.startswith("Error: invalid arguments for tool 'get_weather': ")
    assert "not valid JSON" in outcome.content
    assert "city (string)" in outcome.content
    assert isinstance(outcome.error, ToolArgumentsError)
    assert outcome.error.tool_name == "get_weather"
    assert outcome.result is None


async def test_non_object_arguments_are_an_error_outcome() -> None:
    """A JSON array or string is not an arguments object."""
    outcome = await _run(get_weather, '"Oslo"')
    assert outcome.is_error
    assert "must be a JSON object, not a string" in outcome.content


async def test_missing_and_extra_fields_are_an_error_outcome() -> None:
    """A missing required field and an unknown one are both reported."""
    outcome = await _run(get_weather, '{"town": "Oslo"}')
    assert outcome.is_error
    assert "town: unknown field" in outcome.content
    assert "city: Field required" in outcome.content


async def test_invalid_values_are_an_error_outcome() -> None:
    """A value outside an enum is reported with what was sent."""
    outcome = await _run(get_weather, '{"city": "Oslo", "units": "kelvin", "days": null}')
    assert outcome.is_error
    assert "units: Input should be 'celsius' or 'fahrenheit' (got \"kelvin\")" in outcome.content


async def test_a_tool_that_raises_is_an_error_outcome_with_the_cause() -> None:
    """The exception becomes `Error: <type>: <message>` and is chained as the cause."""

    @tool
    def explode(reason: str) -> str:
        """Fail on purpose."""
        raise ValueError(reason)

    outcome = await _run(explode, '{"reason": "no stock"}')
    assert (outcome.content, outcome.is_error) == ("Error: ValueError: no stock", True)
    assert isinstance(outcome.error, ToolExecutionError)
    assert isinstance(outcome.error.__cause__, ValueError)


async def test_raise_errors_reraises_instead_of_returning_an_outcome() -> None:
    """With raise_errors, both failures raise their ToolError."""

    @tool(raise_errors=True)
    def explode(reason: str) -> str:
        """Fail on purpose."""
        raise KeyError(reason)

    with pytest.raises(ToolExecutionError, match="Error: KeyError: 'x'") as caught:
        await _run(explode, '{"reason": "x"}')
    assert isinstance(caught.value.__cause__, KeyError)
    with pytest.raises(ToolArgumentsError, match="reason: Field required"):
        await _run(explode, "{}")


async def test_return_values_are_serialised_for_the_model() -> None:
    """str as is; models, dicts and lists as JSON; None as null."""

    @tool
    def echo(kind: Literal["str", "model", "list", "none"]) -> Any:
        """Return a value of the given kind."""
        values: dict[str, Any] = {
            "str": "plain text",
            "model": Line(sku="B", quantity=2),
            "list": [1, {"a": None}],
            "none": None,
        }
        return values[kind]

    kinds = ["str", "model", "list", "none"]
    contents = [(await _run(echo, json.dumps({"kind": kind}))).content for kind in kinds]
    assert contents == ["plain text", '{"sku":"B","quantity":2}', '[1,{"a":null}]', "null"]


async def test_a_tool_result_carries_an_update_and_a_goto() -> None:
    """A returned ToolResult reaches the loop whole; its output is the content."""

    @tool
    def escalate(reason: str) -> ToolResult:
        """Escalate to billing."""
        return ToolResult(
            output={"escalated": True},
            update={"reason": reason},
            goto="billing",
            payload={"ticket": 7},
        )

    outcome = await _run(escalate, '{"reason": "refund"}')
    assert outcome.content == '{"escalated":true}'
    assert outcome.result == ToolResult(
        output={"escalated": True},
        update={"reason": "refund"},
        goto="billing",
        payload={"ticket": 7},
    )


def test_a_tool_result_payload_needs_a_goto() -> None:
    """A payload without a target agent is a mistake."""
    with pytest.raises(ConfigurationError, match="needs goto"):
        ToolResult(payload={"x": 1})


def test_decorator_options_override_name_and_description() -> None:
    """@tool(name=..., description=...) replaces what the function gives."""

    @tool(name="lookup-order", description="Find an order by id.")
    def find(order_id: int) -> str:
        """Ignored."""
        return str(order_id)

    assert (find.name, find.description) == ("lookup-order", "Find an order by id.")


async def test_sync_tools_run_inline_unless_asked_to_use_a_thread() -> None:
    """Inline by default (fast); run_in_thread=True moves a blocking tool off the loop."""

    def which_thread() -> int:
        """Report the thread."""
        return threading.get_ident()

    inline = await _run(tool(which_thread), "{}")
    threaded = await _run(tool(which_thread, run_in_thread=True), "{}")
    assert int(inline.content) == threading.get_ident()
    assert int(threaded.content) != threading.get_ident()


def test_invalid_tool_names_are_configuration_errors() -> None:
    """A name outside ^[a-zA-Z0-9_-]{1,64}$ is refused with a hint to pass name=."""
    with pytest.raises(ConfigurationError, match="pass name="):
        tool(lambda: None)
    for bad in ("has space", "x" * 65, "", "naïve"):
        with pytest.raises(ConfigurationError, match="not allowed"):
            tool(name=bad)(_forecast)
    assert tool(name="x" * 64)(_forecast).name == "x" * 64


def _forecast(city: str) -> str:
    return city


def test_var_args_are_configuration_errors() -> None:
    """*args and **kwargs have no JSON schema."""

    def spread(*cities: str) -> str:
        return ""

    def mapping(**options: str) -> str:
        return ""

    for function in (spread, mapping):
        with pytest.raises(ConfigurationError, match=r"\*args and \*\*kwargs"):
            tool(function)


def test_unannotated_parameters_are_configuration_errors() -> None:
    """Every exposed parameter needs a type; Any is the explicit escape hatch."""

    def vague(city) -> str:  # type: ignore[no-untyped-def]
        return str(city)

    with pytest.raises(ConfigurationError, match="needs a type annotation"):
        tool(vague)


async def test_any_parameters_give_a_non_strict_tool() -> None:
    """A free-form parameter cannot be strict; the tool says so and still works."""

    @tool
    def store(key: str, value: Any, meta: dict[str, Any] | None = None) -> str:
        """Store a value."""
        return f"{key}={value!r}"

    assert not store.strict
    assert not store.spec().strict
    outcome = await _run(store, '{"key": "k", "value": [1, 2]}')
    assert outcome.content == "k=[1, 2]"


def test_types_pydantic_cannot_describe_are_configuration_errors() -> None:
    """A parameter of an arbitrary class is refused at decoration time."""

    class Opaque:
        pass

    def use(thing: Opaque) -> str:
        return ""

    # Under `from __future__ import annotations` a local class is a string nothing can resolve.
    use.__annotations__["thing"] = Opaque
    with pytest.raises(ConfigurationError, match="pydantic cannot describe"):
        tool(use)


def test_unresolvable_annotations_are_configuration_errors() -> None:
    """A type only defined locally cannot be resolved; the error says where to define it."""

    class Local(BaseModel):
        x: int

    def use(thing: Local) -> str:
        return ""

    with pytest.raises(ConfigurationError, match="define the types it uses at module level"):
        tool(use)


async def test_bound_methods_can_be_tools() -> None:
    """A method's self is bound, not exposed."""

    class Counter:
        def __init__(self) -> None:
            self.total = 0

        def add(self, amount: int) -> int:
            """Add to the counter."""
            self.total += amount
            return self.total

    counter = Counter()
    add = tool(counter.add)
    assert list(add.parameters["properties"]) == ["amount"]
    assert (await _run(add, '{"amount": 4}')).content == "4"


# -- from_schema -----------------------------------------------------------------------------

_GREET_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "punctuation": {"type": "string", "default": "!"},
    },
    "required": ["name"],
}


def _schema_tool(seen: list[dict[str, Any]], schema: dict[str, Any]) -> FunctionTool:
    async def greet(arguments: dict[str, Any]) -> str:
        seen.append(arguments)
        return f"hi {arguments['name']}"

    return FunctionTool.from_schema(
        name="greet", description="Greet.", parameters=schema, function=greet
    )


async def test_from_schema_tool_is_strict_and_drops_the_nulls_strict_mode_asked_for() -> None:
    """An optional field becomes nullable; a null for it is not passed on, so its default holds."""
    seen: list[dict[str, Any]] = []
    greet = _schema_tool(seen, _GREET_SCHEMA)

    outcome = await greet.invoke('{"name": "Ada", "punctuation": null}', CONTEXT)

    assert greet.strict
    assert_strict_schema(greet.parameters)
    assert seen == [{"name": "Ada"}]
    assert outcome.content == "hi Ada" and not outcome.is_error


async def test_from_schema_tool_falls_back_to_the_schema_as_given_when_it_cannot_be_strict() -> (
    None
):
    """A free-form object cannot be strict: the tool offers the original schema, non-strict."""
    schema = {"type": "object", "properties": {"tags": {"type": "object"}}}
    seen: list[dict[str, Any]] = []
    tagged = _schema_tool(seen, schema)

    await tagged.invoke('{"name": "x", "tags": {"a": 1}}', CONTEXT)

    assert not tagged.strict and tagged.parameters == schema
    assert seen == [{"name": "x", "tags": {"a": 1}}]


async def test_from_schema_tool_reports_arguments_that_are_not_a_json_object() -> None:
    """Bad JSON is an argument error the model reads; the function is not called."""
    seen: list[dict[str, Any]] = []
    outcome = await _schema_tool(seen, _GREET_SCHEMA).invoke("[1]", CONTEXT)

    assert outcome.is_error and isinstance(outcome.error, ToolArgumentsError)
    assert "name (string)" in outcome.content
    assert seen == []


def test_from_schema_checks_the_tool_name() -> None:
    """A name the model APIs refuse is a configuration error at once."""
    with pytest.raises(ConfigurationError):
        FunctionTool.from_schema(
            name="a/b", description="", parameters=_GREET_SCHEMA, function=_never
        )


async def _never(arguments: dict[str, Any]) -> None:
    raise AssertionError(arguments)
