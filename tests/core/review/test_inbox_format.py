"""The inbox line format: byte-exact round trips, lines HackLM's entry parser also reads, and
removal that keeps every other byte."""

from __future__ import annotations

from hypothesis import given, strategies as st

from memd.core.format.mdformat import parse_entry_line
from memd.core.review import inbox_format
from memd.core.review.inbox_format import InboxItem

_WORD = st.text(
    st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), min_size=1, max_size=40
)
_CONTENT = _WORD.map(lambda s: " ".join(s.split())).filter(bool)
_SLUG = st.from_regex(r"[a-z0-9][a-z0-9-]{0,20}", fullmatch=True)
_CATEGORY = st.from_regex(r"[A-Z][A-Za-z0-9]{1,10}", fullmatch=True)


@st.composite
def items(draw: st.DrawFn) -> InboxItem:
    return inbox_format.new_item(
        draw(st.sampled_from(inbox_format.KINDS)),
        draw(_CATEGORY),
        draw(st.none() | _SLUG),
        draw(_CONTENT),
        draw(_WORD),
    )


@given(items())
def test_an_item_round_trips_through_its_line(item: InboxItem) -> None:
    line = inbox_format.render_line(item)
    assert inbox_format.parse_line(line) == item
    assert inbox_format.render_line(inbox_format.parse_line(line) or item) == line
    # A category file's parser reads it as one ordinary entry whose slug is the inbox id.
    assert parse_entry_line(line) == (item.id, line.split("] ", 1)[1])


@given(st.lists(items(), max_size=6), st.sampled_from(["\n", "\r\n"]))
def test_removing_one_keeps_every_other_byte(found: list[InboxItem], ending: str) -> None:
    prose = f"# Inbox{ending}{ending}Some words a person wrote.{ending}"
    lines = [inbox_format.render_line(item) + ending for item in found]
    text = prose + "".join(lines)
    unique = {item.id: item for item in reversed(found)}
    assert [i.id for i in inbox_format.parse(text)] == list(dict.fromkeys(i.id for i in found))
    for ident in unique:
        kept = inbox_format.without(text, ident)
        assert kept == prose + "".join(
            line for item, line in zip(found, lines, strict=True) if item.id != ident
        )


@given(_WORD)
def test_a_cleaned_reason_stays_inside_its_label(reason: str) -> None:
    cleaned = inbox_format.clean_reason(reason)
    assert "]" not in cleaned and "\n" not in cleaned and "·" not in cleaned
    item = inbox_format.new_item("store", "Security", None, "Rotate keys.", reason)
    assert inbox_format.parse_line(inbox_format.render_line(item)) == item


def test_lines_that_are_not_inbox_entries_are_never_offered() -> None:
    text = (
        "# Inbox\n\n- [p-0000000g] [store · Security · x] bad id\n"
        "- [use-helm] Deploy with Helm.\n  - [p-00000000] [store · Security · x] indented\n"
    )
    assert inbox_format.parse(text) == ()


@given(st.text(max_size=200), st.text(min_size=1, max_size=200))
def test_a_guard_names_the_text_it_replaces_and_survives_the_line(
    reason: str, replaced: str
) -> None:
    guarded = inbox_format.guard(inbox_format.clean_reason(reason), replaced)
    item = inbox_format.new_item("store", "Quirk", "connect", "New text.", guarded)
    back = inbox_format.parse_line(inbox_format.render_line(item))
    assert back is not None
    assert inbox_format.guarded_hash(back.reason) == inbox_format.text_hash(replaced)
