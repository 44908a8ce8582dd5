"""The provenance rules (`memd.core.provenance.record`): what a change to a file's entries
records, and following an entry without a slug by its text."""

from __future__ import annotations

from hypothesis import given, strategies as st

from memd.core.format.mdformat import Entry
from memd.core.provenance import record

WRITER = record.Writer(client="t", origin="user")


def entries(*items: tuple[str | None, str]) -> list[Entry]:
    return [Entry(line=i + 1, slug=slug, content=text) for i, (slug, text) in enumerate(items)]


def test_a_moved_line_records_nothing_and_a_reworded_slug_keeps_its_history() -> None:
    before = entries(("a", "Use tabs."), ("b", "Deploy with Helm."))
    moved = list(reversed(entries(("a", "Use tabs."), ("b", "Deploy with Helm."))))
    assert record.diff("Decision", before, moved, action="edit") == []
    changed = record.diff("Decision", before, entries(("a", "Use spaces.")), action="edit")
    assert changed == [
        record.Edit(
            action="edit", category="Decision", slug="a", text="Use spaces.", replaced="Use tabs."
        ),
        record.Edit(
            action="edit", category="Decision", slug="b", text=None, replaced="Deploy with Helm."
        ),
    ]


def test_one_slugless_line_reworded_is_one_change_and_its_history_follows_the_text() -> None:
    (edit,) = record.diff(
        "Quirk", entries((None, "Node 20.")), entries((None, "Node 22.")), action="edit"
    )
    assert (edit.text, edit.replaced) == ("Node 22.", "Node 20.")
    first = record.stamp(
        [record.Edit(action="store", category="Quirk", slug=None, text="Node 20.", replaced=None)],
        operation=1,
        at=1.0,
        writer=WRITER,
    )
    second = record.stamp([edit], operation=2, at=2.0, writer=WRITER)
    unrelated = record.stamp(
        [record.Edit(action="store", category="Quirk", slug=None, text="Other.", replaced=None)],
        operation=3,
        at=3.0,
        writer=WRITER,
    )
    changes = [*first, *second, *unrelated]
    assert record.history_of_text(changes, "Node 22.") == [*first, *second]
    assert record.history_of_text(changes, "Nothing.") == []


@given(
    st.lists(st.tuples(st.sampled_from(["a", "b", "c", None]), st.sampled_from(["x", "y", "z"]))),
    st.lists(st.tuples(st.sampled_from(["a", "b", "c", None]), st.sampled_from(["x", "y", "z"]))),
)
def test_every_slug_that_came_went_or_changed_is_recorded_once(
    old: list[tuple[str | None, str]], new: list[tuple[str | None, str]]
) -> None:
    before, after = {s: t for s, t in old if s}, {s: t for s, t in new if s}
    old_entries = entries(*((s, t) for s, t in before.items()), *((s, t) for s, t in old if not s))
    new_entries = entries(*((s, t) for s, t in after.items()), *((s, t) for s, t in new if not s))
    edits = record.diff("Decision", old_entries, new_entries, action="edit")
    slugged = {e.slug: (e.replaced, e.text) for e in edits if e.slug}
    expected = {
        s: (before.get(s), after.get(s))
        for s in before.keys() | after.keys()
        if before.get(s) != after.get(s)
    }
    assert slugged == expected
