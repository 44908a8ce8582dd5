"""Tests for memd.core.writes.cleanup: HackLM scoring, and memd's merge, prune and slug policy.

Example contents use words that stay distinct under any stemmer, so the similarities the tests
rely on hold whether `memd.core.text.stemmer` is the identity or Porter2.
"""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from memd.core.format.archive import ArchivedEntry
from memd.core.format.categories import Category, category_for_file
from memd.core.format.mdformat import Document, Entry, entries, parse, parse_entry_line, render
from memd.core.writes.cleanup import (
    CleanupPlan,
    Merge,
    Prune,
    SlugAssignment,
    apply_cleanup,
    plan_cleanup,
    score_entry,
)
from memd.core.writes.dedup_index import close
from memd.core.writes.judge import Relation, Verdict, judge
from memd.core.writes.wording import index_terms
from tests.budget import examples

HACKLM_MEMORY = Path(__file__).resolve().parents[3].parent / "shared/data/hacklm-memory/.memory"


def cleanup(
    text: str, category: Category = Category.DECISION, *, limit: int = 40
) -> tuple[CleanupPlan, str, tuple[ArchivedEntry, ...]]:
    """Plan and apply a cleanup of `text`; return the plan, the new text and the archive."""
    doc = parse(text)
    plan = plan_cleanup(category, doc, limit=limit)
    new_doc, archived = apply_cleanup(doc, plan)
    return plan, render(new_doc), archived


def non_entry_lines(doc: Document) -> list[str]:
    """Return the text of every non-blank line that is not an entry, in order."""
    return [
        line.text for line in doc.lines if line.text.strip() and parse_entry_line(line.text) is None
    ]


# ---- score_entry (hacklm-spec.md §4.4) ------------------------------------------------------


@pytest.mark.parametrize(
    ("category", "content", "expected"),
    [
        # weight + brevity(len <= 50: 15) + specificity
        (Category.DECISION, "", 15 + 15 + 0),
        (Category.SECURITY, "Never commit secrets", 25 + 15 + 0),
        (Category.INSTRUCTION, "Never commit secrets", 20 + 15 + 0),
        (Category.QUIRK, "Never commit secrets", 10 + 15 + 0),
        (Category.PREFERENCE, "Never commit secrets", 10 + 15 + 0),
        # path-like: "src/e" and ".ts " (+4 once)
        (Category.DECISION, "Edit src/extension.ts to add the command", 15 + 15 + 4),
        (Category.DECISION, "Config lives in lm.ts", 15 + 15 + 4),  # extension at the end
        (Category.DECISION, "Either and/or", 15 + 15 + 4),  # "/o" counts too
        (Category.DECISION, "See foo.abcdef now", 15 + 15 + 0),  # 6 chars: not an extension
        (Category.DECISION, "See lm.ts\u00a0now", 15 + 15 + 4),  # JS \s includes NBSP
        (Category.DECISION, "See lm.ts\x1cnow", 15 + 15 + 0),  # but not \x1c (Python's \s does)
        # tool words: whole ASCII words, any case (+3)
        (Category.DECISION, "Run Npm install first", 15 + 15 + 3),
        (Category.DECISION, "Do not go there", 15 + 15 + 3),
        (Category.DECISION, "Ergo gophers", 15 + 15 + 0),  # no word boundary around "go"
        (Category.DECISION, "égo", 15 + 15 + 3),  # "é" is not a JS word character
        # quotes, backticks and apostrophes (+2)
        (Category.PREFERENCE, "Say hi, don't wave", 10 + 15 + 2),
        (Category.PREFERENCE, "Wrap `code` like this", 10 + 15 + 2),
        # version-like digits.digits (+2); "1.57" also ends in an extension-like ".57" (+4)
        (Category.QUIRK, "Needs 1.57 or later", 10 + 15 + 2 + 4),
        # ALLCAPS word of >= 3 of A-Z and "_" (+2), case-sensitive
        (Category.DECISION, "Keep SKIP_THRESHOLD named", 15 + 15 + 2),
        (Category.DECISION, "ABCd is not a word of capitals", 15 + 15 + 0),
        (Category.DECISION, "The Api is fine", 15 + 15 + 0),
        # camelCase (+2)
        (Category.DECISION, "Call resolveModel first", 15 + 15 + 2),
        # every rule at once: 4 + 3 + 2 + 2 + 2 + 2 = 15, the cap
        (Category.SECURITY, "npm 'x' src/a 1.2 API fooBar", 25 + 15 + 15),
    ],
)
def test_score_entry_matches_hacklm(category: Category, content: str, expected: int) -> None:
    assert score_entry(category, content) == expected


