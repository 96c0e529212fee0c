"""OpenAIResponsesModel: the Model protocol on OpenAI's Responses API, with our retries."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

from swarmkit.models._openai import OpenAIModel
from swarmkit.models._responses_wire import (
    ResponseStreamAssembler,
    parse_response,
    request_json,
)
from swarmkit.models._wire import json_object

if TYPE_CHECKING:
    from openai import AsyncOpenAI, AsyncStream

_RESPONSES = "/responses"


class OpenAIResponsesModel(OpenAIModel):
    """A model served through ``client.responses`` (OpenAI's Responses API), with our retries.

    Everything but the wire format is the Chat Completions adapter's: the client is built the same
    way (``api_key``/``base_url`` or the environment, on the first call), its own retries are off,
    failures are retried by the same policy and keys are masked the same way. Servers that only
    speak Chat Completions keep using [OpenAIModel][swarmkit.models.OpenAIModel]. Each call sends
    the whole conversation (no ``previous_response_id``), so journals replay and agents mix freely.
    """

    _path = _RESPONSES
    _encode = staticmethod(request_json)
    _decode = staticmethod(parse_response)
    _assembler = ResponseStreamAssembler

    def __repr__(self) -> str:
        return f"OpenAIResponsesModel({self.name!r})"

    def _post_stream(self, client: AsyncOpenAI, body: bytes) -> Awaitable[AsyncStream[Any]]:
        from openai import AsyncStream  # noqa: PLC0415 - loaded with the client

        return client.post(
            self._path, content=body, cast_to=object, stream=True, stream_cls=AsyncStream[object]
        )

    def _chunk_json(self, chunk: object) -> dict[str, Any]:
        return json_object(chunk)

    def _api(self) -> str | None:
        return "responses"
