"""Package names that load their module on first use, so importing a package stays cheap."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_getattr(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """The module ``__getattr__`` of ``package``: a name of ``homes`` (name -> the module that
    defines it) is imported on first use and kept, so later reads are plain lookups.

    A home that is ``<package>.<name>`` is the submodule itself (``swarmkit.testing``).
    """
    namespace = sys.modules[package].__dict__

    def load(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module = importlib.import_module(home)
        value = module if home == f"{package}.{name}" else getattr(module, name)
        namespace[name] = value
        return value

    return load