@pytest.mark.parametrize(
    ("length", "brevity"),
    [(50, 15), (51, 12), (100, 12), (101, 8), (150, 8), (151, 5), (200, 5), (201, 2), (999, 2)],
)
def test_score_entry_brevity_bands(length: int, brevity: int) -> None:
    assert score_entry(Category.DECISION, "z" * length) == 15 + brevity


def test_score_entry_counts_utf16_code_units_like_javascript() -> None:
    # An emoji is one Python character but two UTF-16 code units (a surrogate pair).
    assert score_entry(Category.DECISION, "😀" * 25) == 15 + 15  # 50 code units
    assert score_entry(Category.DECISION, "😀" * 26) == 15 + 12  # 52 code units
    assert score_entry(Category.DECISION, "é" * 50) == 15 + 15  # BMP: one unit each


# ---- merging ---------------------------------------------------------------------------------


def test_merge_keeps_most_specific_wording_and_its_slug_in_place() -> None:
    text = (
        "# Preference\n\n"
        "- [indent-tabs] Indent Python code with tabs\n\n"
        "- [unrelated] Sign every release tag\n\n"
        "- [indent-tabs-pep8] Indent Python code with tabs, overriding PEP8\n"
    )
    plan, new_text, archived = cleanup(text, Category.PREFERENCE)

    assert plan.merges == (
        Merge(
            kept=Entry(
                line=7,
                slug="indent-tabs-pep8",
                content="Indent Python code with tabs, overriding PEP8",
            ),
            removed=(Entry(line=3, slug="indent-tabs", content="Indent Python code with tabs"),),
            content="Indent Python code with tabs, overriding PEP8",
            slug="indent-tabs-pep8",
            relations=(Relation.SAYS_LESS,),
        ),
    )
    assert (plan.prunes, plan.slugs) == ((), ())
    assert (plan.merged_count, plan.pruned_count, plan.slugged_count) == (1, 0, 0)
    # The winner did not move to the end, no "(also: ...)" was appended, and the loser's line
    # went together with its blank separator.
    assert new_text == (
        "# Preference\n\n"
        "- [unrelated] Sign every release tag\n\n"
        "- [indent-tabs-pep8] Indent Python code with tabs, overriding PEP8\n"
    )
    assert archived == (
        ArchivedEntry(
            category=Category.PREFERENCE,
            slug="indent-tabs",
            content="Indent Python code with tabs",
            reason="merged into [indent-tabs-pep8] (a shorter form of it)",
        ),
    )


def test_slugless_winner_takes_first_loser_slug() -> None:
    text = (
        "- Indent Python code with tabs\n"
        "- [tabs] Indent Python code with tabs!\n"
        "- [tabs-again] Indent python code with TABS\n"
        "- Indent Python code with tabs, overriding PEP8\n"
    )
    plan, new_text, archived = cleanup(text)

    (merge,) = plan.merges
    assert merge.kept.line == 4
    assert [entry.line for entry in merge.removed] == [1, 2, 3]
    assert merge.slug == "tabs"
    assert plan.slugged_count == 1
    assert new_text == "- [tabs] Indent Python code with tabs, overriding PEP8\n"
    assert [(record.slug, record.reason) for record in archived] == [
        (None, "merged into [tabs] (a shorter form of it)"),
        ("tabs", "merged into [tabs] (a shorter form of it)"),
        ("tabs-again", "merged into [tabs] (a shorter form of it)"),
    ]


