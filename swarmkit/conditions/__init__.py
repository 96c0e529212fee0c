"""The condition language of ``when``: safe, total, compiled once, evaluated in microseconds.

Text goes through ``_lexer`` (tokens), ``_parser`` (a closed tree of ``_ast`` nodes, built
with an explicit stack) and ``_compile`` (Python closures); ``_values`` says what values
mean, ``_choose`` turns a node's ordered edges into one routing function (with ``_table``'s
per-key decision tables where edges share a path; long ``or`` chains use them too), and
``_explain`` reports what a condition saw. Nothing calls ``eval``, reads an attribute or
calls a function named in the text.

The language, as swarmstate 0.11 (a Python package with a Rust core, whose HandoffGraph
swarmkit's matches) defines it for its HandoffGraph:

- Literals: ``'s'`` / ``"s"`` (``\\n`` and ``\\t`` are escapes; a backslash before any
  other character keeps just that character), integers ``42``, ``-1`` (64-bit), decimals
  ``3.14`` (no exponent, no leading or trailing dot), ``true``/``True``,
  ``false``/``False``, ``null``/``none``/``None``. Other spellings are names.
- Paths: ``category``, ``user.tier``; a missing path, or one through a non-mapping, is
  null, so ``null == missing``.
- ``== !=``: ints and floats compare as doubles; bool is never a number; other values
  compare structurally and strictly (``[1] != [1.0]``, mappings by items in order);
  ``!=`` is exactly ``not ==``.
- ``< <= > >=``: true only for number/number or string/string; comparisons never chain.
- ``in``: an element of a list, tuple or set (numbers cross-compare at the top level), a
  substring of a string, a key of a mapping; false for anything else.
- ``and``/``or``/``not`` yield bools; ``not`` binds looser than comparisons. Falsy: null,
  false, 0, 0.0, and empty strings, bytes, lists and mappings.

Extensions, all of them syntax errors in swarmstate, so no accepted condition changes:

- ``not in``; list literals ``x in ['A', 'B']``; indexing ``output["key"]``,
  ``items[0]``, ``items[-1]``, ``d[k]`` (a wrong type or position reads as null).
- Arithmetic ``+ - * / %`` and unary ``-`` on numbers, with Python's meaning (``/`` is
  true division, ``%`` takes the divisor's sign); ``+`` also joins two strings. Division
  by zero, an int result outside 64 bits, an infinite result from finite numbers, or any
  other operand (bools included) makes the result *undefined*: every comparison with it
  is false (``!=`` too) and it is falsy.

The words of the user's message that rules read as ``swarm.user_words`` are split by
``message_words``: lower case, at anything not a letter or digit, each word once.

Values of other types (sets, Decimals, arbitrary objects) equal nothing and are unordered.
Conditions are capped at ``MAX_EXPRESSION_LENGTH`` characters and ``MAX_NESTING_DEPTH``
levels; long ``and``/``or`` chains are flat, so no input exhausts the stack.
"""

from swarmkit.conditions._choose import compile_first_match
from swarmkit.conditions._compile import (
    MAX_EXPRESSION_LENGTH,
    Condition,
    compile_condition,
)
from swarmkit.conditions._explain import ConditionTrace, PathValue, trace_condition
from swarmkit.conditions._parser import MAX_NESTING_DEPTH
from swarmkit.conditions._words import message_words

__all__ = [
    "MAX_EXPRESSION_LENGTH",
    "MAX_NESTING_DEPTH",
    "Condition",
    "ConditionTrace",
    "PathValue",
    "compile_condition",
    "compile_first_match",
    "message_words",
    "trace_condition",
]
