"""Redaction: values stored under secret-looking keys are shown as ``[redacted]`` everywhere.

A key is split into lower-case words at ``_``, ``-``, ``.``, spaces and camelCase
(``X-Api-Key`` is x, api, key; ``accessTokenV2`` is access, token, v2). It is secret when one
of its words is a secret word: one of ``SECRET_WORDS`` (key, token, secret, password, passwd,
authorization, auth, cookie, credential, credentials), or one of ``SECRET_COMPOUNDS``, the
names usually written as one word (apikey, apisecret, apitoken, accesskey, accesstoken,
authkey, authtoken, bearertoken, clientsecret, csrftoken, idtoken, passphrase, privatekey,
refreshtoken, secretkey, sessiontoken, signingkey, xsrftoken). Words match whole: ``monkey``,
``keyboard``, ``prompt_tokens`` and ``myapikey`` are not secret. ``redact_keys=[...]`` on a
swarm replaces the whole list.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from swarmkit.bounds import load_json
from swarmkit.exceptions import ConfigurationError

REDACTED = "[redacted]"
"""What a secret value is replaced with."""

SECRET_WORDS = (
    "key",
    "token",
    "secret",
    "password",
    "passwd",
    "authorization",
    "auth",
    "cookie",
    "credential",
    "credentials",
)
"""Words that make a key secret wherever they appear as a whole word of it: ``api_key``,
``accessToken``, ``X-Auth-Token``; never inside a longer word (``monkey``, ``tokens``)."""

SECRET_COMPOUNDS = (
    "apikey",
    "apisecret",
    "apitoken",
    "accesskey",
    "accesstoken",
    "authkey",
    "authtoken",
    "bearertoken",
    "clientsecret",
    "csrftoken",
    "idtoken",
    "passphrase",
    "privatekey",
    "refreshtoken",
    "secretkey",
    "sessiontoken",
    "signingkey",
    "xsrftoken",
)
"""Secret names usually written as one word (``apikey``, ``APIKEY``, ``x-apikey``): each is a
secret word of its own, matched whole like the others, so ``myapikey`` is not secret."""

DEFAULT_SECRET_PATTERNS = SECRET_WORDS + SECRET_COMPOUNDS
"""The default patterns: ``SECRET_WORDS`` and ``SECRET_COMPOUNDS``."""

# Words of a key: split at _ - . and spaces, and before an upper-case letter that follows a
# lower-case letter or digit (camelCase), or that starts a capitalised word after capitals
# (HTTPHeader -> HTTP, Header).
_SEPARATORS = re.compile(r"[\s_.\-]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def key_words(key: str) -> tuple[str, ...]:
    """The lower-case words of a key: ``X-Api-Key`` -> ``("x", "api", "key")``."""
    words: list[str] = []
    for part in _SEPARATORS.split(key):
        words.extend(word.lower() for word in _CAMEL.split(part) if word)
    return tuple(words)


@dataclass(frozen=True, kw_only=True, slots=True)
class Redactor:
    """Finds secret keys by whole words and hides their values in any JSON-like data.

    ``api_token``, ``accessToken``, ``X-Api-Key``, ``db_password`` and ``apikey`` are secret
    under the defaults; ``prompt_tokens``, ``max_tokens``, ``monkey``, ``keyboard`` and
    ``myapikey`` are not (no whole word matches). A pattern of several words (``"api key"``)
    matches those words in a row.
    """

    patterns: tuple[tuple[str, ...], ...] = field(
        default_factory=lambda: tuple((p,) for p in DEFAULT_SECRET_PATTERNS)
    )
    """Each pattern as its words."""
    _words: tuple[str, ...] = field(init=False, repr=False, compare=False)
    _clean: dict[str, None] = field(init=False, repr=False, compare=False)
    _secret_keys: dict[str, bool] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # The words text must hold to hold a secret key. A word holding another one is left
        # out (text with "apikey" in it has "key" in it too): 9 substring tests, not 28.
        every = {word for pattern in self.patterns for word in pattern}
        words = {w for w in every if not any(o != w and o in w for o in every)}
        object.__setattr__(self, "_words", tuple(sorted(words, key=lambda w: (-len(w), w))))
        # Memos, each bounded (see _remember): texts known to hold no secret key, and keys
        # already judged. A run asks about the same instructions, tool arguments and results
        # several times over (its journal record, its request digest, the next summaries).
        object.__setattr__(self, "_clean", {})
        object.__setattr__(self, "_secret_keys", {})

    @classmethod
    def of(cls, patterns: Collection[str]) -> Redactor:
        """A redactor for ``patterns``; ConfigurationError for one string or non-strings."""
        if isinstance(patterns, str | bytes) or not isinstance(patterns, Collection):
            raise ConfigurationError(
                f"redact_keys must be a collection of key patterns such as ['password', "
                f"'token'], got {patterns!r}"
            )
        words = []
        for pattern in patterns:
            if not isinstance(pattern, str) or not key_words(pattern):
                raise ConfigurationError(
                    f"each redact_keys pattern must be a non-empty str, got {pattern!r}"
                )
            words.append(key_words(pattern))
        return cls(patterns=tuple(words))

    def is_secret(self, key: object) -> bool:
        """Whether a value stored under ``key`` must not be shown."""
        if not isinstance(key, str):
            return False
        known = self._secret_keys.get(key)
        if known is None:
            known = _is_secret(self.patterns, key)
            _remember(self._secret_keys, key, known)
        return known

    def value(self, value: Any, *, json_strings: bool = False) -> Any:
        """``value`` with every secret key's value replaced, at any depth; with
        ``json_strings``, also inside strings that hold JSON (tool arguments and results)."""
        kind = type(value)
        if kind in _SCALARS:
            # The common leaves, by exact type: an ABC check per leaf is what made this slow.
            return self.json_text(value) if json_strings and kind is str else value
        if kind is dict or isinstance(value, Mapping):
            return self._mapping(value, json_strings=json_strings)
        if isinstance(value, list | tuple):
            return [self.value(v, json_strings=json_strings) for v in value]
        if json_strings and isinstance(value, str):
            return self.json_text(value)
        return value

    def _mapping(self, value: Mapping[Any, Any], *, json_strings: bool) -> dict[Any, Any]:
        known, shown = self._secret_keys, {}
        for key, item in value.items():
            # The memo and the plain leaves inline: a record is mostly keys seen before.
            secret = known.get(key) if type(key) is str else None
            if secret is None:
                secret = self.is_secret(key)
            if secret:
                shown[key] = REDACTED
            elif type(item) in _SCALARS and not json_strings:
                shown[key] = item
            else:
                shown[key] = self.value(item, json_strings=json_strings)
        return shown

    def in_text(self, value: Any) -> Any:
        """``value`` with secret ``"key": value`` pairs hidden inside its strings too: free
        text (a rendered conversation, instructions) that quotes JSON holding a secret, and
        the value an argument problem quotes for a secret field
        (``card.password: Input should be a valid integer (got "[redacted]")``)."""
        kind = type(value)
        if kind is str or isinstance(value, str):
            if not self.may_hold_secret(value):
                return value
            return _REFUSED.sub(self._hide_refused, _QUOTED_PAIR.sub(self._hide_pair, value))
        if kind in _SCALARS:  # exact types first: an ABC check per number is most of the cost
            return value
        if kind is dict or isinstance(value, Mapping):
            return {k: self._text_item(v) for k, v in value.items()}
        if kind is list or isinstance(value, list | tuple):
            return [self._text_item(v) for v in value]
        return value

    def _text_item(self, item: Any) -> Any:
        # Text already known to hold no secret, inline: a request's summary is mostly that.
        return item if type(item) is str and item in self._clean else self.in_text(item)

    def _hide_pair(self, found: re.Match[str]) -> str:
        key = found.group("key").encode().decode("unicode_escape", errors="replace")
        if not self.is_secret(key):
            return found.group()
        return f'{found.group("head")}"{REDACTED}"'

    def _hide_refused(self, found: re.Match[str]) -> str:
        if not any(self.is_secret(part) for part in _FIELD_PARTS.split(found.group("field"))):
            return found.group()
        return f"{found.group('head')}(got {REDACTED})"

    def refused_input(self, location: tuple[int | str, ...], value: Any) -> str:
        """The value a validation problem at ``location`` quotes: ``[redacted]`` under a
        secret field, else its JSON with nested secrets hidden, cut at 80 characters."""
        if any(self.is_secret(part) for part in location):
            return REDACTED
        shown = json.dumps(self.value(value), default=repr)
        return shown if len(shown) <= 80 else shown[:77] + "..."

    def secret_path(self, value: Any) -> str | None:
        """The dotted path of the first secret key in ``value`` (``"auth.api_key"``), or None;
        no recursion, so any nesting is safe to look at."""
        known = self._secret_keys
        stack: list[tuple[str, Any]] = [("", value)]
        while stack:
            path, item = stack.pop()
            if type(item) is dict or isinstance(item, Mapping):
                for key, inner in item.items():
                    # The memo inline, and leaves never stacked: every run's context is
                    # looked at, mostly keys seen before over text and numbers.
                    secret = known.get(key) if type(key) is str else None
                    if secret is None:
                        secret = self.is_secret(key)
                    if secret:
                        return f"{path}.{key}" if path else str(key)
                    if type(inner) not in _SCALARS:
                        stack.append((f"{path}.{key}" if path else str(key), inner))
            elif isinstance(item, list | tuple):
                for index, inner in enumerate(item):
                    if type(inner) not in _SCALARS:
                        stack.append((f"{path}[{index}]", inner))
        return None

    def json_text(self, text: str) -> str:
        """JSON text with secret values hidden; text that is not a JSON object or array, or
        that holds no secret, comes back unchanged."""
        if not self.may_hold_secret(text) or not text.lstrip().startswith(("{", "[")):
            return text
        try:
            data = load_json(text)
        except ValueError:
            return text
        redacted = self.value(data, json_strings=True)
        return text if redacted == data else json.dumps(redacted, ensure_ascii=False)

    def may_hold_secret(self, text: str) -> bool:
        """False only when no key in ``text`` can be secret: ASCII text, without an escape,
        in which no word of any pattern appears. Tool arguments and results are mostly such
        text, and skipping their parse keeps journaling and replaying a tool call cheap."""
        clean = self._clean
        if text in clean:
            return False
        if not text.isascii() or "\\" in text:
            return True
        # Substring tests on the lowered text: a case-insensitive regex of the words costs
        # several times more on instructions a few hundred characters long, and a generator
        # (any) resumes once per word; this runs for every message journaled or digested.
        lowered = text.lower()
        for word in self._words:
            if word in lowered:
                return True
        if len(text) <= _CLEAN_TEXT_LIMIT:  # remembered inline: a miss costs no extra call
            if len(clean) >= _MEMO_SIZE:
                clean.clear()
            clean[text] = None
        return False


def refuse_secret_context(context: Mapping[str, Any], redactor: Redactor) -> None:
    """Refuse a run's context that holds a value under a secret key.

    A journal keeps such a value as ``"[redacted]"``, so a resumed or replayed run, and its
    tools, would see the placeholder instead of the secret. Secrets go in ``deps=``: tools read
    them as ``RunContext.deps`` and no journal keeps them.
    """
    path = redactor.secret_path(context)
    if path is not None:
        raise ConfigurationError(
            f"context key {path!r} names a secret: a journal keeps its value as {REDACTED!r}, so "
            "a resumed run and its tools would see that placeholder; pass secrets as deps=... "
            "(tools read RunContext.deps, which no journal keeps), or rename the key"
        )


_SCALARS = frozenset({str, int, float, bool, type(None)})
# A JSON member quoted inside text: "key": "value", or "key": 123 / true / null.
_QUOTED_PAIR = re.compile(
    r'(?P<head>"(?P<key>[^"\\]*(?:\\.[^"\\]*)*)"\s*:\s*)'
    r'(?:"[^"\\]*(?:\\.[^"\\]*)*"|[-\w.+]+)'
)


# A problem of an argument validation, as swarmkit words it: ``field.path: message (got
# value)``, one after another separated by "; ". The field path starts the text, or follows
# ": " or "; "; the message holds neither (pydantic's own messages never do).
_REFUSED = re.compile(
    r"(?P<head>(?:^|(?<=: )|(?<=; ))(?P<field>[A-Za-z_][\w-]*(?:\.[\w-]+|\[\d+\])*): "
    r"(?:(?!; |: ).)*? )\(got .*?\)(?=; |\. Expected a JSON object|$)",
    re.DOTALL,
)
_FIELD_PARTS = re.compile(r"[.\[\]]+")

DEFAULT_REDACTOR = Redactor()
"""A redactor with the default patterns, for values shown before any swarm's own applies."""


_V = TypeVar("_V")
_MEMO_SIZE = 1024
"""Entries a redactor's memo holds before it starts over."""
_CLEAN_TEXT_LIMIT = 4096
"""Characters of the longest text remembered as clean: the memo holds at most 4 MiB of text."""


def _remember(memo: dict[str, _V], key: str, value: _V) -> None:
    """Keep ``key``'s answer; a full memo starts over, so a run that makes new text at every
    turn holds a bounded amount (``may_hold_secret`` does the same inline). Threads may share
    a redactor: each step here is atomic."""
    if len(memo) >= _MEMO_SIZE:
        memo.clear()
    memo[key] = value


@functools.lru_cache(maxsize=4096)
def _is_secret(patterns: tuple[tuple[str, ...], ...], key: str) -> bool:
    # Journals and pages ask about the same few keys over and over: split each once.
    words = key_words(key)
    return any(_contains(words, pattern) for pattern in patterns)


def _contains(words: tuple[str, ...], pattern: tuple[str, ...]) -> bool:
    size = len(pattern)
    return any(words[i : i + size] == pattern for i in range(len(words) - size + 1))
