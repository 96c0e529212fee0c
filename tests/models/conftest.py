"""The ``adapter`` fixture: the tests both OpenAI adapters must pass run once for each."""

from __future__ import annotations

import pytest

from tests.models.openai_adapters import ADAPTERS, Adapter


@pytest.fixture(params=ADAPTERS, ids=lambda adapter: adapter.name)
def adapter(request: pytest.FixtureRequest) -> Adapter:
    """Each OpenAI adapter in turn (Chat Completions, then Responses), with its wire's replies."""
    chosen: Adapter = request.param
    return chosen
