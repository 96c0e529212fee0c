"""Strict-mode shaping of argument schemas, and validation of a model's raw arguments."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from swarmkit._schema import (
    ArgumentProblem,
    arguments_schema,
    describe_fields,
    to_strict_schema,
    unresolved_refs,
)

_STRICT_KEYWORDS = {
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "anyOf",
    "$ref",
    "description",
    "title",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
}


def assert_strict_schema(schema: Mapping[str, Any]) -> None:
    """Fail unless ``schema`` follows OpenAI strict mode's rules (an independent checker)."""
    assert schema["type"] == "object", "the root must be an object"
    defs = schema.get("$defs", {})
    _check_node({k: v for k, v in schema.items() if k != "$defs"}, defs, "$")
    for name, definition in defs.items():
        _check_node(definition, defs, f"$defs.{name}")


def _check_node(node: Any, defs: Mapping[str, Any], path: str) -> None:
    assert isinstance(node, dict), path
    assert not node.keys() - _STRICT_KEYWORDS, (path, node.keys() - _STRICT_KEYWORDS)
    if "$ref" in node:
        assert node.keys() == {"$ref"}, f"{path}: keywords beside $ref"
        ref = node["$ref"]
        assert ref.startswith("#/$defs/") and ref.removeprefix("#/$defs/") in defs, (path, ref)
        return
    declared = node.get("type", [])
    types = [declared] if isinstance(declared, str) else declared
    assert types or "enum" in node or "anyOf" in node, f"{path}: a free-form value"
    if "object" in types:
        assert node["additionalProperties"] is False, path
        assert node["required"] == list(node["properties"]), path
    if "array" in types:
        _check_node(node["items"], defs, f"{path}[]")
    for key, sub in node.get("properties", {}).items():
        _check_node(sub, defs, f"{path}.{key}")
    for index, branch in enumerate(node.get("anyOf", [])):
        _check_node(branch, defs, f"{path}|{index}")


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Address(BaseModel):
    street: str
    postcode: str | None = None


class Item(BaseModel):
    """One line of an order."""

    sku: str = Field(description="Stock-keeping unit.")
    quantity: int = 1
    color: Color = Field(default=Color.RED, description="The colour wanted.")
    ship_to: Address = Field(description="Where this item goes.")


class Order(BaseModel):
    items: list[Item]
    billing: Address
    shipping: Address | None = Field(default=None, description="Defaults to billing.")
    priority: Literal["low", "high"] = "low"
    channel: Literal["web"] = "web"


class Tree(BaseModel):
    label: str
    children: list[Tree] = []
    parent: Tree | None = None


class Cat(BaseModel):
    kind: Literal["cat"]
    lives: int


class Dog(BaseModel):
    kind: Literal["dog"]
    good: bool


class Pet(BaseModel):
    animal: Annotated[Cat | Dog, Field(discriminator="kind")]


class Constrained(BaseModel):
    code: str = Field(min_length=3, max_length=3, pattern=r"^[A-Z]+$")
    score: float = Field(ge=0, le=1)
    at: datetime
    tags: set[str]


class Bag(BaseModel):
    extras: dict[str, Any]


class Pair(BaseModel):
    pair: tuple[int, str]


class Loose(BaseModel):
    value: Any


def test_flat_model_lists_every_property_as_required() -> None:
    """Every property is required and extra keys are forbidden."""
    schema = arguments_schema(Address)
    assert schema.strict
    assert schema.parameters["required"] == ["street", "postcode"]
    assert schema.parameters["additionalProperties"] is False
    assert_strict_schema(schema.parameters)


def test_nested_models_within_lists_keep_every_ref_resolvable() -> None:
    """A model in a model in a list keeps root-level $defs that every $ref resolves into."""
    parameters = arguments_schema(Order).parameters
    assert_strict_schema(parameters)
    assert unresolved_refs(parameters) == []
    assert parameters["properties"]["items"]["items"] == {"$ref": "#/$defs/Item"}
    assert set(parameters["$defs"]) == {"Address", "Item"}


