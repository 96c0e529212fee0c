"""An MCP server whose tool asks the person for input (the mcp SDK's elicitation), over stdio.

``python -m tests.mcp_elicit_server``; with ``MCP_TEST_CALL_LOG=path`` every round of a call
appends a line to that file, so a test can count what reached the server.
"""

from __future__ import annotations

import os
from typing import Annotated

from mcp.server.mcpserver import (
    AcceptedElicitation,
    Elicit,
    ElicitationResult,
    MCPServer,
    Resolve,
)
from pydantic import BaseModel

server = MCPServer("swarmkit-elicit-test")


class Size(BaseModel):
    """What the server asks for."""

    size: str


def ask_size(item: str) -> Elicit[Size]:
    """The question: which size of the item."""
    return Elicit(f"Which size of {item}?", Size)


@server.tool()
async def order(item: str, size: Annotated[ElicitationResult[Size], Resolve(ask_size)]) -> str:
    """Order an item; asks the person for its size first."""
    path = os.environ.get("MCP_TEST_CALL_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as log:
            log.write(f"order {size.action}\n")
    if isinstance(size, AcceptedElicitation):
        return f"ordered {item} in size {size.data.size}"
    return f"no order: the person chose to {size.action}"


if __name__ == "__main__":
    server.run("stdio")
