"""A model whose first call never returns, for tests that cancel a run mid call."""

from __future__ import annotations

import asyncio

from swarmkit.models import ModelRequest, ModelResponse
from swarmkit.testing import ScriptedModel


class HangsOnce:
    """The first call never returns (its run is cancelled); later ones answer from a script."""

    name = "hangs-once"

    def __init__(self, script: ScriptedModel) -> None:
        self.script, self.calls = script, 0
        self.called = asyncio.Event()
        """Set once the first call is waiting."""

    async def respond(self, request: ModelRequest) -> ModelResponse:
        """Wait for ever on the first call; answer from the script after it."""
        self.calls += 1
        if self.calls == 1:
            self.called.set()
            await asyncio.Event().wait()
        return await self.script.respond(request)
