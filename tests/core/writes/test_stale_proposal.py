"""Cleanup proposes archiving an entry only when every one of its citations is missing from the
code: one that moved, holds, or cannot be judged keeps it out; an entry citing nothing is never
proposed."""

from __future__ import annotations

from hypothesis import given, strategies as st

from memd.core.writes.cleanup import every_citation_gone

STATUSES = st.sampled_from(["ok", "moved", "missing", "unverifiable"])


@given(st.lists(STATUSES, max_size=6))
def test_proposed_exactly_when_something_is_cited_and_all_of_it_is_missing(
    statuses: list[str],
) -> None:
    expected = bool(statuses) and set(statuses) == {"missing"}
    assert every_citation_gone(statuses) is expected


def test_examples() -> None:
    assert every_citation_gone(["missing", "missing"])
    assert not every_citation_gone(["missing", "unverifiable"])  # when unsure, keep it
    assert not every_citation_gone(["moved"])  # a fix exists: `memd check --fix`
    assert not every_citation_gone([])
