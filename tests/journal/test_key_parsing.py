"""A malformed SWARMKIT_JOURNAL_KEYS is refused by the position of the bad entry, never by
its characters: they may be a key."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from swarmkit.cli import main
from swarmkit.exceptions import ConfigurationError
from swarmkit.journal import AESGCMCipher, SQLiteJournal

KEY = base64.b64encode(bytes(range(32))).decode()
OTHER = base64.b64encode(bytes(range(100, 132))).decode()


def _windows(secret: str, width: int = 6) -> set[str]:
    """Every run of ``width`` characters of the secret."""
    return {secret[at : at + width] for at in range(len(secret) - width + 1)}


MALFORMED = [
    pytest.param(KEY, "entry 1 of 1 is not an id, a colon and a key", id="key-without-id"),
    pytest.param(f"{KEY}:k1", "entry 1 of 1 has a key that is not base64", id="id-and-key-swapped"),
    pytest.param(f"{KEY}:abcd", "entry 1 of 1 has a key of 3 bytes, not 32", id="swapped-decodes"),
    pytest.param(f"k1:{KEY[:-3]}", "entry 1 of 1 has a key that is not base64", id="cut-short"),
    pytest.param(f"k1:{KEY[:-8]}==", "entry 1 of 1 has a key of 27 bytes", id="short-key"),
    pytest.param(f"k1:{KEY},{OTHER}", "entry 2 of 2 is not an id, a colon and a key", id="second"),
]


@pytest.mark.parametrize(("value", "message"), MALFORMED)
def test_a_malformed_key_list_names_the_entry_not_its_characters(
    monkeypatch: pytest.MonkeyPatch, value: str, message: str
) -> None:
    """from_env() raises a ConfigurationError saying which entry is wrong and how, and no six
    characters of any key in the variable."""
    monkeypatch.setenv("SWARMKIT_JOURNAL_KEYS", value)

    with pytest.raises(ConfigurationError) as refused:
        AESGCMCipher.from_env()

    assert message in str(refused.value)
    assert not any(window in str(refused.value) for window in _windows(KEY) | _windows(OTHER))


@pytest.mark.parametrize(("value", "message"), MALFORMED)
def test_the_command_refuses_a_malformed_key_list_without_echoing_it(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    value: str,
    message: str,
) -> None:
    """`swarmkit sessions` exits 2 with one line that shows no key material."""
    path = tmp_path / "j.sqlite"
    SQLiteJournal(path).close()
    monkeypatch.setenv("SWARMKIT_JOURNAL_KEYS", value)

    code = main(["sessions", "--journal", str(path)])

    out, err = capsys.readouterr()
    assert code == 2
    assert message in err
    assert not any(window in out + err for window in _windows(KEY) | _windows(OTHER))
