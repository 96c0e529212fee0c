"""The swarm a ``module:attribute`` target names, or a one-line reason it names none."""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

from swarmkit.cli._usage import TARGET_HELP, UsageError
from swarmkit.factory import is_swarm_factory
from swarmkit.swarm import Swarm

__all__ = ["TARGET_HELP", "UsageError", "load_swarm"]


def load_swarm(target: str) -> Swarm:
    """The Swarm that ``module:attribute`` names, or that the swarm factory it names returns."""
    module_name, attribute = _split(target)
    module = _import(module_name)
    if not hasattr(module, attribute):
        found = sorted(name for name, value in vars(module).items() if isinstance(value, Swarm))
        hint = f"; its Swarms: {', '.join(found)}" if found else ""
        raise UsageError(f"module {module_name!r} has no attribute {attribute!r}{hint}")
    value = getattr(module, attribute)
    if is_swarm_factory(value):
        value = _call_factory(target, value)
        if not isinstance(value, Swarm):
            raise UsageError(
                f"the swarm factory {target} returned {type(value).__name__}, not a Swarm"
            )
    if not isinstance(value, Swarm):
        raise UsageError(_not_a_swarm(target, value))
    return value


def _split(target: str) -> tuple[str, str]:
    module_name, _, attribute = target.rpartition(":")
    if "/" in module_name or "\\" in module_name or module_name.endswith(".py"):
        raise UsageError(
            f"{target!r} is a file path; name a module instead: run swarmkit from the folder "
            "that holds the file and pass its module name, e.g. app:swarm for app.py"
        )
    if module_name.startswith("."):
        raise UsageError(
            f"{target!r} names a relative module; pass the full dotted name, e.g. "
            "mypackage.agents:swarm"
        )
    if not module_name or not attribute:
        raise UsageError(f"{target!r} is not module:attribute, e.g. myapp.agents:swarm")
    if not all(part.isidentifier() for part in module_name.split(".")):
        raise UsageError(f"{module_name!r} is not a module name (dotted Python identifiers)")
    if not attribute.isidentifier():
        raise UsageError(f"{attribute!r} is not an attribute name (a Python identifier)")
    return module_name, attribute


def _import(module_name: str) -> Any:
    # A console script does not put the current folder on sys.path; `swarmkit run app:swarm`
    # should find app.py where it is run, as `python -m` would.
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and (module_name + ".").startswith(exc.name + "."):
            raise UsageError(
                f"no module named {module_name!r} in {cwd} or on sys.path; run swarmkit from "
                "the folder that contains it"
            ) from exc
        raise UsageError(f"importing {module_name!r} failed: {exc}") from exc
    except Exception as exc:  # the user's module raised while it was imported
        raise UsageError(
            f"importing {module_name!r} failed: {type(exc).__name__}: {_first_line(exc)}"
        ) from exc


def _call_factory(target: str, factory: Any) -> object:
    try:
        return factory()
    except Exception as exc:
        raise UsageError(
            f"the swarm factory {target} failed: {type(exc).__name__}: {_first_line(exc)}"
        ) from exc


def _not_a_swarm(target: str, value: object) -> str:
    if callable(value) and not isinstance(value, type):
        return (
            f"{target} is a function, not a Swarm; the command calls only functions marked "
            "@swarmkit.swarm_factory (no arguments, returns a Swarm)"
        )
    return f"{target} is {type(value).__name__}, not a Swarm"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else "(no message)"
