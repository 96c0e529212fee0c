"""Argument schemas shared by tools and handoffs: OpenAI strict-mode shaping and validation."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from swarmkit.bounds import json_problem
from swarmkit.models import ToolSpec
from swarmkit.redaction import DEFAULT_REDACTOR

if TYPE_CHECKING:
    from swarmkit.handoffs import TransferTool
    from swarmkit.tools import FunctionTool

TOOL_NAME_PATTERN = r"^[a-zA-Z0-9_-]{1,64}$"
"""The tool-name rule of the OpenAI API, which every tool name we offer must satisfy."""

_DEFS_PREFIX = "#/$defs/"

ModelT = TypeVar("ModelT", bound=BaseModel)

# Keywords strict mode accepts and we keep as they are.
_KEPT = frozenset(
    {
        "type",
        "description",
        "title",
        "enum",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minItems",
        "maxItems",
    }
)
# Keywords strict mode rejects or may reject, dropped because pydantic still enforces them when
# the arguments are validated (a violation goes back to the model as an error it can fix).
# `pattern` is dropped too: a Python regex may use syntax the API's regex engine refuses.
_DROPPED = frozenset(
    {
        "default",
        "examples",
        "deprecated",
        "readOnly",
        "writeOnly",
        "minLength",
        "maxLength",
        "pattern",
        "uniqueItems",
        "minProperties",
        "maxProperties",
        "discriminator",
        "contentEncoding",
        "contentMediaType",
        "$comment",
        "$schema",
    }
)
_STRICT_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)
# Keywords handled structurally by _shape; anything else unknown makes the schema non-strict.
_STRUCTURAL = frozenset(
    {"properties", "required", "additionalProperties", "items", "anyOf", "oneOf", "allOf"}
    | {"const", "format", "$ref", "$defs"}
)


class _NotStrictError(Exception):
    """Raised inside the shaper when a schema cannot be expressed in strict mode."""


@dataclass(frozen=True, kw_only=True)
class ArgumentProblem:
    """Why a model's arguments were refused, worded for the model to fix them."""

    message: str
    """What was wrong and the expected shape, ready to send back to the model."""


@dataclass(frozen=True, kw_only=True)
class ArgumentsSchema(Generic[ModelT]):
    """A pydantic model's arguments schema as offered to a model, and its validator."""

    model: type[ModelT]
    """The pydantic model the arguments validate into."""
    parameters: dict[str, Any]
    """The JSON schema shown to the model (strict-mode shaped when ``strict``)."""
    strict: bool
    """Whether ``parameters`` is valid for OpenAI strict mode."""
    source: dict[str, Any] = field(repr=False)
    """Pydantic's own schema of ``model``: which fields are optional, for mapping nulls back."""

    def validate(self, arguments: str) -> ModelT | ArgumentProblem:
        """Parse and validate the model's raw arguments; never raises for bad input."""
        data = _load_object(arguments)
        if isinstance(data, str):
            return ArgumentProblem(message=self._problem_text([data]))
        data = drop_defaulted_nulls(data, self.source)
        problems = _unknown_field_problems(data, self.model, self.source)
        try:
            # JSON-mode validation, as the data came from JSON: a strict model still accepts
            # an enum's value or an ISO date string, which python-mode strictness would refuse.
            instance = self.model.model_validate_json(json.dumps(data))
        except ValidationError as exc:
            problems += [_describe_error(error) for error in exc.errors()]
        else:
            if not problems:
                return instance
        return ArgumentProblem(message=self._problem_text(problems))

    def describe(self) -> str:
        """The expected arguments in one line, e.g. ``city (string), days (integer or null)``."""
        return describe_fields(self.source)

    def _problem_text(self, problems: list[str]) -> str:
        listed = "; ".join(dict.fromkeys(problems))
        return f"{listed}. Expected a JSON object with fields: {self.describe()}."


def spec_of(tool: FunctionTool | TransferTool) -> ToolSpec:
    """How ``tool`` is offered to a model: its own name, description and schema."""
    return ToolSpec(
        name=tool.name,
        description=tool.description,
        parameters=tool.parameters,
        strict=tool.strict,
    )


