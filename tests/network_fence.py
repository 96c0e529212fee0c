"""The network fence: a test that reaches for a non-loopback address fails, before any DNS query.

A pytest plugin (loaded by the suite's conftest). It wraps the socket module's resolvers and
``socket.connect`` for the length of each test, so an HTTP client, a database driver written in
Python or a bare socket is refused at the name: ``api.openai.com`` never reaches a resolver.
Loopback addresses, ``localhost`` and Unix sockets pass. Subprocesses, and native clients that
open their own sockets (libpq, Temporal's core), are outside the fence.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

_LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})


class NetworkFenceError(ConnectionRefusedError):
    """A test tried to reach a non-loopback address (an OSError, so clients fail as offline)."""


def is_loopback(host: object, *, binding: bool = False) -> bool:
    """Whether ``host`` names this machine; ``binding`` also admits the any-address of a server."""
    if host is None or (binding and host in ("", b"")):
        return True
    name = host.decode() if isinstance(host, bytes) else str(host)
    name = name.split("%", 1)[0].rstrip(".").lower()  # a scope id, a fully qualified dot
    if name in _LOOPBACK_NAMES or name.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return False  # a name that only DNS could answer
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_loopback or (binding and address.is_unspecified)


class Fence:
    """The refusals of one test; ``check`` raises on a non-loopback host and remembers it."""

    def __init__(self) -> None:
        self.refused: list[str] = []
        """Each address refused, as ``host:port``."""

    def check(self, host: object, port: object, *, binding: bool = False) -> None:
        """Let a loopback ``host`` through; refuse anything else, naming it."""
        if is_loopback(host, binding=binding):
            return
        name = host.decode(errors="replace") if isinstance(host, bytes) else str(host)
        where = f"{name}:{port}" if port is not None else name
        self.refused.append(where)
        raise NetworkFenceError(
            f"the test suite's network fence refused {where}: tests must use loopback "
            "servers (127.0.0.1, ::1, localhost) or mocked transports, never a real host"
        )

    def check_address(self, family: int, address: Any) -> None:
        """Check the target of ``socket.connect``; Unix and other local families pass."""
        if family in (socket.AF_INET, socket.AF_INET6) and isinstance(address, tuple):
            self.check(address[0], address[1])


@contextmanager
def fenced(monkeypatch: pytest.MonkeyPatch) -> Iterator[Fence]:
    """Refuse non-loopback resolution and connections until the block ends."""
    fence = Fence()
    real_getaddrinfo, real_gethostbyname = socket.getaddrinfo, socket.gethostbyname
    real_connect, real_connect_ex = socket.socket.connect, socket.socket.connect_ex

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        flags = kwargs.get("flags", args[3] if len(args) > 3 else 0)
        fence.check(host, port, binding=bool(flags & socket.AI_PASSIVE))
        return real_getaddrinfo(host, port, *args, **kwargs)

    def gethostbyname(host: str) -> str:
        fence.check(host, None)
        return real_gethostbyname(host)

    def connect(self: socket.socket, address: Any) -> None:
        fence.check_address(self.family, address)
        return real_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> int:
        fence.check_address(self.family, address)
        return real_connect_ex(self, address)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    monkeypatch.setattr(socket, "gethostbyname", gethostbyname)
    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
    yield fence


@pytest.fixture(autouse=True)
def _network_fence() -> Iterator[Fence]:
    """Fail the test if it reached for a non-loopback address, even if the code swallowed the
    refusal (a client that turns it into a retry or an error result)."""
    with pytest.MonkeyPatch.context() as monkeypatch, fenced(monkeypatch) as fence:
        yield fence
    if fence.refused:
        pytest.fail(f"the test reached for non-loopback addresses: {', '.join(fence.refused)}")
