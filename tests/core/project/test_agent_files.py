"""The memd block in instruction files: insert, replace, keep other bytes, refuse bad markers."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, strategies as st

from memd.core.project.agent_files import (
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

LINE_ENDING = re.compile(r"\r\n|\r|\n")

# Lines that open no code fence ("```x```" does not: a "`" fence's info string holds no "`"). A
# "\r" inside random text ends a line too, so texts mix line endings.
line_text = st.one_of(
    st.sampled_from(
        ["# Agents", "", "   ", "- item", "<!-- other -->", "```not a fence```", "`<!-- memd`"]
    ),
    st.text(st.characters(blacklist_characters="\n`~"), max_size=30),
).filter(lambda t: START not in t and END not in t and "hacklm-memory:" not in t)
texts = st.builds(
    lambda lines, ends, last: "".join(t + e for t, e in zip(lines, ends, strict=False)) + last,
    st.lists(line_text, max_size=12),
    st.lists(st.sampled_from(["\n", "\r\n", "\r"]), min_size=12, max_size=12),
    st.sampled_from(["", "tail without newline", "\r", "  "]),
)


def newline_of(text: str) -> str:
    """The file's newline: its first line ending, "\n" if it has none."""
    found = LINE_ENDING.search(text)
    return found[0] if found else "\n"


def added_before_block(text: str) -> str:
    """What appending the block adds before it: the last line's ending, a blank line, or both."""
    newline = newline_of(text)
    last = LINE_ENDING.split(text)[-1]  # "" if the text ends with a line ending
    if last:
        return newline + (newline if last.strip() else "")
    lines = LINE_ENDING.split(text)
    if len(lines) < 2 or not lines[-2].strip():
        return ""  # empty text, or its last line is blank
    return "\r" if text.endswith("\r") else newline


@st.composite
def fenced_examples(draw: st.DrawFn) -> list[str]:
    """The lines of a closed fenced code block showing markers, some looking like fences."""
    indent = draw(st.sampled_from(["", " ", "   ", "\t", "      "]))
    char = draw(st.sampled_from("`~"))
    size = draw(st.integers(3, 5))
    other = "~" if char == "`" else "`"
    info = draw(st.sampled_from(["", "markdown", " md title", "{.html}"]))
    inside = st.sampled_from(
        [
            START,
            END,
            f"  {START}  ",
            HACKLM_START,
            HACKLM_END,
            "",
            "# Agents",
            char * (size - 1),
            other * size,
            f"{char * size} not a closing fence",
            f"{char * size}more",
        ]
    )
    closing = char * (size + draw(st.integers(0, 2))) + draw(st.sampled_from(["", " ", "\t "]))
    return [indent + char * size + info, *draw(st.lists(inside, max_size=6)), indent + closing]


def memd_block_index(lines: list[str]) -> tuple[int, int] | None:
    """0-based start and end of memd's real block in `lines`, given by `find_block`."""
    span = find_block("\n".join(lines))
    return None if span is None else (span[0] - 1, span[1] - 1)


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


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("# Agents\r", "# Agents\r\r" + render_block("\r")),  # old Mac line endings
        ("a\rb\rc", "a\rb\rc\r\r" + render_block("\r").removesuffix("\r")),
        ("a\r\r", "a\r\r" + render_block("\r")),
        ("# Agents\nBe nice.\r", "# Agents\nBe nice.\r\r" + BLOCK),  # "\r\n" would merge
        ("# Agents\r\nBe nice.\r", "# Agents\r\nBe nice.\r\r" + render_block("\r\n")),
        ("# Agents\r\nBe nice.", "# Agents\r\nBe nice.\r\n\r\n" + render_block("\r\n")[:-2]),
    ],
)
def test_new_lines_take_the_first_line_ending_without_doubling(text: str, expected: str) -> None:
    result = upsert_block(text)
    assert result == expected
    assert "\r\r\n" not in result
    assert upsert_block(result) == result


def test_block_ending_in_cr_before_a_blank_lf_line_ends_in_crlf() -> None:
    text = f"x\r{HACKLM_START}\r{HACKLM_END}\n\nMine.\n"
    result = upsert_block(text)
    block = render_block("\r").removesuffix("\r") + "\r\n"
    assert result == f"x\r{HACKLM_START}\r{HACKLM_END}\n\r{block}\nMine.\n"
    assert upsert_block(result) == result
    assert find_block(result) == (5, 5 + len(BODY) + 1)


def test_block_in_a_cr_file_is_found_and_refreshed() -> None:
    text = f"# Agents\r{START}\rold\r{END}\rafter"
    assert find_block(text) == (2, 4)
    assert upsert_block(text) == "# Agents\r" + render_block("\r") + "after"


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
    newline = newline_of(text)
    block = render_block(newline)
    if LINE_ENDING.split(text)[-1]:  # the last line had no line ending: the block ends without
        block = block.removesuffix(newline)
    assert added == added_before_block(text) + block
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


