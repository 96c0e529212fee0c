"""An ASGI guard in front of a served swarm: a bearer token on every request, bounded bodies.

The token is compared in constant time and never written anywhere: refusals say what is
missing, not what was sent.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from swarmkit.exceptions import ConfigurationError

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

DEFAULT_MAX_REQUEST_BYTES = 1_000_000
"""The largest request body a served swarm reads (bigger ones get HTTP 413)."""

MIN_TOKEN_LENGTH = 16
"""The shortest bearer token accepted: shorter ones are guessable."""


class TokenGuard:
    """Wraps an ASGI app: HTTP requests without ``Authorization: Bearer <token>`` get 401,
    bodies over ``max_request_bytes`` get 413; ``token=None`` checks only the size."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        token: str | None,
        max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES,
    ) -> None:
        self.app = app
        self._expected = None if token is None else f"Bearer {check_token(token)}".encode()
        self.max_request_bytes = max_request_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if not self._authorized(scope):
            await _refuse(send, 401, "a bearer token is required: Authorization: Bearer <token>")
            return
        body = await _read_body(receive, self.max_request_bytes)
        if body is None:
            await _refuse(send, 413, f"the request body is over {self.max_request_bytes} bytes")
            return
        await self.app(scope, _replay(body, receive), send)

    def _authorized(self, scope: Scope) -> bool:
        if self._expected is None:
            return True
        given = next((v for k, v in scope.get("headers", ()) if k == b"authorization"), b"")
        return hmac.compare_digest(bytes(given), self._expected)


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
