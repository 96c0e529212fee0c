"""`swarmkit serve a2a`, `swarmkit serve ag-ui` and `swarmkit serve mcp`: a swarm served on
loopback with a token (or, for MCP, on stdio)."""

from __future__ import annotations

import argparse
import os
import secrets
import sys
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from swarmkit.cli._usage import TARGET_HELP, UsageError

if TYPE_CHECKING:
    from swarmkit.serving import AsgiServer

TOKEN_ENV = "SWARMKIT_SERVE_TOKEN"
"""The environment variable the served swarm's bearer token is read from."""
DECISION_TOKEN_ENV = "SWARMKIT_SERVE_DECISION_TOKEN"
"""The environment variable an A2A server's decision token is read from (--allow-decisions)."""

_Handler = Callable[[argparse.Namespace], Coroutine[Any, Any, int]]
_Command = Callable[..., argparse.ArgumentParser]


def add_serve(commands: Any, command: _Command, journal_option: Callable[..., None]) -> None:
    """The `serve` command and its `a2a`, `ag-ui` and `mcp` subcommands."""
    serve = commands.add_parser(
        "serve",
        help="Serve a swarm to other agents (A2A, MCP) or to a web front end (AG-UI).",
        description="Serve a swarm to other agents (A2A, MCP) or to a web front end (AG-UI).",
    )
    protocols = serve.add_subparsers(dest="protocol", required=True, metavar="PROTOCOL")
    for name, summary, handler in (
        ("a2a", "Serve a swarm as an A2A agent (JSON-RPC, streaming, tasks).", "_serve_a2a"),
        ("ag-ui", "Serve a swarm's runs as AG-UI events over SSE.", "_serve_agui"),
    ):
        sub = command(
            protocols,
            name,
            summary,
            f"{__name__}:{handler}",
            epilog=(
                "Listens on 127.0.0.1 unless --host and --allow-remote say otherwise. Every "
                "request (but the public A2A agent card) needs Authorization: Bearer <token>; "
                f"the token is ${TOKEN_ENV}, or a random one printed once at start."
            ),
        )
        _target_options(sub, journal_option)
        _listen_options(sub, port=8766)
        if name == "a2a":
            _a2a_options(sub)
    _add_serve_mcp(protocols, command, journal_option)


def _add_serve_mcp(protocols: Any, command: _Command, journal_option: Callable[..., None]) -> None:
    sub = command(
        protocols,
        "mcp",
        "Serve a swarm as MCP tools, one per entry agent (stdio or streamable HTTP).",
        f"{__name__}:_serve_mcp",
        epilog=(
            "--transport stdio (the default) talks MCP on stdin/stdout to the client that "
            "started it; notes go to stderr. --transport http listens on 127.0.0.1 unless "
            "--host and --allow-remote say otherwise, at /mcp; every request needs "
            f"Authorization: Bearer <token>, the token being ${TOKEN_ENV} or a random one "
            "printed once at start."
        ),
    )
    _target_options(sub, journal_option)
    sub.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    sub.add_argument(
        "--entry",
        action="append",
        metavar="AGENT",
        help="serve this agent as a tool (repeat for several); default: the entry agent",
    )
    _listen_options(sub, port=8767, transport="http: ")
    sub.add_argument(
        "--allow-decisions",
        action="store_true",
        help="let the client decide a paused run: on stdio the client that started the server; "
        f"over http callers with a decision token (${DECISION_TOKEN_ENV}, or a random one "
        "printed once); without it no caller can",
    )


def _target_options(sub: argparse.ArgumentParser, journal_option: Callable[..., None]) -> None:
    """The swarm served (positionally or with --swarm) and its journal."""
    sub.add_argument("target", nargs="?", metavar="module:attribute", help=TARGET_HELP)
    sub.add_argument("--swarm", metavar="module:attribute", help="the same, as an option")
    journal_option(sub)


def _listen_options(sub: argparse.ArgumentParser, *, port: int, transport: str = "") -> None:
    """Where a server listens; ``transport`` prefixes the help when only one transport listens."""
    sub.add_argument(
        "--port", type=int, default=port, help=f"{transport}default {port}; 0 picks one"
    )
    sub.add_argument("--host", default="127.0.0.1", help=f"{transport}default 127.0.0.1 (loopback)")
    sub.add_argument(
        "--allow-remote",
        action="store_true",
        help=f"{transport}allow a --host other than loopback (the swarm is then on the network)",
    )