def arguments_schema(model: type[ModelT], *, strict: bool = True) -> ArgumentsSchema[ModelT]:
    """Build the schema of ``model``; strict-mode shaped when asked and possible, else plain."""
    source = model.model_json_schema()
    shaped = to_strict_schema(source) if strict else None
    return ArgumentsSchema(
        model=model,
        parameters=shaped if shaped is not None else copy.deepcopy(source),
        strict=shaped is not None,
        source=source,
    )


def to_strict_schema(schema: Mapping[str, Any]) -> dict[str, Any] | None:
    """Return ``schema`` reshaped for OpenAI strict mode, or None when it cannot be made strict.

    Every object gets ``additionalProperties: false`` and lists all its properties as required
    (an optional one becomes nullable: see `drop_defaulted_nulls`); ``$ref`` always points into a
    root-level ``$defs`` that holds exactly the definitions still referenced.
    """
    # A copy, so the result shares no lists or dicts with the caller's schema.
    root: dict[str, Any] = copy.deepcopy(dict(schema))
    defs: dict[str, Any] = root.pop("$defs", {})
    try:
        body = _shape(_inline_root_ref(root, defs), defs, frozenset())
        if body.get("type") != "object":
            return None
        shaped_defs = _shape_reachable_defs(body, defs)
    except _NotStrictError:
        return None
    if shaped_defs:
        body["$defs"] = shaped_defs
    return body


def unresolved_refs(schema: Mapping[str, Any]) -> list[str]:
    """Every ``$ref`` in ``schema`` that does not resolve to a root-level ``$defs`` entry."""
    defs = schema.get("$defs", {})
    return [ref for ref in _refs(schema) if _def_name(ref) not in defs]


def drop_defaulted_nulls(data: Any, schema: Mapping[str, Any]) -> Any:
    """Remove ``null`` values the strict schema allowed only to stand for "use the default".

    Strict mode makes every property required, so an optional field is offered as nullable and a
    model that wants its default sends ``null``. When pydantic's own schema of that field does not
    accept null, the key is dropped so pydantic fills in the default.
    """
    return _drop_nulls(data, schema, schema.get("$defs", {}))


def describe_fields(schema: Mapping[str, Any]) -> str:
    """A short, model-readable listing of an object schema's fields and their types."""
    defs = schema.get("$defs", {})
    node = _resolve(schema, defs)
    required = set(node.get("required", ()))
    parts = []
    for name, sub in node.get("properties", {}).items():
        optional = "" if name in required else ", optional"
        parts.append(f"{name} ({_type_label(sub, defs)}{optional})")
    return ", ".join(parts) if parts else "none (send {})"


# -- strict shaping ---------------------------------------------------------------------------


def _inline_root_ref(root: dict[str, Any], defs: Mapping[str, Any]) -> dict[str, Any]:
    # Pydantic writes a recursive root model as a bare $ref; strict mode wants an object root.
    if "$ref" not in root:
        return root
    siblings = {key: value for key, value in root.items() if key != "$ref"}
    return {**_lookup(root["$ref"], defs), **siblings}


def _shape(node: Any, defs: Mapping[str, Any], inlining: frozenset[str]) -> dict[str, Any]:
    if not isinstance(node, Mapping):
        raise _NotStrictError("a schema node is not an object")
    if "$ref" in node:
        return _shape_ref(node, defs, inlining)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _KEPT:
            out[key] = value
        elif key not in _DROPPED and key not in _STRUCTURAL:
            raise _NotStrictError(f"keyword {key!r} has no strict-mode equivalent")
    if node.get("format") in _STRICT_FORMATS:
        out["format"] = node["format"]
    if "const" in node:
        out["enum"] = [node["const"]]
    _shape_combinators(node, out, defs, inlining)
    _shape_container(node, out, defs, inlining)
    if not {"type", "enum", "anyOf"} & out.keys():
        raise _NotStrictError("a free-form value (Any) cannot be strict")
    return out


