"""Findings about rule payloads: an ``input_mapping`` that cannot fill the target's input type."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from pydantic import BaseModel

from swarmkit.check._finding import Finding
from swarmkit.check._graph import EdgeVerdict


def mapping_findings(verdict: EdgeVerdict, input_type: type[BaseModel] | None) -> Iterator[Finding]:
    """Required fields the mapping leaves out, fields the type does not have, or no type."""
    mapping = verdict.edge.input_mapping
    if not mapping:
        return
    if input_type is None:
        yield Finding(
            code="input_mapping_unused",
            severity="warning",
            where=verdict.where,
            message=f"the rule maps a payload, but the handoff to {verdict.edge.target!r} has "
            "no input_type, so the payload is dropped",
            fix=f"give the source agent a Handoff(agent={verdict.edge.target!r}, "
            "input_type=...), or remove the input_mapping",
        )
        return
    yield from _fit(verdict, mapping, input_type)


def _fit(
    verdict: EdgeVerdict, mapping: Mapping[str, str], input_type: type[BaseModel]
) -> Iterator[Finding]:
    fields = {(f.alias or name): f for name, f in input_type.model_fields.items()}
    missing = sorted(name for name, f in fields.items() if f.is_required() and name not in mapping)
    extra = sorted(name for name in mapping if name not in fields)
    forbids_extra = input_type.model_config.get("extra") == "forbid"
    if missing:
        yield Finding(
            code="input_mapping_incomplete",
            severity="error",
            where=verdict.where,
            message=f"{input_type.__name__} requires {', '.join(missing)}, which the "
            "input_mapping does not fill, so the rule's payload never validates and the rule "
            "never hands off",
            fix="map every required field to a state path, or give those fields defaults",
        )
    if extra:
        yield Finding(
            code="input_mapping_unknown_field",
            severity="error" if forbids_extra else "warning",
            where=verdict.where,
            message=f"{input_type.__name__} has no field {', '.join(extra)}"
            + (" and forbids extra fields" if forbids_extra else "; the value is dropped"),
            fix=f"map only fields of {input_type.__name__}: {', '.join(sorted(fields))}",
        )