def test_marker_examples_in_fenced_code_are_text() -> None:
    example = f"```markdown\n{START}\nexample\n{END}\n```\n"
    text = "# Agents\n\n" + example + "\nMore.\n"
    result = upsert_block(text)
    assert result == text + "\n" + BLOCK
    assert find_block(text) is None
    assert upsert_block(result) == result


def test_a_lone_marker_in_a_fence_is_not_an_error() -> None:
    for text in (f"~~~\n{START}\n~~~\n", f"````\n{END}\n```\nstill code\n````\n"):
        assert upsert_block(text) == text + "\n" + BLOCK


def test_real_block_after_a_fenced_example_is_the_one_updated() -> None:
    text = f"   ```\n{START}\nexample\n{END}\n   ```\n\n{START}\nold\n{END}\nend\n"
    expected = f"   ```\n{START}\nexample\n{END}\n   ```\n\n{BLOCK}end\n"
    assert upsert_block(text) == expected
    assert find_block(text) == (7, 9)


@pytest.mark.parametrize(
    ("fence", "closing"),
    [
        ("```", "``"),  # too short
        ("````", "```"),  # shorter than the opening
        ("```", "~~~"),  # the other character
        ("~~~", "~~~ x"),  # text after it
        ("```", "``` `"),
    ],
)
def test_a_fence_closes_only_with_its_character_at_least_as_long(fence: str, closing: str) -> None:
    text = f"{fence}\n{closing}\n{START}\n{END}\n{fence}\n"
    assert upsert_block(text) == text + "\n" + BLOCK


def test_backticks_in_the_info_string_make_no_fence() -> None:
    text = f"```inline``` code\n{START}\nold\n{END}\n"
    assert upsert_block(text) == "```inline``` code\n" + BLOCK


def test_fence_closed_by_a_longer_indented_fence_with_trailing_spaces() -> None:
    text = f"- item\n\n      ~~~ md\n      {START}\n        ~~~~~  \n{START}\nold\n{END}\n"
    assert upsert_block(text) == text.removesuffix(f"old\n{END}\n") + BLOCK[len(START) + 1 :]


def test_hacklm_markers_in_fences_are_text_too() -> None:
    example = f"```\n{HACKLM_START}\nexample\n{HACKLM_END}\n```\n"
    text = f"{HACKLM_START}\nreal\n" + example + f"{HACKLM_END}\nMine.\n"
    assert upsert_block(text) == text.replace(
        f"{HACKLM_END}\nMine.", f"{HACKLM_END}\n\n{BLOCK}\nMine."
    )
    fenced_only = "# Agents\n\n" + example + "Mine.\n"
    assert upsert_block(fenced_only) == fenced_only + "\n" + BLOCK


def test_block_cannot_go_into_an_unclosed_fence_at_the_end() -> None:
    text = "# Agents\n\n````sh\nmake test\n```\n"
    with pytest.raises(BlockError, match=r"^line 3 opens a ```` code fence that is never closed"):
        upsert_block(text)
    assert find_block(text) is None


def test_unclosed_fence_after_hacklm_block_leaves_room_before_it() -> None:
    text = f"{HACKLM_BLOCK}```\ncode, never closed\n"
    assert upsert_block(text) == f"{HACKLM_BLOCK}\n{BLOCK}\n```\ncode, never closed\n"


def test_unclosed_fence_runs_to_the_end_hiding_a_later_end_marker() -> None:
    text = f"{START}\n```\n{END}\n"
    with pytest.raises(BlockError, match=r"^line 1 holds .* \(line 2 opens a ``` code fence"):
        upsert_block(text)
    text = f"{START}\nold\n{END}\n~~~\n{START}\n"  # the block comes before the open fence
    assert upsert_block(text) == f"{BLOCK}~~~\n{START}\n"


@given(
    st.lists(
        st.one_of(
            line_text.map(lambda line: [line]),
            fenced_examples(),
            st.just([START, "stale", "", END]),
            st.just([HACKLM_START, "hacklm's", HACKLM_END]),
        ),
        max_size=8,
    ).filter(lambda parts: sum(part[0] == START for part in parts) <= 1),
    st.sampled_from(["\n", "\r\n", "\r"]),
    st.booleans(),
)
def test_upsert_leaves_fenced_marker_examples_intact(
    parts: list[list[str]], newline: str, final_newline: bool
) -> None:
    lines = [line for part in parts for line in part]
    text = newline.join(lines) + (newline if final_newline and lines else "")
    result = upsert_block(text)
    assert upsert_block(result) == result
    fenced = [newline.join(part) for part in parts if part[0].lstrip(" \t")[:3] in ("```", "~~~")]
    for example in fenced:
        assert result.count(example) == text.count(example)
    # Outside memd's block every line is kept, blank lines aside, in order.
    before, after = LINE_ENDING.split(text), LINE_ENDING.split(result)
    span_before, span_after = memd_block_index(before), memd_block_index(after)
    assert span_after is not None
    assert after[span_after[0] + 1 : span_after[1]] == list(BODY)
    if span_before is not None:
        del before[span_before[0] : span_before[1] + 1]
    del after[span_after[0] : span_after[1] + 1]
    assert [line for line in before if line.strip()] == [line for line in after if line.strip()]
