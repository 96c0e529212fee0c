"""Install the built wheel where no checkout can be imported, and use it as a newcomer would.

``python tools/wheel_check.py dist`` (``make wheel-check``; ``make test`` runs it beside the
suite): a clean virtual environment gets the wheel alone (the core) and runs ``swarmkit demo``
from a scratch folder; then each extra gets a clean environment of its own with the wheel and
that extra alone, and its entry is imported there, so an extra that leans on another's
packages fails here.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import tomllib
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

EXTRA_ENTRIES: dict[str, tuple[str, ...]] = {
    "anthropic": ("swarmkit.models:AnthropicModel", "anthropic"),
    "google": ("swarmkit.models:GeminiModel", "google.genai"),
    "mcp": ("swarmkit.mcp",),
    "otel": ("swarmkit.tracing", "opentelemetry.sdk.trace"),
    "postgres": ("swarmkit.journal:PostgresJournal", "psycopg", "psycopg_pool"),
    "bench": ("agents",),
    "temporal": ("swarmkit.temporal",),
    "dbos": ("swarmkit.dbos",),
    "evals": ("swarmkit.evals", "yaml"),
    "a2a": ("swarmkit.a2a", "a2a.server.routes", "uvicorn"),
    "ag-ui": ("swarmkit.agui", "ag_ui.core", "starlette.applications", "uvicorn"),
    "docs": ("mkdocs", "material", "mkdocstrings_handlers.python"),
    "encryption": ("swarmkit.journal:AESGCMCipher", "cryptography.hazmat.primitives.ciphers.aead"),
}
"""Each extra (every one in pyproject.toml but ``dev``) and what it must make importable:
swarmkit's entry for it first (``module:name``, or a module whose public names all load),
then the libraries that entry loads when used."""

_QUIET = ("--quiet", "--no-compile", "--disable-pip-version-check")
"""pip's options here: no bytecode compiled ahead for every installed file (half the time)."""

_LOAD = """
import importlib, sys
checkout = sys.argv[1]
for target in sys.argv[2:]:
    name, _, attribute = target.partition(":")
    module = importlib.import_module(name)
    if attribute:
        getattr(module, attribute)
    elif name.startswith("swarmkit"):
        for public in getattr(module, "__all__", ()):
            getattr(module, public)
    assert not module.__file__.startswith(checkout), f"{name} came from the checkout"
"""


def declared_extras() -> set[str]:
    """The extras pyproject.toml declares, less ``dev`` (the whole test toolchain)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return set(project["optional-dependencies"]) - {"dev"}


def _run(command: list[str], *, cwd: Path) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    started = time.monotonic()
    done = subprocess.run(command, check=False, cwd=cwd, env=env, capture_output=True, text=True)
    took = time.monotonic() - started
    shown = " ".join([Path(command[0]).name, *command[1:]]).splitlines()[0]
    print(f"   {shown[:100]}: {took:.1f}s")
    if done.returncode != 0:
        sys.exit(f"wheel check failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return done.stdout


def check(dist: Path) -> None:
    """The core wheel runs the demo; each extra installs and its entry module imports."""
    wheels = sorted(dist.glob("swarmkit_agents-*.whl"))
    if len(wheels) != 1:
        sys.exit(f"expected one swarmkit_agents wheel in {dist}, found {len(wheels)}: make dist")
    wheel = wheels[0].resolve()
    missing = declared_extras() ^ set(EXTRA_ENTRIES)
    if missing:
        sys.exit(f"tools/wheel_check.py: EXTRA_ENTRIES and pyproject's extras differ: {missing}")
    with tempfile.TemporaryDirectory(prefix="swarmkit-wheel-") as folder:
        scratch = Path(folder)
        print(f"== {wheel.name} into a clean environment (core only)")
        started = time.monotonic()
        venv.create(scratch / "venv", with_pip=True)
        print(f"   venv with pip: {time.monotonic() - started:.1f}s")
        python = str(scratch / "venv" / "bin" / "python")
        _run([python, "-m", "pip", "install", *_QUIET, str(wheel)], cwd=scratch)
        out = _run([str(scratch / "venv" / "bin" / "swarmkit"), "demo"], cwd=scratch)
        if "swarmkit replay demo-" not in out:
            sys.exit(f"`swarmkit demo` from the wheel printed no replay hint:\n{out}")
        for extra, modules in EXTRA_ENTRIES.items():
            print(f"== extra {extra} alone: {', '.join(modules)}")
            _check_extra(python, wheel, extra, modules, scratch)
    print("wheel check passed")


def _check_extra(
    pip_python: str, wheel: Path, extra: str, modules: tuple[str, ...], at: Path
) -> None:
    """A clean environment with the wheel and this extra alone, and its entry imported there.
    The environment has no pip of its own: the core environment's pip installs into it."""
    home = at / f"venv-{extra}"
    venv.create(home, with_pip=False)
    python = str(home / "bin" / "python")
    _run(
        [pip_python, "-m", "pip", "--python", python, "install", *_QUIET, f"{wheel}[{extra}]"],
        cwd=at,
    )
    _run([python, "-c", _LOAD, str(ROOT), *modules], cwd=at)


if __name__ == "__main__":
    check(Path(sys.argv[1] if len(sys.argv) > 1 else "dist"))
