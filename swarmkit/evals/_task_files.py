"""Task files read as bounded data: size, encoding, nesting and YAML aliases are checked.

A task file is data someone may hand you. JSON's parser and YAML's composer recurse once per
level of nesting, and a YAML alias repeats a whole subtree without costing a byte of the file
(a "billion laughs" file of a few hundred bytes stands for gigabytes), so every file is
measured before or while it is parsed and refused with a ``TaskFileError`` saying why.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from swarmkit.bounds import MAX_JSON_DEPTH, load_json
from swarmkit.exceptions import TaskFileError

MAX_TASK_FILE_BYTES = 8_000_000
"""The largest task file read, in bytes."""

MAX_TASK_FILE_DEPTH = MAX_JSON_DEPTH
"""How deep a task file's objects and lists may nest (the file itself is level 1)."""

MAX_YAML_VALUES = 1_000_000
"""How many values a YAML task file may hold with every alias counted as the copy it reads
as; a few aliases of a shared database pass, an alias bomb does not."""

_CHUNK = 1 << 16


def read_task_file(path: Path) -> Any:
    """The parsed contents of a JSON or YAML task file, refused when out of bounds."""
    text = _text(path)
    if path.suffix.lower() in (".yaml", ".yml"):
        return _yaml(text, str(path))
    try:
        return load_json(text, max_depth=MAX_TASK_FILE_DEPTH, max_chars=MAX_TASK_FILE_BYTES)
    except ValueError as exc:  # json.JSONDecodeError too
        raise _error(path, f"not JSON it can read: {_json_reason(exc)}") from None


def _text(path: Path) -> str:
    # In chunks: read(limit) would set aside the whole limit for every file, however small.
    chunks: list[bytes] = []
    size = 0
    try:
        with path.open("rb") as file:
            while chunk := file.read(_CHUNK):
                size += len(chunk)
                if size > MAX_TASK_FILE_BYTES:
                    raise _error(path, f"larger than the {MAX_TASK_FILE_BYTES:,} bytes allowed")
                chunks.append(chunk)
    except OSError as exc:
        raise _error(path, f"cannot read it: {exc.strerror or exc}") from None
    data = b"".join(chunks)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _error(
            path, f"not UTF-8 text: byte 0x{data[exc.start]:02x} at offset {exc.start}"
        ) from None


def _json_reason(exc: ValueError) -> str:
    msg = getattr(exc, "msg", None)
    if msg is not None:  # a JSONDecodeError knows where
        return f"{msg} at line {exc.lineno}, column {exc.colno}"  # type: ignore[attr-defined]
    return str(exc)


def _yaml(text: str, source: str) -> Any:
    try:
        import yaml  # type: ignore[import-untyped]  # noqa: PLC0415 - only YAML files need it
    except ImportError:
        raise TaskFileError(
            "YAML task files need PyYAML: pip install 'swarmkit-agents[evals]'",
            source=source,
            task=None,
            field=None,
        ) from None
    loader = _bounded_loader(yaml)(text)
    try:
        return loader.get_single_data()
    except _OutOfBounds as exc:
        raise TaskFileError(str(exc), source=source, task=None, field=None) from None
    except yaml.YAMLError as exc:
        raise TaskFileError(f"not YAML: {exc}", source=source, task=None, field=None) from None
    except ValueError as exc:  # a value the safe constructor cannot build (a 5,000-digit int)
        raise TaskFileError(
            f"not YAML it can read: {exc}", source=source, task=None, field=None
        ) from None
    finally:
        loader.dispose()


class _OutOfBounds(Exception):
    """A YAML document nests too deep, repeats too much through aliases, or refers to itself."""


def _bounded_loader(yaml: Any) -> Any:
    """A subclass of PyYAML's SafeLoader whose composer measures each node as it is built.

    Every node's size and depth are counted with its aliases expanded, from its children's
    counts (kept by node), so the measure costs one step per node however much the aliases
    would repeat; the walk's own depth is capped before Python's recursion limit is near.
    """

    class BoundedLoader(yaml.SafeLoader):  # type: ignore[misc]
        def __init__(self, text: str) -> None:
            super().__init__(text)
            self._depth = 0
            self._measures: dict[int, tuple[int, int]] = {}

        def compose_node(self, parent: Any, index: Any) -> Any:
            alias = self.check_event(yaml.AliasEvent)
            self._depth += 1
            if self._depth > MAX_TASK_FILE_DEPTH + 1:  # the scalars below the deepest list
                raise _OutOfBounds(_too_deep())
            try:
                node = super().compose_node(parent, index)
            finally:
                self._depth -= 1
            if alias and id(node) not in self._measures:
                raise _OutOfBounds("a YAML alias refers to the value that holds it")
            if not alias:
                self._measures[id(node)] = _measure(node, self._measures)
            return node

    return BoundedLoader


def _measure(node: Any, measures: dict[int, tuple[int, int]]) -> tuple[int, int]:
    """A node's (values, depth) with aliases expanded, from its children's measures."""
    if node.id == "scalar":
        return 1, 0
    children = (
        [part for pair in node.value for part in pair] if node.id == "mapping" else node.value
    )
    counted = [measures[id(child)] for child in children]
    size = 1 + sum(values for values, _ in counted)
    depth = 1 + max((inner for _, inner in counted), default=0)
    if size > MAX_YAML_VALUES:
        raise _OutOfBounds(
            f"the YAML holds more than {MAX_YAML_VALUES:,} values once its aliases are "
            "expanded; write the values out, or share less through anchors and aliases"
        )
    if depth > MAX_TASK_FILE_DEPTH:
        raise _OutOfBounds(_too_deep())
    return size, depth


def _too_deep() -> str:
    return f"the YAML nests more than the {MAX_TASK_FILE_DEPTH} levels allowed"


def _error(path: Path, message: str) -> TaskFileError:
    return TaskFileError(message, source=str(path), task=None, field=None)
