"""The effect of store and delete on one category document (pure, no files)."""

from __future__ import annotations

import pytest

from bench._text import word
from memd.core.format import mdformat
from memd.core.format.categories import Category
from memd.core.format.mdformat import Document
from memd.core.writes import transitions
from memd.core.writes.judge import Relation
from memd.core.writes.transitions import Delete, DeleteOutcome, Store, StoreOutcome
from memd_client.errors import EntryNotFound, InvalidEntry

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


def test_a_delete_naming_content_removes_only_an_entry_still_saying_it() -> None:
    doc, _ = _store(None, "Cites `src/gone.ts` for the value.", slug="gone")
    changed = transitions.apply(CAT, doc, Delete(slug="gone", content="Other words now."))
    assert changed.doc is doc and changed.archived == ()
    reason = "stale: cites src/gone.ts, which no longer exists"
    result = transitions.apply(
        CAT, doc, Delete(slug="gone", content="Cites `src/gone.ts` for the value.", reason=reason)
    )
    assert [(a.slug, a.reason) for a in result.archived] == [("gone", reason)]


def test_a_store_naming_what_it_replaces_updates_only_an_entry_still_saying_it() -> None:
    old = "The client lives in `src/old.ts` only."
    doc, _ = _store(None, old, slug="http")
    fix = Store(content="The client lives in `src/new.ts` only.", slug="http", replaces=old)
    done = transitions.apply(CAT, doc, fix)
    assert isinstance(done.outcome, StoreOutcome) and done.outcome.action == "updated"
    assert [a.content for a in done.archived] == [old]  # the old line goes to the archive
    edited, _ = _store(doc, "The client lives in `lib/client.ts` now.", slug="http")
    with pytest.raises(EntryNotFound, match=r"\[http\] was edited or removed since it was read"):
        transitions.apply(CAT, edited, fix)  # someone's edit is never overwritten
    removed = transitions.apply(CAT, doc, Delete(slug="http")).doc
    with pytest.raises(EntryNotFound):
        transitions.apply(CAT, removed, fix)  # nor is a removed entry brought back
    with pytest.raises(InvalidEntry, match="needs that entry's slug"):
        transitions.apply(CAT, doc, Store(content="Anything at all here.", replaces=old))


def test_a_store_replacing_a_later_entry_of_a_shared_slug_leaves_the_first_alone() -> None:
    doc, _ = _store(None, "The first says one thing here.", slug="twin")
    doc, _ = _store(doc, "The second says `src/old.ts` here.", slug="other")
    text = _text(doc).replace("[other]", "[twin]")  # two entries share a slug (a hand edit)
    doc = mdformat.parse(text)
    fix = Store(
        content="The second says `src/new.ts` here.",
        slug="twin",
        replaces=("The second says `src/old.ts` here."),
    )
    with pytest.raises(EntryNotFound):
        transitions.apply(CAT, doc, fix)


def test_an_update_archives_the_old_text_with_the_callers_reason() -> None:
    """A caller that says why it replaces an entry (memd check --fix) gets its words in the
    archive line, on one line and without the line's separator; without one, the store
    decision's own reason."""
    old = "The client lives in `src/old.ts` only."
    doc, _ = _store(None, old, slug="http")
    fix = Store(
        content="The client lives in `src/new.ts` only.",
        slug="http",
        replaces=old,
        reason="fixed by memd check --fix: cites src/old.ts | moved\nto src/new.ts",
    )
    done = transitions.apply(CAT, doc, fix)
    assert [a.reason for a in done.archived] == [
        "fixed by memd check --fix: cites src/old.ts / moved to src/new.ts (updated as [http])"
    ]
    plain = transitions.apply(CAT, doc, Store(content="The client lives in `lib/`.", slug="http"))
    assert plain.archived and "fixed by" not in plain.archived[0].reason


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


# ---------------------------------------------------------------------------- a new slug


def _slugs(doc: Document | None) -> dict[str, str]:
    return {str(e.slug): e.content for e in mdformat.entries(doc or Document())}


def test_a_new_slug_that_contradicts_another_entry_keeps_both_and_names_it() -> None:
    doc, _ = _store(None, "Use Node 20.", slug="node-version-web")
    result = transitions.apply(CAT, doc, Store(content="Use Node 22.", slug="node-version-worker"))
    outcome = result.outcome
    assert isinstance(outcome, StoreOutcome)
    assert outcome.action == "stored" and outcome.slug == "node-version-worker"
    assert outcome.conflict and outcome.relation is Relation.CHANGED_VALUE
    assert (outcome.old_value, outcome.new_value) == ("20", "22")
    assert outcome.matched is not None and outcome.matched.slug == "node-version-web"
    assert _slugs(result.doc) == {
        "node-version-web": "Use Node 20.",
        "node-version-worker": "Use Node 22.",
    }
    assert result.archived == () and outcome.entries == 2


def test_a_new_slug_reversing_another_entry_is_a_conflict_and_both_stay() -> None:
    doc, _ = _store(None, "Always squash commits.", slug="squash")
    doc, outcome = _store(doc, "Never squash commits.", slug="no-squash")
    assert outcome.action == "stored" and outcome.conflict
    assert outcome.relation is Relation.REVERSED
    assert list(_slugs(doc)) == ["squash", "no-squash"]


def test_numbered_texts_each_under_its_own_slug_are_all_kept() -> None:
    doc: Document | None = None
    for number in range(4):
        text = f"Use nginx{number} for the nginx{number} layer; decided in sprint {number}."
        doc, outcome = _store(doc, text, slug=f"rule-{number}")
        assert outcome.action == "stored" and outcome.slug == f"rule-{number}"
    assert _slugs(doc) == {
        f"rule-{n}": f"Use nginx{n} for the nginx{n} layer; decided in sprint {n}."
        for n in range(4)
    }


