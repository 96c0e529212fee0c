"""Each message's wire form, made once: a message is frozen, so its JSON never changes.

A long session sends its whole history with every call. Encoding each message once, and
joining a call's new messages onto the history already joined for the call before, keeps a
call's cost in our code flat as the history grows: only the new messages are encoded, and
the rest is one copy of bytes.
"""

from __future__ import annotations

import json
import os
import re
import weakref
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

from swarmkit.bounds import fast_encoder
from swarmkit.messages import Message

MESSAGES_MARK = f"swarmkit-messages-{os.urandom(16).hex()}"
"""A stand-in for the message list while the rest of a body is encoded (random per process,
so no real value can be mistaken for it)."""

T = TypeVar("T")


def json_bytes(value: Any) -> bytes:
    """``value`` as the openai client encodes a JSON body: compact UTF-8, no NaN or infinity."""
    text = _ENCODE(value)
    try:
        return text.encode()
    except UnicodeEncodeError:
        # A lone surrogate (a model that sent half a character, in a tool name say) cannot be
        # UTF-8: it becomes U+FFFD, so the call goes out and the session stays resumable.
        return _LONE_SURROGATE.sub("\ufffd", text).encode()


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
# One encoder for every call: json.dumps with options builds a new one each time.
_ENCODE = fast_encoder(json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False))


def spliced_body(body: Any, array: list[bytes]) -> bytes:
    """The JSON of ``body`` with its ``MESSAGES_MARK`` value replaced by ``array`` (the
    encoded message list, in pieces, so the long history is copied once). A body whose mark
    was overridden (``extra_body`` may set any field) is sent as it is."""
    head, mark, tail = json_bytes(body).partition(_MARK_JSON)
    return b"".join((head, *array, tail)) if mark else head


_MARK_JSON = json_bytes(MESSAGES_MARK)


class WireCache:
    """The encoded wire form of each message, made once by ``encode`` and kept while the
    message lives; and, per conversation, its history joined so far.

    Keyed by identity, not equality: hashing a message by value would read all its text on
    every call, which is the walk this cache exists to avoid. Two distinct messages never share
    an entry, even when equal; an entry goes when its message is collected. A form may encode
    to several comma-joined items, or to none (empty bytes).
    """

    def __init__(self, encode: Callable[[Message], bytes]) -> None:
        self._encode = encode
        self._forms: ByIdentity[bytes] = ByIdentity()
        # By a history's last message: the messages before it, and the whole history joined.
        self._chains: ByIdentity[tuple[tuple[Message, ...], bytes]] = ByIdentity()

    def __len__(self) -> int:
        """How many entries it keeps: a form per message, a joined history per conversation."""
        return len(self._forms) + len(self._chains)

    def get(self, message: Message) -> bytes:
        """The wire form of ``message``, encoded now if this is its first call."""
        form = self._forms.find(message)
        if form is None:
            form = self._encode(message)
            self._forms.put(message, form)
        return form

    def array(self, messages: Sequence[Message]) -> list[bytes]:
        """The JSON array of ``messages``, in pieces: the first message (the instructions,
        new each call) on its own, the rest joined onto the longest part of them joined for
        an earlier call."""
        if not messages:
            return [b"[]"]
        # The instructions are a new message each call: encoded, not kept.
        first, joined = self._encode(messages[0]), self._joined(tuple(messages[1:]))
        comma = b"," if first and joined else b""
        return [b"[", first, comma, joined, b"]"]

    def _joined(self, history: tuple[Message, ...]) -> bytes:
        done, prefix = self._longest_joined(history)
        if done == len(history):
            return prefix
        pieces = (prefix, *map(self.get, history[done:]))
        joined = b",".join(piece for piece in pieces if piece)
        if done:
            # The longer history supersedes the shorter one in the common case, a session
            # that goes on; a fork of the shorter one joins its own once.
            self._chains.drop(history[done - 1])
        self._chains.put(history[-1], (history[:-1], joined))
        return joined

    def _longest_joined(self, history: tuple[Message, ...]) -> tuple[int, bytes]:
        for end in range(len(history), 0, -1):
            chain = self._chains.find(history[end - 1])
            # Equal tuples of the same messages compare by identity first: a quick C loop.
            if chain is not None and chain[0] == history[: end - 1]:
                return end, chain[1]
        return 0, b""


class ByIdentity(Generic[T]):
    """Values kept per live message, by identity; an entry goes when its message does."""

    def __init__(self) -> None:
        self._entries: dict[int, tuple[weakref.ref[Message], T]] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def find(self, message: Message) -> T | None:
        entry = self._entries.get(id(message))
        return entry[1] if entry is not None and entry[0]() is message else None

    def put(self, message: Message, value: T) -> None:
        key = id(message)
        entries = self._entries

        def forget(ref: weakref.ref[Message]) -> None:
            # Only our own entry: by now the id may name a newer message.
            entry = entries.get(key)
            if entry is not None and entry[0] is ref:
                del entries[key]

        entries[key] = (weakref.ref(message, forget), value)

    def drop(self, message: Message) -> None:
        if self.find(message) is not None:
            del self._entries[id(message)]