def test_a_reused_definition_is_kept_once_and_shared() -> None:
    """Address, used for billing and inside Item, is one definition referenced from both."""
    parameters = arguments_schema(Order).parameters
    assert parameters["properties"]["billing"] == {"$ref": "#/$defs/Address"}
    item = parameters["$defs"]["Item"]
    assert item["properties"]["ship_to"]["properties"]["street"] == {
        "title": "Street",
        "type": "string",
    }
    assert parameters["$defs"]["Address"]["additionalProperties"] is False


def test_a_ref_with_a_description_is_inlined_keeping_the_description() -> None:
    """Strict mode refuses keywords beside $ref, so such a field is inlined with its text."""
    item = arguments_schema(Order).parameters["$defs"]["Item"]
    ship_to = item["properties"]["ship_to"]
    assert "$ref" not in ship_to
    assert ship_to["description"] == "Where this item goes."
    assert ship_to["type"] == "object"


def test_enums_and_literals_become_enum_lists() -> None:
    """An Enum class, a Literal and a single-value Literal all become `enum`."""
    parameters = arguments_schema(Order).parameters
    color = parameters["$defs"]["Item"]["properties"]["color"]
    assert color["anyOf"][0]["enum"] == ["red", "green"]
    assert parameters["properties"]["priority"]["anyOf"][0]["enum"] == ["low", "high"]
    assert parameters["properties"]["channel"]["anyOf"][0]["enum"] == ["web"]


def test_an_optional_nested_model_is_a_nullable_ref() -> None:
    """`Address | None` is anyOf a resolvable $ref and null, and still required."""
    parameters = arguments_schema(Order).parameters
    shipping = parameters["properties"]["shipping"]
    assert shipping["anyOf"] == [{"$ref": "#/$defs/Address"}, {"type": "null"}]
    assert shipping["description"] == "Defaults to billing."
    assert "shipping" in parameters["required"]


def test_a_field_with_a_default_becomes_nullable_and_null_means_the_default() -> None:
    """A model that sends null for a defaulted field gets the default, at any depth."""
    schema = arguments_schema(Order)
    quantity = schema.parameters["$defs"]["Item"]["properties"]["quantity"]
    assert quantity["anyOf"] == [{"type": "integer"}, {"type": "null"}]
    order = schema.validate(
        '{"items": [{"sku": "A1", "quantity": null, "color": null,'
        ' "ship_to": {"street": "Main St", "postcode": null}}],'
        ' "billing": {"street": "Elm St", "postcode": null},'
        ' "shipping": null, "priority": null, "channel": null}'
    )
    assert isinstance(order, Order)
    assert order.items[0].quantity == 1
    assert order.items[0].color is Color.RED
    assert order.priority == "low"
    assert order.shipping is None


def test_a_recursive_model_gets_an_object_root_and_resolvable_refs() -> None:
    """Pydantic writes a recursive root as a bare $ref; strict mode gets an object root."""
    parameters = arguments_schema(Tree).parameters
    assert_strict_schema(parameters)
    assert parameters["properties"]["label"]["type"] == "string"
    assert set(parameters["$defs"]) == {"Tree"}
    tree = arguments_schema(Tree).validate(
        '{"label": "root", "parent": null,'
        ' "children": [{"label": "leaf", "children": null, "parent": null}]}'
    )
    assert isinstance(tree, Tree)
    assert tree.children[0].label == "leaf"


def test_a_discriminated_union_becomes_any_of() -> None:
    """oneOf and its discriminator are not accepted; anyOf of the branches is."""
    parameters = arguments_schema(Pet).parameters
    assert_strict_schema(parameters)
    assert parameters["properties"]["animal"]["anyOf"] == [
        {"$ref": "#/$defs/Cat"},
        {"$ref": "#/$defs/Dog"},
    ]