def test_slugless_cluster_gets_a_derived_slug() -> None:
    text = "- Indent Python code with tabs\n- Indent Python code with tabs, overriding PEP8\n"
    plan, new_text, _ = cleanup(text)

    assert plan.merges[0].slug == "indent-python-code-tabs"
    assert new_text == "- [indent-python-code-tabs] Indent Python code with tabs, overriding PEP8\n"


def test_equal_keywords_tie_breaks_on_score_then_file_order() -> None:
    # Same keyword set; the ALLCAPS words score +2, so the later line wins.
    plan, _, _ = cleanup("- [a] Indent python code with tabs\n- [b] Indent python code WITH TABS\n")
    assert plan.merges[0].kept.slug == "b"
    # Exact duplicates: the earlier line wins.
    plan, _, _ = cleanup("- [a] Indent python code\n- [b] Indent python code\n")
    assert plan.merges[0].kept.slug == "a"


def test_contradictions_are_not_merged() -> None:
    text = "- [tabs-on] Always use tabs\n- [tabs-off] Never use tabs\n"
    # HackLM's keywords are identical ("always", "never" and "use" are its stop words).
    assert judge("Always use tabs", "Never use tabs").relation is Relation.REVERSED
    plan, new_text, archived = cleanup(text)
    assert plan.empty
    assert (new_text, archived) == (text, ())


@pytest.mark.parametrize(
    ("rule", "reversed_rule"),
    [
        ("Use tabs for indentation", "Never use tabs for indentation"),
        ("Use tabs for indentation", "Do not use tabs for indentation"),
        ("Commit lockfiles", "Don't commit lockfiles"),
    ],
)
def test_bare_imperative_and_its_negation_are_not_merged(rule: str, reversed_rule: str) -> None:
    plan, _, _ = cleanup(f"- [a] {rule}\n- [b] {reversed_rule}\n")
    assert plan.empty


def test_flip_blocks_a_cluster_but_not_other_merges() -> None:
    text = (
        "- [a] Always indent Python code with tabs\n"
        "- [b] Always indent Python code with tabs, overriding PEP8\n"
        "- [c] Never indent Python code with tabs\n"
    )
    plan, _, _ = cleanup(text)
    (merge,) = plan.merges
    assert (merge.kept.slug, [entry.slug for entry in merge.removed]) == ("b", ["a"])


# A and B are near each other (four of their words are shared), C is a part of B only.
NEAR_BUT_NOT_PART = (
    "- [a] Deploy staging from GitHub Actions nightly after approval\n"
    "- [b] Deploy staging from GitHub Actions workflow\n"
    "- [c] GitHub Actions workflow\n"
)
# A and C are each a part of B, and share only one word with each other.
TWO_PARTS_OF_ONE = (
    "- [a] GitHub Actions workflow\n"
    "- [b] Deploy staging from the GitHub Actions workflow\n"
    "- [c] Deploy staging workflow\n"
)


def test_an_entry_folds_only_into_one_it_is_a_part_of() -> None:
    plan, new_text, _ = cleanup(NEAR_BUT_NOT_PART)

    # B says "workflow", which A does not: B is near A, not a part of it, so it stays. C is a
    # part of B and folds into it; nothing chains on to A.
    (merge,) = plan.merges
    assert (merge.kept.slug, [entry.slug for entry in merge.removed]) == ("b", ["c"])
    assert merge.relations == (Relation.SAYS_LESS,)
    assert new_text == (
        "- [a] Deploy staging from GitHub Actions nightly after approval\n"
        "- [b] Deploy staging from GitHub Actions workflow\n"
    )


