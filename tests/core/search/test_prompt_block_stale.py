"""The prompt block marks an entry with the note the caller gives (a stale citation): layer A
keeps every rule, marked; layer B puts noted entries after current ones."""

from __future__ import annotations

from hypothesis import given, strategies as st

from memd.core.format.categories import Category
from memd.core.format.mdformat import Entry
from memd.core.search.prompt_block import build

NOTE = "cites src/old.ts, which no longer exists; moved to src/new.ts"


def _note_of_old(category: Category, entry: Entry) -> str:
    return NOTE if "src/old.ts" in entry.content else ""


def test_a_stale_rule_stays_in_layer_a_marked() -> None:
    rule = Entry(line=3, slug="read-client", content="Read `src/old.ts` before any change.")
    block = build([(Category.INSTRUCTION, rule)], [], 800, note_of=_note_of_old)
    assert (
        f"- [Instruction] [read-client] Read `src/old.ts` before any change. (stale: {NOTE})"
        in block.markdown.splitlines()
    )
    assert block.entries[0].note == NOTE and block.entries[0].layer == "always"


def test_user_wide_rules_are_never_noted() -> None:
    rule = Entry(line=3, slug="r", content="Read `src/old.ts` first.")
    block = build([], [], 800, user_wide=[(Category.INSTRUCTION, rule)], note_of=_note_of_old)
    assert "(stale:" not in block.markdown


@given(st.lists(st.booleans(), min_size=1, max_size=8))
def test_stale_entries_come_after_current_ones_in_order(stale: list[bool]) -> None:
    relevant = [
        (
            Category.QUIRK,
            Entry(
                line=n + 3,
                slug=f"e{n}",
                content=f"Entry {n} about widgets" + (" in `src/old.ts`" if old else ""),
            ),
            1.0 - n / 100,
        )
        for n, old in enumerate(stale)
    ]
    block = build([], relevant, 4000, note_of=_note_of_old)
    placed = [p.entry.slug for p in block.entries]
    current = [f"e{n}" for n, old in enumerate(stale) if not old]
    noted = [f"e{n}" for n, old in enumerate(stale) if old]
    assert placed == current + noted
    assert all((p.note == NOTE) == (p.entry.slug in noted) for p in block.entries)
