"""core.writes.first_use: what HackLM's first-use header took from memd, and nothing else."""

from __future__ import annotations

from hypothesis import given, strategies as st

from memd.core.format.categories import CATEGORIES, Category
from memd.core.writes.catalog import Catalog
from memd.core.writes.first_use import first_use_header, key_of, lost_to_first_use

DECISION = Category.DECISION


def catalog(header: str, *lines: str) -> Catalog:
    return Catalog.from_text(header + "".join(line + "\n" for line in lines))


def test_the_first_use_header_is_hacklms_exact_string() -> None:
    assert first_use_header(DECISION) == "# Decision\n\nMemories stored by HackLM Memory.\n\n"


def test_hacklms_header_over_memds_file_gives_back_only_what_memd_acknowledged() -> None:
    before = catalog(DECISION.header, "- [a] Ours.", "- [h] Someone else's.", "- [b] Ours too.")
    after = catalog(first_use_header(DECISION), "", "- [hk] HackLM's own entry.")
    acknowledged = {key_of(e) for e in before.entries if e.slug in ("a", "b")}
    lost = lost_to_first_use(DECISION, before, after, acknowledged)
    assert [e.slug for e in lost] == ["a", "b"]


def test_an_entry_back_under_its_slug_or_text_is_not_lost() -> None:
    before = catalog(DECISION.header, "- [a] Ours.", "- [b] Ours too.")
    after = catalog(first_use_header(DECISION), "- [a] Changed by someone.", "- [x] Ours too.")
    acknowledged = {key_of(e) for e in before.entries}
    assert lost_to_first_use(DECISION, before, after, acknowledged) == []


def test_a_delete_under_memds_header_is_never_an_overwrite() -> None:
    before = catalog(DECISION.header, "- [a] Ours.")
    after = catalog(DECISION.header)
    assert lost_to_first_use(DECISION, before, after, {key_of(before.entries[0])}) == []


def test_a_delete_under_hacklms_header_is_never_an_overwrite() -> None:
    before = catalog(first_use_header(DECISION), "- [a] Ours.")
    after = catalog(first_use_header(DECISION))
    assert lost_to_first_use(DECISION, before, after, {key_of(before.entries[0])}) == []


def test_no_file_before_or_after_is_no_overwrite() -> None:
    header = catalog(first_use_header(DECISION))
    assert lost_to_first_use(DECISION, None, header, set()) == []
    assert lost_to_first_use(DECISION, header, None, set()) == []


texts = st.text(alphabet="abcdefgh ", min_size=1, max_size=12).map(str.strip).filter(bool)
entry_lists = st.lists(texts, min_size=1, max_size=8, unique=True)


@given(
    category=st.sampled_from(CATEGORIES),
    contents=entry_lists,
    kept=st.lists(st.booleans(), min_size=8, max_size=8),
    header=st.sampled_from(["memd", "hacklm", "custom"]),
)
def test_any_edit_that_keeps_the_header_gives_nothing_back(
    category: Category, contents: list[str], kept: list[bool], header: str
) -> None:
    """A delete, update or hand edit of entries (any subset kept, the header as it was) is
    never taken for HackLM's first use, whatever memd acknowledged."""
    top = {
        "memd": category.header,
        "hacklm": first_use_header(category),
        "custom": "# Notes\n\nOur own words.\n\n",
    }[header]
    lines = [f"- [s{n}] {text}" for n, text in enumerate(contents)]
    before = catalog(top, *lines)
    after = catalog(top, *(line for line, keep in zip(lines, kept, strict=False) if keep))
    acknowledged = {key_of(entry) for entry in before.entries}
    assert lost_to_first_use(category, before, after, acknowledged) == []


def test_memds_header_with_its_description_normalised_by_hacklms_cleanup_is_still_memds() -> None:
    """HackLM's cleanup (§4.1) makes the description line an entry; the late first-use header
    over that file still takes memd's entries, and only they come back."""
    description = DECISION.header.splitlines()[2]
    before = catalog(f"# {DECISION.header.split()[1]}\n\n", f"- {description}", "- [a] Ours.")
    after = catalog(first_use_header(DECISION))
    lost = lost_to_first_use(DECISION, before, after, {key_of(before.entries[1])})
    assert [e.slug for e in lost] == ["a"]


def test_a_title_alone_without_the_description_entry_is_not_memds_header() -> None:
    before = catalog(f"# {DECISION.header.split()[1]}\n\n", "- [a] Ours.")
    after = catalog(first_use_header(DECISION))
    assert lost_to_first_use(DECISION, before, after, {key_of(before.entries[0])}) == []
