"""Serving a swarm over HTTP: a loopback ASGI server, a guard that checks a bearer token on
every request and bounds request bodies, and the decisions a client sends to a paused run
(used by ``swarmkit.a2a`` and ``swarmkit.agui``).

The token is compared in constant time and never written anywhere: refusals say what is
missing, not what was sent. Only ``AsgiServer`` needs an extra (uvicorn), loaded when built.
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import json
import secrets
import socket
from collections.abc import Awaitable, Callable, Collection, Mapping, MutableMapping
from types import TracebackType
from typing import Any

from swarmkit.exceptions import ConfigurationError, InteropRequestError
from swarmkit.interrupts import Decision, approve, edit, reject

Scope = MutableMapping[str, Any]
"""An ASGI connection scope: the request's type, path, headers and client."""
Message = MutableMapping[str, Any]
"""An ASGI event, received from or sent to the server."""
Receive = Callable[[], Awaitable[Message]]
"""The ASGI callable an application awaits for the next event of the request."""
Send = Callable[[Message], Awaitable[None]]
"""The ASGI callable an application sends the response's events through."""
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
"""An ASGI application, as ``AsgiServer`` serves it."""

DEFAULT_MAX_REQUEST_BYTES = 1_000_000
"""The largest request body a served swarm reads (bigger ones get HTTP 413)."""

MIN_TOKEN_LENGTH = 16
"""The shortest bearer token accepted: shorter ones are guessable."""

CALLER = "caller"
"""The principal a server's own ``token`` names."""
PRINCIPAL_KEY = "swarmkit.principal"
"""The ASGI scope key a TokenGuard puts the name of the request's principal under."""


class TokenGuard:
    """Wraps an ASGI app: HTTP requests without ``Authorization: Bearer <token>`` get 401,
    bodies over ``max_request_bytes`` get 413; ``token=None`` checks only the size.

    ``principals`` (name to token) admits more tokens; the name of the token a request
    carries (``caller`` for ``token``) is put in its scope under ``PRINCIPAL_KEY``. Paths in
    ``public_paths`` (a public agent card) are answered without a token.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        token: str | None,
        max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES,
        principals: Mapping[str, str] | None = None,
        public_paths: Collection[str] = (),
    ) -> None:
        self.app = app
        named = {} if token is None else {CALLER: token}
        named.update(principals or {})
        self._expected = {n: f"Bearer {check_token(t)}".encode() for n, t in named.items()}
        self.max_request_bytes = max_request_bytes
        self.public_paths = frozenset(public_paths)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        principal = self._principal(scope)
        if principal is None and scope.get("path") not in self.public_paths:
            await _refuse(send, 401, "a bearer token is required: Authorization: Bearer <token>")
            return
        scope[PRINCIPAL_KEY] = principal
        body = await _read_body(receive, self.max_request_bytes)
        if body is None:
            await _refuse(send, 413, f"the request body is over {self.max_request_bytes} bytes")
            return
        await self.app(scope, _replay(body, receive), send)

    def _principal(self, scope: Scope) -> str | None:
        """The name of the principal whose token the request carries (every token is compared,
        in constant time), or None."""
        if not self._expected:
            return CALLER
        given = next((v for k, v in scope.get("headers", ()) if k == b"authorization"), b"")
        found = [n for n, e in self._expected.items() if hmac.compare_digest(bytes(given), e)]
        return found[0] if found else None


def check_token(token: str) -> str:
    """The token, if it is one a server may use; a ConfigurationError saying why not."""
    if not isinstance(token, str) or len(token) < MIN_TOKEN_LENGTH:
        raise ConfigurationError(
            f"the bearer token must be a str of at least {MIN_TOKEN_LENGTH} characters "
            "(e.g. secrets.token_urlsafe(24))"
        )
    if not token.isascii() or not token.isprintable() or " " in token:
        raise ConfigurationError("the bearer token must be printable ASCII without spaces")
    return token


def check_host(host: str, *, allow_remote: bool) -> str:
    """The host to bind: loopback unless ``allow_remote`` says otherwise, explicitly."""
    if allow_remote or host == "localhost":
        return host
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise ConfigurationError(
            f"host {host!r} is not a loopback address; binding it exposes the swarm to the "
            "network: pass allow_remote=True (--allow-remote) and keep a bearer token set"
        )
    return host


def conversation_session(prefix: str, client_id: str, *, named: str, longest: int) -> str:
    """The session of a served conversation: ``prefix`` and the id the client gave it (its
    ``named``, 1 to ``longest`` printable characters, else InteropRequestError)."""
    if not client_id or len(client_id) > longest or not client_id.isprintable():
        raise InteropRequestError(f"the {named} must be 1 to {longest} printable characters")
    return prefix + client_id


DECISION_SHAPES = (
    '{"decision": "approve"}, {"decision": "reject", "reason": ...} or '
    '{"decision": "edit", "payload": {...}}'
)
"""The decisions a client of a served swarm may send, as the messages asking for one show them."""


def decision_from_request(data: Mapping[str, Any]) -> Decision | None:
    """The decision a client sent as ``{"decision": "approve" | "reject" | "edit", ...}`` (a
    reject's ``reason``, an edit's ``payload`` object); None when it is none of these."""
    kind = data.get("decision")
    if kind == "approve":
        return approve()
    if kind == "reject":
        reason = str(data.get("reason") or "").strip()
        return reject(reason) if reason else reject()
    if kind == "edit" and isinstance(data.get("payload"), Mapping):
        return edit(payload=data["payload"])
    return None


async def _read_body(receive: Receive, limit: int) -> list[Message] | None:
    """The request's body messages, or None once they pass ``limit`` bytes."""
    messages: list[Message] = []
    size = 0
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":
            return messages
        size += len(message.get("body", b""))
        if size > limit:
            return None
        if not message.get("more_body", False):
            return messages


