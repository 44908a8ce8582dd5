"""Incremental catalogs: batches of stores, updates and deletes give exactly what the plain
`Document` rules give one command at a time, and a catalog always equals a fresh parse of its
own document."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from memd.core.format import mdformat
from memd.core.format.archive import ArchivedEntry
from memd.core.format.categories import Category
from memd.core.format.mdformat import Document, Entry
from memd.core.writes import dedup, dedup_index, transitions
from memd.core.writes.catalog import Catalog
from memd.core.writes.judge import Relation, judge
from memd.core.writes.slugs import derive_slug, validate_slug
from memd.core.writes.transitions import Delete, Store, StoreOutcome
from memd.core.writes.wording import plain_key
from memd_client.errors import RpcError
from tests.budget import examples

CAT = Category.DECISION
WORDS = ["tabs", "spaces", "lock", "write", "file", "never", "always", "use", "the", "deploy"]
contents = st.lists(st.sampled_from(WORDS), min_size=1, max_size=5).map(" ".join) | st.just(" ")
slugs = st.none() | st.sampled_from(["tabs", "lock", "write-file", "Bad Slug"])
commands = st.one_of(
    st.builds(Store, content=contents, slug=slugs, dry_run=st.booleans()),
    st.builds(Delete, slug=st.sampled_from(["tabs", "lock", "write-file", "tabs-spaces"])),
)
# Starting files: headers, prose, blank lines, CRLF endings, entries, no final newline.
LINES = ["# Decisions", "", "Prose.", "- [tabs] Use tabs.", "- plain entry", "  - indented", "- "]
files = st.tuples(
    st.lists(st.sampled_from(LINES), max_size=8),
    st.sampled_from(["\n", "\r\n"]),
    st.booleans(),
).map(lambda parts: parts[1].join(parts[0]) + (parts[1] if parts[2] else ""))


def reference_store(doc: Document, command: Store) -> tuple[Document, StoreOutcome]:
    """The store rules on a `Document`, one command at a time, with `find_match` scanning every
    entry: the specification the catalog must match."""
    content = transitions.clean_content(command.content)
    slug = validate_slug(command.slug) if command.slug is not None else None
    current = mdformat.entries(doc)
    taken = {e.slug for e in current if e.slug is not None}

    def outcome(
        action: transitions.StoreAction, entry: Entry, score: float, **kw: object
    ) -> StoreOutcome:
        fields = {"matched": entry, "conflict": False, "entries": len(current)} | kw
        return StoreOutcome(
            action=action,
            line=entry.line,
            slug=entry.slug,
            content=entry.content,
            similarity=round(score, 4),
            dry_run=command.dry_run,
            **fields,  # type: ignore[arg-type]
        )

    existing = next((e for e in current if slug is not None and e.slug == slug), None)
    if existing is not None:
        if existing.content == content:
            return doc, outcome("skipped", existing, 1.0, relation=Relation.SAME)
        text = mdformat.format_entry(existing.slug or "", content)
        written = Entry(line=existing.line, slug=existing.slug, content=content)
        judgement = judge(existing.content, content)
        new = mdformat.replace_line(doc, existing.line, text)
        return new, outcome(
            "updated",
            written,
            judgement.similarity,
            matched=existing,
            conflict=judgement.conflict,
            relation=judgement.relation,
            old_value=judgement.old_value,
            new_value=judgement.new_value,
        )
    candidates = dedup.ranked(content, current)
    match = dedup.decide(content, candidates)
    if slug is not None and not match.conflict:  # a new slug names the first contradiction
        judged = ((entry, judge(entry.content, content)) for entry in candidates)
        match = next((dedup.Match.of(e, j) for e, j in judged if j.conflict), match)
    why = {"relation": match.relation, "old_value": match.old_value, "new_value": match.new_value}
    if slug is None and match.verdict is dedup.Verdict.SKIP and match.entry is not None:
        return doc, outcome("skipped", match.entry, match.similarity, **why)
    if slug is None and match.verdict is dedup.Verdict.UPDATE and match.entry is not None:
        new_slug = match.entry.slug or derive_slug(content, taken)
        new = mdformat.replace_line(doc, match.entry.line, mdformat.format_entry(new_slug, content))
        written = Entry(line=match.entry.line, slug=new_slug, content=content)
        return new, outcome(
            "updated",
            written,
            match.similarity,
            matched=match.entry,
            conflict=match.conflict,
            **why,
        )
    new_slug = slug or derive_slug(content, taken)
    new, line = mdformat.insert_entry(doc, mdformat.format_entry(new_slug, content))
    written = Entry(line=line, slug=new_slug, content=content)
    return new, outcome(
        "stored",
        written,
        match.similarity,
        matched=match.entry,
        conflict=match.conflict,  # a new slug beside an entry it contradicts (both kept)
        entries=len(current) + 1,
        **why,
    )


def reference(
    doc: Document, command: Store | Delete
) -> tuple[Document, transitions.Outcome | type[RpcError]]:
    if isinstance(command, Delete):
        target = next((e for e in mdformat.entries(doc) if e.slug == command.slug), None)
        if target is None:
            return doc, transitions.DeleteOutcome(deleted=False, entry=None)
        new = mdformat.remove_line(doc, target.line)
        return new, transitions.DeleteOutcome(deleted=True, entry=target)
    try:
        new, outcome = reference_store(doc, command)
    except RpcError as error:
        return doc, type(error)
    return (doc if command.dry_run else new), outcome


def assert_consistent(catalog: Catalog) -> None:
    """A catalog equals a fresh parse of its own document, index included."""
    fresh = Catalog.from_document(catalog.doc)
    assert catalog.raws == fresh.raws
    assert catalog.render() == mdformat.render(catalog.doc)
    assert catalog.entries == fresh.entries == mdformat.entries(catalog.doc)
    assert list(catalog.keys) == sorted(set(catalog.keys))
    line_of = dict(zip(catalog.keys, (e.line for e in catalog.entries), strict=True))
    for entry in fresh.entries:
        if entry.slug is not None:
            keys = catalog.slugs.get(entry.slug) or ()
            assert [line_of[key] for key in keys] == [
                e.line for e in fresh.entries if e.slug == entry.slug
            ]
    assert set(catalog.slugs.as_dict()) == {e.slug for e in fresh.entries} - {None}
    sparse = catalog.index.sparse.as_dict()
    words = {word: {line_of[k] for k in dedup_index._keys(keys)} for word, keys in sparse.items()}
    words |= {
        word: {line_of[k] for k in range(bits.bit_length()) if bits >> k & 1}
        for word, bits in catalog.index.dense.items()
    }
    forms = catalog.index.normal.as_dict()
    normal = {name: {line_of[k] for k in dedup_index._keys(keys)} for name, keys in forms.items()}
    expected_normal: dict[str, set[int]] = {}
    for entry in fresh.entries:
        for form in (dedup.normal_form(entry.content), plain_key(entry.content)):
            expected_normal.setdefault(form, set()).add(entry.line)
    assert normal == expected_normal
    by_line = {e.line: dedup.keywords(e.content) for e in fresh.entries}
    expected: dict[str, set[int]] = {}
    for line, found in by_line.items():
        for word in found:
            expected.setdefault(word, set()).add(line)
    assert words == expected


@settings(max_examples=examples(200))
@given(
    text=files,
    batches=st.lists(st.lists(commands, min_size=1, max_size=4), max_size=6),
    exists=st.booleans(),
)
def test_batches_do_what_single_commands_on_documents_do(
    text: str, batches: list[list[Store | Delete]], exists: bool
) -> None:
    catalog = Catalog.from_text(text) if exists else None
    doc: Document | None = mdformat.parse(text) if exists else None
    for commands_ in batches:
        before = catalog
        batch = transitions.apply_batch(CAT, catalog, commands_)
        archived: list[ArchivedEntry] = []
        for command, result in zip(commands_, batch.results, strict=True):
            base = doc if doc is not None else mdformat.new_document(CAT)
            if doc is None and isinstance(command, Delete):
                expected: transitions.Outcome | type[RpcError]
                expected = transitions.DeleteOutcome(deleted=False, entry=None)
                new = None
            else:
                new, expected = reference(base, command)
                if new == base and doc is None:
                    new = None
            if isinstance(expected, type):
                assert isinstance(result, expected)
                continue
            assert result == expected
            if isinstance(result, transitions.DeleteOutcome) and result.entry is not None:
                archived.append(
                    ArchivedEntry(
                        category=CAT,
                        slug=result.entry.slug,
                        content=result.entry.content,
                        reason="deleted",
                    )
                )
            elif isinstance(result, StoreOutcome) and result.action == "updated":
                archived.extend(transitions._replaced(CAT, result))
            doc = new
        assert batch.archived == archived
        if batch.changed:
            assert batch.catalog is not None and doc is not None
            assert batch.catalog.doc == doc
            assert_consistent(batch.catalog)
        else:
            assert batch.catalog is before
        catalog = batch.catalog
        if catalog is not None:
            assert catalog.doc == doc


def test_an_edit_never_changes_the_version_it_started_from() -> None:
    first = Catalog.from_text("# Decisions\n\n- [a] Alpha beta.\n")
    snapshot = (first.raws, first.entries, first.index.ranked("gamma delta", dedup.CANDIDATES))
    batch = transitions.apply_batch(
        CAT, first, [Store(content="Gamma delta."), Delete(slug="a"), Store(content="Alpha x y.")]
    )
    assert batch.changed and batch.catalog is not None
    assert (
        first.raws,
        first.entries,
        first.index.ranked("gamma delta", dedup.CANDIDATES),
    ) == snapshot
    assert [e.content for e in batch.catalog.entries] == ["Gamma delta.", "Alpha x y."]


def test_a_store_touches_only_what_it_changes() -> None:
    """The entries and the index of the lines a store does not touch are shared, not rebuilt."""
    first = Catalog.from_text("".join(f"- [e{n}] Entry number {n} zz{n}.\n" for n in range(50)))
    batch = transitions.apply_batch(CAT, first, [Store(content="Something new entirely.")])
    second = batch.catalog
    assert second is not None
    assert all(a is b for a, b in zip(first.entries, second.entries, strict=False))
    assert second.index.sparse.base is first.index.sparse.base
    assert len(second.index.sparse.changes) < 10


def test_a_duplicated_slug_still_finds_its_first_entry_after_edits() -> None:
    """Hand-made files may repeat a slug; edits to the later one never make it the first."""
    catalog = Catalog.from_text(
        "- [tabs] Use tabs for indentation.\n- [tabs] Deploy with helm charts on staging.\n"
    )
    batch = transitions.apply_batch(
        CAT,
        catalog,
        [Store(content="Deploy with helm charts on staging, prod and dev."), Delete(slug="tabs")],
    )
    assert batch.catalog is not None
    assert_consistent(batch.catalog)
    assert [(e.slug, e.content) for e in batch.catalog.entries] == [
        ("tabs", "Deploy with helm charts on staging, prod and dev.")
    ]


edits = st.lists(
    st.tuples(
        st.integers(0, 30), st.integers(0, 2), st.sampled_from([*LINES, "- [new] Fresh x1."])
    ),
    max_size=5,
)


@settings(max_examples=examples(150))
@given(text=files, changes=edits, built=st.booleans())
def test_rereading_an_edited_file_equals_a_fresh_catalog(
    text: str, changes: list[tuple[int, int, str]], built: bool
) -> None:
    """An outside edit anywhere (lines inserted, removed or replaced) re-read with the previous
    version gives exactly a fresh catalog of the new text, reusing the index above the edit."""
    previous = Catalog.from_text(text)
    if built:
        previous.index  # noqa: B018 - a built index is what gets reused
    lines = text.splitlines(keepends=True)
    for at, kind, line in changes:
        at = min(at, len(lines))
        if kind == 0:
            lines.insert(at, line + "\n")
        elif kind == 1 and at < len(lines):
            del lines[at]
        elif at < len(lines):
            lines[at] = line + "\n"
    new_text = "".join(lines)
    reread = Catalog.from_text(new_text, previous=previous)
    assert reread.render() == new_text
    assert_consistent(reread)
    if built and text.endswith("\n") and new_text.startswith(text) and previous.entries:
        assert reread.keys[: len(previous.keys)] == previous.keys  # appended: keys kept


def test_rereading_after_an_entry_was_edited_by_hand() -> None:
    previous = Catalog.from_text("# Decisions\n\n- [a] Alpha beta.\n- [b] Gamma delta.\n")
    previous.index  # noqa: B018 - built, so the reread reuses it
    for text in (
        "# Decisions\n\n- [a] Alpha beta.\n- [b] Gamma epsilon.\n",  # the last entry edited
        "# Decisions\n\n- [a] Zeta eta.\n- [b] Gamma delta.\n",  # the first entry edited
        "# Decisions\n\n- [a] Alpha beta.\n- [b] Gamma delta.\n- [c] Theta.\n",  # appended
    ):
        reread = Catalog.from_text(text, previous=previous)
        assert_consistent(reread)
        for query in ("gamma epsilon", "alpha beta", "zeta eta"):
            assert reread.edit().match(query) == Catalog.from_text(text).edit().match(query)


@settings(max_examples=examples(300))
@given(text=files | st.text(alphabet="- [ab]\r\n\tx", max_size=40))
def test_a_catalog_read_from_text_equals_the_catalog_of_its_document(text: str) -> None:
    """`from_text` reads the lines itself (it never keeps a `Document`, a second copy of the
    file): the same raw lines, entries, keys and slugs as the catalog of the parsed document."""
    read = Catalog.from_text(text)
    parsed = Catalog.from_document(mdformat.parse(text))
    assert read.raws == parsed.raws
    assert read.entries == parsed.entries
    assert read.keys == parsed.keys
    assert read.slugs.as_dict() == parsed.slugs.as_dict()
    assert Catalog.from_text(text)._doc is None  # built on use only
    assert read.doc == parsed.doc