def test_every_part_of_one_entry_folds_into_it() -> None:
    plan, new_text, archived = cleanup(TWO_PARTS_OF_ONE)
    (merge,) = plan.merges
    assert (merge.kept.slug, [entry.slug for entry in merge.removed]) == ("b", ["a", "c"])
    assert new_text == "- [b] Deploy staging from the GitHub Actions workflow\n"
    assert [record.content for record in archived] == [
        "GitHub Actions workflow",
        "Deploy staging workflow",
    ]


@pytest.mark.parametrize(
    ("kept", "other"),
    [
        ("Indent Python code with tabs", "Indent with spaces"),  # a changed choice
        ("Use Node 22 in CI", "Use Node 20 in CI"),  # a changed value
        ("Log errors to Sentry #backend", "Log errors to Sentry #observability"),  # other tags
        ("Never run load tests against production", "Never run load tests"),  # a wider ban
        ("Rotate the Stripe API key", "Rotate the Twilio API key"),  # another subject
        ("Use tabs for indentation in Go files", "Use tabs for indentation"),  # a wider rule
    ],
)
def test_only_an_entry_that_says_nothing_new_is_merged(kept: str, other: str) -> None:
    plan, _, _ = cleanup(f"- [a] {kept}\n- [b] {other}\n")
    assert plan.empty


def test_avoid_and_never_use_are_one_rule() -> None:
    plan, new_text, _ = cleanup("- [a] Avoid eval\n- [b] Never use eval\n- [c] Don't use eval\n")
    (merge,) = plan.merges
    assert len(merge.removed) == 2 and merge.relations == (Relation.SAME, Relation.SAME)
    assert new_text == f"- [{merge.slug}] {merge.kept.content}\n"


# ---- pruning ---------------------------------------------------------------------------------


def test_prune_removes_lowest_scores_and_on_a_tie_the_older_entry() -> None:
    long = "z" * 201  # Decision: 15 + 2 = 17
    text = f"# Decision\n\n- [long] {long}\n- [pin] Pin numpy\n- [vendor] Vendor openssl\n"
    text += "- [sign] Sign commits\n"  # the three short ones score 15 + 15 = 30
    plan, new_text, archived = cleanup(text, limit=2)

    # [pin], [vendor] and [sign] tie at 30 for the last two places: the newest two (further
    # down the file, since stores append) stay, and the pruned one names the tie it lost.
    vendor = Entry(line=5, slug="vendor", content="Vendor openssl")
    assert plan.prunes == (
        Prune(entry=Entry(line=3, slug="long", content=long), score=17),
        Prune(entry=Entry(line=4, slug="pin", content="Pin numpy"), score=30, tied_with=vendor),
    )
    assert new_text == "# Decision\n\n- [vendor] Vendor openssl\n- [sign] Sign commits\n"
    assert [record.reason for record in archived] == [
        "pruned: over the Decision limit of 2 (score 17)",
        "pruned: over the Decision limit of 2 (score 30)",
    ]


def test_prune_counts_entries_after_merging() -> None:
    text = (
        "- [indent-tabs] Indent Python code with tabs\n"
        "- [indent-tabs-pep8] Indent Python code with tabs, overriding PEP8\n"
        "- [pin] Pin numpy\n"
    )
    plan, _, _ = cleanup(text, limit=2)
    assert (plan.merged_count, plan.pruned_count) == (1, 0)


def test_at_limit_nothing_is_pruned() -> None:
    plan, _, _ = cleanup("- [pin] Pin numpy\n- [sign] Sign commits\n", limit=2)
    assert plan.empty


