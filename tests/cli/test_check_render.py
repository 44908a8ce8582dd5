"""How `memd check` shows a check: stale entries first with the note and the fix (or what
--fix did), then one line of counts; current and citation-free entries are only counted."""

from __future__ import annotations

from memd.cli.render import render_check
from memd_client import protocol as p


def _entry(
    slug: str, status: p.CheckStatus, note: str = "", fix: str | None = None
) -> p.CheckedEntry:
    return p.CheckedEntry(
        category="Decision",
        file="decisions.md",
        line=3,
        slug=slug,
        content=f"{slug} text in `src/old.ts`",
        status=status,
        anchors=[],
        note=note,
        fix=fix,
    )


NOTE = "cites src/old.ts, which no longer exists; moved to src/new.ts"
RESULT = p.CheckResult(
    entries=[
        _entry("moved", "stale", NOTE, "moved text in `src/new.ts`"),
        _entry("current", "ok"),
        _entry("plain", "none"),
    ],
    counts=p.CheckCounts(ok=1, stale=1, none=1),
    checked_at="2026-11-28T00:00:00+00:00",
    git=True,
)


def test_stale_entries_show_the_note_and_the_fix_then_the_counts() -> None:
    assert render_check(RESULT).splitlines() == [
        "stale  decisions.md:3  [Decision] [moved] moved text in `src/old.ts`",
        f"       {NOTE}",
        "       fix: moved text in `src/new.ts`  (memd check --fix)",
        "3 memories checked: 1 stale, 1 current, 1 citing nothing memd can check",
    ]


def test_after_fix_it_says_what_was_done_and_without_git_it_says_so() -> None:
    done = {("decisions.md", 3): "fixed: now [Decision] [moved] moved text in `src/new.ts`"}
    lines = render_check(RESULT, done).splitlines()
    assert lines[2] == "       fixed: now [Decision] [moved] moved text in `src/new.ts`"
    quiet = p.CheckResult(entries=[], counts=p.CheckCounts(), checked_at="", git=False)
    assert render_check(quiet) == (
        "0 memories checked: 0 stale, 0 current, 0 citing nothing memd can check "
        "(no git here: symbols cannot be checked)"
    )


def test_a_check_that_could_not_use_git_says_so_under_the_counts() -> None:
    problem = "git could not read this repository (a corrupt or missing .git?), so ..."
    result = p.CheckResult(
        entries=[], counts=p.CheckCounts(ok=2), checked_at="", git=True, problem=problem
    )
    assert render_check(result).splitlines()[-1] == problem


def test_an_entry_fixed_and_current_now_is_listed_as_fixed() -> None:
    after = p.CheckResult(
        entries=[_entry("moved", "ok")],
        counts=p.CheckCounts(ok=1),
        checked_at="2026-11-28T00:00:00+00:00",
        git=True,
    )
    done = {("decisions.md", 3): "fixed: now [Decision] [moved] moved text in `src/new.ts`"}
    assert render_check(after, done).splitlines() == [
        "fixed  decisions.md:3  [Decision] [moved] moved text in `src/new.ts`",
        "1 memory checked: 0 stale, 1 current, 0 citing nothing memd can check",
    ]