def _replay(messages: list[Message], receive: Receive) -> Receive:
    pending = list(messages)

    async def replayed() -> Message:
        return pending.pop(0) if pending else await receive()

    return replayed


async def _refuse(send: Send, status: int, message: str) -> None:
    body = json.dumps({"error": message}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status == 401:
        headers.append((b"www-authenticate", b"Bearer"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class AsgiServer:
    """Serves an ASGI app on ``host:port`` (127.0.0.1 and a free port by default) with uvicorn,
    behind a TokenGuard: ``async with AsgiServer(build) as server`` serves until the block ends.

    ``build(url)`` makes the app once the port is known (an A2A card names its URL).
    ``token=None`` makes a random one (read it from ``.token``); a host that is not loopback
    needs ``allow_remote=True``; ``principals`` and ``public_paths`` are the TokenGuard's.
    """

    def __init__(
        self,
        build: Callable[[str], ASGIApp],
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        token: str | None = None,
        allow_remote: bool = False,
        max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES,
        principals: Mapping[str, str] | None = None,
        public_paths: Collection[str] = (),
    ) -> None:
        import uvicorn  # noqa: PLC0415 - only a server needs it

        self.host = check_host(host, allow_remote=allow_remote)
        self.token = check_token(token or secrets.token_urlsafe(24))
        """The bearer token every request must carry."""
        self._socket = socket.create_server((self.host, port))
        # Accepted connections inherit this: without it a reply written in two parts waits
        # for the client's delayed ACK (~40 ms) on every kept-alive request.
        self._socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.port: int = self._socket.getsockname()[1]
        app = TokenGuard(
            build(self.url),
            token=self.token,
            max_request_bytes=max_request_bytes,
            principals=principals,
            public_paths=public_paths,
        )
        config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
        self._server = uvicorn.Server(config)
        self._serving: asyncio.Task[None] | None = None

    @property
    def url(self) -> str:
        """The server's base URL (``http://host:port/``)."""
        return f"http://{self.host}:{self.port}/"

    async def serve(self) -> None:
        """Serve until cancelled or ``close()``."""
        await self._server.serve(sockets=[self._socket])

    async def close(self) -> None:
        """Stop serving."""
        self._server.should_exit = True
        if self._serving is not None:
            await self._serving
            self._serving = None
        self._socket.close()

    async def __aenter__(self) -> AsgiServer:
        # The socket already listens: a client may connect before uvicorn accepts.
        self._serving = asyncio.create_task(self.serve())
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(url={self.url!r})"  # never the token