def test_the_same_text_under_a_new_slug_is_stored_beside_its_twin() -> None:
    doc, _ = _store(None, "Run make lint before pushing.", slug="lint-first")
    doc, outcome = _store(doc, "run make lint before pushing", slug="lint-before-push")
    assert outcome.action == "stored" and not outcome.conflict
    assert outcome.relation is Relation.SAME
    assert outcome.matched is not None and outcome.matched.slug == "lint-first"
    assert list(_slugs(doc)) == ["lint-first", "lint-before-push"]


def test_a_new_slug_names_a_contradiction_before_an_entry_that_says_more() -> None:
    doc, _ = _store(None, "Wrap lines at 80 characters.", slug="wrap-80")
    doc, _ = _store(doc, "Wrap lines at 100 characters in the editor.", slug="wrap-editor")
    _, outcome = _store(doc, "Wrap lines at 100 characters.", slug="wrap")
    assert outcome.action == "stored" and outcome.conflict
    assert outcome.relation is Relation.CHANGED_VALUE
    assert outcome.matched is not None and outcome.matched.slug == "wrap-80"


def test_a_new_slug_with_a_twin_names_the_twin() -> None:
    doc, _ = _store(None, "Wrap lines at 80 characters.", slug="wrap-80")
    doc, _ = _store(doc, "Wrap lines at 100 characters.", slug="wrap-100")
    doc, outcome = _store(doc, "Wrap lines at 100 characters.", slug="wrap")
    assert outcome.action == "stored" and outcome.relation is Relation.SAME
    assert outcome.matched is not None and outcome.matched.slug == "wrap-100"
    assert list(_slugs(doc)) == ["wrap-80", "wrap-100", "wrap"]


def test_a_new_slug_never_changes_another_entry_and_a_known_slug_still_upserts() -> None:
    doc, _ = _store(None, "Store sessions in Redis.", slug="sessions")
    doc, outcome = _store(doc, "Store sessions in Redis, not in the database.", slug="sessions-2")
    assert outcome.action == "stored" and outcome.relation is Relation.ADDS_DETAIL
    assert not outcome.conflict
    doc, outcome = _store(doc, "Store sessions in Memcached.", slug="sessions")
    assert outcome.action == "updated" and outcome.slug == "sessions"
    assert _slugs(doc) == {
        "sessions": "Store sessions in Memcached.",
        "sessions-2": "Store sessions in Redis, not in the database.",
    }


def test_a_dry_run_under_a_new_slug_reports_the_conflict_and_writes_nothing() -> None:
    doc, _ = _store(None, "Use Node 20.", slug="node-version-web")
    same, outcome = _store(doc, "Use Node 22.", slug="node-version-worker", dry_run=True)
    assert same is doc and outcome.action == "stored" and outcome.conflict and outcome.dry_run


def test_a_rule_scoped_to_other_files_is_never_a_duplicate() -> None:
    """The same words scoped to other files, or to none, are another rule: stored beside it,
    never skipped or merged (a scope is never dropped by a dedup); a repeat with the same
    scope is still a duplicate. The marker's globs never make the slug."""
    doc, first = _store(None, "Use tabs for indentation (paths: src/**).")
    assert first.slug == "tabs-indentation"
    for content in ("Use tabs for indentation (paths: docs/**).", "Use tabs for indentation."):
        doc, outcome = _store(doc, content)
        assert outcome.action == "stored", content
    _, again = _store(doc, "Use tabs for indentation (paths: src/**).")
    assert again.action == "skipped"


def test_a_delete_without_a_slug_removes_only_a_slugless_line_saying_that_text() -> None:
    doc = mdformat.parse("# D\n\n- [tabs] Use tabs.\n- Use tabs.\n- Use spaces.\n")
    removed = transitions.apply(CAT, doc, Delete(slug=None, content="Use tabs."))
    assert isinstance(removed.outcome, DeleteOutcome) and removed.outcome.deleted
    assert _text(removed.doc) == "# D\n\n- [tabs] Use tabs.\n- Use spaces.\n"
    assert [a.content for a in removed.archived] == ["Use tabs."]
    again = transitions.apply(CAT, removed.doc, Delete(slug=None, content="Use tabs."))
    assert again.outcome == DeleteOutcome(deleted=False, entry=None)
    assert transitions.apply(CAT, doc, Delete(slug=None)).outcome == again.outcome


def test_a_restore_by_slug_comes_back_beside_a_repeat_but_never_over_its_slug() -> None:
    doc = mdformat.parse("# D\n\n- [tabs] Use tabs.\n")
    repeat = transitions.apply(
        CAT, doc, transitions.Restore(slug="tabs-2", content="Use tabs.", by_slug=True)
    )
    assert "- [tabs-2] Use tabs.\n" in _text(repeat.doc) and "- [tabs] Use tabs." in _text(
        repeat.doc
    )
    held = transitions.apply(
        CAT, doc, transitions.Restore(slug="tabs", content="Use spaces.", by_slug=True)
    )
    assert held.doc is doc and isinstance(held.outcome, StoreOutcome)
    assert (held.outcome.action, held.outcome.content) == ("skipped", "Use tabs.")
    derived = transitions.apply(CAT, doc, transitions.Restore(slug=None, content="Use spaces."))
    assert isinstance(derived.outcome, StoreOutcome) and derived.outcome.action == "stored"
    assert derived.outcome.slug and f"- [{derived.outcome.slug}] Use spaces." in _text(derived.doc)
    text_held = transitions.apply(CAT, doc, transitions.Restore(slug="x", content="Use tabs."))
    assert text_held.doc is doc  # without by_slug, the text being there is enough