def _shape_ref(
    node: Mapping[str, Any], defs: Mapping[str, Any], inlining: frozenset[str]
) -> dict[str, Any]:
    ref = node["$ref"]
    target = _lookup(ref, defs)
    siblings = {k: v for k, v in node.items() if k != "$ref" and k not in _DROPPED}
    # Strict mode refuses keywords beside a $ref, so a $ref carrying a description is inlined,
    # once: a definition already being inlined keeps a bare $ref so recursion terminates.
    if not siblings or ref in inlining:
        return {"$ref": ref}
    return _shape({**target, **siblings}, defs, inlining | {ref})


def _shape_combinators(
    node: Mapping[str, Any], out: dict[str, Any], defs: Mapping[str, Any], inlining: frozenset[str]
) -> None:
    branches = [*node.get("anyOf", ()), *node.get("oneOf", ())]
    if branches:
        # oneOf (pydantic's discriminated unions) is not accepted; its branches are disjoint, so
        # anyOf means the same thing.
        out["anyOf"] = [_shape(branch, defs, inlining) for branch in branches]
    all_of = node.get("allOf")
    if all_of is not None:
        if len(all_of) != 1:
            raise _NotStrictError("allOf with several schemas cannot be strict")
        merged = _shape(all_of[0], defs, inlining)
        out.update({k: v for k, v in merged.items() if k not in out})


def _shape_container(
    node: Mapping[str, Any], out: dict[str, Any], defs: Mapping[str, Any], inlining: frozenset[str]
) -> None:
    types = _types(node)
    if "object" in types:
        _shape_object(node, out, defs, inlining)
    if "array" in types:
        if "items" not in node:
            raise _NotStrictError("an array without an items schema (e.g. a tuple) is not strict")
        out["items"] = _shape(node["items"], defs, inlining)


def _shape_object(
    node: Mapping[str, Any], out: dict[str, Any], defs: Mapping[str, Any], inlining: frozenset[str]
) -> None:
    if "properties" not in node or node.get("additionalProperties") not in (None, False):
        raise _NotStrictError("an object with free-form keys (a dict) cannot be strict")
    optional = node["properties"].keys() - set(node.get("required", ()))
    properties: dict[str, Any] = {}
    for name, sub in node["properties"].items():
        shaped = _shape(sub, defs, inlining)
        properties[name] = _nullable(shaped) if name in optional else shaped
    out["properties"] = properties
    out["required"] = list(properties)
    out["additionalProperties"] = False


def _nullable(node: dict[str, Any]) -> dict[str, Any]:
    if _accepts_null(node):
        return node
    # Descriptive keywords stay on the outside so the model still reads them.
    outer: dict[str, Any] = {key: node[key] for key in ("title", "description") if key in node}
    inner = {key: value for key, value in node.items() if key not in outer}
    return {**outer, "anyOf": [inner, {"type": "null"}]}


def _accepts_null(node: Mapping[str, Any]) -> bool:
    if "null" in _types(node) or None in node.get("enum", ()):
        return True
    return any(_accepts_null(branch) for branch in node.get("anyOf", ()))


def _shape_reachable_defs(body: Mapping[str, Any], defs: Mapping[str, Any]) -> dict[str, Any]:
    # Only definitions still referenced after inlining are kept, in pydantic's order.
    shaped: dict[str, Any] = {}
    pending = list(_refs(body))
    while pending:
        ref = pending.pop()
        name = _def_name(ref)
        if name not in shaped:
            shaped[name] = _shape(_lookup(ref, defs), defs, frozenset())
            pending += _refs(shaped[name])
    return {name: shaped[name] for name in defs if name in shaped}


# -- schema reading ---------------------------------------------------------------------------


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, Mapping):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            else:
                yield from _refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _refs(item)


def _def_name(ref: str) -> str:
    return ref.removeprefix(_DEFS_PREFIX) if ref.startswith(_DEFS_PREFIX) else ref


def _lookup(ref: str, defs: Mapping[str, Any]) -> Mapping[str, Any]:
    name = _def_name(ref)
    if not ref.startswith(_DEFS_PREFIX) or name not in defs:
        raise _NotStrictError(f"$ref {ref!r} does not point into $defs")
    target: Mapping[str, Any] = defs[name]
    return target


