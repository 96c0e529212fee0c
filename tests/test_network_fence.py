"""The suite's network fence: a test that reaches past loopback fails, before any DNS query.

Each case runs a small test file in a pytest of its own (``pytester``), so the failure the
fence causes is observed from outside. This test's own fence stays up around the inner run: a
name the inner fence let through would be refused here and fail this test too.
"""

from __future__ import annotations

import pytest

from tests.network_fence import is_loopback


@pytest.fixture(autouse=True)
def _no_plugin_autoload(monkeypatch: pytest.MonkeyPatch) -> None:
    """Inner runs load only the fence and pytest-asyncio (the installed plugins take seconds)."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


def run_fenced(pytester: pytest.Pytester, source: str) -> pytest.RunResult:
    """Run ``source`` as a test file in a pytest of its own, fenced as this suite is."""
    pytester.makepyfile(source)
    pytester.makeini(
        "[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = function\n"
    )
    return pytester.runpytest("-p", "tests.network_fence", "-p", "pytest_asyncio.plugin")


OPENAI_CALL = """
from openai import AsyncOpenAI

async def test_lists_models():
    client = AsyncOpenAI(api_key="sk-fence", base_url="https://api.openai.com/v1", max_retries=0)
    await client.models.list()
"""

SWALLOWED_SOCKET = """
import socket

def test_tries_quietly():
    try:
        socket.create_connection(("api.openai.com", 443), timeout=1).close()
    except OSError:
        pass  # code under test that treats the network as down must not hide the attempt
"""

LOOPBACK = """
import socket

def test_talks_to_itself():
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        for host in ("127.0.0.1", "localhost"):
            socket.create_connection((host, port), timeout=5).close()
"""


def test_a_test_calling_openai_through_the_real_client_fails(pytester: pytest.Pytester) -> None:
    """AsyncOpenAI aimed at api.openai.com is refused at the name; the test fails and says why."""
    result = run_fenced(pytester, OPENAI_CALL)

    result.assert_outcomes(failed=1, errors=1)
    result.stdout.fnmatch_lines(["*network fence refused api.openai.com:443*loopback*"])


def test_a_test_that_swallows_a_refused_socket_still_fails(pytester: pytest.Pytester) -> None:
    """A plain socket to api.openai.com fails the test even when the code catches the error."""
    result = run_fenced(pytester, SWALLOWED_SOCKET)

    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*reached for non-loopback addresses: api.openai.com:443*"])


def test_a_loopback_connection_passes_the_fence(pytester: pytest.Pytester) -> None:
    """127.0.0.1 and localhost are this machine: the test passes untouched."""
    result = run_fenced(pytester, LOOPBACK)

    result.assert_outcomes(passed=1)


@pytest.mark.parametrize(
    ("host", "binding", "expected"),
    [
        ("127.0.0.1", False, True),
        ("127.8.9.10", False, True),
        ("::1", False, True),
        ("::ffff:127.0.0.1", False, True),
        ("localhost", False, True),
        ("LOCALHOST.", False, True),
        ("viewer.localhost", False, True),
        (b"localhost", False, True),
        (None, False, True),
        ("api.openai.com", False, False),
        ("10.0.0.1", False, False),
        ("192.168.1.1", False, False),
        ("2001:db8::1", False, False),
        ("0.0.0.0", False, False),
        ("0.0.0.0", True, True),
        ("", True, True),
        ("localhost.evil.example", False, False),
    ],
)
def test_only_this_machine_counts_as_loopback(host: object, binding: bool, expected: bool) -> None:
    """Loopback addresses and names pass; a name only DNS could answer never does."""
    assert is_loopback(host, binding=binding) is expected
