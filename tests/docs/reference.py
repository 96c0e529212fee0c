"""What the API reference must cover, read from the source tree, and what its pages ask for.

Both sides are read statically: modules and their names from the files under ``swarmkit/``
(so a module is covered the moment it exists, and no optional extra is imported), and the
``::: identifier`` directives of the pages under ``docs/reference/`` with their ``options``.
"""

from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import yaml  # type: ignore[import-untyped]

from tests.docs.snippets import ROOT

PACKAGE = ROOT / "swarmkit"
REFERENCE = ROOT / "docs" / "reference"

# The `swarmkit` command's own modules are left out: their reference is the command page,
# generated from the command's parser (reference/command.md), and code never imports them.
# `swarmkit.evals.command` is the `swarmkit eval` subcommand's handler. A `__main__` module
# (`python -m swarmkit.dbos`) falls out with the private ones: it starts with an underscore.
COMMAND_MODULES = ("swarmkit.cli", "swarmkit.evals.command")

_DIRECTIVE = re.compile(r"^::: *([\w.]+)[ \t]*\n((?:(?:[ \t]+\S.*)?\n)*)", re.MULTILINE)


@dataclass(frozen=True, kw_only=True)
class Directive:
    """One ``::: identifier`` block of a reference page."""

    page: Path
    """The page, relative to the repository."""
    identifier: str
    """The dotted path the block renders."""
    members: bool | list[str] | None
    """Its ``options.members``: None when absent (every public member is rendered)."""


def public_modules() -> dict[str, Path]:
    """Every module a user may import, by dotted name: no part of the name starts with ``_``."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        name = ".".join(parts)
        command = any(name == m or name.startswith(f"{m}.") for m in COMMAND_MODULES)
        if not command and not any(part.startswith("_") for part in parts):
            found[name] = path
    return found


def public_names(path: Path) -> list[str]:
    """A module's ``__all__``; without one, the names it defines that do not start with ``_``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    defined: dict[str, None] = {}
    for statement in tree.body:
        for name in _defines(statement):
            if name == "__all__":
                assert isinstance(statement, ast.Assign | ast.AnnAssign)
                assert statement.value is not None
                return list(ast.literal_eval(statement.value))
            defined[name] = None
    return [name for name in defined if not name.startswith("_")]


def _defines(statement: ast.stmt) -> list[str]:
    match statement:
        case ast.FunctionDef(name=name) | ast.AsyncFunctionDef(name=name) | ast.ClassDef(name=name):
            return [name]
        case ast.Assign(targets=targets):
            return [target.id for target in targets if isinstance(target, ast.Name)]
        case ast.AnnAssign(target=ast.Name(id=name)):
            return [name]
    return []


def directives() -> list[Directive]:
    """Every ``:::`` block of every page under docs/reference/, with its members option."""
    found = []
    for page in sorted(REFERENCE.rglob("*.md")):
        for match in _DIRECTIVE.finditer(page.read_text(encoding="utf-8")):
            options = yaml.safe_load(textwrap.dedent(match.group(2))) or {}
            members = (options.get("options") or {}).get("members")
            found.append(
                Directive(page=page.relative_to(ROOT), identifier=match.group(1), members=members)
            )
    return found


def docstrings() -> Iterator[tuple[Path, int, str]]:
    """Every docstring under swarmkit/ (modules, classes, functions, attributes): file, line, text.

    Private modules are read too: what they define is rendered wherever a public module
    re-exports it.
    """
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            match node:
                case ast.Expr(value=ast.Constant(value=str(text))):
                    yield path.relative_to(ROOT), node.lineno, text
