"""The memd block in instruction files: insert, replace, keep other bytes, refuse bad markers."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from memd.core.agent_files import (
    BODY,
    END,
    HACKLM_END,
    HACKLM_START,
    START,
    BlockError,
    find_block,
    render_block,
    upsert_block,
)

BLOCK = render_block()
HACKLM_BLOCK = f"{HACKLM_START}\n## Memory-Augmented Context\n\nRead memory files.\n{HACKLM_END}\n"

line_text = st.one_of(
    st.sampled_from(["# Agents", "", "   ", "- item", "<!-- other -->", "```", "`<!-- memd`"]),
    st.text(st.characters(blacklist_characters="\n"), max_size=30),
)
texts = st.builds(
    lambda lines, ends, last: "".join(t + e for t, e in zip(lines, ends, strict=False)) + last,
    st.lists(line_text, max_size=12),
    st.lists(st.sampled_from(["\n", "\r\n"]), min_size=12, max_size=12),
    st.sampled_from(["", "tail without newline", "\r", "  "]),
).filter(lambda t: START not in t and END not in t and "hacklm-memory:" not in t)


def test_block_is_short_plain_markdown_naming_tools_cli_and_categories() -> None:
    assert BLOCK.startswith(START + "\n")
    assert BLOCK.endswith(END + "\n")
    assert len(BLOCK.splitlines()) < 25
    for word in (
        "storeMemory {category, content, slug?}",
        "queryMemory {query, category?, limit?}",
        "getMemory",
        "memoryStats",
        "cleanupMemory",
        "memoryContext",
        "memd query",
        'memd store -c Category "..."',
        "memd context",
        "start of a task",
        "never a secret",
        "ALWAYS honour every Security and Instruction entry",
    ):
        assert word in BLOCK
    for category in ("Instruction", "Quirk", "Preference", "Decision", "Security"):
        assert f"- **{category}**: " in BLOCK
    assert render_block("\r\n") == BLOCK.replace("\n", "\r\n")


def test_empty_text_gets_just_the_block() -> None:
    assert upsert_block("") == BLOCK


def test_block_goes_at_the_end_after_one_blank_line() -> None:
    assert upsert_block("# Agents\n\nBe nice.\n") == "# Agents\n\nBe nice.\n\n" + BLOCK


def test_existing_blank_line_at_the_end_is_reused() -> None:
    assert upsert_block("# Agents\n\n") == "# Agents\n\n" + BLOCK


def test_text_without_final_newline_keeps_having_none() -> None:
    assert upsert_block("# Agents") == "# Agents\n\n" + BLOCK.removesuffix("\n")
    assert upsert_block(upsert_block("# Agents")) == upsert_block("# Agents")


def test_crlf_text_gets_a_crlf_block() -> None:
    text = "# Agents\r\n\r\nBe nice.\r\n"
    assert upsert_block(text) == text + "\r\n" + render_block("\r\n")


def test_outdated_block_has_only_its_inside_replaced() -> None:
    text = f"# Agents\r\n\r\n  {START}  \r\nold advice\r\nmore\r\n{END}\r\nAfter, no newline"
    expected = f"# Agents\r\n\r\n  {START}  \r\n" + "".join(b + "\r\n" for b in BODY)
    assert upsert_block(text) == expected + f"{END}\r\nAfter, no newline"


def test_block_in_the_middle_stays_where_it_is() -> None:
    text = f"intro\n{START}\nold\n{END}\noutro\n"
    assert upsert_block(text) == f"intro\n{BLOCK}outro\n"


def test_empty_block_is_filled() -> None:
    assert upsert_block(f"x\n{START}\n{END}") == "x\n" + BLOCK.removesuffix("\n")


def test_markers_inside_other_text_are_prose() -> None:
    text = f"Do not touch `{START}` … `{END}`.\n"
    assert upsert_block(text) == text + "\n" + BLOCK


def test_hacklm_block_is_left_alone_and_memd_block_follows_it() -> None:
    text = "# Copilot\n\n" + HACKLM_BLOCK + "## Mine\n\nKeep this.\n"
    result = upsert_block(text)
    assert result == "# Copilot\n\n" + HACKLM_BLOCK + "\n" + BLOCK + "\n## Mine\n\nKeep this.\n"
    assert upsert_block(result) == result


def test_hacklm_block_at_the_end_without_newline() -> None:
    text = "x\n" + HACKLM_BLOCK.removesuffix("\n")
    assert upsert_block(text) == "x\n" + HACKLM_BLOCK + "\n" + BLOCK.removesuffix("\n")


def test_memd_block_before_the_hacklm_block_stays_there() -> None:
    text = f"{START}\nold\n{END}\n\n{HACKLM_BLOCK}"
    assert upsert_block(text) == f"{BLOCK}\n{HACKLM_BLOCK}"


def test_unclosed_hacklm_block_means_the_end_of_the_file() -> None:
    text = f"{HACKLM_START}\nhalf\n"
    assert upsert_block(text) == text + "\n" + BLOCK


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        (f"a\n{START}\nb\n", 2, "without a <!-- memd:end --> after it"),
        (f"{START}\n{START}\n{END}\n", 2, "a second <!-- memd:start --> (the first is on line 1)"),
        (f"{START}\n{END}\n{START}\n{END}\n", 3, "a second <!-- memd:start -->"),
        (f"a\nb\n{END}\n{START}\n", 3, "without a <!-- memd:start --> before it"),
        (f"{END}\n", 1, "without a <!-- memd:start --> before it"),
        (f"{START}\n{END}\n{END}\n", 3, "a second <!-- memd:end --> (the block ends on line 2)"),
    ],
)
def test_malformed_markers_are_refused_naming_the_line(text: str, line: int, words: str) -> None:
    with pytest.raises(BlockError, match=rf"^line {line} holds ") as info:
        upsert_block(text)
    assert info.value.line == line
    assert words in str(info.value)
    with pytest.raises(BlockError):
        find_block(text)


def test_find_block_reports_marker_lines() -> None:
    assert find_block("no block\n") is None
    assert find_block(f"x\n{START}\ny\n{END}\n") == (2, 4)


@given(texts)
def test_upsert_is_idempotent_and_keeps_the_text_outside_the_block(text: str) -> None:
    once = upsert_block(text)
    assert upsert_block(once) == once
    assert once.startswith(text)
    added = once[len(text) :]
    newline = "\r\n" if START + "\r\n" in added else "\n"
    assert added.lstrip("\r\n") in (render_block(newline), render_block(newline)[: -len(newline)])
    span = find_block(once)
    assert span is not None
    start, end = span
    assert end - start == len(BODY) + 1


@given(texts, texts)
def test_replacing_changes_nothing_outside_the_markers(before: str, after: str) -> None:
    before = before if before.endswith("\n") or not before else before + "\n"
    text = f"{before}{START}\nstale\n\nadvice\n{END}\n{after}"
    result = upsert_block(text)
    assert result.startswith(before + START)
    assert result.endswith(f"{END}\n{after}")
    assert upsert_block(result) == result
