"""The "chat" source's chunks: every turn is searchable, none too long, no secret survives."""

from __future__ import annotations

from hypothesis import given, strategies as st

from memd.core.text.excerpt import excerpt
from memd.core.transcripts.chunks import (
    MASK,
    MAX_CHUNK_CHARS,
    NumberedTurn,
    chunks,
    render,
)

TOKEN = "ghp_" + "Ab1" * 12

roles = st.sampled_from(["user", "assistant"])
texts = st.text(alphabet=st.sampled_from("ab c.\n!?"), min_size=1, max_size=4000)


@given(st.lists(st.tuples(roles, texts), max_size=12))
def test_every_turn_is_in_a_chunk_and_none_is_too_long(pairs: list[tuple[str, str]]) -> None:
    turns = [NumberedTurn(n, role, text, "") for n, (role, text) in enumerate(pairs, 1)]  # type: ignore[arg-type]
    made = list(chunks(turns))
    covered = {n for c in made for n in range(c.first, c.last + 1)}
    assert covered >= {t.number for t in turns if t.text.strip()}
    assert all(0 < len(c.text) <= MAX_CHUNK_CHARS for c in made)
    assert [c.first for c in made] == sorted(c.first for c in made)


def test_a_question_and_its_short_answer_are_one_chunk_and_a_long_answer_is_cut() -> None:
    turns = [
        NumberedTurn(1, "user", "Why did the auth test fail?", "2026-11-01T10:00:00Z"),
        NumberedTurn(2, "assistant", "The clock skew check.", "2026-11-01T10:00:05Z"),
        NumberedTurn(3, "user", "And the cache?", "2026-11-01T10:01:00Z"),
        NumberedTurn(4, "assistant", "It was stale. " * 1000, "2026-11-01T10:01:30Z"),
    ]
    made = list(chunks(turns))
    assert made[0][:2] == (1, 2) and made[0].timestamp == "2026-11-01T10:00:00Z"
    assert made[0].text == "user: Why did the auth test fail?\nassistant: The clock skew check."
    assert made[1][:2] == (3, 3) and made[1].text == "user: And the cache?"
    assert len(made) > 3 and all(c[:2] == (4, 4) for c in made[2:])


def test_a_secret_value_is_masked_in_chunks_and_in_what_get_shows() -> None:
    turns = [NumberedTurn(1, "user", f"use the token {TOKEN} for the deploy", "")]
    made = list(chunks(turns))
    assert TOKEN not in made[0].text and MASK in made[0].text
    assert TOKEN not in render(turns) and "user (turn 1):" in render(turns)


def test_a_secret_cut_across_a_long_turn_is_still_masked() -> None:
    text = "word " * (MAX_CHUNK_CHARS // 5 - 10) + TOKEN + " tail " * 300
    made = list(chunks([NumberedTurn(1, "assistant", text, "")]))
    assert not any("ghp_" in c.text for c in made)


def test_a_question_is_found_with_the_answer_after_the_agents_first_look() -> None:
    turns = [
        NumberedTurn(1, "user", "The nightly importer drops rows again.", ""),
        NumberedTurn(2, "assistant", "I'll look at the importer first.", ""),
        NumberedTurn(3, "assistant", "Found it: thousands separators break the parser.", ""),
        NumberedTurn(4, "user", "Fix it then.", ""),
    ]
    made = list(chunks(turns))
    assert [c[:2] for c in made] == [(1, 3), (4, 4)]
    assert "thousands separators" in made[0].text and made[0].text.startswith("user: ")


@given(st.lists(st.tuples(roles, texts), max_size=10), st.integers(min_value=0, max_value=10))
def test_chunking_again_from_the_last_chunk_after_an_append_gives_the_whole_files(
    pairs: list[tuple[str, str]], cut: int
) -> None:
    turns = [NumberedTurn(n, role, text, "") for n, (role, text) in enumerate(pairs, 1)]  # type: ignore[arg-type]
    before = list(chunks(turns[:cut]))
    first = before[-1].first if before else 1
    kept = [c for c in before if c.first < first]
    assert kept + list(chunks(turns[first - 1 :])) == list(chunks(turns))


def test_an_excerpt_is_one_line_within_its_limit_and_says_it_was_cut() -> None:
    text = "user: Why is the build slow?\nassistant: " + "Because the cache is cold. " * 50
    short = excerpt(text, 120)
    assert "\n" not in short and len(short) <= 120 and short.endswith("…")
    assert short.startswith("user: Why is the build slow? / assistant: Because")
    assert excerpt("user: hi\nassistant: hello", 120) == "user: hi / assistant: hello"
