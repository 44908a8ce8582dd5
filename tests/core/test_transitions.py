"""The effect of store and delete on one category document (pure, no files)."""

from __future__ import annotations

import pytest

from bench._text import word
from memd.core.format import mdformat
from memd.core.format.categories import Category
from memd.core.format.mdformat import Document
from memd.core.writes import transitions
from memd.core.writes.transitions import Delete, DeleteOutcome, Store, StoreOutcome
from memd_client.errors import InvalidEntry

CAT = Category.DECISION


def _store(
    doc: Document | None, content: str, slug: str | None = None, dry_run: bool = False
) -> tuple[Document | None, StoreOutcome]:
    result = transitions.apply(CAT, doc, Store(content=content, slug=slug, dry_run=dry_run))
    assert isinstance(result.outcome, StoreOutcome)
    return result.doc, result.outcome


def _text(doc: Document | None) -> str:
    assert doc is not None
    return mdformat.render(doc)


def test_first_store_creates_the_file_with_a_header_and_a_derived_slug() -> None:
    doc, outcome = _store(None, "  Take the lock before writing the file.  ")
    assert outcome.action == "stored" and outcome.slug == "take-lock-writing-file"
    assert _text(doc).endswith(
        "\n\n- [take-lock-writing-file] Take the lock before writing the file.\n"
    )
    assert _text(doc).startswith("# Decisions\n")
    assert outcome.line == 5 and outcome.entries == 1


def test_derived_slugs_are_unique_in_the_file() -> None:
    doc, _ = _store(None, "Sockets live in the runtime directory.")
    doc, second = _store(doc, "Sockets live in the runtime directory of systemd, never /tmp.")
    assert second.action in {"stored", "updated"}
    doc, _ = _store(
        doc, "Socket files: live runtime directory for memd sockets and more words here"
    )
    slugs = [e.slug for e in mdformat.entries(doc or Document())]
    assert len(slugs) == len(set(slugs))


def test_duplicate_is_skipped_and_file_untouched() -> None:
    doc, _ = _store(None, "No emojis in code.")
    again, outcome = _store(doc, "no emojis in code")
    assert outcome.action == "skipped" and outcome.similarity == 1.0
    assert again is doc
    assert outcome.matched is not None and outcome.matched.content == "No emojis in code."


def test_near_duplicate_updates_in_place_keeping_slug_and_position() -> None:
    doc, _ = _store(None, "Ruff and mypy run in make test.", slug="lint-in-test")
    doc, _ = _store(doc, "Sockets live under XDG_RUNTIME_DIR.")
    doc, outcome = _store(doc, "Ruff and mypy run in make lint.")
    assert outcome.action == "updated" and outcome.slug == "lint-in-test" and outcome.line == 5
    assert mdformat.entries(doc or Document())[0].content == "Ruff and mypy run in make lint."


def test_negation_flip_replaces_and_reports_conflict() -> None:
    doc, _ = _store(None, "Always use tabs.", slug="indent")
    doc, outcome = _store(doc, "Never use tabs.")
    assert outcome.action == "updated" and outcome.conflict and outcome.slug == "indent"
    assert [e.content for e in mdformat.entries(doc or Document())] == ["Never use tabs."]


def test_slug_upserts_in_place() -> None:
    doc, _ = _store(None, "First rule.", slug="a")
    doc, _ = _store(doc, "Second, unrelated sentence about sockets.", slug="b")
    doc, outcome = _store(doc, "First rule, reworded completely differently now.", slug="a")
    assert outcome.action == "updated" and outcome.line == 5
    assert [e.slug for e in mdformat.entries(doc or Document())] == ["a", "b"]


def test_same_slug_same_text_is_skipped() -> None:
    doc, _ = _store(None, "First rule.", slug="a")
    again, outcome = _store(doc, "First rule.", slug="a")
    assert outcome.action == "skipped" and again is doc


def test_slug_flip_is_a_conflict() -> None:
    doc, _ = _store(None, "Always squash commits.", slug="squash")
    _, outcome = _store(doc, "Never squash commits.", slug="squash")
    assert outcome.action == "updated" and outcome.conflict


def test_dry_run_reports_and_changes_nothing() -> None:
    doc, _ = _store(None, "Existing rule about the socket path.")
    same, outcome = _store(doc, "Brand new rule about logging to stderr.", dry_run=True)
    assert same is doc and outcome.action == "stored" and outcome.dry_run
    missing, outcome = _store(None, "Anything.", dry_run=True)
    assert missing is None and outcome.action == "stored"


