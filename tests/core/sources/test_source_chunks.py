"""Chunks of read-only Markdown sources: bullets, paragraphs and tables under their heading path,
fences kept with their paragraph, front matter, comments and breaks skipped, long blocks split."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import pytest
from hypothesis import assume, given, settings, strategies as st

from memd.core.sources.chunks import MAX_CHUNK_CHARS, MAX_PARENTS, Chunk, chunk, split_lines
from tests.budget import examples


def _spans(text: str) -> list[tuple[int, int, str]]:
    return [(c.start, c.end, c.text) for c in chunk(text)]


CLAUDE_MD = """\
# CLAUDE.md

This file guides Claude Code in this repository.

## Commands

- `make test` runs ruff, mypy and every test.
- `make serve` runs the daemon
  in the foreground.

## Architecture

The core is pure: no I/O,
no clock.

### Testing

Use Hypothesis for properties.
"""


def test_a_claude_md_is_cut_into_paragraphs_and_bullets_under_their_headings() -> None:
    assert chunk(CLAUDE_MD) == (
        Chunk(
            start=3,
            end=3,
            headings=("CLAUDE.md",),
            parents=(),
            text="This file guides Claude Code in this repository.",
        ),
        Chunk(
            start=7,
            end=7,
            headings=("CLAUDE.md", "Commands"),
            parents=(),
            text="`make test` runs ruff, mypy and every test.",
        ),
        Chunk(
            start=8,
            end=9,
            headings=("CLAUDE.md", "Commands"),
            parents=(),
            text="`make serve` runs the daemon in the foreground.",
        ),
        Chunk(
            start=13,
            end=14,
            headings=("CLAUDE.md", "Architecture"),
            parents=(),
            text="The core is pure: no I/O, no clock.",
        ),
        Chunk(
            start=18,
            end=18,
            headings=("CLAUDE.md", "Architecture", "Testing"),
            parents=(),
            text="Use Hypothesis for properties.",
        ),
    )


def test_searchable_text_starts_with_the_heading_path_and_parents() -> None:
    found = chunk("# Testing\n## Fixtures\n- Sockets:\n  - short paths\n")
    assert [c.searchable for c in found] == [
        "Testing > Fixtures: Sockets:",
        "Testing > Fixtures > Sockets:: short paths",
    ]
    assert chunk("Just prose.")[0].searchable == "Just prose."


def test_headings_replace_those_at_their_level_and_deeper() -> None:
    text = "# A\n## B\n### C\nc\n## D\nd\n# E\n#### F\nf\n####### not a heading\n"
    assert [(c.headings, c.text) for c in chunk(text)] == [
        (("A", "B", "C"), "c"),
        (("A", "D"), "d"),
        (("E", "F"), "f ####### not a heading"),
    ]
    assert chunk("# A\n## B\n#\nx\n")[0].headings == ()  # an empty heading ends A and B


@pytest.mark.parametrize(
    ("line", "heading"),
    [
        ("# Title", "Title"),
        ("#   Spaced    title   ", "Spaced title"),
        ("## Closed ##", "Closed"),
        ("## Hash#inside", "Hash#inside"),
        ("   ### Three spaces", "Three spaces"),
        ("#\tTab", "Tab"),
        ("# Comment <!-- dropped --> kept", "Comment kept"),
    ],
)
def test_atx_heading_text(line: str, heading: str) -> None:
    assert chunk(f"{line}\nbody\n")[0].headings == (heading,)


@pytest.mark.parametrize("line", ["#hashtag first", "    # indented code", "####### seven"])
def test_lines_that_are_not_atx_headings_are_text(line: str) -> None:
    assert chunk(f"{line}\n") == (
        Chunk(start=1, end=1, headings=(), parents=(), text=" ".join(line.split())),
    )


def test_a_mdc_file_skips_its_front_matter_and_counts_its_lines() -> None:
    mdc = (
        "---\r\n"
        "description: TypeScript rules\r\n"
        "globs: src/**/*.ts\r\n"
        "alwaysApply: false\r\n"
        "---\r\n"
        "\r\n"
        "- Prefer `unknown` over `any`.\r\n"
        "- Never use `enum`; use a union of literals.\r\n"
    )
    assert _spans(mdc) == [
        (7, 7, "Prefer `unknown` over `any`."),
        (8, 8, "Never use `enum`; use a union of literals."),
    ]
    assert _spans("\ufeff---\ntitle: x\n...\nBody.\n") == [(4, 4, "Body.")]


def test_without_a_closing_line_there_is_no_front_matter() -> None:
    assert _spans("---\ntitle: x\n\nBody.\n") == [(2, 2, "title: x"), (4, 4, "Body.")]
    text = "Text\n\n---\ntitle: x\n\n---\n"  # not on line 1: breaks
    assert _spans(text) == [(1, 1, "Text"), (4, 4, "title: x")]


NESTED = """\
## Style