def test_pruned_merge_winner_is_archived_under_its_new_slug() -> None:
    text = (
        "- [tabs] Indent Python code with tabs\n- Indent Python code with tabs, overriding PEP8\n"
    )
    plan, new_text, archived = cleanup(text, limit=0)
    assert plan.merges[0].slug == "tabs"
    assert new_text == ""
    assert [(record.slug, record.content, record.reason) for record in archived] == [
        ("tabs", "Indent Python code with tabs", "merged into [tabs] (a shorter form of it)"),
        (
            "tabs",
            "Indent Python code with tabs, overriding PEP8",
            "pruned: over the Decision limit of 0 (score 30)",
        ),
    ]


def test_negative_limit_is_rejected() -> None:
    with pytest.raises(ValueError, match="negative"):
        plan_cleanup(Category.DECISION, parse("- [a] b\n"), limit=-1)


# ---- slugs -----------------------------------------------------------------------------------


def test_slugs_are_unique_and_assigned_in_place() -> None:
    text = (
        "# Quirk\n\n"
        "- Pin numpy wheels locally to 1.26\n"
        "  - an indented note\n"
        "- [pin-numpy-wheels-locally] Legacy note about something else\n"
        "- [My Slug] Hand-written slugs stay\n"
        "- Pin numpy wheels locally to 2.0 on musl, alpine, arm64, windows, macos\n"
    )
    plan, new_text, archived = cleanup(text, Category.QUIRK)

    assert plan.slugs == (
        SlugAssignment(
            entry=Entry(line=3, slug=None, content="Pin numpy wheels locally to 1.26"),
            slug="pin-numpy-wheels-locally-2",
        ),
        SlugAssignment(
            entry=Entry(
                line=7,
                slug=None,
                content="Pin numpy wheels locally to 2.0 on musl, alpine, arm64, windows, macos",
            ),
            slug="pin-numpy-wheels-locally-3",
        ),
    )
    assert plan.slugged_count == 2
    assert archived == ()
    assert new_text == (
        "# Quirk\n\n"
        "- [pin-numpy-wheels-locally-2] Pin numpy wheels locally to 1.26\n"
        "  - an indented note\n"
        "- [pin-numpy-wheels-locally] Legacy note about something else\n"
        "- [My Slug] Hand-written slugs stay\n"
        "- [pin-numpy-wheels-locally-3] Pin numpy wheels locally to 2.0 on musl, alpine, arm64, "
        "windows, macos\n"
    )


def test_slug_rewrite_keeps_crlf_line_endings() -> None:
    _, new_text, _ = cleanup("# Decision\r\n\r\n- Sign commits\r\n")
    assert new_text == "# Decision\r\n\r\n- [sign-commits] Sign commits\r\n"


# ---- apply_cleanup ---------------------------------------------------------------------------

MESSY = (
    "# Decision\n"
    "\n"
    "Memories stored by HackLM Memory.\n"
    "\n"
    "- [indent-tabs] Indent Python code with tabs\n"
    "  - indented bullets are not entries\n"
    "\n"
    "- Indent Python code with tabs, overriding PEP8\n"
    "<!-- a comment -->\n"
    "- [tabs-on] Always use tabs\n"
    "- [tabs-off] Never use tabs\n"
    "\n"
    "## Older\n"
    "- Sign commits\n"
    f"- [long] {'z' * 201}\n"
    "- [pin] Pin numpy\n"
    "Trailing prose.\n"
)


def test_apply_keeps_non_entry_lines_and_archives_each_removal_once() -> None:
    doc = parse(MESSY)
    plan = plan_cleanup(Category.DECISION, doc, limit=5)
    new_doc, archived = apply_cleanup(doc, plan)

    assert non_entry_lines(new_doc) == non_entry_lines(doc)
    assert (plan.merged_count, plan.pruned_count, plan.slugged_count) == (1, 1, 2)
    assert [(record.content, record.reason) for record in archived] == [
        ("Indent Python code with tabs", "merged into [indent-tabs] (a shorter form of it)"),
        ("z" * 201, "pruned: over the Decision limit of 5 (score 17)"),
    ]
    before = Counter(entry.content for entry in entries(doc))
    after = Counter(entry.content for entry in entries(new_doc))
    assert before == after + Counter(record.content for record in archived)
    assert render(new_doc) == (
        "# Decision\n"
        "\n"
        "Memories stored by HackLM Memory.\n"
        "\n"
        "  - indented bullets are not entries\n"
        "\n"
        "- [indent-tabs] Indent Python code with tabs, overriding PEP8\n"
        "<!-- a comment -->\n"
        "- [tabs-on] Always use tabs\n"
        "- [tabs-off] Never use tabs\n"
        "\n"
        "## Older\n"
        "- [sign-commits] Sign commits\n"
        "- [pin] Pin numpy\n"
        "Trailing prose.\n"
    )


