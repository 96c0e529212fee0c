"""A swarm's ``context_type``: the run context validated against a Pydantic model."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from swarmkit.exceptions import ConfigurationError


def check_context_type(context_type: object) -> type[BaseModel] | None:
    """The setting, checked: None or a Pydantic model class."""
    if context_type is None:
        return None
    if not (isinstance(context_type, type) and issubclass(context_type, BaseModel)):
        raise ConfigurationError(
            f"context_type must be a pydantic BaseModel subclass, got {context_type!r}"
        )
    return context_type


def typed_context(context_type: type[BaseModel], context: Mapping[str, Any]) -> dict[str, Any]:
    """The context validated against ``context_type``, in its JSON form (what rules see).

    Raises ConfigurationError naming each field that does not fit, before anything is journaled.
    """
    try:
        model = context_type.model_validate(dict(context))
    except ValidationError as exc:
        problems = "; ".join(_problem(error) for error in exc.errors())
        raise ConfigurationError(
            f"context does not match context_type {context_type.__name__}: {problems}"
        ) from None
    data: dict[str, Any] = model.model_dump(mode="json")
    return data


def _problem(error: Any) -> str:
    where = ".".join(str(part) for part in error.get("loc", ())) or "(the context)"
    return f"{where}: {error.get('msg', 'invalid')}"
