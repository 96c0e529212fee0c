"""Each refusal of the viewer: no token, a foreign Host, a GET that would change state, a POST
without the token header or a JSON body, other methods; and no CORS headers anywhere."""

from __future__ import annotations

import socket

import httpx
import pytest

from swarmkit.ui import TOKEN_HEADER, ViewerServer


def _bare(server: ViewerServer) -> httpx.Client:
    return httpx.Client(base_url=f"http://127.0.0.1:{server.port}", trust_env=False)


def _cookie(reply: httpx.Response) -> str:
    return reply.headers["set-cookie"].split(";", 1)[0]


def test_requests_without_the_token_are_refused(demo_server: ViewerServer) -> None:
    """The API, the pages and the static files all answer 403 without the token."""
    http = _bare(demo_server)

    statuses = [http.get(path).status_code for path in ("/api/sessions", "/", "/static/app.js")]

    assert statuses == [403, 403, 403]


def test_a_wrong_token_is_refused(demo_server: ViewerServer) -> None:
    """A wrong token in the header, the cookie or the URL gets 403."""
    http = _bare(demo_server)
    cookie = f"swarmkit_ui_{demo_server.port}=wrong"

    assert http.get("/api/sessions", headers={TOKEN_HEADER: "wrong"}).status_code == 403
    assert http.get("/api/sessions", headers={"Cookie": cookie}).status_code == 403
    assert http.get("/?token=wrong").status_code == 403


def test_the_printed_url_sets_a_cookie_that_later_requests_use(demo_server: ViewerServer) -> None:
    """The first visit redirects to the same page without the token and sets a strict cookie."""
    http = _bare(demo_server)

    first = http.get(f"/?token={demo_server.token}")
    later = _bare(demo_server).get("/api/sessions", headers={"Cookie": _cookie(first)})

    assert first.status_code == 303
    assert first.headers["location"] == "/"
    assert "HttpOnly" in first.headers["set-cookie"]
    assert "SameSite=Strict" in first.headers["set-cookie"]
    assert later.status_code == 200


def test_a_foreign_host_header_is_refused_even_with_the_token(demo_server: ViewerServer) -> None:
    """A DNS-rebinding page sends its own name as Host: refused, token or not."""
    http = _bare(demo_server)
    headers = {"Host": f"evil.example:{demo_server.port}", TOKEN_HEADER: demo_server.token}

    reply = http.get("/api/sessions", headers=headers)

    assert reply.status_code == 403
    assert "Host" in reply.json()["error"]


def test_state_changing_requests_are_refused_as_get(demo_server: ViewerServer) -> None:
    """Replay and decisions are POST only; a GET gets 405 and changes nothing."""
    http = _bare(demo_server)
    headers = {TOKEN_HEADER: demo_server.token}

    assert http.get("/api/sessions/demo-refund-1/replay", headers=headers).status_code == 405
    assert http.get("/api/sessions/demo-refund-1/decision", headers=headers).status_code == 405


def test_a_post_with_only_the_cookie_is_refused(demo_server: ViewerServer) -> None:
    """A cross-site form carries cookies but cannot set the token header: refused."""
    http = _bare(demo_server)
    cookie = {"Cookie": f"swarmkit_ui_{demo_server.port}={demo_server.token}"}

    reply = http.post("/api/sessions/demo-refund-1/replay", headers=cookie, json={})

    assert reply.status_code == 403
    assert TOKEN_HEADER in reply.json()["error"]


def test_a_post_that_is_not_json_is_refused(demo_server: ViewerServer) -> None:
    """A form-encoded POST, the kind another site can send without a preflight, gets 403."""
    http = _bare(demo_server)
    headers = {TOKEN_HEADER: demo_server.token}

    reply = http.post("/api/sessions/demo-refund-1/replay", headers=headers, data={"a": "b"})

    assert reply.status_code == 403


def test_other_methods_are_refused(demo_server: ViewerServer) -> None:
    """PUT, DELETE and OPTIONS (a CORS preflight) get 405."""
    http = _bare(demo_server)
    headers = {TOKEN_HEADER: demo_server.token}

    statuses = [
        http.request(method, "/api/sessions/demo-refund-1", headers=headers).status_code
        for method in ("PUT", "DELETE", "OPTIONS")
    ]

    assert statuses == [405, 405, 405]


def test_no_reply_carries_cors_headers(demo_server: ViewerServer) -> None:
    """Even a request with an Origin gets no Access-Control-* header back."""
    http = _bare(demo_server)
    headers = {TOKEN_HEADER: demo_server.token, "Origin": "https://evil.example"}

    replies = [
        http.get("/api/sessions", headers=headers),
        http.request("OPTIONS", "/api/sessions", headers=headers),
        http.get("/api/sessions"),
    ]

    assert all(
        not name.lower().startswith("access-control-") for r in replies for name in r.headers
    )


def test_the_viewer_listens_on_the_loopback_address_only(demo_server: ViewerServer) -> None:
    """Bound to 127.0.0.1, and the URL it prints carries the token."""
    assert demo_server.host == "127.0.0.1"
    assert demo_server.url == f"http://127.0.0.1:{demo_server.port}/?token={demo_server.token}"


def test_pages_may_not_be_framed_or_load_anything_from_elsewhere(
    demo_server: ViewerServer,
) -> None:
    """A page that can approve a paid action cannot be framed by another site (clickjacking),
    and its policy allows scripts and styles from the viewer itself only."""
    http = _bare(demo_server)
    first = http.get(f"/?token={demo_server.token}")

    page = _bare(demo_server).get("/session/demo-refund-1", headers={"Cookie": _cookie(first)})

    assert page.status_code == 200
    assert page.headers["x-frame-options"] == "DENY"
    policy = page.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in policy
    assert "script-src 'self'" in policy


def _location(server: ViewerServer, target: str) -> str:
    """The Location a first visit to ``target`` (sent byte for byte) is answered with."""
    request = f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nConnection: close\r\n\r\n"
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as conn:
        conn.sendall(request.encode())
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    head = answer.split(b"\r\n\r\n", 1)[0].decode()
    assert head.startswith("HTTP/1.1 303"), head
    return next(
        line.split(":", 1)[1].strip()
        for line in head.split("\r\n")
        if line.lower().startswith("location:")
    )


@pytest.mark.parametrize(
    "path",
    ["/\\evil.example/x", "/\\\\evil.example", "/\\/evil.example", "\\\\evil.example/x"],
)
def test_the_first_visit_never_redirects_to_another_host(
    demo_server: ViewerServer, path: str
) -> None:
    """A path a browser would read as //host (backslashes count as slashes) is sent to the
    sessions list instead."""
    location = _location(demo_server, f"{path}?token={demo_server.token}")

    assert location == "/"


def test_the_first_visit_keeps_a_page_of_the_viewer(demo_server: ViewerServer) -> None:
    """The printed URL of a session page lands on that page, token removed."""
    target = f"/session/demo-refund-1?token={demo_server.token}"

    assert _location(demo_server, target) == "/session/demo-refund-1"