- Formatting:
  - ruff format,
    line length 100
  - [x] no trailing commas
    1. numbered sub-item
  Lazy line of the numbered sub-item.

  - another child

  Paragraph of Formatting, after its children.
- [ ] Naming

  A second paragraph of Naming.
-
  - child of an empty bullet
* star
+ plus
10) ten
"""


def test_each_bullet_is_a_chunk_and_nested_ones_name_their_parents() -> None:
    got = [(c.start, c.end, c.parents, c.text) for c in chunk(NESTED)]
    assert got == [
        (3, 3, (), "Formatting:"),
        (4, 5, ("Formatting:",), "ruff format, line length 100"),
        (6, 6, ("Formatting:",), "no trailing commas"),
        (
            7,
            8,
            ("Formatting:", "no trailing commas"),
            "numbered sub-item Lazy line of the numbered sub-item.",
        ),
        (10, 10, ("Formatting:",), "another child"),
        (12, 12, ("Formatting:",), "Paragraph of Formatting, after its children."),
        (13, 15, (), "Naming A second paragraph of Naming."),
        (17, 17, (), "child of an empty bullet"),  # the bare `-` has no text: no chunk
        (18, 18, (), "star"),
        (19, 19, (), "plus"),
        (20, 20, (), "ten"),
    ]
    assert all(c.headings == ("Style",) for c in chunk(NESTED))


def test_a_bullet_interrupts_a_paragraph_and_a_line_without_a_marker_space_does_not() -> None:
    text = "Steps:\n- one\n-not a bullet\n*emphasis* too\n1.5 million\n"
    assert _spans(text) == [
        (1, 1, "Steps:"),
        (2, 5, "one -not a bullet *emphasis* too 1.5 million"),
    ]


def test_only_the_innermost_parents_are_kept() -> None:
    text = "".join("  " * depth + f"- level {depth}\n" for depth in range(6))
    deepest = chunk(text)[-1]
    assert deepest.text == "level 5"
    assert len(deepest.parents) == MAX_PARENTS
    assert deepest.parents == ("level 2", "level 3", "level 4")


def test_a_long_parent_or_heading_is_cut_at_a_space() -> None:
    long = " ".join(["word"] * 100)  # 499 characters
    found = chunk(f"# {long}\n- {long}\n  - child\n")
    assert found[-1].headings[0] == " ".join(["word"] * 40)
    assert found[-1].parents[0] == " ".join(["word"] * 40)
    assert found[0].text == long  # the text itself is never cut


FENCES = """\
# Build

Run the whole suite:

```sh
make test

make lint
# not a heading
- not a bullet
<!-- not a comment -->
```

Another paragraph.
~~~~python title="x"
def f():
    return 1
~~~
~~~~~
After the fence, same chunk.

## Alone

