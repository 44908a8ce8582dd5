"""A proposal whose text a person rejected in review: the same words are known again (case,
spacing and final punctuation aside), a merely similar text is not."""

from __future__ import annotations

import string

from hypothesis import given, strategies as st

from memd.core.review.proposals import REJECTED, rejected_before, same_text_key


@given(
    st.text(string.ascii_letters + string.digits + " .,-", max_size=60),
    st.sampled_from(["", ".", "!", " .", "…", "?!"]),
)
def test_case_spacing_and_final_punctuation_do_not_make_a_text_new(text: str, end: str) -> None:
    spaced = "  ".join(text.upper().split()) + end
    assert same_text_key(spaced) == same_text_key(" ".join(text.split()))


def test_only_rejected_texts_are_remembered_with_their_newest_date() -> None:
    records = [
        ("2026-11-01", f"{REJECTED} (extract: correction): wrong", "Never use yarn."),
        ("2026-11-02", "deleted", "Use pnpm."),
        ("2026-11-03", f"{REJECTED} (extract): again", "never use yarn"),
    ]
    assert rejected_before(records) == {same_text_key("Never use yarn"): "2026-11-03"}
    assert same_text_key("Never use yarn in CI.") not in rejected_before(records)
