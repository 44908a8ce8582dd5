"""How a cleanup plan reads: the daemon's sentence (`memd.server.rpc.wire`), the action lines both
front ends share (`memd.core.format.render`), the CLI's text and the MCP tool's text, from a
real plan of the pure planner."""

from __future__ import annotations

import pytest

from memd.cli.render import render_cleanup as cli_text
from memd.core.format.categories import Category
from memd.core.format.mdformat import parse
from memd.core.format.render import entry_ref, quote
from memd.core.writes.cleanup import plan_cleanup
from memd.mcp_bridge.text import render_cleanup as mcp_text
from memd.server.rpc.wire import cleanup_result
from memd_client import protocol as p

SLUG_LESS_WINNER = (
    "- Indent Python code with tabs, overriding PEP8\n- [tabs] Indent Python code with tabs\n"
)
"""The kept entry has no slug and takes its loser's: both would be called [tabs]."""
SHARED_SLUG = (
    "- [tabs] Indent Python code with tabs, overriding PEP8\n"
    "- [tabs] Indent Python code with tabs\n"
)
"""Two entries of one file with the same slug (a hand edit or a git merge can do this)."""
TIED = "- [pin] Pin numpy\n- [vendor] Vendor openssl\n- [sign] Sign commits\n"
"""Three Decision entries scoring 30 each."""


def result(
    files: dict[Category, str], *, applied: bool = False, limit: int = 40
) -> p.CleanupResult:
    plans = {c: plan_cleanup(c, parse(text), limit=limit) for c, text in files.items()}
    return cleanup_result("/w/.memory/archive.md", plans, applied)


def plan_lines(text: str) -> list[str]:
    """The action lines of a rendered plan (after the summary, before how to apply it)."""
    return text.splitlines()[1:-1]


def test_a_kept_entry_taking_its_losers_slug_is_told_apart_from_it() -> None:
    shown = result({Category.QUIRK: SLUG_LESS_WINNER})
    assert plan_lines(cli_text(shown)) == [
        '  keep   quirks.md:1 "Indent Python code with tabs, overriding PEP8": the most specific '
        "wording; it gets the slug [tabs] from quirks.md:2",
        '  fold   quirks.md:2 [tabs] "Indent Python code with tabs" into quirks.md:1: a shorter '
        "form of it",
    ]
    assert plan_lines(mcp_text(shown)) == [
        '- keep quirks.md:1 "Indent Python code with tabs, overriding PEP8": the most specific '
        "wording; it gets the slug [tabs] from quirks.md:2",
        '- fold quirks.md:2 [tabs] "Indent Python code with tabs" into quirks.md:1: a shorter '
        "form of it",
    ]


def test_two_entries_sharing_a_slug_are_named_by_line_and_text() -> None:
    shown = result({Category.QUIRK: SHARED_SLUG})
    assert plan_lines(cli_text(shown)) == [
        '  keep   quirks.md:1 [tabs] "Indent Python code with tabs, overriding PEP8": the most '
        "specific wording",
        '  fold   quirks.md:2 [tabs] "Indent Python code with tabs" into quirks.md:1: a shorter '
        "form of it",
    ]


def test_the_daemon_sentence_presumes_no_front_end_and_each_says_how_to_apply_once() -> None:
    shown = result({Category.QUIRK: SLUG_LESS_WINNER, Category.DECISION: TIED}, limit=2)
    assert shown.message == (
        "Cleanup would merge 2 entries into 1, prune 1 entry over the limit and give 1 entry a "
        "slug; nothing was written."
    )
    cli, mcp = cli_text(shown), mcp_text(shown)
    assert cli.splitlines()[-1] == "Run `memd cleanup --apply` to carry it out."
    assert mcp.splitlines()[-1] == "Call cleanupMemory with apply: true to carry it out."
    assert "apply: true" not in cli and "apply=true" not in cli
    assert "--apply" not in mcp and "memd cleanup" not in mcp
    for text in (cli, mcp):  # each fact once
        assert text.lower().count("nothing") == 1
        assert text.count("apply") == 1


