"""Encryption at rest for journals: the cipher that seals record bodies and prompts (AES-GCM).

A journal given ``cipher=`` seals each record's data (and each session's prompt) before it
is stored; the session id, kind, sequence number and times stay in clear, so sessions can be
listed and ordered without the key. Sealed text reads
``swarmkit-aesgcm:v1:<key id>:<base64 nonce+ciphertext>``; how a record's sealed body is
stored and bound to its place and to the record before it is ``_chain``'s.

``cryptography`` (extra ``swarmkit-agents[encryption]``) loads only when a cipher is built.
"""

from __future__ import annotations

import base64
import binascii
import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, Protocol

from swarmkit.exceptions import ConfigurationError, JournalError
from swarmkit.journal._records import SessionInfo

KEYS_VARIABLE = "SWARMKIT_JOURNAL_KEYS"
"""The environment variable ``AESGCMCipher.from_env()`` reads: ``id:base64key[,id:base64key]``,
the first key being the one new records are sealed with."""

_PREFIX = "swarmkit-aesgcm:v1:"
_NONCE_BYTES = 12


class JournalCipher(Protocol):
    """Seals and opens text; ``context`` is bound to the result (associated data)."""

    def seal(self, text: str, *, context: str) -> str:
        """``text`` sealed, as printable text."""
        ...

    def open(self, sealed: str, *, context: str) -> str:
        """The text ``seal`` sealed with the same ``context``; ``JournalError`` if it cannot."""
        ...


class AESGCMCipher:
    """AES-256-GCM with named keys: new text is sealed with ``current``; text sealed with any
    key in ``keys`` opens. Rotate by adding a new key as ``current`` and keeping the old ones
    for as long as records sealed with them must be read.
    """

    def __init__(self, keys: Mapping[str, bytes], *, current: str | None = None) -> None:
        if not keys:
            raise ConfigurationError("AESGCMCipher needs at least one key: {'k1': 32 bytes}")
        for key_id, key in keys.items():
            _check_key(key_id, key)
        self._current = current if current is not None else next(iter(keys))
        if self._current not in keys:
            raise ConfigurationError(f"current key {self._current!r} is not among the keys")
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM  # noqa: PLC0415

        self._aead = {key_id: AESGCM(bytes(key)) for key_id, key in keys.items()}

    @classmethod
    def from_env(cls, variable: str = KEYS_VARIABLE) -> AESGCMCipher:
        """The cipher of the keys in ``variable`` (``id:base64key,...``, current first)."""
        text = os.environ.get(variable, "").strip()
        if not text:
            raise ConfigurationError(
                f"no journal keys in ${variable}: set it to id:base64key (make a key with "
                "swarmkit.journal.generate_key())"
            )
        return cls(parse_keys(text, variable))

    @property
    def current(self) -> str:
        """The id of the key new records are sealed with."""
        return self._current

    def seal(self, text: str, *, context: str) -> str:
        """``text`` sealed with the current key, as printable text."""
        nonce = os.urandom(_NONCE_BYTES)
        sealed = self._aead[self._current].encrypt(nonce, text.encode(), context.encode())
        return f"{_PREFIX}{self._current}:{base64.b64encode(nonce + sealed).decode()}"

    def open(self, sealed: str, *, context: str) -> str:
        """The text inside ``sealed``; ``JournalError`` for a missing or wrong key."""
        from cryptography.exceptions import InvalidTag  # noqa: PLC0415

        key_id, _, body = sealed.removeprefix(_PREFIX).partition(":")
        aead = self._aead.get(key_id)
        if aead is None:
            raise JournalError(
                f"it is sealed with key {key_id!r}, which this journal's cipher does not hold "
                f"(it holds {', '.join(map(repr, self._aead))}); add that key to read it"
            )
        try:
            raw = base64.b64decode(body, validate=True)
            return aead.decrypt(raw[:_NONCE_BYTES], raw[_NONCE_BYTES:], context.encode()).decode()
        except (InvalidTag, binascii.Error, ValueError):
            raise JournalError(
                f"it does not open with key {key_id!r}: the key is wrong or the record was altered"
            ) from None


def env_cipher(variable: str = KEYS_VARIABLE) -> AESGCMCipher | None:
    """The cipher of ``$SWARMKIT_JOURNAL_KEYS`` when it is set, else None (what the commands
    open journals with)."""
    return AESGCMCipher.from_env(variable) if os.environ.get(variable, "").strip() else None


def generate_key() -> str:
    """A new random 256-bit key, base64-encoded, for ``SWARMKIT_JOURNAL_KEYS``."""
    return base64.b64encode(os.urandom(32)).decode()


def parse_keys(text: str, where: str = KEYS_VARIABLE) -> dict[str, bytes]:
    """``id:base64key,...`` as a dict of keys, in order. A malformed entry is named by its
    position, never by its characters: they may be key material."""
    entries = [part.strip() for part in text.split(",") if part.strip()]
    keys: dict[str, bytes] = {}
    for number, entry in enumerate(entries, start=1):
        try:
            key_id, key = _key_entry(entry)
        except ValueError as exc:
            raise ConfigurationError(
                f"{where}: entry {number} of {len(entries)} {exc}; each entry is id:base64key "
                "(its characters are not shown, as they may be a key)"
            ) from None
        keys[key_id] = key
    return keys


def _key_entry(entry: str) -> tuple[str, bytes]:
    """One ``id:base64key``; ValueError saying what is wrong, without quoting the entry."""
    key_id, colon, encoded = entry.partition(":")
    if not colon or not key_id:
        raise ValueError("is not an id, a colon and a key")
    try:
        key = base64.b64decode(encoded, validate=True)
    except binascii.Error:
        raise ValueError("has a key that is not base64") from None
    if len(key) != 32:
        raise ValueError(f"has a key of {len(key)} bytes, not 32 (make one with generate_key())")
    return key_id, key


def _check_key(key_id: object, key: object) -> None:
    if not isinstance(key_id, str) or not key_id or ":" in key_id or "," in key_id:
        raise ConfigurationError(f"a key id is a non-empty str without ':' or ',', got {key_id!r}")
    if not isinstance(key, bytes | bytearray) or len(key) != 32:
        raise ConfigurationError(
            f"key {key_id!r} must be 32 bytes (AES-256); make one with generate_key()"
        )


# -- what the stores call ----------------------------------------------------------------------


def seal_prompt(cipher: JournalCipher | None, prompt: str | None, session_id: str) -> str | None:
    """A session's prompt as its sessions row stores it."""
    if cipher is None or prompt is None:
        return prompt
    return cipher.seal(prompt, context=f"{session_id}\x1fprompt")


def open_prompt(cipher: JournalCipher | None, prompt: Any, session_id: str) -> Any:
    """A stored prompt for a listing: opened with the cipher, else shown as encrypted."""
    if not isinstance(prompt, str) or not prompt.startswith(_PREFIX):
        return prompt
    if cipher is None:
        return "[encrypted]"
    try:
        return cipher.open(prompt, context=f"{session_id}\x1fprompt")
    except JournalError:
        return "[encrypted: no key opens it]"


def opened_infos(
    cipher: JournalCipher | None, infos: Sequence[SessionInfo]
) -> tuple[SessionInfo, ...]:
    """Session summaries with their prompts opened (or marked encrypted)."""
    return tuple(
        info
        if not isinstance(info.prompt, str) or not info.prompt.startswith(_PREFIX)
        else replace(info, prompt=open_prompt(cipher, info.prompt, info.session_id))
        for info in infos
    )
