"""Bounds on JSON that arrives from a model, a tool server or a file, checked before parsing.

Python's ``json`` parser, Pydantic's validators and every recursive walk over the parsed value
recurse once per level of nesting: a tool call whose arguments nest 100,000 arrays deep raises
``RecursionError`` from wherever it is first read. ``json_problem`` measures the nesting depth
and the size of JSON *text* with a flat scan (no recursion), so a caller can refuse it before
anything recursive touches it; ``value_problem`` does the same for an already-built value
(a schema a server sent as a parsed object, a payload from Python code).

The limits are generous for real data (tool arguments rarely nest ten levels) and far below
the interpreter's recursion limit.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from itertools import accumulate
from typing import Any

MAX_JSON_DEPTH = 64
"""How deep JSON from outside may nest (objects and arrays together)."""

MAX_JSON_CHARS = 4_000_000
"""How many characters of JSON text from outside are read (about 4 MB of ASCII)."""

# Brackets inside string literals do not count: the text between literals is what is read.
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}
_LEAVES = frozenset({str, int, float, bool, type(None)})


def json_depth(text: str) -> int:
    """How deep the arrays and objects in JSON ``text`` nest (0 for a scalar); no recursion.

    Text that is not valid JSON gets a best-effort answer: the parser refuses it afterwards.
    """
    if "\\" in text:
        # Escaped backslashes, then escaped quotes: every '"' left delimits a string.
        text = text.replace("\\\\", "").replace('\\"', "")
    outside = "".join(text.split('"')[::2])  # the text between string literals
    brackets = _NOT_BRACKET.sub("", outside)
    return max(accumulate((_STEP[c] for c in brackets), initial=0))


def json_problem(
    text: str, *, max_depth: int = MAX_JSON_DEPTH, max_chars: int = MAX_JSON_CHARS
) -> str | None:
    """What is wrong with the size or nesting of JSON ``text``, or None when it is in bounds."""
    if len(text) > max_chars:
        return f"the JSON is {len(text):,} characters long, more than the {max_chars:,} allowed"
    if text.count("[") + text.count("{") <= max_depth:
        return None  # fewer openers than the limit: no need to look closer
    depth = json_depth(text)
    if depth > max_depth:
        return f"the JSON nests {depth} levels deep, more than the {max_depth} allowed"
    return None


def load_json(
    text: str, *, max_depth: int = MAX_JSON_DEPTH, max_chars: int = MAX_JSON_CHARS
) -> Any:
    """``json.loads(text)`` once the text is in bounds; ``ValueError`` saying why when not."""
    problem = json_problem(text, max_depth=max_depth, max_chars=max_chars)
    if problem is not None:
        raise ValueError(problem)
    try:
        return json.loads(text)
    except RecursionError:  # only reachable with a max_depth above the interpreter's limit
        raise ValueError("the JSON nests too deeply to read") from None


def value_depth(value: object, *, stop_at: int = MAX_JSON_DEPTH + 1) -> int:
    """How deep dicts, lists and tuples nest in ``value``, counted up to ``stop_at``; no
    recursion, so a value nested past the interpreter's limit is measured safely."""
    deepest = 0
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if type(item) is dict or isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        depth += 1
        if depth > deepest:
            deepest = depth
            if deepest >= stop_at:
                return deepest
        # Leaves (text and numbers, by exact type) are never stacked: a run's context is
        # checked on every run, and it is mostly leaves.
        for child in children:
            if type(child) not in _LEAVES:
                stack.append((child, depth))
    return deepest


def value_problem(value: object, *, max_depth: int = MAX_JSON_DEPTH) -> str | None:
    """What is wrong with the nesting of a parsed JSON-like ``value``, or None when in bounds."""
    depth = value_depth(value, stop_at=max_depth + 1)
    if depth > max_depth:
        return f"the value nests more than the {max_depth} levels allowed"
    return None


def fast_encoder(encoder: json.JSONEncoder) -> Callable[[Any], str]:
    """``encoder.encode`` with its C encoder built once (``JSONEncoder.encode`` builds one on
    every call, a quarter of encoding a small record). The C encoder is built without
    circular-reference markers, so it keeps no state between calls and threads may share it:
    a value that contains itself raises ``RecursionError`` (as one nested too deep does)
    instead of ``ValueError``. Where the interpreter has no C encoder, or the encoder indents,
    or the C encoder would write anything else, this is ``encoder.encode`` itself."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None or encoder.indent is not None:
        return encoder.encode
    strings = (
        json.encoder.encode_basestring_ascii
        if encoder.ensure_ascii
        else json.encoder.encode_basestring
    )
    try:
        built = make(
            None,
            encoder.default,
            strings,
            None,
            encoder.key_separator,
            encoder.item_separator,
            encoder.sort_keys,
            encoder.skipkeys,
            encoder.allow_nan,
        )
        probe = {"a": [1, 2.5, None, True, "é\n"], "b": {"c": "d"}}
        if "".join(built(probe, 0)) != encoder.encode(probe):
            return encoder.encode
    except TypeError:  # another interpreter's signature
        return encoder.encode

    def encode(value: Any) -> str:
        if type(value) is str:
            return strings(value)
        return "".join(built(value, 0))

    return encode