def test_constraints_strict_mode_refuses_are_dropped_and_still_enforced() -> None:
    """Length, pattern and uniqueness leave the schema; pydantic still checks them."""
    schema = arguments_schema(Constrained)
    assert_strict_schema(schema.parameters)
    properties = schema.parameters["properties"]
    assert properties["code"] == {"title": "Code", "type": "string"}
    assert properties["score"]["minimum"] == 0
    assert properties["at"]["format"] == "date-time"
    problem = schema.validate(
        '{"code": "abcd", "score": 0.5, "at": "2024-01-01T00:00:00", "tags": []}'
    )
    assert isinstance(problem, ArgumentProblem)
    assert "code: String should have at most 3 characters" in problem.message


def test_defaults_are_dropped_from_strict_schemas() -> None:
    """`default` never appears in a strict schema."""
    parameters = arguments_schema(Order).parameters
    assert "default" not in repr(parameters)


def test_free_form_types_fall_back_to_a_non_strict_schema() -> None:
    """dict, Any and fixed tuples cannot be strict: the plain pydantic schema is used."""
    for model in (Bag, Loose, Pair):
        schema = arguments_schema(model)
        assert not schema.strict, model
        assert schema.parameters == model.model_json_schema()


def test_strict_can_be_declined() -> None:
    """strict=False keeps pydantic's own schema."""
    schema = arguments_schema(Order, strict=False)
    assert not schema.strict
    assert schema.parameters == Order.model_json_schema()
    assert unresolved_refs(schema.parameters) == []


def test_a_dangling_ref_is_detected_and_never_made_strict() -> None:
    """A schema whose $defs were stripped (another SDK's bug) is caught, not passed on."""
    stripped = {
        "type": "object",
        "properties": {"to": {"$ref": "#/$defs/Address"}},
        "required": ["to"],
    }
    assert unresolved_refs(stripped) == ["#/$defs/Address"]
    assert to_strict_schema(stripped) is None


def test_unused_definitions_are_pruned() -> None:
    """Definitions used only where they were inlined do not linger in $defs."""
    schema = arguments_schema(Item)
    assert set(schema.source["$defs"]) == {"Address", "Color"}
    assert "$defs" not in schema.parameters
    assert_strict_schema(schema.parameters)


def test_the_source_schema_is_not_modified() -> None:
    """Shaping works on a copy: pydantic's schema keeps its defaults and $ref siblings."""
    schema = arguments_schema(Order)
    assert schema.source == Order.model_json_schema()


def test_empty_arguments_mean_an_empty_object() -> None:
    """ "" and null are what models send for no arguments."""
    schema = arguments_schema(Address)
    for raw in ("", "  ", "null"):
        problem = schema.validate(raw)
        assert isinstance(problem, ArgumentProblem)
        assert "street: Field required" in problem.message


def test_malformed_and_non_object_arguments_are_problems_not_exceptions() -> None:
    """Bad JSON and non-objects come back as readable problems."""
    schema = arguments_schema(Address)
    bad_json = schema.validate('{"street": ')
    not_object = schema.validate("[1, 2]")
    assert isinstance(bad_json, ArgumentProblem)
    assert "not valid JSON" in bad_json.message
    assert isinstance(not_object, ArgumentProblem)
    assert "must be a JSON object, not an array" in not_object.message


def test_problems_name_the_path_and_the_expected_fields() -> None:
    """Nested errors show where they are; the message lists the expected fields."""
    problem = arguments_schema(Order).validate(
        '{"items": [{"sku": 5, "ship_to": {}}], "billing": {"street": "x"}, "colour": 1}'
    )
    assert isinstance(problem, ArgumentProblem)
    assert "colour: unknown field" in problem.message
    assert "items[0].sku: Input should be a valid string (got 5)" in problem.message
    assert "items[0].ship_to.street: Field required" in problem.message
    assert "Expected a JSON object with fields: items (list of object {" in problem.message


def test_describe_fields_lists_types_and_optionality() -> None:
    """The expected-shape line names each field's type and marks optional ones."""
    text = describe_fields(Order.model_json_schema())
    assert text.startswith("items (list of object {sku, quantity, color, ship_to}), ")
    assert 'priority (one of "low", "high", optional)' in text
    assert "shipping (object {street, postcode} or null, optional)" in text
