"""A citation's status from the gathered facts, the entry's, the stale note and the --fix
rewrite."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from memd.core.citations.anchors import anchors_of
from memd.core.citations.model import CodeFacts, EntryCheck, PathFact, Targets, WordFact
from memd.core.citations.verdicts import check_entry, fixed_content, stale_note
from tests.budget import examples


def statuses(content: str, facts: CodeFacts, baseline: str = "") -> list[str]:
    return [c.status for c in check_entry(anchors_of(content), facts, baseline).anchors]


@pytest.mark.parametrize(
    ("fact", "status"),
    [
        (PathFact(found=("src/a.ts",)), "ok"),
        (PathFact(found=("src/a.ts",), known=True, moved_to="x.ts"), "ok"),
        (PathFact(ignored=True, known=True), "unverifiable"),
        (PathFact(known=True, moved_to="src/b.ts"), "moved"),
        (PathFact(known=True), "missing"),
        (PathFact(), "unverifiable"),
    ],
)
def test_path_statuses(fact: PathFact, status: str) -> None:
    facts = CodeFacts(git=True, paths={"src/a.ts": fact})
    assert statuses("See `src/a.ts`.", facts) == [status]


def test_a_path_not_looked_up_is_unverifiable() -> None:
    assert statuses("See `src/a.ts`.", CodeFacts(git=True)) == ["unverifiable"]


WORDS = {"withFileLock": WordFact(files=("src/lock.ts",)), "gone": WordFact()}


@pytest.mark.parametrize(
    ("git", "known", "status"),
    [
        (True, {"abc": frozenset({"withFileLock"})}, "missing"),
        (True, {"abc": frozenset()}, "unverifiable"),  # never this workspace's
        (True, {}, "unverifiable"),  # no record for the baseline
        (False, {"abc": frozenset({"withFileLock"})}, "unverifiable"),  # no git
    ],
)
def test_a_gone_symbol_is_missing_only_when_known_at_the_baseline(
    git: bool, known: dict[str, frozenset[str]], status: str
) -> None:
    facts = CodeFacts(git=git, words={"withFileLock": WordFact()}, known_words=known)
    assert statuses("Call `withFileLock()`.", facts, baseline="abc") == [status]


def test_symbol_config_and_env_found_are_ok() -> None:
    facts = CodeFacts(
        git=True,
        words={
            "Store": WordFact(files=("a.py",)),
            "flush": WordFact(files=("a.py", "b.py"), more=True),
            "SHOP_REGION": WordFact(files=(".env.example",)),
            "tool": WordFact(files=("pyproject.toml",)),
            "black": WordFact(files=("pyproject.toml",)),
        },
    )
    content = "`Store.flush` reads `SHOP_REGION`; see `[tool.black]`."
    check = check_entry(anchors_of(content), facts)
    assert [c.status for c in check.anchors] == ["ok", "ok", "ok"]
    assert check.status == "ok"
    assert check.anchors[0].evidence == "flush occurs in a.py, b.py and more"


def test_a_symbol_now_only_in_another_file_next_to_the_cited_one_moved() -> None:
    content = "`parse_row()` in `src/io.py` skips blanks"
    facts = CodeFacts(
        git=True,
        paths={"src/io.py": PathFact(found=("src/io.py",))},
        words={"parse_row": WordFact(files=("src/rows.py",))},
    )
    check = check_entry(anchors_of(content), facts)
    assert check.status == "stale"
    assert [(c.status, c.moved_to) for c in check.anchors] == [
        ("moved", "src/rows.py"),
        ("ok", None),
    ]
    assert stale_note(check) == "cites `parse_row()` in src/io.py, which is now in src/rows.py"
    assert fixed_content(content, check) == "`parse_row()` in `src/rows.py` skips blanks"


@pytest.mark.parametrize(
    "content",
    [
        "`parse_row()` is handy. Tests live in `src/io.py` too",  # not next to it
        "`parse_row()` in `src/io.py` or `src/more.py`",  # two cited paths
    ],
)
def test_a_symbol_elsewhere_is_not_moved_without_a_path_right_next_to_it(content: str) -> None:
    facts = CodeFacts(
        git=True,
        paths={
            "src/io.py": PathFact(found=("src/io.py",)),
            "src/more.py": PathFact(found=("src/more.py",)),
        },
        words={"parse_row": WordFact(files=("src/rows.py",))},
    )
    assert check_entry(anchors_of(content), facts).status == "ok"


@pytest.mark.parametrize(
    ("content", "targets", "status"),
    [
        ("`make lint`", {"make": Targets(frozenset({"lint"}))}, "ok"),
        ("`make lint`", {"make": Targets(frozenset({"fmt"}))}, "missing"),
        ("`make lint`", {"make": Targets(frozenset({"fmt"}), complete=False)}, "unverifiable"),
        ("`make lint`", {}, "unverifiable"),
        ("`pnpm e2e`", {"npm": Targets(frozenset({"build"}))}, "missing"),
        ("`npm run e2e`", {"npm": Targets(frozenset({"e2e"}))}, "ok"),
        ("`just ship`", {"just": Targets(frozenset())}, "missing"),
        ("`cargo xtask`", {"cargo": Targets(frozenset({"xtask"}))}, "ok"),
    ],
)
def test_command_statuses(content: str, targets: dict[str, Targets], status: str) -> None:
    assert statuses(content, CodeFacts(git=True, targets=targets)) == [status]


@pytest.mark.parametrize(
    ("words", "status"),
    [
        ({"sync": WordFact(files=("acme/cli.py",))}, "ok"),
        ({"sync": WordFact()}, "missing"),
        ({}, "unverifiable"),
    ],
)
def test_a_repo_cli_subcommand_is_judged_like_a_word(
    words: dict[str, WordFact], status: str
) -> None:
    facts = CodeFacts(
        git=True,
        targets={"acme": Targets(frozenset(), complete=False)},
        words=words,
        known_words={"": frozenset({"sync"})},
    )
    assert statuses("Run `acme sync --all`", facts) == [status]


def test_entry_statuses_and_notes() -> None:
    facts = CodeFacts(
        git=True,
        paths={
            "src/old.ts": PathFact(known=True, moved_to="src/new.ts"),
            "src/gone.ts": PathFact(known=True),
        },
        words={"withFileLock": WordFact()},
        targets={"npm": Targets(frozenset({"build"}))},
        known_words={"": frozenset({"withFileLock"})},
    )
    assert check_entry(anchors_of("No citations here."), facts) == EntryCheck("none")
    check = check_entry(anchors_of("Edit src/old.ts"), facts)
    assert stale_note(check) == "cites src/old.ts, which no longer exists; moved to src/new.ts"
    check = check_entry(anchors_of("Wrap writes in `withFileLock()`, run `npm run e2e`"), facts)
    assert stale_note(check) == (
        "cites `withFileLock()`, which no tracked file mentions any more; "
        "cites `npm run e2e`, but package.json has no script e2e any more"
    )
    check = check_entry(anchors_of("See `src/gone.ts`"), facts)
    assert stale_note(check) == "cites src/gone.ts, which no longer exists"
    assert fixed_content("See `src/gone.ts`", check) is None  # missing is never rewritten
    assert stale_note(check_entry(anchors_of("`x.py`"), CodeFacts(git=True))) == ""


def test_a_citation_repeated_in_an_entry_is_noted_once() -> None:
    facts = CodeFacts(git=True, paths={"src/old.ts": PathFact(known=True, moved_to="src/new.ts")})
    check = check_entry(anchors_of("Edit `src/old.ts`; its tests sit beside `src/old.ts`."), facts)
    assert [c.status for c in check.anchors] == ["moved", "moved"]
    assert stale_note(check) == "cites src/old.ts, which no longer exists; moved to src/new.ts"


@pytest.mark.parametrize(
    ("content", "moved_to", "fixed"),
    [
        ("Edit `./src/old.ts` first", "src/http/new.ts", "Edit `./src/http/new.ts` first"),
        ("Edit `/src/old.ts` first", "lib/new.ts", "Edit `/lib/new.ts` first"),
        ("Edit src/old.ts, then src/old.ts", "src/new.ts", "Edit src/new.ts, then src/new.ts"),
        ("Put it in `src/old/`", "src/new", "Put it in `src/new/`"),
        ("Import `src/api/client`", "src/http/client.ts", "Import `src/http/client`"),
        ("Run `python -m tools.old`", "tools/fresh.py", "Run `python -m tools.fresh`"),
    ],
)
def test_fix_rewrites_moved_citations_in_their_own_style(
    content: str, moved_to: str, fixed: str
) -> None:
    key = anchors_of(content)[0].key
    facts = CodeFacts(git=True, paths={key: PathFact(known=True, moved_to=moved_to)})
    assert fixed_content(content, check_entry(anchors_of(content), facts)) == fixed


def test_fix_leaves_everything_else_alone() -> None:
    content = "Keep `src/keep.ts`; `src/old.ts` matters; run `make lint`."
    edited = "Keep `src/keep.ts` too; `src/old.ts` matters; run `make lint`."
    facts = CodeFacts(
        git=True,
        paths={
            "src/keep.ts": PathFact(found=("src/keep.ts",)),
            "src/old.ts": PathFact(known=True, moved_to="src/new.ts"),
        },
        targets={"make": Targets(frozenset())},
    )
    check = check_entry(anchors_of(content), facts)
    assert [c.status for c in check.anchors] == ["ok", "moved", "missing"]
    assert fixed_content(content, check) == content.replace("src/old.ts", "src/new.ts")
    # the content changed since the check: the anchor's text is not at its offsets any more
    assert fixed_content(edited, check) is None


NAMES = st.from_regex(r"[a-z]{1,6}(/[a-z]{1,6}){0,2}\.(ts|py)", fullmatch=True)


@settings(max_examples=examples(200))
@given(old=NAMES, new=NAMES, before=st.text(max_size=30), after=st.text(max_size=30))
def test_fix_changes_only_the_moved_citation(old: str, new: str, before: str, after: str) -> None:
    content = f"{before.replace('`', '')} `{old}` {after.replace('`', '')}"
    anchors = anchors_of(content)
    facts = CodeFacts(
        git=True,
        paths={a.key: PathFact(known=True, moved_to=new) for a in anchors if a.kind == "path"},
    )
    check = check_entry(anchors, facts)
    fixed = fixed_content(content, check)
    moved = [c for c in check.anchors if c.status == "moved"]
    if not moved:
        assert fixed is None
        return
    assert fixed is not None
    position = 0
    for c in sorted(moved, key=lambda c: c.anchor.start):
        assert fixed.count(new) >= 1
        position = c.anchor.end
    assert fixed.endswith(content[position:])


def test_an_entry_whose_every_citation_is_unverifiable_is_none_not_ok() -> None:
    """memd claims a memory current only when one of its citations holds: citing only a
    third-party name or an ignored file says nothing either way."""
    content = "Never commit `.env`; `ThirdPartyThing.run()` is theirs."
    facts = CodeFacts(git=True, paths={".env": PathFact(ignored=True)}, words={})
    check = check_entry(anchors_of(content), facts)
    assert check.status == "none"
    assert check.anchors and {c.status for c in check.anchors} == {"unverifiable"}


def test_when_git_failed_the_evidence_says_so_instead_of_never_tracked() -> None:
    """A path not found and a word not found are unverifiable when git could not read the
    repository, and their evidence gives the reason, not a claim about the history."""
    problem = "git could not read this repository; run `git status` there to see why."
    facts = CodeFacts(
        git=True,
        paths={"src/old.ts": PathFact()},
        words={"oldHelper": WordFact()},
        problem=problem,
    )
    check = check_entry(anchors_of("See `src/old.ts` and `oldHelper()`."), facts)
    assert check.status == "none"
    assert [c.status for c in check.anchors] == ["unverifiable", "unverifiable"]
    assert all(c.evidence.endswith(problem) for c in check.anchors)
