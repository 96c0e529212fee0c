"""ViewerServer: the viewer over HTTP on 127.0.0.1, guarded like a local notebook server.

The standard library's threading HTTP server is enough for one person's browser on the same
machine, and keeps ``swarmkit ui`` free of any extra dependency. Journal reads, replays and
resumes run on one asyncio loop in a thread of their own; request threads wait for them.

Every request must show the launch token (the ``token`` query parameter of the printed URL,
then a cookie), and its ``Host`` header must name the bound address (against DNS rebinding).
State-changing requests are POST only, with the token in a header and a JSON body, which no
other site can send without a CORS preflight this server never answers.
"""

from __future__ import annotations

import asyncio
import errno
import hmac
import json
import secrets
import sys
import threading
from concurrent.futures import Future
from http import HTTPStatus
from http.cookies import SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib.parse import parse_qsl, quote, urlsplit

from swarmkit.exceptions import ViewerError
from swarmkit.ui._app import Reply, Viewer

TOKEN_HEADER = "X-Swarmkit-Token"
"""The header that carries the token on API requests."""

MAX_BODY = 1_000_000
"""The largest request body read, in bytes; a longer one is refused with 413."""

READ_TIMEOUT = 10.0
"""Seconds a request's headers or body may take to arrive before the connection is dropped."""

_STATIC = {
    "app.js": "text/javascript; charset=utf-8",
    "app.css": "text/css; charset=utf-8",
}
_SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; "
    "img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; "
    "form-action 'self'",
}


class ViewerServer:
    """Serves a Viewer on ``host:port`` (port 0 picks a free one) until ``close()``."""

    def __init__(
        self,
        viewer: Viewer,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        token: str | None = None,
        read_timeout: float = READ_TIMEOUT,
    ) -> None:
        self.viewer = viewer
        self.read_timeout = read_timeout
        """Seconds a request's headers or body may take to arrive."""
        self.token = token or secrets.token_urlsafe(24)
        """The launch token; the printed URL carries it."""
        self._loop = asyncio.new_event_loop()
        self._loop_thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._serving: threading.Thread | None = None
        try:
            self._http = _HTTPServer((host, port), _Handler, self)
        except OSError as exc:
            self._loop.close()
            raise _bind_error(host, port, exc) from exc
        self.host = host
        self.port: int = self._http.server_address[1]
        self._loop_thread.start()

    @property
    def url(self) -> str:
        """The address to open, with the token."""
        return f"http://{self.host}:{self.port}/?token={self.token}"

    @property
    def allowed_hosts(self) -> frozenset[str]:
        """The ``Host`` headers accepted: the bound address, by number or as localhost."""
        return frozenset({f"{self.host}:{self.port}", f"localhost:{self.port}"})

    def serve_forever(self) -> None:
        """Serve on the calling thread until ``close()`` or KeyboardInterrupt."""
        try:
            self._http.serve_forever()
        finally:
            self._http.server_close()

    def start(self) -> None:
        """Serve on a background thread."""
        self._serving = threading.Thread(target=self.serve_forever, daemon=True)
        self._serving.start()

    def close(self) -> None:
        """Stop serving and stop the viewer's loop."""
        if self._serving is not None:
            self._http.shutdown()
            self._serving.join()
            self._serving = None
        else:
            self._http.server_close()
        asyncio.run_coroutine_threadsafe(_cancel_tasks(), self._loop).result()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._loop_thread.join()
        self._loop.close()

    def call(self, method: str, path: str, query: dict[str, str], body: bytes) -> Reply:
        """Run one API request on the viewer's loop and wait for its reply."""
        work = self.viewer.api(method, path, query, body)
        future: Future[Reply] = asyncio.run_coroutine_threadsafe(work, self._loop)
        return future.result()

    def __enter__(self) -> ViewerServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


async def _cancel_tasks() -> None:
    """Cancel the loop's background work (a sessions refresh) so it ends before the loop."""
    current = asyncio.current_task()
    tasks = [task for task in asyncio.all_tasks() if task is not current]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


def _bind_error(host: str, port: int, exc: OSError) -> ViewerError:
    if exc.errno == errno.EADDRINUSE:
        return ViewerError(
            f"port {port} on {host} is taken; pass --port with a free port (or --port 0 "
            "for any free one)"
        )
    return ViewerError(f"cannot listen on {host}:{port}: {exc.strerror or exc}")


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A browser that left mid-reply (a navigation) is not an error worth a traceback."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)

    def __init__(
        self, address: tuple[str, int], handler: type[_Handler], owner: ViewerServer
    ) -> None:
        self.owner = owner
        super().__init__(address, handler)


