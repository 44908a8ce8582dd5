"""What a session was given: bounded, keyed by what an entry says, and a filter that withholds
exactly what was given."""

from __future__ import annotations

from hypothesis import given, strategies as st

from memd.core.format.categories import Category
from memd.core.format.mdformat import Entry
from memd.core.search import given as ledger
from memd.core.search.prompt_block import Placed, SourceChunk, build

DEC, QUI, SEC = Category.DECISION, Category.QUIRK, Category.SECURITY


def entry(line: int, content: str) -> Entry:
    return Entry(line=line, slug=None, content=content)


@given(
    st.lists(
        st.tuples(st.sampled_from("abcdef"), st.lists(st.integers(0, 50))),
        max_size=60,
    )
)
def test_the_ledger_stays_within_its_bounds_and_keeps_the_latest(
    calls: list[tuple[str, list[int]]],
) -> None:
    book = ledger.GivenLedger(max_sessions=3, max_given=4)
    for session, keys in calls:
        book.record("/w", session, keys)
        assert len(book) <= 3
        assert len(book.given("/w", session)) <= 4
        assert set(keys[-4:]) <= book.given("/w", session)  # the latest are never forgotten


def test_a_session_is_its_workspace_and_its_id() -> None:
    book = ledger.GivenLedger()
    book.record("/a", "s", [1])
    assert book.given("/a", "s") == {1}
    assert book.given("/b", "s") == frozenset()
    assert book.given("/a", "t") == frozenset()


def test_the_session_used_longest_ago_is_forgotten_first() -> None:
    book = ledger.GivenLedger(max_sessions=2)
    book.record("/w", "old", [1])
    book.record("/w", "kept", [2])
    book.record("/w", "old", [])  # used again: now the most recent
    book.record("/w", "new", [3])
    assert book.given("/w", "kept") == frozenset()
    assert book.given("/w", "old") == {1}


def test_an_entry_is_known_by_what_it_says_not_its_line() -> None:
    moved = Placed("relevant", DEC, entry(40, "Deploy with Helm."))
    assert ledger.placed_key(moved) == ledger.placed_key(
        Placed("always", DEC, entry(3, "Deploy with Helm."))
    )
    assert ledger.placed_key(moved) != ledger.placed_key(
        Placed("relevant", DEC, entry(40, "Deploy with Helm, per stage."))
    )
    assert ledger.placed_key(moved) != ledger.placed_key(
        Placed("relevant", QUI, entry(40, "Deploy with Helm."))
    )
    user_wide = Placed("always", DEC, entry(40, "Deploy with Helm."), source="global")
    assert ledger.placed_key(moved) != ledger.placed_key(user_wide)


TEXTS = st.sampled_from(["Deploy with Helm.", "Fonts cache a day.", "Never log tokens.", "x"])


@given(
    st.lists(TEXTS, max_size=6),
    st.lists(TEXTS, max_size=6),
    st.lists(TEXTS, max_size=3),
    st.lists(TEXTS, max_size=3),
)
def test_what_was_ranked_and_given_is_withheld_and_layer_a_never(
    first: list[str], second: list[str], chunks: list[str], user_wide: list[str]
) -> None:
    def candidates(texts: list[str]) -> ledger.Candidates:
        return ledger.Candidates(
            always=[(SEC, entry(n, t)) for n, t in enumerate(texts)],
            user_wide=[(SEC, entry(n, t)) for n, t in enumerate(user_wide)],
            relevant=[(DEC, entry(n, t), 1.0) for n, t in enumerate(texts)],
            chunks=[SourceChunk("README.md", 1, 2, t, 1.0) for t in chunks],
        )

    def placed(c: ledger.Candidates) -> tuple[Placed, ...]:
        block = build(c.always, c.relevant, 10_000, sources=c.chunks, user_wide=c.user_wide)
        return block.entries

    book = ledger.GivenLedger()
    book.record("/w", "s", map(ledger.placed_key, placed(candidates(first))))
    offered = candidates(second)
    kept, left_out = ledger.not_given(offered, book.given("/w", "s"))
    again = [p for p in placed(kept) if ledger.placed_key(p) in book.given("/w", "s")]
    assert {p.layer for p in again} <= {"always"}  # only layer A is given again
    assert kept.always == offered.always and kept.user_wide == offered.user_wide
    assert [e.content for _, e, _ in kept.relevant] == [t for t in second if t not in first]
    assert kept.chunks == []  # the same chunks were in the first block
    assert left_out == sum(t in first for t in second) + len(chunks)
