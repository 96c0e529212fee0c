"""Tools from an MCP server: two agents share one server's tools, and a replay never calls it.

The file is also the server: ``python examples/mcp_tools.py --serve`` is a small inventory
server written with the ``mcp`` SDK, which the example starts over stdio. Sales checks the
stock with the server's ``stock`` tool and hands off to the warehouse, which reserves the items
with its ``reserve`` tool. The run is journaled; once the server is stopped, the session
replays from the journal with zero calls to the server or the model.

Any MCP server works the same way, e.g. ``MCPToolSource.stdio("uvx", ["mcp-server-time"])`` or
``MCPToolSource.http("http://127.0.0.1:8000/mcp", headers={"Authorization": "Bearer ..."})``.

Run it offline (a scripted model plays the LLM):   python examples/mcp_tools.py
or live:   OPENAI_API_KEY=sk-... python examples/mcp_tools.py
Needs the extra: pip install 'swarmkit-agents[mcp]'.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from swarmkit import Agent, FunctionTool, Model, OpenAIModel, RunResult, Swarm
from swarmkit.journal import InMemoryJournal
from swarmkit.mcp import MCPToolSource
from swarmkit.testing import ScriptedModel, text, tool_call, transfer

PROMPT = "Do you have 3 of SKU-9 (cups)? Please put them aside for order B-77."
STOCK = {"SKU-9": 12, "SKU-4": 0}


def serve() -> None:
    """The inventory server, over stdio (what ``--serve`` runs)."""
    from mcp.server.mcpserver import MCPServer  # noqa: PLC0415 - only the server process needs it

    server = MCPServer("inventory")

    @server.tool()
    def stock(sku: str) -> int:
        """How many units of a product are in stock."""
        return STOCK.get(sku, 0)

    @server.tool()
    def reserve(sku: str, quantity: int, order_id: str, note: str = "") -> str:
        """Put units aside for an order."""
        if quantity > STOCK.get(sku, 0):
            raise ValueError(f"only {STOCK.get(sku, 0)} of {sku} in stock")
        return f"reserved {quantity} x {sku} for {order_id}" + (f" ({note})" if note else "")

    server.run("stdio")


def inventory_server() -> MCPToolSource:
    """This file, started again as an MCP server over stdio."""
    return MCPToolSource.stdio(sys.executable, [str(Path(__file__).resolve()), "--serve"])


def build_swarm(tools: Sequence[FunctionTool], model: Model, journal: InMemoryJournal) -> Swarm:
    """Sales and the warehouse share the server's tools (the explicit ``tools=[...]`` form)."""
    sales = Agent(
        name="sales",
        instructions="Check the stock, then hand off to the warehouse to reserve items.",
        tools=tools,
    )
    warehouse = Agent(
        name="warehouse",
        instructions="Reserve the items the customer asked for.",
        tools=tools,
        handoffs=[],
    )
    return Swarm([sales, warehouse], "sales", model=model, journal=journal)


def offline_model() -> ScriptedModel:
    """The turns a real model would take."""
    return ScriptedModel(
        tool_call("stock", sku="SKU-9"),
        transfer("warehouse"),
        tool_call("reserve", sku="SKU-9", quantity=3, order_id="B-77", note=None),
        text("Done: 3 cups (SKU-9) are reserved for order B-77."),
    )


def pick_model() -> Model:
    """The real API when OPENAI_API_KEY is set, else the scripted stand-in."""
    if os.environ.get("OPENAI_API_KEY"):
        return OpenAIModel(os.environ.get("SWARMKIT_MODEL", "gpt-4o-mini"))
    return offline_model()


async def main() -> tuple[RunResult, RunResult]:
    """Run with the server up, then replay with it stopped."""
    journal = InMemoryJournal()
    async with inventory_server() as inventory:
        tools = await inventory.tools()
        print("server tools:", ", ".join(f"{t.name} (strict={t.strict})" for t in tools))
        swarm = build_swarm(tools, pick_model(), journal)
        result = await swarm.run(PROMPT)
    for message in result.messages:
        if message.kind == "tool" and message.name in ("stock", "reserve"):
            print(f"  {message.name} -> {message.content}")
    print(f"trail {' -> '.join(result.trail)}: {result.final_output}")
    replayed = await swarm.with_model(ScriptedModel()).replay(result.session_id)
    print(f"replayed with the server stopped: {replayed.final_output}")
    return result, replayed


if __name__ == "__main__":
    if "--serve" in sys.argv:
        serve()
    else:
        asyncio.run(main())