def _resolve(node: Mapping[str, Any], defs: Mapping[str, Any]) -> Mapping[str, Any]:
    ref = node.get("$ref")
    if isinstance(ref, str) and _def_name(ref) in defs:
        return {**defs[_def_name(ref)], **{k: v for k, v in node.items() if k != "$ref"}}
    return node


def _types(node: Mapping[str, Any]) -> list[str]:
    declared = node.get("type", [])
    return [declared] if isinstance(declared, str) else list(declared)


def _type_label(node: Mapping[str, Any], defs: Mapping[str, Any]) -> str:
    node = _resolve(node, defs)
    if "enum" in node:
        return "one of " + ", ".join(json.dumps(value) for value in node["enum"])
    if "const" in node:
        return json.dumps(node["const"])
    branches = [*node.get("anyOf", ()), *node.get("oneOf", ())]
    if branches:
        return " or ".join(_type_label(branch, defs) for branch in branches)
    types = _types(node)
    if types == ["array"]:
        return f"list of {_type_label(node.get('items', {}), defs)}"
    if types == ["object"] and "properties" in node:
        return "object {" + ", ".join(node["properties"]) + "}"
    return " or ".join(types) if types else "any value"


# -- argument validation ----------------------------------------------------------------------


def _load_object(arguments: str) -> dict[str, Any] | str:
    """The arguments as a dict, or what is wrong with them."""
    # An empty string (or null) is what models send for a tool without parameters.
    if not arguments.strip():
        return {}
    problem = json_problem(arguments)
    if problem is not None:
        return problem
    try:
        data = json.loads(arguments)
    except json.JSONDecodeError as exc:
        return f"the arguments are not valid JSON ({exc})"
    if data is None:
        return {}
    if not isinstance(data, dict):
        return f"the arguments must be a JSON object, not {_json_kind(data)}"
    return data


def _json_kind(value: object) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return "a string" if isinstance(value, str) else "an array"


def _drop_nulls(data: Any, node: Mapping[str, Any], defs: Mapping[str, Any]) -> Any:
    node = _resolve(node, defs)
    if isinstance(data, dict) and "properties" in node:
        return _drop_object_nulls(data, node, defs)
    if isinstance(data, list) and isinstance(node.get("items"), Mapping):
        return [_drop_nulls(item, node["items"], defs) for item in data]
    branches = [b for b in node.get("anyOf", ()) if not _accepts_null(b)]
    # Only an unambiguous union (X or null) is followed; for X or Y we cannot tell which applies.
    if data is not None and len(branches) == 1:
        return _drop_nulls(data, branches[0], defs)
    return data


def _drop_object_nulls(
    data: dict[str, Any], node: Mapping[str, Any], defs: Mapping[str, Any]
) -> dict[str, Any]:
    properties: Mapping[str, Any] = node["properties"]
    required = set(node.get("required", ()))
    kept: dict[str, Any] = {}
    for key, value in data.items():
        sub = properties.get(key)
        if sub is None:
            kept[key] = value
        elif value is None and key not in required and not _accepts_null(_resolve(sub, defs)):
            continue
        else:
            kept[key] = _drop_nulls(value, sub, defs)
    return kept


def _unknown_field_problems(
    data: Mapping[str, Any], model: type[BaseModel], source: Mapping[str, Any]
) -> list[str]:
    # Reported even when the model would ignore extras: a misspelt optional field would
    # otherwise vanish silently instead of being corrected.
    if model.model_config.get("extra") == "allow":
        return []
    known = set(_resolve(source, source.get("$defs", {})).get("properties", {}))
    known |= set(model.model_fields)
    return [f"{key}: unknown field" for key in data if key not in known]


def _describe_error(error: ErrorDetails) -> str:
    where = _location(error["loc"])
    text = f"{where}: {error['msg']}" if where else error["msg"]
    if error["type"] == "extra_forbidden":
        return f"{where}: unknown field"
    if error["type"] == "missing":
        return text
    return f"{text} (got {DEFAULT_REDACTOR.refused_input(error['loc'], error['input'])})"


def _location(loc: tuple[int | str, ...]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text