def _a2a_options(sub: argparse.ArgumentParser) -> None:
    """What only `serve a2a` takes: decisions, where tasks are kept, earlier A2A versions."""
    sub.add_argument(
        "--allow-decisions",
        action="store_true",
        help="let callers with a decision token (read from "
        f"${DECISION_TOKEN_ENV}, or a random one printed once) decide a paused run; "
        "without it no caller can",
    )
    sub.add_argument(
        "--tasks-db",
        metavar="PATH|URL",
        help="where tasks are kept: a SQLite path, sqlite:///... or postgresql://..., "
        "or 'memory' (default: the journal's own file or database, so waiting tasks "
        "outlive a restart)",
    )
    sub.add_argument(
        "--a2a-compat",
        action="append",
        choices=["0.3"],
        default=[],
        metavar="VERSION",
        help="also serve clients of this earlier A2A version (0.3)",
    )


async def _serve_a2a(args: argparse.Namespace) -> int:
    try:
        from swarmkit.a2a import A2AServer  # noqa: PLC0415 - the extra loads only when asked for
    except ImportError as exc:
        raise UsageError(_missing("a2a", exc)) from exc
    decision_token = None
    if args.allow_decisions:
        decision_token = os.environ.get(DECISION_TOKEN_ENV) or secrets.token_urlsafe(24)
    return await _serve(
        args,
        "a2a",
        A2AServer,
        decision_token=decision_token,
        task_store=args.tasks_db,
        compat=tuple(args.a2a_compat),
    )


async def _serve_agui(args: argparse.Namespace) -> int:
    try:
        from swarmkit.agui import AgUiServer  # noqa: PLC0415 - the extra loads only when asked for
    except ImportError as exc:
        raise UsageError(_missing("ag-ui", exc)) from exc
    return await _serve(args, "ag-ui", AgUiServer)


async def _serve_mcp(args: argparse.Namespace) -> int:
    try:
        from swarmkit import mcp_server  # noqa: PLC0415 - the extra loads only when asked for
    except ImportError as exc:
        raise UsageError(_missing("mcp", exc)) from exc
    if args.transport == "http":
        decision_token = None
        if args.allow_decisions:
            decision_token = os.environ.get(DECISION_TOKEN_ENV) or secrets.token_urlsafe(24)
        return await _serve(
            args, "mcp", mcp_server.McpServer, decision_token=decision_token, entries=args.entry
        )
    from swarmkit.cli._journal_file import open_for_writing, swarm_journal_path  # noqa: PLC0415
    from swarmkit.cli._target import load_swarm, swarm_target  # noqa: PLC0415

    args.swarm = swarm_target(args)
    swarm = load_swarm(args.swarm)
    with open_for_writing(swarm_journal_path(args.journal, swarm)) as journal:
        print(f"swarmkit serve mcp: {args.swarm} on stdio", file=sys.stderr, flush=True)
        await mcp_server.serve_mcp_stdio(
            swarm, journal, entries=args.entry, allow_decisions=args.allow_decisions
        )
    return 0


async def _serve(args: argparse.Namespace, protocol: str, server_type: Any, **options: Any) -> int:
    from swarmkit.cli._journal_file import open_for_writing, swarm_journal_path  # noqa: PLC0415
    from swarmkit.cli._target import load_swarm, swarm_target  # noqa: PLC0415

    args.swarm = swarm_target(args)
    swarm = load_swarm(args.swarm)
    given = os.environ.get(TOKEN_ENV)
    token = given or secrets.token_urlsafe(24)
    path = swarm_journal_path(args.journal, swarm)
    if "task_store" in options and options["task_store"] is None:
        # A2A tasks beside the journal: in its SQLite file, or in its Postgres database.
        options["task_store"] = path if isinstance(path, str) else "journal"
    with open_for_writing(path) as journal:
        server: AsgiServer = server_type(
            swarm,
            journal,
            host=args.host,
            port=args.port,
            token=token,
            allow_remote=args.allow_remote,
            **options,
        )
        url = getattr(server, "mcp_url", server.url)
        print(f"swarmkit serve {protocol}: {args.swarm} at {url}  (Ctrl-C stops)")
        if not given:
            print(f"  token: {token}  (set ${TOKEN_ENV} to choose it)")
        if options.get("decision_token") and not os.environ.get(DECISION_TOKEN_ENV):
            print(f"  decision token: {options['decision_token']}  (set ${DECISION_TOKEN_ENV})")
        print("", end="", flush=True)
        await server.serve()
    return 0


def _missing(extra: str, exc: ImportError) -> str:
    return (
        f"serving {extra} needs the {extra} extra: pip install 'swarmkit-agents[{extra}]' "
        f"({exc.name or exc} is not installed)"
    )
