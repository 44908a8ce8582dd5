"""The fast paths of term splitting (`memd.core.search.terms`) give what the plain rules give.

An index build probes the compound memo inline and splits a slug part by part; whatever the
text, the terms must be exactly those of splitting it the plain way, or a kept index, a search
and an incremental update would disagree.
"""

from __future__ import annotations

from hypothesis import example, given, settings, strategies as st

from memd.core.search import terms
from memd.core.search.terms import split_terms, tokenize
from tests.budget import examples

_slug_text = st.text(alphabet=st.sampled_from("ab-_./9Zé ß0-"), max_size=30) | st.text(max_size=30)


@given(_slug_text)
@example("use-pnpm-not-npm-2")
@example("café-naïve-1041")
@example("snake_case-file.ts--x-")
@example("-")
@settings(max_examples=examples(300), deadline=None)
def test_slug_words_are_the_slug_tokenized_with_spaces(slug: str) -> None:
    assert terms._slug_words(slug) == tokenize(slug.replace("-", " "))


@given(st.text(max_size=60))
@example("sendLmRequest and fs.open, don't Straße café 2023")
@settings(max_examples=examples(300), deadline=None)
def test_split_terms_is_the_same_whether_its_words_were_seen_or_not(text: str) -> None:
    first = split_terms(text)  # computes and keeps the compounds it has not seen
    terms._compound_terms.cache_clear()  # type: ignore[attr-defined]
    fresh = split_terms(text)
    assert first == fresh == split_terms(text)
