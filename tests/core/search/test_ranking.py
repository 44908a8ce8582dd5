"""BM25 ranking: relevance sanity, tokenising, ties, limits, the empty query, min_score."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings, strategies as st

from memd.core.format.categories import CATEGORIES, Category
from memd.core.format.mdformat import Entry
from memd.core.search.ranking import (
    B_SPREAD,
    SPREAD_HIGH,
    SPREAD_LOW,
    B,
    Hit,
    SearchIndex,
    SearchResult,
    build_index,
    length_normalisation,
    length_spread,
    search,
    tokenize,
)
from tests.budget import examples

RULES = (
    "Take the lock before writing the file",
    "Use tabs for indentation in Makefiles",
    "Never commit secrets or API keys to the repository",
    "Run the test suite with pytest before pushing",
    "Prefer anyio over asyncio for async code",
    "Dates in the UI are shown in the user's time zone",
    "Call fs.open with an explicit encoding",
    "The CI cache is keyed by the lockfile hash",
)


def _entries(contents: tuple[str, ...] | list[str], *, first_line: int = 5) -> list[Entry]:
    return [
        Entry(line=first_line + 2 * number, slug=None, content=content)
        for number, content in enumerate(contents)
    ]


def _one(contents: tuple[str, ...] | list[str]) -> list[tuple[Category, SearchIndex]]:
    return [(Category.INSTRUCTION, build_index(_entries(contents)))]


def _top(query: str, contents: tuple[str, ...] = RULES) -> str:
    result = search(_one(contents), query, limit=3)
    assert result.hits, f"no hit for {query!r}"
    return result.hits[0].entry.content


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("write lock", "Take the lock before writing the file"),
        ("locking files when we write", "Take the lock before writing the file"),
        ("tabs or spaces?", "Use tabs for indentation in Makefiles"),
        ("secret", "Never commit secrets or API keys to the repository"),
        ("how do I run tests", "Run the test suite with pytest before pushing"),
        ("asyncio", "Prefer anyio over asyncio for async code"),
        ("timezone of dates", "Dates in the UI are shown in the user's time zone"),
        ("fs.open", "Call fs.open with an explicit encoding"),
        ("open file encoding", "Call fs.open with an explicit encoding"),
        ("lockfile", "The CI cache is keyed by the lockfile hash"),
    ],
)
def test_the_obviously_relevant_entry_ranks_first(query: str, expected: str) -> None:
    assert _top(query) == expected


def test_stemming_matches_other_inflections() -> None:
    contents = ("Writing the file needs the lock", "Reading is free")
    assert _top("writes", contents) == "Writing the file needs the lock"
    assert _top("written files", contents) == "Writing the file needs the lock"


def test_tokenize_splits_lowercases_drops_stop_words_and_stems() -> None:
    assert tokenize("Call fs.open() on a UTF-8 file") == ["call", "fs", "open", "utf", "8", "file"]
    assert tokenize("never-ever: don't") == ["ever"]
    assert tokenize("Café naïve résumé") == ["cafe", "naiv", "resum"]
    assert tokenize("the and of , . !") == []


def test_slug_words_are_indexed() -> None:
    entries = [
        Entry(line=3, slug="tabs-in-makefiles", content="Indent recipes with a real tab."),
        Entry(line=5, slug="quoting", content="Quote every shell variable."),
    ]
    result = search([(Category.QUIRK, build_index(entries))], "makefile", limit=5)
    assert [hit.entry.line for hit in result.hits] == [3]


def test_content_outweighs_the_slug() -> None:
    entries = [
        Entry(line=3, slug="deploy-cache", content="Clear the build directory first."),
        Entry(line=5, slug="builds", content="Clear the deploy cache after a release."),
    ]
    result = search([(Category.DECISION, build_index(entries))], "deploy cache", limit=5)
    assert [hit.entry.line for hit in result.hits] == [5, 3]


def test_no_matching_term_means_no_hits() -> None:
    result = search(_one(RULES), "kubernetes", limit=10)
    assert result == SearchResult(hits=(), total=0)


def test_total_counts_every_match_before_the_limit() -> None:
    contents = [f"Rule {n} about the lock" for n in range(7)] + ["Unrelated entry"]
    result = search(_one(contents), "lock", limit=3)
    assert len(result.hits) == 3
    assert result.total == 7


def test_min_score_filters_hits_and_total() -> None:
    indexes = _one(RULES)
    everything = search(indexes, "lock file cache hash", limit=50)
    assert len(everything.hits) >= 2
    cut = everything.hits[0].score
    filtered = search(indexes, "lock file cache hash", limit=50, min_score=cut)
    assert filtered.hits == tuple(hit for hit in everything.hits if hit.score >= cut)
    assert filtered.total == len(filtered.hits) < everything.total
    assert search(indexes, "lock", limit=50, min_score=1e9) == SearchResult(hits=(), total=0)


def test_duplicate_query_words_do_not_count_twice() -> None:
    indexes = _one(RULES)
    assert search(indexes, "lock lock LOCK locks", limit=5) == search(indexes, "lock", limit=5)


def test_scores_are_rounded_to_four_decimals() -> None:
    for hit in search(_one(RULES), "lock file cache hash", limit=10).hits:
        assert hit.score > 0
        assert hit.score == round(hit.score, 4)


def test_identical_entries_rank_by_category_priority_then_category_and_line() -> None:
    same = "Rotate the signing key every quarter"
    indexes = [
        (category, build_index(_entries(["Something else", same, same], first_line=1)))
        for category in reversed(CATEGORIES)
    ]
    hits = search(indexes, "signing key", limit=20).hits
    others = [c for c in CATEGORIES if c not in (Category.SECURITY, Category.INSTRUCTION)]
    order = [Category.SECURITY, Category.INSTRUCTION, *others]
    assert [(hit.key, hit.entry.line) for hit in hits] == [
        (category, line) for category in order for line in (3, 5)
    ]
    assert len({hit.score for hit in hits if hit.key in others}) == 1


def test_statistics_cover_exactly_the_indexes_searched() -> None:
    instructions = build_index(_entries(["Lock the file", "Lock the door", "Lock the gate"]))
    security = build_index(_entries(["Lock the vault", "Audit the logs"]))
    alone = search([(Category.SECURITY, security)], "lock", limit=5)
    search([(Category.INSTRUCTION, instructions), (Category.SECURITY, security)], "lock", limit=5)
    assert [hit.key for hit in alone.hits] == [Category.SECURITY]
    audit = "audit lock"  # "Audit the logs" matches half of it
    audit_alone = search([(Category.SECURITY, security)], audit, limit=5).hits
    audit_together = search(
        [(Category.INSTRUCTION, instructions), (Category.SECURITY, security)], audit, limit=5
    ).hits
    alone_score = next(hit.score for hit in audit_alone if hit.entry.content == "Audit the logs")
    together_score = next(
        hit.score for hit in audit_together if hit.entry.content == "Audit the logs"
    )
    assert together_score > alone_score  # "lock" is commoner in the larger corpus, so weighs less


@pytest.mark.parametrize("query", ["", "   ", "?!.,", "the and of it", "not never"])
def test_a_query_without_terms_lists_every_entry_in_order(query: str) -> None:
    shuffled = _entries(["b one", "b two"])
    indexes = [
        (Category.SECURITY, build_index(list(reversed(shuffled)))),
        (Category.INSTRUCTION, build_index(_entries(["a one", "a two", "a three"]))),
    ]
    result = search(indexes, query, limit=4, min_score=99.0)
    assert result.total == 5
    assert [(hit.key, hit.entry.content, hit.score) for hit in result.hits] == [
        (Category.INSTRUCTION, "a one", 0.0),
        (Category.INSTRUCTION, "a two", 0.0),
        (Category.INSTRUCTION, "a three", 0.0),
        (Category.SECURITY, "b one", 0.0),
    ]


def test_empty_indexes_are_fine() -> None:
    empty = [(Category.QUIRK, build_index([]))]
    assert search(empty, "lock", limit=3) == SearchResult(hits=(), total=0)
    assert search(empty, "", limit=3) == SearchResult(hits=(), total=0)


def test_build_index_does_not_depend_on_entry_order() -> None:
    entries = _entries(RULES)
    shuffled = list(entries)
    random.Random(7).shuffle(shuffled)
    for query in ("lock file", "cache hash", "secret keys"):
        assert search(_one_index(entries), query, limit=10) == search(
            _one_index(shuffled), query, limit=10
        )


def _one_index(entries: list[Entry]) -> list[tuple[Category, SearchIndex]]:
    return [(Category.PREFERENCE, build_index(entries))]


_WORDS = ("lock", "file", "write", "cache", "key", "test", "run", "the", "of", "deploy")
_contents = st.lists(st.sampled_from(_WORDS), min_size=1, max_size=8).map(" ".join)
_category_entries = st.lists(_contents, max_size=12).map(_entries)
_workspaces = st.dictionaries(st.sampled_from(CATEGORIES), _category_entries, max_size=5)
_queries = st.lists(st.sampled_from(_WORDS), max_size=4).map(" ".join)


def _indexes(workspace: dict[Category, list[Entry]]) -> list[tuple[Category, SearchIndex]]:
    return [(category, build_index(entries)) for category, entries in workspace.items()]


@settings(max_examples=examples(200), deadline=None)
@given(_workspaces, _queries, st.integers(min_value=1, max_value=15))
def test_a_smaller_limit_returns_a_prefix(
    workspace: dict[Category, list[Entry]], query: str, limit: int
) -> None:
    indexes = _indexes(workspace)
    small = search(indexes, query, limit=limit)
    big = search(indexes, query, limit=1000)
    assert small.hits == big.hits[:limit]
    assert small.total == big.total == len(big.hits)


@settings(max_examples=examples(200), deadline=None)
@given(_workspaces, _queries, st.randoms(use_true_random=False))
def test_results_do_not_depend_on_category_order(
    workspace: dict[Category, list[Entry]], query: str, rng: random.Random
) -> None:
    indexes = _indexes(workspace)
    shuffled = list(indexes)
    rng.shuffle(shuffled)
    assert search(indexes, query, limit=10) == search(shuffled, query, limit=10)


@settings(max_examples=examples(200), deadline=None)
@given(_workspaces, _queries)
def test_hits_are_sorted_and_positive(workspace: dict[Category, list[Entry]], query: str) -> None:
    hits = search(_indexes(workspace), query, limit=1000).hits
    order = {category: position for position, category in enumerate(CATEGORIES)}
    keys = [(-hit.score, order[hit.key], hit.entry.line) for hit in hits]
    assert keys == sorted(keys)
    assert len(set(keys)) == len(keys)
    if tokenize(query):
        assert all(hit.score > 0 for hit in hits)
    else:
        assert all(hit == Hit(key=hit.key, entry=hit.entry, score=0.0) for hit in hits)


CODE = (
    "Call sendLmRequest only from the worker thread",
    "Send the request body as UTF-8",
    "Column names use snake_case in every migration",
    "The kebab-case slug is derived from the content",
    "Types for the UI live in src/file.ts",
    "Deployments go through the staging cluster first",
)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("sendLmRequest", "Call sendLmRequest only from the worker thread"),
        ("send_lm_request", "Call sendLmRequest only from the worker thread"),
        ("snake_case", "Column names use snake_case in every migration"),
        ("kebab-case", "The kebab-case slug is derived from the content"),
        ("file.ts", "Types for the UI live in src/file.ts"),
    ],
)
def test_identifiers_match_as_a_whole(query: str, expected: str) -> None:
    assert search(_one(CODE), query, limit=3).hits[0].entry.content == expected


def test_identifier_parts_match_their_words() -> None:
    contents = {hit.entry.content for hit in search(_one(CODE), "snake", limit=10).hits}
    assert "Column names use snake_case in every migration" in contents
    found = [hit.entry.content for hit in search(_one(CODE), "lm request", limit=10).hits]
    assert found[0] == "Call sendLmRequest only from the worker thread"


PRODUCTS = (
    "Deploys run on GitHub Actions with a cache per branch",
    "Set the session cookie HttpOnly and Secure",
    "Our queue is RabbitMQ behind the load balancer",
    "Serve the assets through CloudFront",
    "Write a follow-up note after each incident",
    "Review code on gitlab before merging",
)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("github", PRODUCTS[0]),
        ("github actions", PRODUCTS[0]),
        ("httponly", PRODUCTS[1]),
        ("rabbitmq", PRODUCTS[2]),
        ("cloudfront", PRODUCTS[3]),
        ("followup", PRODUCTS[4]),
        ("GitLab", PRODUCTS[5]),  # the reverse: an identifier finds the word written whole
        ("Follow-Up", PRODUCTS[4]),
    ],
)
def test_a_word_matches_its_identifier_spelling_and_the_reverse(query: str, expected: str) -> None:
    hits = search(_one(PRODUCTS), query, limit=3).hits
    assert hits and hits[0].entry.content == expected


_WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=3, max_size=8)


@settings(max_examples=examples(200), deadline=None)
@given(parts=st.lists(_WORD, min_size=2, max_size=3), lower_in_entry=st.booleans())
def test_a_camel_case_identifier_and_its_lower_case_joined_form_find_each_other(
    parts: list[str], lower_in_entry: bool
) -> None:
    camel = "".join(part.capitalize() for part in parts)
    joined = camel.lower()
    written, asked = (joined, camel) if lower_in_entry else (camel, joined)
    entries = (f"Deploy the service with {written} tonight", "Unrelated rule about tabs")
    hits = search(_one(entries), asked, limit=3).hits
    assert [hit.entry.content for hit in hits][:1] == [entries[0]]


def test_the_other_spelling_is_no_partial_match() -> None:
    """A query matched through its other spelling scores like a match of its own words, not
    like a query whose word was found nowhere."""
    entries = ("Deploys run on GitHub Actions", "Review code on github before merging")
    hits = search(_one(entries), "github", limit=3).hits
    by_word = {hit.entry.content: hit.score for hit in hits}
    assert by_word[entries[0]] > 0.5 * by_word[entries[1]]


def test_a_partial_word_matches_by_prefix_below_a_whole_word() -> None:
    partial = search(_one(CODE), "deplo", limit=5).hits
    assert [hit.entry.content for hit in partial] == [
        "Deployments go through the staging cluster first"
    ]
    whole = search(_one(CODE), "deployments", limit=5).hits
    assert partial[0].score < whole[0].score
    assert search(_one(CODE), "de", limit=5).hits == ()  # too short to expand


def test_scores_are_between_0_and_1_and_a_full_match_scores_highest() -> None:
    full = search(_one(RULES), "take the lock before writing the file", limit=10).hits
    assert [hit.entry.content for hit in full] == ["Take the lock before writing the file"]
    assert 0.5 < full[0].score <= 1
    partial = search(_one(RULES), "lock file cache", limit=10).hits
    assert [hit.entry.content for hit in partial][:2] == [
        "Take the lock before writing the file",
        "The CI cache is keyed by the lockfile hash",
    ]
    assert full[0].score > partial[0].score > partial[1].score > 0


def test_security_and_instruction_rank_above_an_equal_match() -> None:
    same = "Rotate the signing key every quarter"
    indexes = [(c, build_index(_entries([same]))) for c in CATEGORIES]
    ranked = [hit.key for hit in search(indexes, "signing key", limit=5).hits]
    assert ranked[:2] == [Category.SECURITY, Category.INSTRUCTION]


@given(query=st.text(max_size=40))
@settings(max_examples=examples(200))
def test_scores_stay_in_0_to_1(query: str) -> None:
    for hit in search(_one(RULES + CODE), query, limit=20).hits:
        assert 0.0 <= hit.score <= 1.0


def test_an_index_built_from_the_previous_one_tokenises_only_what_changed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from memd.core.search import index as indexing
    from memd.core.search.terms import EntryTerms, entry_terms

    first = build_index(_entries(RULES))
    changed = [*_entries(RULES[:-1]), Entry(line=99, slug="new", content="A brand new rule")]
    calls: list[str] = []
    original = entry_terms

    def counting(entry: Entry) -> EntryTerms:
        calls.append(entry.content)
        return original(entry)

    monkeypatch.setattr(indexing, "entry_terms", counting)
    incremental = build_index(changed, first)
    assert calls == [RULES[-1], "A brand new rule"]  # the removed entry's terms, the new one's
    fresh = build_index(changed)
    for query in ("lock file", "brand new", "secrets", "deplo"):
        assert search([(Category.DECISION, incremental)], query, limit=5) == search(
            [(Category.DECISION, fresh)], query, limit=5
        )


def test_words_with_non_ascii_letters_are_not_split_at_case_changes() -> None:
    indexes = _one(["Meet at the Straße corner", "Søren owns the release"])
    assert [hit.entry.line for hit in search(indexes, "straße", limit=5).hits] == [5]
    assert [hit.entry.line for hit in search(indexes, "søren", limit=5).hits] == [7]


def test_a_filter_applies_to_a_query_of_stop_words_too() -> None:
    def first_only(category: Category, entry: Entry) -> bool:
        return entry.line == 5

    listed = search(_one(RULES), "the and of", limit=10, keep=first_only)
    assert [hit.entry.line for hit in listed.hits] == [5]
    assert listed.total == 1


def test_length_normalisation_follows_how_much_entry_lengths_spread() -> None:
    assert length_normalisation(0.0) == length_normalisation(SPREAD_LOW) == B
    assert length_normalisation(SPREAD_HIGH) == length_normalisation(9.0) == B_SPREAD
    middle = length_normalisation((SPREAD_LOW + SPREAD_HIGH) / 2)
    assert middle == pytest.approx((B + B_SPREAD) / 2)
    # Notes of alike lengths (the rules above) keep the weak normalisation.
    assert length_spread([build_index(_entries(RULES)).length_moments()]) < SPREAD_LOW


def test_length_spread_is_taken_over_every_index_searched() -> None:
    alike = build_index(_entries(["lock the file", "write the cache", "run the tests"]))
    assert length_spread([alike.length_moments()]) == 0.0
    assert length_spread([build_index([]).length_moments()]) == 0.0
    long = build_index(_entries([" ".join(f"w{n}" for n in range(53))]))  # 53 terms, alike 2
    together = length_spread([alike.length_moments(), long.length_moments()])
    logs = [math.log(3)] * 3 + [math.log(54)]
    mean = sum(logs) / 4
    assert together == pytest.approx(math.sqrt(sum((v - mean) ** 2 for v in logs) / 4))


def _passing(words: str, number: int) -> str:
    """A long entry (about 150 words) that mentions `words` in passing, twice."""
    filler = [f"w{number}x{n}" for n in range(150)]
    filler[40:40] = words.split()
    filler[110:110] = words.split()
    return " ".join(filler)


def test_a_short_entry_beats_long_ones_mentioning_its_words_in_passing() -> None:
    short = [f"Note {n}: the build takes {n} minutes on the old runner" for n in range(12)]
    answer = "I booked the trip to Paris for May"
    long = [_passing("Paris trip Paris", n) for n in range(12)]
    index = build_index(_entries([*short, answer, *long]))
    assert length_spread([index.length_moments()]) >= SPREAD_HIGH
    hits = search([(Category.DECISION, index)], "When is my trip to Paris?", limit=3).hits
    assert hits[0].entry.content == answer
