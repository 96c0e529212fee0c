"""swarmkit[mcp]: a swarm served over MCP, one tool per entry agent, each call a journaled session.

A tool's arguments are the entry's input: ``prompt`` and, when the swarm declares a
``context_type``, that model's fields beside it. A call runs the swarm as a new session
(``mcp-<owner>-<id>``) in the server's journal; its result is the final output (with
structured content when the answer is a Pydantic model).

A run that pauses for a person asks for the decision in the protocol's way: on a 2026-07-28
connection whose client can elicit, an ``input_required`` answer (an elicitation form); the
client retries the call with the answer and the run resumes. On an older connection that can
elicit, the form is sent during the call. Otherwise the call answers with a result whose
structured content says ``"status": "input_required"`` and names the session; the
``decide_paused_run`` tool resumes it. Deciding needs the decision permission (off by default:
a decision token over HTTP, ``allow_decisions`` on stdio); the journal records who decided.

Beside ``swarmkit.mcp``, the only importer of ``mcp``; ``import swarmkit`` never loads it.
"""

from __future__ import annotations

from swarmkit.mcp_server._server import McpServer, mcp_server, serve_mcp_stdio
from swarmkit.mcp_server._service import DECIDER, ENABLE_DECISIONS, LOCAL, SESSION_PREFIX
from swarmkit.mcp_server._tools import DECIDE_TOOL

__all__ = [
    "DECIDER",
    "DECIDE_TOOL",
    "ENABLE_DECISIONS",
    "LOCAL",
    "SESSION_PREFIX",
    "McpServer",
    "mcp_server",
    "serve_mcp_stdio",
]