def test_cleanup_is_idempotent() -> None:
    plan, once, _ = cleanup(MESSY, limit=5)
    assert not plan.empty
    plan, twice, archived = cleanup(once, limit=5)
    assert plan.empty
    assert (twice, archived) == (once, ())


def test_plan_on_clean_document_is_empty() -> None:
    text = "# Decision\n\nMemories stored by HackLM Memory.\n\n- [pin] Pin numpy\n"
    plan, new_text, archived = cleanup(text)
    assert plan == CleanupPlan(category=Category.DECISION, limit=40)
    assert plan.empty
    assert (new_text, archived) == (text, ())
    assert cleanup("")[0].empty


def test_apply_rejects_a_plan_for_another_document() -> None:
    doc = parse("- Sign commits\n")
    plan = plan_cleanup(Category.DECISION, doc, limit=40)
    with pytest.raises(ValueError, match="does not match"):
        apply_cleanup(parse("# Moved\n- Sign commits\n"), plan)


def test_apply_rejects_a_plan_removing_a_line_twice() -> None:
    doc = parse("- [a] Sign commits\n")
    entry = entries(doc)[0]
    prune = Prune(entry=entry, score=30)
    plan = CleanupPlan(category=Category.DECISION, limit=0, prunes=(prune, prune))
    with pytest.raises(ValueError, match="twice"):
        apply_cleanup(doc, plan)


# ---- the real HackLM data --------------------------------------------------------------------


def test_real_hacklm_memory_is_already_clean() -> None:
    paths = sorted(HACKLM_MEMORY.glob("*.md"))
    if not paths:
        pytest.skip(f"no HackLM data at {HACKLM_MEMORY}")
    for path in paths:
        category = category_for_file(path.name)
        doc = parse(path.read_text(encoding="utf-8"))
        found = entries(doc)
        # Nothing merges: no entry of this snapshot says nothing beyond another (the pair
        # hacklm-spec.md §10 mentions, two-tier-write-lock vs dual-lock-write-entry-point, is two
        # locking rules, not one rule said twice).
        for a, b in itertools.permutations(found, 2):
            assert judge(a.content, b.content).verdict is not Verdict.SKIP, (a.slug, b.slug)
        # Nothing is pruned (no category is over its limit) and every entry has a slug.
        assert len(found) <= category.limit
        assert all(entry.slug is not None for entry in found)
        plan = plan_cleanup(category, doc, limit=category.limit)
        assert plan.empty, path.name
        assert apply_cleanup(doc, plan) == (doc, ())


# ---- properties ------------------------------------------------------------------------------

WORDS = ("indent", "python", "tabs", "redis", "cache", "deploy", "staging", "docker", "API")
CONTENTS = st.lists(
    st.sampled_from((*WORDS, "always", "never", "use", "avoid", "the")), min_size=1, max_size=6
).map(" ".join)
SLUGS = st.sampled_from(("a", "b", "tabs", "indent-python", "My Slug"))
ENTRY_LINES = st.builds(
    lambda slug, content: f"- [{slug}] {content}" if slug else f"- {content}",
    st.none() | SLUGS,
    CONTENTS,
)
OTHER_LINES = st.sampled_from(
    ("# Decision", "", "", "Some prose.", "  - indented", "<!-- x -->", "-", "- ", "1. one")
)


