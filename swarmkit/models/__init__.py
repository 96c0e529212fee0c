"""Models the run loop can talk to: the protocol, its records, and the OpenAI adapter."""

from swarmkit.models._base import (
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

__all__ = [
    "Model",
    "ModelDelta",
    "ModelRequest",
    "ModelResponse",
    "ModelSettings",
    "StreamingModel",
    "TextDelta",
    "ToolCallDelta",
    "ToolSpec",
    "Usage",
]
