"""Undo's rules (`memd.core.provenance.undo_plan`): which operations an undo takes, the write
that takes back each change, refusals where a line changed since, and times."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, strategies as st

from memd.core.format.mdformat import Entry
from memd.core.provenance import record, undo_plan

WRITER = record.Writer(client="t", origin="user")
SLUGS = st.sampled_from(["a", "b", "c", "d", None])
TEXTS = st.sampled_from(["Use tabs.", "Use spaces.", "Node 20.", "Node 22."])


def entries(*items: tuple[str | None, str]) -> list[Entry]:
    return [Entry(line=i + 1, slug=slug, content=text) for i, (slug, text) in enumerate(items)]


def operation(
    before: list[Entry], after: list[Entry], *, number: int = 1, at: float = 1.0
) -> list[record.Change]:
    edits = record.diff("Quirk", before, after, action="edit")
    return record.stamp(edits, operation=number, at=at, writer=WRITER)


def change(
    number: int, at: float, action: record.VersionAction = "store", **kw: object
) -> record.Change:
    return record.Change(
        operation=number,
        at=at,
        action=action,
        category="Quirk",
        client="t",
        **kw,  # type: ignore[arg-type]
    )


def unique_slugs(items: list[tuple[str | None, str]]) -> list[Entry]:
    seen: set[str] = set()
    kept = []
    for slug, text in items:
        if slug is None or slug not in seen:
            kept.append((slug, text))
            seen.add(slug or "")
    return entries(*kept)


FILES = st.lists(st.tuples(SLUGS, TEXTS), max_size=6).map(unique_slugs)


@given(FILES, FILES)
def test_undoing_any_operation_at_once_brings_back_every_text_and_every_slugged_entry(
    before: list[Entry], after: list[Entry]
) -> None:
    steps = undo_plan.plan(operation(before, after), {"Quirk": after})
    assert not [s for s in steps if s.kind == "refused"]
    back = undo_plan.after_steps({"Quirk": after}, steps)["Quirk"]
    assert Counter(e.content for e in back) == Counter(e.content for e in before)
    assert {(e.slug, e.content) for e in before if e.slug} <= {(e.slug, e.content) for e in back}


@given(FILES, FILES, FILES)
def test_a_write_step_only_ever_acts_on_a_line_that_still_says_what_the_operation_wrote(
    before: list[Entry], after: list[Entry], now: list[Entry]
) -> None:
    for step in undo_plan.plan(operation(before, after), {"Quirk": now}):
        text = step.change.text
        if step.kind in ("remove", "set_back", "reword"):
            target = step.target
            found = [e for e in now if (e.slug == target if target else not e.slug)]
            assert any(e.content == text for e in found), step
        if step.kind == "put_back" and step.change.slug:
            assert all(e.slug != step.change.slug for e in now), step


def test_steps_run_removals_first_so_a_text_moved_between_slugs_comes_back() -> None:
    before, after = entries(("a", "Use tabs.")), entries(("b", "Use tabs."))
    steps = undo_plan.plan(operation(before, after), {"Quirk": after})
    assert [(s.kind, s.change.slug) for s in steps] == [("remove", "b"), ("put_back", "a")]


def test_a_line_changed_since_is_refused_naming_what_it_says_and_how_to_look() -> None:
    op = operation(entries(("a", "Node 20.")), entries(("a", "Node 22.")))
    (step,) = undo_plan.plan(op, {"Quirk": entries(("a", "Node 24."))})
    assert step.kind == "refused"
    assert '"Node 24."' in step.reason and "`memd blame a`" in step.reason
    slugless = operation(entries((None, "Node 20.")), entries((None, "Node 22.")))
    (step,) = undo_plan.plan(slugless, {"Quirk": entries((None, "Node 24."))})
    assert step.kind == "refused" and 'memd blame --text "Node 22."' in step.reason
    (step,) = undo_plan.plan(op, {})
    assert step.kind == "refused" and "not configured" in step.reason


def test_a_deleted_entry_whose_slug_holds_another_text_now_is_refused() -> None:
    op = operation(entries(("a", "Node 20.")), [])
    (step,) = undo_plan.plan(op, {"Quirk": entries(("a", "Use tabs."))})
    assert step.kind == "refused" and "memd blame a" in step.reason
    (step,) = undo_plan.plan(op, {"Quirk": entries(("a", "Node 20."))})
    assert step.kind == "unchanged"
    (step,) = undo_plan.plan(op, {"Quirk": entries(("b", "Node 20."))})
    assert step.kind == "put_back"  # a repeat under another slug does not stop it


def test_a_slug_given_to_a_slugless_line_stays_and_is_followed_by_its_text() -> None:
    gave = operation(entries((None, "Node 20.")), entries(("node-20", "Node 20.")))
    assert {s.kind for s in undo_plan.plan(gave, {"Quirk": entries(("node-20", "Node 20."))})} == {
        "unchanged"
    }
    reworded = operation(entries((None, "Node 20.")), entries((None, "Node 22.")))
    (step,) = undo_plan.plan(reworded, {"Quirk": entries(("node-22", "Node 22."))})
    assert (step.kind, step.target) == ("set_back", "node-22")


def test_an_undo_takes_the_newest_operation_not_undone_and_never_an_undo() -> None:
    first, second = change(1, 10.0, slug="a", text="x"), change(2, 20.0, slug="b", text="y")
    undid_second = change(3, 30.0, "undo", slug="b", replaced="y", undoes=2)
    undid_first = change(3, 30.0, "undo", slug="a", replaced="x", undoes=1)
    assert undo_plan.operations_to_undo([first, second, undid_second], None) == [[first]]
    assert undo_plan.operations_to_undo([first, second, undid_first], None) == [[second]]
    assert undo_plan.operations_to_undo([first, undid_first], None) == []
    assert undo_plan.operations_to_undo([first, second], 5.0) == [[second], [first]]
    assert undo_plan.operations_to_undo([first, second], 15.0) == [[second]]