@settings(max_examples=examples(300), deadline=None)
@given(
    lines=st.lists(ENTRY_LINES | OTHER_LINES, max_size=14),
    newline=st.booleans(),
    limit=st.integers(min_value=0, max_value=8),
)
def test_cleanup_loses_nothing(lines: list[str], newline: bool, limit: int) -> None:
    doc = parse("\n".join(lines) + ("\n" if newline else ""))
    plan = plan_cleanup(Category.QUIRK, doc, limit=limit)
    new_doc, archived = apply_cleanup(doc, plan)

    assert non_entry_lines(new_doc) == non_entry_lines(doc)
    before, after = entries(doc), entries(new_doc)
    assert Counter(e.content for e in before) == Counter(e.content for e in after) + Counter(
        record.content for record in archived
    )
    assert len(archived) == plan.merged_count + plan.pruned_count
    assert all(entry.slug is not None for entry in after)
    # Only slugs that were already duplicated before can be duplicated after.
    duplicated = {slug for slug, n in Counter(e.slug for e in before).items() if n > 1}
    assert all(n == 1 or slug in duplicated for slug, n in Counter(e.slug for e in after).items())
    # No two pruned entries contradict each other: one side of a contradiction stays.
    pruned = [prune.entry for prune in plan.prunes]
    assert not any(_contradict(a, b) for a, b in itertools.combinations(pruned, 2))
    # Every entry that stays outranks every pruned one (a higher score, or the same score and
    # further down the file: newer), or is a kept side: it contradicts a pruned entry. A tie
    # names the earliest entry with its score that stays by its score.
    staying = [e for e in before if e.line not in {r.line for r in _removed(plan)}]
    kept_sides = list(plan.kept_sides)
    assert all(e in staying and any(_contradict(e, gone) for gone in pruned) for e in kept_sides)
    by_score = [e for e in staying if e not in kept_sides]
    for prune in plan.prunes:
        tied = [e for e in by_score if score_entry(Category.QUIRK, e.content) == prune.score]
        assert all(e.line > prune.entry.line for e in tied)
        assert all(score_entry(Category.QUIRK, e.content) >= prune.score for e in by_score)
        assert prune.tied_with == (tied[0] if tied else None)
        assert prune.contradicted_by is None or prune.contradicted_by in kept_sides
    # The limit is reached unless every entry left by its score is gone; then (only then) a
    # second cleanup still has something to do.
    assert len(after) <= limit or not by_score
    if len(after) <= limit:
        assert plan_cleanup(Category.QUIRK, new_doc, limit=limit).empty


def _contradict(a: Entry, b: Entry) -> bool:
    """True if the later of two entries contradicts the earlier, as cleanup (and a store) reads
    them: only entries close enough in keywords to be one rule are judged."""
    old, new = sorted((a, b), key=lambda entry: entry.line)
    (_, old_words), (_, new_words) = index_terms(old.content), index_terms(new.content)
    if not close(len(old_words & new_words), len(old_words), len(new_words)):
        return False
    return judge(old.content, new.content).conflict


def _removed(plan: CleanupPlan) -> list[Entry]:
    """Every entry `plan` removes: merged into another or pruned."""
    return [*(e for m in plan.merges for e in m.removed), *(p.entry for p in plan.prunes)]


@given(a=CONTENTS, b=CONTENTS)
def test_two_entries_merge_exactly_when_one_says_nothing_beyond_the_other(a: str, b: str) -> None:
    plan = plan_cleanup(Category.QUIRK, parse(f"- [a] {a}\n- [b] {b}\n"), limit=40)
    expected = Verdict.SKIP in (judge(a, b).verdict, judge(b, a).verdict)
    assert (plan.merged_count == 1) == expected
    for merge in plan.merges:  # and the one kept is the one that says it all
        (removed,) = merge.removed
        assert judge(merge.kept.content, removed.content).verdict is Verdict.SKIP