def test_an_applied_cleanup_says_where_the_removed_entries_went_and_nothing_more() -> None:
    shown = result({Category.QUIRK: SLUG_LESS_WINNER}, applied=True)
    assert shown.message == (
        "Cleanup merged 2 entries into 1 and gave 1 entry a slug; the removed entries are kept "
        "in .memory/archive.md."
    )
    for text in (cli_text(shown), mcp_text(shown)):
        assert "apply" not in text and "nothing" not in text.lower()
    slugs_only = result({Category.QUIRK: "- Watchfiles goes blind.\n"}, applied=True)
    assert slugs_only.message == "Cleanup gave 1 entry a slug."


def test_a_pruned_entry_says_why_in_words_and_names_the_newer_entry_it_tied_with() -> None:
    shown = result({Category.DECISION: f"- [long] {'z' * 201}\n{TIED}"}, limit=2)
    (lowest, tied) = shown.pruned
    assert (
        lowest.why == "over the Decision limit of 2; it scores 17, less than every entry that stays"
    )
    assert lowest.tied_with is None
    assert tied.entry.slug == "pin" and tied.tied_with is not None
    assert tied.tied_with.slug == "vendor"
    assert tied.why == (
        'over the Decision limit of 2; it scores 30, as does decisions.md:3 [vendor] "Vendor '
        'openssl", which stays as the newer entry (further down the file)'
    )
    assert f'  prune  decisions.md:2 [pin] "Pin numpy": {tied.why}' in cli_text(shown)
    assert f'- prune decisions.md:2 [pin] "Pin numpy": {tied.why}' in mcp_text(shown)


def test_a_pruned_side_of_a_contradiction_names_the_newer_side_that_stays() -> None:
    text = (
        "- [on] Enable source maps in production builds.\n"
        "- [pin] Pin numpy in requirements.txt with pip.\n"
        "- [off] Disable source maps in production builds.\n"
    )
    shown = result({Category.DECISION: text}, limit=1)
    assert shown.message == (
        "Cleanup would prune 2 entries over the limit (keeping the newer side of 1 "
        "contradiction); nothing was written."
    )
    (on, pin) = shown.pruned
    assert on.contradicted_by is not None and on.contradicted_by.slug == "off"
    assert pin.contradicted_by is None
    assert on.why == (
        "over the Decision limit of 1; it scores 30, less than every entry that stays by its "
        "score (a contradiction's newer side stays whatever it scores); decisions.md:3 [off] "
        '"Disable source maps in production builds." reverses it and stays although the limit '
        "would prune it too: cleanup keeps the newer side of a contradiction"
    )
    entry = f'decisions.md:1 [on] "Enable source maps in production builds.": {on.why}'
    assert f"  prune  {entry}" in cli_text(shown) and f"- prune {entry}" in mcp_text(shown)


def test_a_clean_memory_says_so_without_a_how_to_apply_line() -> None:
    shown = result({Category.QUIRK: "- [a] Watchfiles goes blind.\n"})
    assert (
        cli_text(shown)
        == mcp_text(shown)
        == ("Memory is already clean; nothing to merge, prune or slug.")
    )


@pytest.mark.parametrize(
    ("content", "quoted"),
    [
        ("Pin numpy", '"Pin numpy"'),
        ("x" * 48, '"' + "x" * 48 + '"'),
        ("x" * 49, '"' + "x" * 48 + '..."'),  # no space to cut at: cut in the word
        (
            "Indent Python code with tabs, overriding PEP8 and the team's style guide",
            '"Indent Python code with tabs, overriding PEP8..."',  # at a space, no comma left
        ),
    ],
)
def test_quotes_are_short(content: str, quoted: str) -> None:
    assert quote(content) == quoted


def test_an_entry_ref_names_file_line_slug_and_text() -> None:
    assert entry_ref("quirks.md", 7, "tabs", "Use tabs") == 'quirks.md:7 [tabs] "Use tabs"'
    assert entry_ref("quirks.md", 8, None, "Use tabs") == 'quirks.md:8 "Use tabs"'
