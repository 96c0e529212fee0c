"""The JSON serializer DBOS stores our workflow inputs, step outputs, messages and errors with."""

from __future__ import annotations

import json
from typing import Any

from dbos import Serializer

from swarmkit import exceptions
from swarmkit.exceptions import DurableStepError

SERIALIZER_NAME = "swarmkit_json"
"""The name DBOS stores beside each value this serializer wrote."""

_ERROR_KEY = "__swarmkit_error__"


class JsonSerializer(Serializer):
    """Plain JSON for every value DBOS stores, never pickle.

    Everything a session hands DBOS is already JSON data (our codecs turn model answers, tool
    outcomes, decisions and events into it), so a value that is not JSON is a bug, refused
    here with a ``TypeError`` rather than stored in a form another version cannot read.
    Exceptions are kept as their class name and message, and come back as
    ``DurableStepError`` (a ``ConfigurationError`` comes back as itself).
    """

    def serialize(self, data: Any) -> str:
        """``data`` as JSON text (an exception as its kind and message)."""
        if isinstance(data, BaseException):
            data = {_ERROR_KEY: {"kind": type(data).__name__, "message": str(data)}}
        return json.dumps(data, separators=(",", ":"), allow_nan=False, default=_refuse)

    def deserialize(self, serialized_data: str) -> Any:
        """The value ``serialize`` wrote (an exception rebuilt as DurableStepError)."""
        data = json.loads(serialized_data)
        if isinstance(data, dict) and _ERROR_KEY in data:
            return error_from_data(data[_ERROR_KEY])
        return data

    def name(self) -> str:
        """The serializer's name, stored with each value."""
        return SERIALIZER_NAME


def error_from_data(data: dict[str, Any]) -> Exception:
    """The exception a stored ``{"kind", "message"}`` stands for."""
    kind, message = str(data.get("kind")), str(data.get("message"))
    if kind in ("ConfigurationError", "ConfigurationChangedError"):
        return exceptions.ConfigurationError(message)
    return DurableStepError(message, kind=kind)


def _refuse(value: object) -> Any:
    raise TypeError(
        f"swarmkit's DBOS serializer stores JSON data only, not {type(value).__name__}; "
        "convert the value to data first (the session codecs do this for swarmkit's own values)"
    )