class _Handler(BaseHTTPRequestHandler):
    server: _HTTPServer
    protocol_version = "HTTP/1.1"
    # Headers and body go out as two writes; with Nagle's algorithm on, the body waits for
    # the client's delayed ACK (~40 ms) on every kept-alive request.
    disable_nagle_algorithm = True

    def setup(self) -> None:
        # A client that stalls mid-headers or mid-body gives its thread back after this long.
        super().setup()
        self.connection.settimeout(self.server.owner.read_timeout)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the command's output is the URL; requests are not logged."""

    def _handle(self) -> None:
        """Answer one request, whatever its method (a route refuses those it does not take)."""
        method = self.command
        length = self._content_length()
        if length is None:
            self.close_connection = True
            self._refuse(HTTPStatus.BAD_REQUEST, "Content-Length must be a non-negative integer")
            return
        url = urlsplit(self.path)
        query = dict(parse_qsl(url.query))
        given = query.get("token")
        first_visit = method == "GET" and given is not None and not url.path.startswith("/api/")
        if first_visit and self._host_allowed():
            self._first_visit(given or "", url.path)
            return
        # The token is checked before the body is read: a stranger's body is never waited for.
        refusal = self._refusal(method, url.path)
        if refusal is None and length > MAX_BODY:
            refusal = HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"a body may hold {MAX_BODY} bytes"
        if refusal is not None:
            self.close_connection = length > 0  # the unread body must not pass for a request
            self._refuse(*refusal)
        elif url.path.startswith("/api/"):
            body = self.rfile.read(length) if length else b""
            reply = self.server.owner.call(method, url.path, query, body)
            self._send_json(reply.status, reply.body)
        else:
            self._page(url.path)

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_HEAD = _handle

    def _refusal(self, method: str, path: str) -> tuple[HTTPStatus, str] | None:
        """Why this request is refused, checked in order; None when it may be served."""
        owner = self.server.owner
        if not self._host_allowed():
            return HTTPStatus.FORBIDDEN, "this Host is not the viewer's address"
        if not self._has_token(owner):
            return HTTPStatus.FORBIDDEN, "no valid token: open the URL swarmkit ui printed"
        if method not in ("GET", "POST") or (method == "POST" and not path.startswith("/api/")):
            return HTTPStatus.METHOD_NOT_ALLOWED, f"{method} is not served here"
        if method == "POST" and not self._may_change_state(owner):
            return (
                HTTPStatus.FORBIDDEN,
                f"a POST needs the token in the {TOKEN_HEADER} header and a JSON body",
            )
        return None

    def _host_allowed(self) -> bool:
        return self.headers.get("Host", "") in self.server.owner.allowed_hosts

    def _content_length(self) -> int | None:
        """The body's length; None when the header is not a plain non-negative number."""
        text = (self.headers.get("Content-Length") or "0").strip()
        return int(text) if text.isascii() and text.isdigit() else None

    def _has_token(self, owner: ViewerServer) -> bool:
        cookie = SimpleCookie(self.headers.get("Cookie", ""))
        morsel = cookie.get(_cookie_name(owner.port))
        candidates = [self.headers.get(TOKEN_HEADER), morsel.value if morsel else None]
        return any(c is not None and _same(c, owner.token) for c in candidates)

    def _may_change_state(self, owner: ViewerServer) -> bool:
        header = self.headers.get(TOKEN_HEADER)
        content_type = self.headers.get("Content-Type", "").split(";")[0].strip()
        return (
            header is not None and _same(header, owner.token) and content_type == "application/json"
        )

    def _first_visit(self, given: str, path: str) -> None:
        # The printed URL's token becomes a cookie, and the address bar loses the token.
        owner = self.server.owner
        if not _same(given, owner.token):
            self._refuse(HTTPStatus.FORBIDDEN, "wrong token: open the URL swarmkit ui printed")
            return
        self.send_response(HTTPStatus.SEE_OTHER)
        self.send_header(
            "Set-Cookie",
            f"{_cookie_name(owner.port)}={owner.token}; Path=/; HttpOnly; SameSite=Strict",
        )
        self.send_header("Location", _landing(path))
        self._finish(b"", "text/plain; charset=utf-8")

    def _page(self, path: str) -> None:
        if path.startswith("/static/"):
            name = path.removeprefix("/static/")
            if name in _STATIC:
                self._send(HTTPStatus.OK, _asset(name).encode(), _STATIC[name])
            else:
                self._refuse(HTTPStatus.NOT_FOUND, "no such file")
        elif path in ("/", "/queue", "/spend", "/rules") or path.startswith("/session/"):
            page = _asset("index.html").replace("{{token}}", self.server.owner.token)
            self._send(HTTPStatus.OK, page.encode(), "text/html; charset=utf-8")
        else:
            self._refuse(HTTPStatus.NOT_FOUND, "no such page")

    def _refuse(self, status: HTTPStatus, message: str) -> None:
        self._send_json(status, {"error": message})

    def _send_json(self, status: int, body: Any) -> None:
        data = json.dumps(body, ensure_ascii=False, default=str).encode()
        self._send(status, data, "application/json; charset=utf-8")

    def _send(self, status: int, data: bytes, content_type: str) -> None:
        self.send_response(status)
        self._finish(data, content_type)

    def _finish(self, data: bytes, content_type: str) -> None:
        for name, value in _SECURITY_HEADERS.items():
            self.send_header(name, value)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)


def _landing(path: str) -> str:
    """Where a first visit goes on to: the path it asked for, on this viewer only.

    Browsers read a backslash in a URL as a slash, so ``/\\evil.example`` is ``//evil.example``,
    another host; a path that begins ``//`` once its backslashes are slashes goes to the
    sessions list instead, and the rest is percent-encoded so nothing in it reads otherwise.
    """
    path = path.replace("\\", "/")
    if not path.startswith("/") or path.startswith("//"):
        return "/"
    return quote(path, safe="/%-._~!$&'()*+,;=:@")


def _cookie_name(port: int) -> str:
    # One cookie per port: cookies ignore ports, and two viewers must not share a token.
    return f"swarmkit_ui_{port}"


def _same(given: str, token: str) -> bool:
    return hmac.compare_digest(given.encode(), token.encode())


def _asset(name: str) -> str:
    return (resources.files("swarmkit.ui") / "static" / name).read_text(encoding="utf-8")
