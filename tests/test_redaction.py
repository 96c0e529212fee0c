"""Redaction by whole words of a key: secrets hidden in journals, usage figures kept."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from swarmkit import Agent, ConfigurationError, Handoff, Swarm, edit, redaction, tool
from swarmkit.journal import InMemoryJournal, export_jsonl
from swarmkit.redaction import DEFAULT_SECRET_PATTERNS, REDACTED, Redactor, key_words
from swarmkit.testing import ScriptedModel, text, tool_call, transfer

SECRET = [
    "api_token",
    "accessToken",
    "X-Api-Key",
    "db_password",
    "Authorization",
    "passwd",
    "session.cookie",
    "aws-credentials",
    "client_secret",
    "APIKey",
]
PLAIN = [
    "prompt_tokens",
    "max_tokens",
    "monkey",
    "keyboard",
    "author",
    "tokens",
    "order",
    "secretary",
    "keys",
]


ONE_WORD_SECRETS = [
    "apikey",
    "APIKEY",
    "x-apikey",
    "Apikey",
    "accesstoken",
    "authtoken",
    "secretkey",
    "privatekey",
    "refreshtoken",
    "clientsecret",
    "passphrase",
    "passwd",
]
"""Secret names written as one word: each is a word of the documented list."""

ONE_WORD_PLAIN = ["myapikey", "apikeys", "tokenizer", "passkeyboard", "keynote", "bookkeeper"]
"""One-word keys that only contain a secret word: not secret."""


@pytest.mark.parametrize("key", ONE_WORD_SECRETS)
def test_one_word_secret_names_are_secret(key: str) -> None:
    """apikey, accesstoken, authtoken, secretkey ... count as whole words of their own."""
    assert Redactor().is_secret(key)


@pytest.mark.parametrize("key", ONE_WORD_PLAIN)
def test_a_one_word_key_that_only_contains_a_secret_word_is_not(key: str) -> None:
    """Only the listed one-word names count; a longer word around them does not."""
    assert not Redactor().is_secret(key)


async def test_a_journal_hides_one_word_secret_keys_in_tool_arguments() -> None:
    """A tool called with apikey and accesstoken is journaled with both redacted."""

    @tool
    def fetch(url: str, apikey: str, accesstoken: str) -> str:
        """Fetch a URL."""
        return "ok"

    journal = InMemoryJournal()
    model = ScriptedModel(
        tool_call("fetch", url="u-1", apikey="sk-1", accesstoken="at-2"), text("done")
    )
    swarm = Swarm([Agent(name="a", tools=[fetch])], "a", model=model, journal=journal)
    result = await swarm.run("go")
    records = await journal.read(result.session_id)

    tool_record = next(r for r in records if r.kind == "tool_call")
    arguments = json.loads(tool_record.data["arguments"])
    assert arguments == {"url": "u-1", "apikey": REDACTED, "accesstoken": REDACTED}


def test_the_journal_guide_lists_every_default_secret_word() -> None:
    """The guide names each default word, one-word names included, and no other."""
    guide = (Path(__file__).parents[1] / "docs" / "guides" / "journal.md").read_text()
    listed = guide.split("it is secret when one of its words is", 1)[1].split("So `", 1)[0]

    assert set(re.findall(r"`(\w+)`", listed)) == set(DEFAULT_SECRET_PATTERNS)


@pytest.mark.parametrize("key", SECRET)
def test_keys_with_a_secret_word_are_secret(key: str) -> None:
    """Each of these holds a default pattern as a whole word."""
    assert Redactor().is_secret(key)


@pytest.mark.parametrize("key", PLAIN)
def test_keys_that_only_contain_the_letters_are_not(key: str) -> None:
    """A pattern inside a longer word does not count."""
    assert not Redactor().is_secret(key)


def test_keys_split_at_separators_and_camel_case() -> None:
    """Words come from _ - . and case changes."""
    assert key_words("X-Api-Key") == ("x", "api", "key")
    assert key_words("accessTokenV2") == ("access", "token", "v2")
    assert key_words("HTTPHeader") == ("http", "header")


def test_values_are_hidden_at_any_depth_and_patterns_are_configurable() -> None:
    """Nested dicts and lists; a multi-word pattern matches those words in a row."""
    redactor = Redactor.of(["pin", "account number"])
    data = {"user": {"pin": 1234, "accountNumber": "X", "account": "ok"}, "l": [{"PIN": 1}]}
    assert redactor.value(data) == {
        "user": {"pin": REDACTED, "accountNumber": REDACTED, "account": "ok"},
        "l": [{"PIN": REDACTED}],
    }


@pytest.mark.parametrize("bad", ["password", None, 42, ["ok", ""], [3]])
def test_redact_keys_must_be_a_collection_of_words(bad: Any) -> None:
    """A single string is not taken as the set of its letters."""
    with pytest.raises(ConfigurationError, match="redact_keys"):
        Swarm([Agent(name="a")], "a", model=ScriptedModel(), redact_keys=bad)


async def test_a_journal_never_holds_secrets_of_tool_arguments() -> None:
    """The tool call's arguments are redacted; context and usage counts are not.

    (The model's own answer is journaled verbatim, so that replay can serve it back.)"""

    @tool
    def login(user: str, api_key: str) -> str:
        """Log in."""
        return f"hello {user}"

    journal = InMemoryJournal()
    swarm = Swarm(
        [Agent(name="a", tools=[login])],
        "a",
        model=ScriptedModel(tool_call("login", user="ann", api_key="sk-9"), text("done")),
        journal=journal,
    )
    result = await swarm.run("go", context={"tier": "gold"})
    records = await journal.read(result.session_id)
    exported = export_jsonl(records)
    tool_record = next(r for r in records if r.kind == "tool_call")
    assert "sk-9" not in json.dumps(dict(tool_record.data))
    # Nor the second call's request summary, whose latest turns quote the first call.
    summary = [r for r in records if r.kind == "model_call"][-1].data["request"]
    assert any("login(" in line for line in summary["latest"])
    assert "sk-9" not in exported
    assert "gold" in exported
    assert "prompt_tokens" in exported


def test_json_text_finds_secret_keys_written_with_escapes_or_in_any_case() -> None:
    """Tool arguments are scanned cheaply first; escaped, upper-case and nested keys still hide."""
    rules = Redactor()

    assert json.loads(rules.json_text('{"\\u0074oken": "t1", "q": 1}')) == {
        "token": "[redacted]",
        "q": 1,
    }
    assert json.loads(rules.json_text('{"API_KEY": "k1"}')) == {"API_KEY": "[redacted]"}
    nested = json.loads(rules.json_text('{"call": "{\\"password\\": \\"p\\"}"}'))
    assert json.loads(nested["call"]) == {"password": "[redacted]"}
    plain = '{"invoice_id":  "A-1", "monkey": 2}'
    assert rules.json_text(plain) is plain


class _Refund(BaseModel):
    """A refund billing makes with the card token."""

    order_id: str
    card_token: str


async def test_an_edited_and_approved_payload_is_redacted_in_the_journal() -> None:
    """A payload a person edits goes through the same redaction as every other record."""
    journal = InMemoryJournal()
    billing = Agent(name="billing")
    triage = Agent(name="triage", handoffs=[Handoff(agent=billing, input_type=_Refund)])
    model = ScriptedModel(transfer("billing", order_id="A-1", card_token="tok-1"), text("done"))
    swarm = Swarm(
        [triage, billing], "triage", model=model, journal=journal, interrupt_before=["billing"]
    )
    paused = await swarm.run("refund", session_id="s")
    assert paused.stop_reason == "interrupted"

    edited = edit(payload={"order_id": "A-1", "card_token": "tok-EDITED-by-a-person"})
    result = await swarm.resume("s", decision=edited)

    exported = export_jsonl(await journal.read("s"))
    assert result.final_output == "done"
    assert "tok-EDITED-by-a-person" not in exported
    assert '"order_id": "A-1"' in exported or '"order_id":"A-1"' in exported


async def test_a_refused_secret_argument_is_not_quoted_back_anywhere() -> None:
    """An argument problem names the field but never quotes a secret field's value: not in
    the tool's result the model and the events see, not in the journal, not in the request
    summary of the next model call. Other refused values are still quoted, to be fixed."""

    @tool
    def pay(amount: int, card: dict[str, int]) -> str:
        """Pay."""
        return "paid"

    journal = InMemoryJournal()
    model = ScriptedModel(
        tool_call("pay", amount="ten", card={"password": "PW-9", "cvc": "x"}), text("done")
    )
    swarm = Swarm([Agent(name="a", tools=[pay])], "a", model=model, journal=journal)
    result = await swarm.run("go")
    told = str(model.requests[-1].messages[-1].content)
    assert (
        'amount: Input should be a valid integer, unable to parse string as an integer (got "ten")'
        in told
    )
    assert (
        "card.password: Input should be a valid integer, unable to parse string as an integer "
        f"(got {REDACTED})" in told
    )
    assert '(got "x")' in told
    assert "PW-9" not in export_jsonl(await journal.read(result.session_id)).replace(
        '"password": "PW-9"', ""
    )


async def test_a_swarms_own_secret_words_hide_refused_values_in_its_journal() -> None:
    """``redact_keys`` reaches values the argument problem quoted before the swarm's words
    applied: the journal keeps the problem with ``[redacted]`` for the swarm's secret field."""

    @tool
    def verify(ssn: int, name: str) -> str:
        """Verify a person."""
        return "ok"

    journal = InMemoryJournal()
    model = ScriptedModel(tool_call("verify", ssn="123-45-6789", name="ann"), text("done"))
    swarm = Swarm(
        [Agent(name="a", tools=[verify])], "a", model=model, journal=journal, redact_keys=["ssn"]
    )
    result = await swarm.run("go")
    assert '(got "123-45-6789")' in str(model.requests[-1].messages[-1].content)
    exported = export_jsonl(await journal.read(result.session_id))
    assert "123-45-6789" not in exported
    assert (
        "ssn: Input should be a valid integer, unable to parse string as an integer "
        f"(got {REDACTED})" in exported
    )


def test_in_text_hides_only_the_values_quoted_for_secret_fields() -> None:
    """Field paths with indices and several problems in a row; a message that merely
    mentions a secret word keeps its quoted value."""
    redactor = Redactor.of(["token"])
    text_ = (
        "Error: invalid arguments for tool 't': items[0].token: Input should be a valid "
        "string (got 5); items[1].name: Input should be a valid string (got 6); note: a token "
        'is missing (got "kept"). Expected a JSON object with fields: items (array).'
    )
    shown = redactor.in_text(text_)
    assert f"items[0].token: Input should be a valid string (got {REDACTED})" in shown
    assert "items[1].name: Input should be a valid string (got 6)" in shown
    assert '(got "kept")' in shown


@pytest.mark.parametrize(
    "patterns",
    [
        DEFAULT_SECRET_PATTERNS,
        ["api key", "key", "monkey business"],
        ["keyring", "ring", "token"],
    ],
)
def test_the_cheap_scan_says_clean_only_when_no_pattern_word_appears(patterns: Any) -> None:
    """Text naming any word of any pattern (a long word holding a short one among them) may
    hold a secret; asked twice, the remembered answer is the same."""
    redactor = Redactor.of(patterns)
    words = {word for pattern in redactor.patterns for word in pattern}
    for word in words:
        for text_ in (f'{{"my_{word}": 1}}', f"say {word.upper()} twice", word):
            assert redactor.may_hold_secret(text_)
            assert redactor.may_hold_secret(text_)
    plain = '{"invoice_id": "A-1", "amount": 12}'
    assert not redactor.may_hold_secret(plain)
    assert not redactor.may_hold_secret(plain)
    assert redactor.in_text({"latest": [plain], "messages": 3}) == {
        "latest": [plain],
        "messages": 3,
    }


def test_a_redactor_remembers_a_bounded_number_of_answers() -> None:
    """A run makes new text at every turn: what the redactor remembers of it stays bounded,
    and a text longer than the limit is scanned again each time rather than kept."""
    redactor = Redactor()
    for turn in range(3 * redaction._MEMO_SIZE):
        assert not redactor.may_hold_secret(f"turn {turn}: invoice A-{turn} paid")
        assert not redactor.is_secret(f"field_{turn}")
    assert len(redactor._clean) <= redaction._MEMO_SIZE
    assert len(redactor._secret_keys) <= redaction._MEMO_SIZE
    long_text = "paid " * redaction._CLEAN_TEXT_LIMIT
    assert not redactor.may_hold_secret(long_text)
    assert long_text not in redactor._clean
    assert redactor.is_secret("api_key") and redactor.is_secret("api_key")
