"""Models the run loop can talk to: the protocol, its records, and the OpenAI adapter."""

from swarmkit.models._base import (
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
from swarmkit.models._openai import OpenAIModel
from swarmkit.models._responses import OpenAIResponsesModel
from swarmkit.models._retry import RetryPolicy

__all__ = [
    "Model",
    "ModelDelta",
    "ModelRequest",
    "ModelResponse",
    "ModelSettings",
    "OpenAIModel",
    "OpenAIResponsesModel",
    "OutputSchema",
    "RetryPolicy",
    "StreamingModel",
    "TextDelta",
    "ToolCallDelta",
    "ToolSpec",
    "Usage",
]
