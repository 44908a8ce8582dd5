"""The `.gitattributes` line that names memd's merge driver: added once, everything else kept
byte for byte, and seen when another line already names the driver."""

from __future__ import annotations

from hypothesis import given, strategies as st

from memd.core.project.gitattributes import (
    COMMENT,
    MERGE_LINE,
    merges_memory,
    names_merge_driver,
    with_merge_driver,
)


def test_a_missing_file_gets_the_comment_and_the_line() -> None:
    assert with_merge_driver(None) == f"{COMMENT}\n{MERGE_LINE}\n"


def test_the_rest_is_kept_and_crlf_too() -> None:
    assert with_merge_driver("*.png binary\r\n*.sh eol=lf") == (
        f"*.png binary\r\n*.sh eol=lf\r\n{COMMENT}\r\n{MERGE_LINE}\r\n"
    )


def test_a_covering_line_is_enough() -> None:
    for line in ("/.memory/*.md merge=memd", "**/.memory/*.md  text merge=memd"):
        assert merges_memory(line)
        assert with_merge_driver(line + "\n") == line + "\n"
    assert not merges_memory("# .memory/*.md merge=memd\n")
    assert not merges_memory(".memory/*.md merge=union\n")


def test_any_line_naming_the_driver_is_seen() -> None:
    assert names_merge_driver("notes/*.md merge=memd\n")
    assert not names_merge_driver("# merge=memd\n*.md merge=ours\n")


@given(st.text(alphabet=st.sampled_from("ab *=.\n\r#/"), max_size=60))
def test_adding_is_idempotent_and_keeps_the_text(text: str) -> None:
    once = with_merge_driver(text)
    assert once.startswith(text)
    assert merges_memory(once)
    assert with_merge_driver(once) == once