```
code under a heading, with nothing before it
```
"""


def test_fenced_code_stays_with_its_paragraph_and_a_blank_line_inside_splits_nothing() -> None:
    assert [(c.start, c.end, c.headings, c.text) for c in chunk(FENCES)] == [
        (
            3,
            12,
            ("Build",),
            "Run the whole suite: make test make lint # not a heading - not a bullet "
            "<!-- not a comment -->",
        ),
        (
            14,
            20,
            ("Build",),
            "Another paragraph. def f(): return 1 ~~~ After the fence, same chunk.",
        ),
        (24, 26, ("Build", "Alone"), "code under a heading, with nothing before it"),
    ]


def test_fences_in_bullets_and_unclosed_fences() -> None:
    text = (
        "- Install:\n"
        "\n"
        "  ```sh\n"
        "  uv sync\n"
        "\n"
        "  ```\n"
        "- ```\n"
        "  bullet that is a fence\n"
        "\n"
        "  # still code\n"
        "  ```\n"
        "- last\n"
        "\n"
        "```\n"
        "unclosed\n"
        "\n"
        "# code to the end\n"
    )
    assert _spans(text) == [
        (1, 6, "Install: uv sync"),
        (7, 11, "bullet that is a fence # still code"),
        (12, 17, "last unclosed # code to the end"),
    ]


def test_a_fence_after_a_heading_comment_or_break_is_its_own_chunk_and_empty_ones_drop() -> None:
    assert _spans("# H\n```\nx\n```\n") == [(2, 4, "x")]
    assert _spans("Para.\n\n<!-- c -->\n\n```\nx\n```\n") == [(1, 1, "Para."), (5, 7, "x")]
    assert _spans("Para.\n\n***\n```\nx\n```\n") == [(1, 1, "Para."), (4, 6, "x")]
    assert _spans("# H\n```\n\n```\n") == []
    assert _spans("```py`\nnot a fence: a backtick in the info\n") == [
        (1, 2, "```py` not a fence: a backtick in the info")
    ]


def test_setext_headings() -> None:
    text = (
        "Project\n"
        "=======\n"
        "\n"
        "Intro.\n"
        "\n"
        "Two-line\n"
        "section title\n"
        "---\n"
        "Body.\n"
        "\n"
        "---\n"
        "After a break.\n"
        "- bullet\n"
        "---\n"
        "- item\n"
        "===\n"
    )
    assert [(c.start, c.end, c.headings, c.text) for c in chunk(text)] == [
        (4, 4, ("Project",), "Intro."),
        (9, 9, ("Project", "Two-line section title"), "Body."),
        (12, 12, ("Project", "Two-line section title"), "After a break."),
        (13, 13, ("Project", "Two-line section title"), "bullet"),  # `---` under it: a break
        (15, 16, ("Project", "Two-line section title"), "item ==="),  # `===` under it: text
    ]


def test_a_paragraph_inside_a_list_is_never_a_setext_heading() -> None:
    text = "- a\n  - b\n\n  para of a\n  ---\nnext\n"
    assert [(c.start, c.headings, c.parents, c.text) for c in chunk(text)] == [
        (1, (), (), "a"),
        (2, (), ("a",), "b"),
        (4, (), ("a",), "para of a"),  # the `---` under it is a break
        (6, (), (), "next"),
    ]


def test_a_table_is_one_chunk() -> None:
    text = (
        "Ports:\n"
        "\n"
        "| Service | Port |\n"
        "|:--------|-----:|\n"
        "| api     | 8080 |\n"
        "| db      | 5432 |\n"
        "\n"
        "a | b\n"
        "--|--\n"
        "c | d\n"
        "# After\n"
    )
    assert _spans(text) == [
        (1, 1, "Ports:"),
        (3, 6, "| Service | Port | | api | 8080 | | db | 5432 |"),
        (8, 10, "a | b c | d"),
    ]


def test_comments_and_breaks_are_skipped() -> None:
    text = (
        "<!-- memd:start -->\n"
        "Inside memd's block.\n"
        "<!-- memd:end -->\n"
        "<!--\n"
        "multi-line\n"
        "comment -->\n"
        "Kept <!-- inline --> text.\n"
        "  <!-- indented comment -->\n"
        "___\n"
        "* * *\n"
        "> Quoted\n"
        "> > twice\n"
        "<!-- never closed\n"
        "everything after is comment\n"
    )
    assert _spans(text) == [
        (2, 2, "Inside memd's block."),
        (7, 7, "Kept text."),
        (11, 12, "Quoted twice"),
    ]


@pytest.mark.parametrize(
    ("line", "text"),
    [
        ("a <!-- b --> c <!-- d", "a c <!-- d"),  # an unclosed one is text
        ("a<!---->b<!--<!-- x -->c", "a b c"),
        ("x <!--" * 3, "x <!--x <!--x <!--"),
    ],
)
def test_comments_within_a_line(line: str, text: str) -> None:
    assert _spans(f"{line}\n") == [(1, 1, text)]


def test_crlf_and_lf_give_the_same_chunks() -> None:
    assert chunk(CLAUDE_MD.replace("\n", "\r\n")) == chunk(CLAUDE_MD)
    assert chunk(FENCES.replace("\n", "\r\n")) == chunk(FENCES)


def test_a_long_paragraph_is_split_at_line_boundaries() -> None:
    lines = [f"Line {n} of a very long paragraph that goes on and on." for n in range(1, 101)]
    found = chunk("# Long\n" + "\n".join(lines) + "\n")
    assert len(found) > 1
    assert found[0].start == 2
    assert found[-1].end == 101
    for before, after in itertools.pairwise(found):
        assert before.end + 1 == after.start
    assert all(len(c.text) <= MAX_CHUNK_CHARS for c in found)
    assert all(c.headings == ("Long",) for c in found)
    assert " ".join(c.text for c in found) == " ".join(lines)


def test_a_line_longer_than_the_limit_is_a_chunk_by_itself() -> None:
    long = "x" * (MAX_CHUNK_CHARS + 10)
    assert _spans(f"before\n{long}\nafter\n") == [(1, 1, "before"), (2, 2, long), (3, 3, "after")]


def test_split_lines_numbers_lines_as_chunk_does() -> None:
    assert split_lines("a\r\nb\n\nc") == ["a", "b", "", "c"]
    assert split_lines("a\n") == ["a"]
    assert split_lines("") == []


# A model of the rules for a restricted language: documents built from blocks separated by
# blank lines, each block drawn with the chunks it must give.

_WORDS = st.sampled_from(
    [
        "memd",
        "pytest",
        "never",
        "commit",
        ".env",
        "`make test`",
        "**bold**",
        "snake_case",
        "src/config.ts",
        "→",
        "über",
        "x|y",
        "#tag",
        "1.5",
        "a-b",
        "<b>",
        "(see",
        "docs)",
    ]
)
_CODE = st.sampled_from(
    [
        "",
        "   ",
        "# not a heading",
        "- not a bullet",
        "---",
        "<!-- not a comment",
        "| a | b |",
        "|---|---|",
        "===",
        "```python",
        "~~~~~~ info",
        "def f():",
        "    return  1",
    ]
)


@st.composite
def _phrase(draw: st.DrawFn, max_words: int = 6) -> tuple[str, str]:
    """A line of words as written (odd spacing) and as collapsed."""
    words = draw(st.lists(_WORDS, min_size=1, max_size=max_words))
    separator = draw(st.sampled_from([" ", "  ", " \t "]))
    trailing = draw(st.sampled_from(["", "  ", "\t"]))
    return separator.join(words) + trailing, " ".join(words)


@dataclass
class _ModelBlock:
    start: int
    headings: tuple[str, ...]
    parents: tuple[str, ...]
    texts: list[str] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)  # 0-based, its non-blank lines


@dataclass
class _Model:
    lines: list[str] = field(default_factory=list)
    headings: list[tuple[int, str]] = field(default_factory=list)
    blocks: list[_ModelBlock] = field(default_factory=list)
    attachable: bool = False  # only blank lines since the last block
    skipped: list[int] = field(default_factory=list)  # 0-based lines that are in no chunk

    def heading(self, level: int, text: str) -> None:
        while self.headings and self.headings[-1][0] >= level:
            self.headings.pop()
        self.headings.append((level, text))
        self.attachable = False

    def block(self, parents: tuple[str, ...]) -> None:
        headings = tuple(text for _, text in self.headings)
        self.blocks.append(_ModelBlock(len(self.lines), headings, parents))
        self.attachable = True

    def add(self, line: str, text: str | None) -> None:
        """Add a line of the last block (text None: a line with no text, such as a fence)."""
        if text is not None:
            self.blocks[-1].texts.append(text)
        self.blocks[-1].lines.append(len(self.lines))
        self.lines.append(line)

    def skip(self, line: str) -> None:
        self.skipped.append(len(self.lines))
        self.lines.append(line)

    def content(self) -> list[int]:
        """The lines that must be in exactly one chunk (a block without text gives none)."""
        return [line for block in self.blocks if block.texts for line in block.lines]

    def chunks(self) -> tuple[Chunk, ...]:
        return tuple(
            Chunk(
                start=block.start + 1,
                end=block.lines[-1] + 1,
                headings=block.headings,
                parents=block.parents,
                text=" ".join(block.texts),
            )
            for block in self.blocks
            if block.texts
        )


def _atx(draw: st.DrawFn, model: _Model) -> None:
    level = draw(st.integers(1, 6))
    written, text = draw(_phrase())
    closing = draw(st.sampled_from(["", " #", " ###"]))
    model.skip("#" * level + " " + written + closing)
    model.heading(level, text)


def _setext(draw: st.DrawFn, model: _Model) -> None:
    lines = draw(st.lists(_phrase(), min_size=1, max_size=2))
    for written, _ in lines:
        model.skip(written)
    underline = draw(st.sampled_from(["=", "===", "-", "---", "------ "]))
    model.skip(underline)
    model.heading(1 if underline[0] == "=" else 2, " ".join(text for _, text in lines))


def _paragraph(draw: st.DrawFn, model: _Model) -> None:
    lines = draw(st.lists(_phrase(), min_size=1, max_size=4))
    model.block(())
    for number, (written, text) in enumerate(lines):
        indent = draw(st.sampled_from(["", "  ", "     "])) if number else ""
        model.add(indent + written, text)


def _list(draw: st.DrawFn, model: _Model) -> None:
    marker = draw(st.sampled_from(["-", "*", "+", "1.", "2)"]))
    width = len(marker) + 1
    labels: list[str] = []  # the item texts of the open bullets
    for _ in range(draw(st.integers(1, 5))):
        depth = draw(st.integers(0, len(labels)))
        del labels[depth:]
        box = draw(st.sampled_from(["", "[ ] ", "[x] "]))
        written, text = draw(_phrase())
        model.block(tuple(labels[-MAX_PARENTS:]))
        model.add(" " * (width * depth) + marker + " " + box + written, text)
        labels.append(text)
        for _ in range(draw(st.integers(0, 2))):
            if draw(st.booleans()):
                model.lines.append("")  # a blank line, then a line indented to the item's text
            written, text = draw(_phrase())
            model.add(" " * (width * (depth + 1)) + written, text)


def _fence(draw: st.DrawFn, model: _Model) -> None:
    char = draw(st.sampled_from("`~"))
    length = draw(st.integers(4, 5))
    info = draw(st.sampled_from(["", "sh", " python title=x"]))
    if not model.attachable:
        model.block(())
    model.add(char * length + info, None)
    for code in draw(st.lists(_CODE, max_size=5)):
        if code.strip():
            model.add(code, " ".join(code.split()))
        else:
            model.lines.append(code)  # blank inside a fence: ends nothing
    model.add(char * (length + draw(st.integers(0, 2))) + draw(st.sampled_from(["", "  "])), None)


def _table(draw: st.DrawFn, model: _Model) -> None:
    columns = draw(st.integers(1, 3))
    cell = _phrase(max_words=3)
    model.block(())
    for row in range(draw(st.integers(1, 4))):
        cells = [draw(cell)[1] for _ in range(columns)]
        line = "| " + " | ".join(cells) + " |"
        model.add(line, line)
        if row == 0:
            aligns = draw(st.lists(st.sampled_from(["---", ":--", ":-:", "--:"]), min_size=columns))
            model.add("|" + "|".join(aligns[:columns]) + "|", None)


def _comment(draw: st.DrawFn, model: _Model) -> None:
    written, _ = draw(_phrase())
    for line in draw(
        st.sampled_from(
            [[f"<!-- {written} -->"], ["<!--", written, "-->"], [f"  <!-- {written}", "end -->"]]
        )
    ):
        model.skip(line)
    model.attachable = False


def _thematic_break(draw: st.DrawFn, model: _Model) -> None:
    first = not model.lines  # a first line `---` would open front matter
    model.skip(
        draw(st.sampled_from(["***", "___", "- - -", " * * *", *([] if first else ["---"])]))
    )
    model.attachable = False


_BLOCKS = [_atx, _setext, _paragraph, _list, _fence, _table, _comment, _thematic_break]


@st.composite
def _documents(draw: st.DrawFn) -> tuple[str, _Model]:
    model = _Model()
    if draw(st.booleans()):
        for line in ["---", "description: rules", "globs: **/*.ts", "alwaysApply: false", "---"]:
            model.skip(line)
    for number, make in enumerate(draw(st.lists(st.sampled_from(_BLOCKS), max_size=10))):
        if number or model.lines:
            model.lines.extend(
                draw(st.lists(st.sampled_from(["", "  ", "\t"]), min_size=1, max_size=2))
            )
        make(draw, model)
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    end = draw(st.sampled_from(["", newline]))
    bom = draw(st.sampled_from(["", "\ufeff"]))
    return bom + newline.join(model.lines) + end, model


@settings(max_examples=examples(500))
@given(_documents())
def test_chunks_follow_the_model_of_the_rules(document: tuple[str, _Model]) -> None:
    text, model = document
    expected = model.chunks()
    assume(all(len(c.text) <= MAX_CHUNK_CHARS for c in expected))
    found = chunk(text)
    for index in model.content():  # every line of text is in exactly one chunk
        assert sum(c.start <= index + 1 <= c.end for c in found) == 1, index + 1
    for index in model.skipped:  # front matter, headings, comments and breaks are in none
        assert not any(c.start <= index + 1 <= c.end for c in found), index + 1
    assert found == expected


def _assert_well_formed(text: str, found: tuple[Chunk, ...]) -> None:
    lines = split_lines(text)
    end = 0
    for piece in found:
        assert end < piece.start <= piece.end <= len(lines)  # in order, no overlap, in the text
        assert lines[piece.start - 1].strip()
        assert lines[piece.end - 1].strip()
        assert piece.text
        assert piece.text == " ".join(piece.text.split())
        assert len(piece.text) <= MAX_CHUNK_CHARS or any(
            len(" ".join(line.split())) >= len(piece.text)
            for line in lines[piece.start - 1 : piece.end]
        )
        end = piece.end


_MARKDOWN_LINES = st.sampled_from(
    [
        "",
        "  ",
        "---",
        "...",
        "# Heading",
        "## Sub ##",
        "Text line",
        "=====",
        "- bullet",
        "  - nested",
        "    continuation",
        "-",
        "1. one",
        "* [x] done",
        "```",
        "```sh",
        "~~~",
        "  ```",
        "- ```",
        "<!-- comment -->",
        "<!--",
        "-->",
        "| a | b |",
        "|---|---|",
        "***",
        "> quote",
        "\ufeff",
        "\t\ttabs",
    ]
)
_MARKDOWN = st.lists(st.one_of(_MARKDOWN_LINES, st.text(max_size=20)), max_size=40).map("\n".join)


@settings(max_examples=examples(500))
@given(st.one_of(st.text(), _MARKDOWN))
def test_chunking_any_text_never_raises_and_gives_well_formed_chunks(text: str) -> None:
    found = chunk(text)
    _assert_well_formed(text, found)
    assert chunk(text) == found  # deterministic


@given(st.one_of(st.text(), _MARKDOWN).map(lambda text: text.replace("\r", "")))
def test_crlf_never_changes_the_chunks(text: str) -> None:
    assert chunk(text.replace("\n", "\r\n")) == chunk(text)


@given(st.lists(st.text(st.characters(categories=["L", "N"]), max_size=400), min_size=1))
def test_a_paragraph_of_any_length_is_split_greedily_and_whole(words: list[str]) -> None:
    lines = [f"p {word}".strip() for word in words]  # "p" keeps every line plain text
    found = chunk("\n".join(lines))
    _assert_well_formed("\n".join(lines), found)
    assert found[0].start == 1
    assert found[-1].end == len(lines)
    for before, after in itertools.pairwise(found):
        assert before.end + 1 == after.start
        assert len(before.text) + 1 + len(lines[after.start - 1]) > MAX_CHUNK_CHARS
    assert " ".join(c.text for c in found) == " ".join(lines)
