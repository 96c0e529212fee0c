"""The viewer against bad records and hostile requests: one bad record never takes a page or
the list down, and malformed or stalled requests are refused (issue 33, finding 5)."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest

from swarmkit.demo import support_swarm
from swarmkit.journal import SQLiteJournal
from swarmkit.ui import TOKEN_HEADER, Viewer, ViewerServer
from tests.ui.conftest import ServeViewer, append, client

BAD_RECORDS: list[tuple[str, dict[str, Any]]] = [
    ("model_call", {"agent": "triage", "response": 5}),
    ("__proto__", {"__proto__": {"polluted": True}}),
    ("run_started", {"context": 5, "prompt": [1]}),
    ("model_call", {"agent": 3, "response": {"usage": "lots"}}),
]


@pytest.fixture
def bad_journal(demo_journal: Path) -> Path:
    """The demo's journal plus ``bad``: a session holding records no swarmkit wrote."""
    append(demo_journal, "bad", [("agent_started", {"agent": "triage", "handoff_count": 0})])
    append(demo_journal, "bad", BAD_RECORDS, start=1)
    append(demo_journal, "bad", [("agent_started", {"agent": "billing"})], start=5)
    return demo_journal


def _raw(server: ViewerServer, request: bytes) -> bytes:
    """Send raw bytes, return all the server answers before it closes the connection."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as conn:
        conn.sendall(request)
        conn.shutdown(socket.SHUT_WR)
        chunks = []
        while chunk := conn.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def _head(server: ViewerServer, method: str, path: str, *headers: str) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", f"Host: 127.0.0.1:{server.port}", *headers, "", ""]
    return "\r\n".join(lines).encode()


def test_the_sessions_list_loads_with_a_bad_session(bad_journal: Path, serve: ServeViewer) -> None:
    """The list answers with every session, the one with bad records included."""
    with client(serve(bad_journal)) as http:
        reply = http.get("/api/sessions")

    assert reply.status_code == 200
    assert {row["session_id"] for row in reply.json()["rows"]} >= {"bad", "demo-refund-1"}


def test_a_bad_record_is_a_labelled_step_and_the_others_render(
    bad_journal: Path, serve: ServeViewer
) -> None:
    """The session page has every step; the foreign kind is marked unknown, the damaged ones
    unreadable, and the step after them is read as usual."""
    with client(serve(bad_journal)) as http:
        reply = http.get("/api/sessions/bad")

    assert reply.status_code == 200
    steps = reply.json()["steps"]
    assert [s["seq"] for s in steps] == [0, 1, 2, 3, 4, 5]
    assert steps[2]["kind"] == "__proto__" and steps[2]["unknown"] is True
    assert "unreadable" in steps[3]
    assert reply.json()["trail"] == ["triage", "billing"]


def test_a_non_numeric_content_length_is_a_400(demo_journal: Path, serve: ServeViewer) -> None:
    """Content-Length: abc is answered 400, not a dropped connection."""
    server = serve(demo_journal)
    answer = _raw(server, _head(server, "GET", "/api/sessions", "Content-Length: abc"))

    assert answer.startswith(b"HTTP/1.1 400")
    assert b"Content-Length must be a non-negative integer" in answer


def test_a_stranger_s_body_is_not_waited_for(demo_journal: Path, serve: ServeViewer) -> None:
    """A POST without the token that announces a body it never sends is refused at once."""
    server = serve(demo_journal)
    request = _head(
        server,
        "POST",
        "/api/sessions/x/replay",
        "Content-Length: 1000",
        "Content-Type: application/json",
    )

    answer = _raw(server, request)

    assert answer.startswith(b"HTTP/1.1 403")


def test_a_stalled_body_gives_the_thread_back(demo_journal: Path) -> None:
    """A client with the token that stalls mid-body is dropped after read_timeout."""
    with SQLiteJournal(demo_journal) as journal:
        server = ViewerServer(Viewer(journal), read_timeout=0.2)
        server.start()
        try:
            with socket.create_connection(("127.0.0.1", server.port), timeout=30) as conn:
                conn.sendall(
                    _head(
                        server,
                        "POST",
                        "/api/sessions/x/replay",
                        f"{TOKEN_HEADER}: {server.token}",
                        "Content-Type: application/json",
                        "Content-Length: 1000",
                    )
                    + b'{"prompt": '
                )
                closed = conn.recv(65536)  # the server gives up and closes: b""
        finally:
            server.close()

    assert closed == b""


def test_a_deeply_nested_json_body_is_a_400(demo_journal: Path, serve: ServeViewer) -> None:
    """A body nested 100,000 deep is answered 400 with the reason."""
    body = "[" * 100_000 + "]" * 100_000
    with client(serve(demo_journal)) as http:
        reply = http.post(
            "/api/sessions/demo-refund-1/replay",
            content=body,
            headers={"Content-Type": "application/json"},
        )

    assert reply.status_code == 400
    assert "nests 100000 levels deep" in reply.json()["error"]


def test_an_oversized_body_is_a_413(demo_journal: Path, serve: ServeViewer) -> None:
    """A body over 1 MB is refused before it is read."""
    server = serve(demo_journal)
    request = _head(
        server,
        "POST",
        "/api/sessions/x/replay",
        f"{TOKEN_HEADER}: {server.token}",
        "Content-Type: application/json",
        "Content-Length: 5000000",
    )

    assert _raw(server, request).startswith(b"HTTP/1.1 413")


def test_a_read_only_journal_is_inspectable_in_the_viewer(demo_journal: Path) -> None:
    """A journal file 0444 in a 0555 folder opens read-only; the list and a session page
    answer, and the file's bytes stay as they were."""
    folder = demo_journal.parent
    before = demo_journal.read_bytes()
    demo_journal.chmod(0o444)
    folder.chmod(0o555)
    try:
        with SQLiteJournal(demo_journal, read_only=True) as journal:
            server = ViewerServer(Viewer(journal))
            server.start()
            try:
                with client(server) as http:
                    listed = http.get("/api/sessions")
                    page = http.get("/api/sessions/demo-refund-1")
            finally:
                server.close()
    finally:
        folder.chmod(0o755)
        demo_journal.chmod(0o644)

    assert listed.status_code == 200 and len(listed.json()["rows"]) == 3
    assert page.status_code == 200 and page.json()["steps"]
    assert demo_journal.read_bytes() == before


