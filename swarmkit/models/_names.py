"""Model strings: ``"anthropic:claude-..."``, ``"google:gemini-..."`` and plain OpenAI names."""

from __future__ import annotations

import importlib

from swarmkit.models._base import Model

PROVIDERS = {
    "anthropic": ("swarmkit.models._anthropic", "AnthropicModel"),
    "google": ("swarmkit.models._gemini", "GeminiModel"),
    "openai": ("swarmkit.models._openai", "OpenAIModel"),
    "openai-responses": ("swarmkit.models._responses", "OpenAIResponsesModel"),
    "gemini": ("swarmkit.models._gemini", "GeminiModel"),
    "responses": ("swarmkit.models._responses", "OpenAIResponsesModel"),
}
"""Each prefix and the adapter it names (imported only when a string names it)."""


def model_from_string(name: str) -> Model:
    """The adapter a model string names; the key is read from the environment on first call.

    A known prefix picks the provider (``anthropic:``, ``google:`` or ``gemini:``,
    ``openai:``, ``openai-responses:`` or ``responses:``); any other string, colons and all
    (``llama3:8b``), is a Chat Completions model name, as it always was.
    """
    prefix, colon, rest = name.partition(":")
    if colon and rest and prefix in PROVIDERS:
        module, kind = PROVIDERS[prefix]
        adapter = getattr(importlib.import_module(module), kind)
        return adapter(rest)  # type: ignore[no-any-return]
    from swarmkit.models._openai import OpenAIModel  # noqa: PLC0415 - loaded when used

    return OpenAIModel(name)
