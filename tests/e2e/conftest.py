"""The llmock server (PyPI ``llmock``), started once per session on a free loopback port."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import httpx
import pytest

_READY = "Uvicorn running on"


@dataclass(frozen=True, kw_only=True)
class LLMockServer:
    """A running llmock process and its control API."""

    url: str
    """The root URL, e.g. ``http://127.0.0.1:53412``."""
    pid: int
    """The server's process id."""

    @property
    def base_url(self) -> str:
        """The OpenAI base URL (Chat Completions and Responses)."""
        return f"{self.url}/v1"

    def script(self, *behaviors: dict[str, Any]) -> None:
        """Queue behaviours for the next requests (faults, scripted replies)."""
        body = {"behaviors": list(behaviors)}
        httpx.post(f"{self.url}/_llmock/scenario", json=body).raise_for_status()

    def reset(self) -> None:
        """Forget every request and queued behaviour."""
        httpx.post(f"{self.url}/_llmock/reset").raise_for_status()

    def requests(self) -> list[dict[str, Any]]:
        """Every request the server saw since the last reset."""
        answer = httpx.get(f"{self.url}/_llmock/requests").raise_for_status().json()
        records = answer["requests"] if isinstance(answer, dict) else answer
        return [r for r in records if "/responses" in str(r.get("path", ""))]

    def verdict(self) -> dict[str, Any]:
        """llmock's judgement of how the client handled the faults."""
        return dict(httpx.get(f"{self.url}/_llmock/verdict").raise_for_status().json())


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_until_ready(stream: IO[str]) -> None:
    """Read the server's log until it listens; then keep draining it so it never blocks."""
    seen: list[str] = []
    for line in stream:
        seen.append(line)
        if _READY in line:
            threading.Thread(target=stream.read, daemon=True).start()
            return
    raise RuntimeError("llmock exited before listening:\n" + "".join(seen[-20:]))


@pytest.fixture(scope="session")
def llmock_server() -> Iterator[LLMockServer]:
    """A fresh llmock on 127.0.0.1, stopped by its pid at the end of the session."""
    port = _free_port()
    command = [str(Path(sys.executable).parent / "llmock"), "serve"]
    command += ["--host", "127.0.0.1", "--port", str(port), "--response-style", "static"]
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    assert process.stderr is not None
    try:
        _wait_until_ready(process.stderr)
        yield LLMockServer(url=f"http://127.0.0.1:{port}", pid=process.pid)
    finally:
        os.kill(process.pid, signal.SIGTERM)
        process.wait(timeout=30)


@pytest.fixture
def llmock_api(llmock_server: LLMockServer) -> LLMockServer:
    """The session's llmock, reset for this test."""
    llmock_server.reset()
    return llmock_server
