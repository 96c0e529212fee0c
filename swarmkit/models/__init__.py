"""Models the run loop can talk to: the protocol, its records, and the OpenAI adapter."""

from swarmkit.models._base import (
    AttemptDiscarded,
    Model,
    ModelDelta,
    ModelRequest,
    ModelResponse,
    ModelSettings,
    StreamingModel,
    TextDelta,
    ToolCallDelta,
    ToolSpec,
    Usage,
)
from swarmkit.models._deadline import Timeouts
from swarmkit.models._openai import OpenAIModel
from swarmkit.models._retry import RetryPolicy

__all__ = [
    "AttemptDiscarded",
    "Model",
    "ModelDelta",
    "ModelRequest",
    "ModelResponse",
    "ModelSettings",
    "OpenAIModel",
    "RetryPolicy",
    "StreamingModel",
    "TextDelta",
    "Timeouts",
    "ToolCallDelta",
    "ToolSpec",
    "Usage",
]
