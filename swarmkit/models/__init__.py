"""Models the run loop can talk to: the protocol, its records, and the provider adapters.

The adapters' names load on first use, so importing swarmkit imports no provider SDK nor an
HTTP client (a workflow sandbox refuses them; most of a test suite never needs them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from swarmkit._lazy import lazy_getattr as _lazy_getattr
from swarmkit.models._base import (
    AttemptDiscarded,
    Model,
    ModelDelta,
    ModelRequest,
    ModelResponse,
    ModelSettings,
    OutputSchema,
    StreamingModel,
    TextDelta,
    ToolCallDelta,
    ToolSpec,
    Usage,
)
from swarmkit.models._deadline import Timeouts
from swarmkit.models._names import model_from_string
from swarmkit.models._providers import (
    UNKNOWN_PROVIDER,
    provider_for_url,
    provider_of,
    server_of,
)
from swarmkit.models._reasoning import reasoning_of

if TYPE_CHECKING:
    from swarmkit.models._anthropic import AnthropicModel
    from swarmkit.models._gemini import GeminiModel
    from swarmkit.models._openai import OpenAIModel
    from swarmkit.models._responses import OpenAIResponsesModel
    from swarmkit.models._retry import CallRetrier, ConnectionFailedError, RetryPolicy, StatusError

_LAZY = {
    "AnthropicModel": "swarmkit.models._anthropic",
    "GeminiModel": "swarmkit.models._gemini",
    "OpenAIModel": "swarmkit.models._openai",
    "OpenAIResponsesModel": "swarmkit.models._responses",
    "RetryPolicy": "swarmkit.models._retry",
    # For a model served by an API of its own (a remote A2A agent): the adapters' retrier.
    "CallRetrier": "swarmkit.models._retry",
    "ConnectionFailedError": "swarmkit.models._retry",
    "StatusError": "swarmkit.models._retry",
}

__all__ = [
    "UNKNOWN_PROVIDER",
    "AnthropicModel",
    "AttemptDiscarded",
    "CallRetrier",
    "ConnectionFailedError",
    "GeminiModel",
    "Model",
    "ModelDelta",
    "ModelRequest",
    "ModelResponse",
    "ModelSettings",
    "OpenAIModel",
    "OpenAIResponsesModel",
    "OutputSchema",
    "RetryPolicy",
    "StatusError",
    "StreamingModel",
    "TextDelta",
    "Timeouts",
    "ToolCallDelta",
    "ToolSpec",
    "Usage",
    "provider_for_url",
    "provider_of",
    "server_of",
    "model_from_string",
    "reasoning_of",
]


# The adapters' public names import their module (and its SDK) when first asked for.
__getattr__ = _lazy_getattr(__name__, _LAZY)