# ---- contradictions at the limit -------------------------------------------------------------

ENABLE = "Enable source maps in production builds."  # Decision: 15 + 15 = 30
DISABLE = "Disable source maps in production builds."
RETRY_3 = "Retry outgoing HTTP calls 3 times with exponential backoff before failing."  # 29
RETRY_5 = "Retry outgoing HTTP calls 5 times with exponential backoff before failing."
FILLERS = tuple(f"Pin {name} in requirements.txt with pip." for name in ("numpy", "scipy", "jax"))
"""Unrelated entries scoring 37 (15 + 15 + a path 4 + a tool 3); "Sign git tags" scores 33 and
"Vendor openssl 3.0" 36."""


def test_at_the_limit_each_contradiction_keeps_its_newer_side_and_others_go_instead() -> None:
    contents = [RETRY_3, ENABLE, *FILLERS, DISABLE, RETRY_5, "Vendor openssl 3.0", "Sign git tags"]
    text = "".join(f"- [e{number}] {content}\n" for number, content in enumerate(contents, 1))
    plan, new_text, archived = cleanup(text, limit=len(contents) - 4)

    # Without the rule the four lowest (29, 29, 30, 30) would all go and both topics with them.
    kept = [entry.content for entry in entries(parse(new_text))]
    assert len(kept) == len(contents) - 4
    assert DISABLE in kept and RETRY_5 in kept
    assert RETRY_3 not in kept and ENABLE not in kept
    by_content = {prune.entry.content: prune for prune in plan.prunes}
    assert set(by_content) == {RETRY_3, ENABLE, "Vendor openssl 3.0", "Sign git tags"}
    retry, enable = by_content[RETRY_3], by_content[ENABLE]
    assert retry.contradicted_by == Entry(line=7, slug="e7", content=RETRY_5)
    assert retry.relation is Relation.CHANGED_VALUE
    assert enable.contradicted_by == Entry(line=6, slug="e6", content=DISABLE)
    assert enable.relation is Relation.REVERSED
    assert by_content["Sign git tags"].contradicted_by is None
    assert [entry.content for entry in plan.kept_sides] == [DISABLE, RETRY_5]
    assert [record.reason for record in archived][:2] == [
        "pruned: over the Decision limit of 5 (score 29; the newer [e7] contradicting it stays)",
        "pruned: over the Decision limit of 5 (score 30; the newer [e6] contradicting it stays)",
    ]
    assert plan_cleanup(Category.DECISION, parse(new_text), limit=5).empty


def test_the_newer_side_stays_even_when_it_scores_less() -> None:
    older = "Retry outgoing HTTP calls 3 times."  # 15 + 15 + 2 = 32
    newer = "Retry outgoing HTTP calls 5 times, with exponential backoff between the attempts."
    text = f"- [retry-3] {older}\n- [pin] Pin numpy in `requirements.txt`.\n- [retry-5] {newer}\n"
    assert score_entry(Category.DECISION, newer) < score_entry(Category.DECISION, older) < 36
    plan, new_text, _ = cleanup(text, limit=1)

    # By score alone retry-5 and retry-3 would go; the newer stays and [pin] goes instead.
    assert new_text == f"- [retry-5] {newer}\n"
    assert [(p.entry.slug, p.contradicted_by) for p in plan.prunes] == [
        ("retry-3", Entry(line=3, slug="retry-5", content=newer)),
        ("pin", None),
    ]


def test_a_category_of_one_contradiction_stays_over_a_limit_it_cannot_reach() -> None:
    plan, new_text, _ = cleanup(f"- [on] {ENABLE}\n- [off] {DISABLE}\n", limit=0)
    assert [prune.entry.slug for prune in plan.prunes] == ["on"]
    assert new_text == f"- [off] {DISABLE}\n"