def test_store_never_evicts_and_counts_entries() -> None:
    doc: Document | None = None
    for number in range(CAT.limit + 2):
        doc, outcome = _store(doc, f"Unique rule about {word(number)}.")
        assert outcome.action == "stored"
    assert outcome.entries == CAT.limit + 2


@pytest.mark.parametrize(
    ("content", "slug", "needle"),
    [
        ("   ", None, "empty"),
        ("bell\x07", None, "control"),
        ("x" * 2001, None, "2,001 characters, over the 2,000-character cap"),
        ("fine", "Not Kebab", "kebab"),
        ("fine", "a" * 65, "kebab"),
    ],
)
def test_bad_input_is_a_clear_error(content: str, slug: str | None, needle: str) -> None:
    with pytest.raises(InvalidEntry, match=needle):
        transitions.apply(CAT, None, Store(content=content, slug=slug))


def test_the_length_cap_is_the_commands_and_counts_normalised_text() -> None:
    assert transitions.apply(CAT, None, Store(content="ten chars.", max_length=10)).doc
    assert transitions.apply(CAT, None, Store(content="ten \n\n  chars.", max_length=10)).doc
    with pytest.raises(InvalidEntry, match="11 characters, over the 10-character cap"):
        transitions.apply(CAT, None, Store(content="ten chars!!", max_length=10))


@pytest.mark.parametrize(
    "content",
    ["two\nlines", "crlf\r\n- [fake] entry", "tabs\tand\x0bvt", "nel\x85ls\u2028ps\u2029end"],
)
def test_whitespace_never_makes_a_second_line_and_is_reported(content: str) -> None:
    transition = transitions.apply(CAT, None, Store(content=content))
    outcome = transition.outcome
    assert isinstance(outcome, StoreOutcome)
    assert outcome.normalized
    assert outcome.content == " ".join(content.split())
    assert transition.doc is not None
    text = mdformat.render(transition.doc)
    assert text.count("\n- ") == 1 and "[fake]" not in text.split("\n- ", 1)[0]
    assert [entry.content for entry in mdformat.entries(transition.doc)] == [outcome.content]


def test_trimming_alone_is_not_reported() -> None:
    outcome = transitions.apply(CAT, None, Store(content="  just trimmed  ")).outcome
    assert isinstance(outcome, StoreOutcome)
    assert outcome.content == "just trimmed" and not outcome.normalized


def test_delete_archives_and_removes_the_line() -> None:
    doc, _ = _store(None, "Keep me around.", slug="keep")
    doc, _ = _store(doc, "Delete me soon, unrelated words.", slug="gone")
    result = transitions.apply(CAT, doc, Delete(slug="gone"))
    assert isinstance(result.outcome, DeleteOutcome) and result.outcome.deleted
    assert [e.slug for e in mdformat.entries(result.doc or Document())] == ["keep"]
    assert [(a.slug, a.reason) for a in result.archived] == [("gone", "deleted")]


def test_delete_of_a_missing_slug_changes_nothing() -> None:
    doc, _ = _store(None, "Keep me around.", slug="keep")
    result = transitions.apply(CAT, doc, Delete(slug="nope"))
    assert result.doc is doc and result.archived == ()
    assert isinstance(result.outcome, DeleteOutcome) and not result.outcome.deleted
    assert transitions.apply(CAT, None, Delete(slug="nope")).doc is None


def test_an_update_archives_the_text_it_replaces() -> None:
    doc, _ = _store(None, "Tests for the parser module need the fixtures directory.")
    detailed = "Tests for the parser module need the fixtures directory and a running Redis."
    result = transitions.apply(CAT, doc, Store(content=detailed))
    assert isinstance(result.outcome, StoreOutcome)
    assert result.outcome.action == "updated"
    assert [(a.content, a.reason) for a in result.archived] == [
        (
            "Tests for the parser module need the fixtures directory.",
            f"updated as [{result.outcome.slug}] (more detail)",
        )
    ]
    flipped = transitions.apply(
        CAT,
        result.doc,
        Store(content="Tests for the parser module never need the fixtures directory."),
    )
    assert [a.reason for a in flipped.archived] == [
        f"replaced by a contradicting entry as [{result.outcome.slug}] (the rule reversed)"
    ]
    dry = transitions.apply(CAT, doc, Store(content=detailed, dry_run=True))
    assert dry.archived == ()
