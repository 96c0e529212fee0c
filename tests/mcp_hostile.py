"""A hostile MCP server over raw stdio, for the tests: ``python -m tests.mcp_hostile MODE``.

It speaks newline-delimited JSON-RPC by hand, so it can misbehave as no SDK server would:

- ``silent``: never answers, not even the handshake;
- ``mute-call``: lists a tool ``wait`` but never answers a call;
- ``garbled-call``: answers a call with a line that is not JSON-RPC;
- ``deep-schema``: lists a tool whose input schema nests 100,000 levels deep;
- ``deepish-schema``: lists a tool whose input schema nests 100 levels deep (still parsable);
- ``endless-pages``: every page of the tool list names a next page;
- ``failed-list``: answers the tool list with a JSON-RPC error;
- ``huge-result``: answers a call with 5 MB of text;
- ``bad-utf8``: answers a call with text holding a byte that is not UTF-8 (Latin-1 "café").

With ``HOSTILE_REPORT_PORT`` set, it connects to that loopback port and writes each request's
method there once it has done with the request (answered it, or decided to hold it), so a test
knows when the server holds a request before it moves its clock.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from typing import Any

MODE = sys.argv[1]
WAIT_TOOL = {"name": "wait", "inputSchema": {"type": "object", "properties": {}}}


def _send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def _result(request: dict[str, Any], result: dict[str, Any]) -> None:
    _send({"jsonrpc": "2.0", "id": request["id"], "result": result})


def _initialize(request: dict[str, Any]) -> None:
    _result(
        request,
        {
            "protocolVersion": request["params"]["protocolVersion"],
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": "hostile", "version": "1"},
        },
    )


def _list(request: dict[str, Any]) -> None:
    if MODE == "deep-schema":
        deep = '{"type": "object", "properties": {"x": ' + "[" * 100_000 + "]" * 100_000 + "}}"
        line = (
            '{"jsonrpc": "2.0", "id": ' + json.dumps(request["id"]) + ', "result": {"tools": '
            '[{"name": "deep", "inputSchema": ' + deep + "}]}}\n"
        )
        sys.stdout.write(line)
        sys.stdout.flush()
    elif MODE == "deepish-schema":
        nested: Any = {"type": "string"}
        for _ in range(100):
            nested = {"type": "array", "items": nested}
        schema = {"type": "object", "properties": {"x": nested}}
        _result(request, {"tools": [WAIT_TOOL, {"name": "deep", "inputSchema": schema}]})
    elif MODE == "endless-pages":
        cursor = int((request.get("params") or {}).get("cursor") or 0) + 1
        _result(request, {"tools": [], "nextCursor": str(cursor)})
    elif MODE == "failed-list":
        error = {"code": -32603, "message": "the tool index is down"}
        _send({"jsonrpc": "2.0", "id": request["id"], "error": error})
    else:
        _result(request, {"tools": [WAIT_TOOL]})


def _call(request: dict[str, Any]) -> None:
    if MODE == "garbled-call":
        sys.stdout.write("this is not JSON-RPC {{{\n")
        sys.stdout.flush()
    elif MODE == "huge-result":
        _result(request, {"content": [{"type": "text", "text": "x" * 5_000_000}]})
    elif MODE == "bad-utf8":
        answer = {"jsonrpc": "2.0", "id": request["id"]}
        answer["result"] = {"content": [{"type": "text", "text": "caf\u00e9"}]}
        sys.stdout.flush()
        # Latin-1: "é" is the one byte 0xE9, which is no UTF-8.
        sys.stdout.buffer.write(json.dumps(answer, ensure_ascii=False).encode("latin-1") + b"\n")
        sys.stdout.buffer.flush()
    # mute-call: never answers


def _reporter() -> socket.socket | None:
    port = os.environ.get("HOSTILE_REPORT_PORT")
    return socket.create_connection(("127.0.0.1", int(port))) if port else None


def _serve() -> None:
    reporter = _reporter()
    for line in sys.stdin:
        request = json.loads(line)
        method = request.get("method")
        if "id" in request:
            _handle(request, method)
            if reporter is not None:
                reporter.sendall(f"{method}\n".encode())


def _handle(request: dict[str, Any], method: str) -> None:
    if MODE == "silent":
        return
    if method == "initialize":
        _initialize(request)
    elif method == "tools/list":
        _list(request)
    elif method == "tools/call":
        _call(request)
    else:
        error = {"code": -32601, "message": f"no method {method}"}
        _send({"jsonrpc": "2.0", "id": request["id"], "error": error})


if __name__ == "__main__":
    _serve()
