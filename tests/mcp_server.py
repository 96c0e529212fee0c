"""An MCP server for the tests, written with the mcp SDK, served over stdio or streamable HTTP.

``python -m tests.mcp_server stdio``, or ``python -m tests.mcp_server http FD`` to serve on a
listening socket the parent bound and passed as file descriptor FD (so the parent needs no
wait for the port: connections queue until the server accepts them). With
``MCP_TEST_VARIANT=2`` in its environment ``add`` takes a third argument, so its schema
differs; with ``MCP_TEST_CALL_LOG=path`` every tool call appends a line to that file.
"""

from __future__ import annotations

import os
import socket
import sys

import uvicorn
from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("swarmkit-test")
VARIANT = os.environ.get("MCP_TEST_VARIANT", "1")


def _log_call(name: str) -> None:
    path = os.environ.get("MCP_TEST_CALL_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as log:
            log.write(name + "\n")


def add_two(a: int, b: int) -> int:
    """Add two integers."""
    _log_call("add")
    return a + b


def add_three(a: int, b: int, c: int = 0) -> int:
    """Add three integers."""
    _log_call("add")
    return a + b + c


server.tool(name="add")(add_three if VARIANT == "2" else add_two)


@server.tool()
def greet(name: str, punctuation: str = "!") -> str:
    """Greet someone by name."""
    _log_call("greet")
    return f"Hello, {name}{punctuation}"


@server.tool()
def fail(reason: str) -> str:
    """Always fails with the given reason."""
    _log_call("fail")
    raise RuntimeError(f"failed on purpose: {reason}")


@server.tool()
def read_env(name: str) -> str:
    """The value of an environment variable of the server process."""
    _log_call("read_env")
    return os.environ.get(name, "<unset>")


@server.tool()
def header(name: str, ctx: Context) -> str:
    """The value of an HTTP header of this request ("<none>" over stdio or when absent)."""
    headers = ctx.headers or {}
    return headers.get(name.lower(), "<none>")


@server.tool()
def pid() -> int:
    """The server's process id, so a test can stop it."""
    return os.getpid()


def main(argv: list[str]) -> None:
    """Serve over the transport the arguments name."""
    if argv[:1] == ["http"]:
        listener = socket.socket(fileno=int(argv[1]))
        config = uvicorn.Config(server.streamable_http_app(), log_level="warning")
        uvicorn.Server(config).run(sockets=[listener])
    else:
        server.run("stdio")


if __name__ == "__main__":
    main(sys.argv[1:])