@pytest.mark.parametrize("number", ["many", 1.5, None, [1], True, -3])
@pytest.mark.parametrize("with_swarm", [True, False], ids=["swarm", "no-swarm"])
def test_a_handoff_whose_number_is_not_a_count_still_renders(
    demo_journal: Path, serve: ServeViewer, number: object, with_swarm: bool
) -> None:
    """The session page answers 200 and numbers the path by position, with or without
    --swarm, whatever a damaged handoff record holds as its number."""
    handoff = {"source": "triage", "target": "billing", "decided_by": "llm", "number": number}
    append(
        demo_journal,
        "odd-handoff",
        [
            ("run_started", {"prompt": "hi", "entry_agent": "triage"}),
            ("agent_started", {"agent": "triage", "handoff_count": 0}),
            ("handoff", handoff),
            ("agent_started", {"agent": "billing", "handoff_count": 1}),
        ],
    )
    server = serve(demo_journal, swarm=support_swarm() if with_swarm else None)

    with client(server) as http:
        reply = http.get("/api/sessions/odd-handoff")

    assert reply.status_code == 200
    assert reply.json()["trail"] == ["triage", "billing"]
    assert 'data-steps="1"' in reply.json()["drawing"]


@pytest.mark.parametrize("stop_reason", [["max_turns"], {"reason": "error"}])
def test_a_stop_reason_that_is_not_text_still_lists_and_renders(
    demo_journal: Path, serve: ServeViewer, stop_reason: object
) -> None:
    """A run_finished record holding a list or an object as its stop reason leaves the list
    and the session page answering."""
    append(
        demo_journal,
        "odd-stop",
        [
            ("run_started", {"prompt": "hi", "entry_agent": "triage"}),
            ("run_finished", {"stop_reason": stop_reason}),
        ],
    )

    with client(serve(demo_journal, swarm=support_swarm())) as http:
        listed = http.get("/api/sessions")
        page = http.get("/api/sessions/odd-stop")

    assert listed.status_code == 200 and page.status_code == 200
    assert page.json()["state"] == "finished"
