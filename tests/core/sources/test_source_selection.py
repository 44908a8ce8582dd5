"""Which files are read-only sources: the defaults, the config file's and the project's
entries in order (the last matching rule wins), globs, and the entries that are refused."""

from __future__ import annotations

import pytest

from memd.core.sources.source_globs import (
    DEFAULT_SOURCES,
    SourceRule,
    could_contain,
    is_selected,
    parse_entry,
    pattern_matches,
    resolve_sources,
    segment_matches,
)


def _selected(
    path: str, global_entries: tuple[str, ...] = (), project: tuple[str, ...] = ()
) -> bool:
    rules = resolve_sources(global_entries, project).rules
    return is_selected(rules, path, ())


def test_the_defaults_are_the_files_agents_keep() -> None:
    assert DEFAULT_SOURCES == (
        "CLAUDE.md",
        "AGENTS.md",
        ".claude/rules/**/*.md",
        ".cursor/rules/**/*.mdc",
        ".github/copilot-instructions.md",
        "MEMORY.md",
        "memory/*.md",
    )
    selection = resolve_sources()
    assert [rule.pattern for rule in selection.walk] == list(DEFAULT_SOURCES)
    assert {rule.origin for rule in selection.rules} == {"default"}
    for path in (
        "CLAUDE.md",
        "AGENTS.md",
        ".claude/rules/style.md",
        ".claude/rules/backend/db/migrations.md",
        ".cursor/rules/python.mdc",
        ".cursor/rules/team/go.mdc",
        ".github/copilot-instructions.md",
        "MEMORY.md",
        "memory/2024-05-01.md",
    ):
        assert _selected(path), path
    for path in (
        "README.md",
        "docs/CLAUDE.md",  # a literal names one path, not a name anywhere
        ".cursor/rules/python.md",
        "memory/deep/x.md",  # `*` stays within one directory
        ".claude/rules/x.txt",
        ".claude/rules/.hidden/x.md",  # `**` never enters a dot directory
        ".claude/rules/.draft.md",
    ):
        assert not _selected(path), path


def test_removals_and_additions_apply_in_order_the_last_match_winning() -> None:
    assert not _selected("CLAUDE.md", ("!CLAUDE.md",))
    selection = resolve_sources(("!CLAUDE.md", "docs/adr/*.md"), ("!docs/adr/0002-*.md",))
    assert "CLAUDE.md" not in [rule.pattern for rule in selection.walk]
    assert selection.walk[-1] == SourceRule("docs/adr/*.md", True, "global")
    assert is_selected(selection.rules, "docs/adr/0001-use-postgres.md", ())
    assert not is_selected(selection.rules, "docs/adr/0002-drop-redis.md", ())
    # A project brings back what the config file removed; an exclusion of part of a glob
    # leaves the glob to walk.
    assert _selected("CLAUDE.md", ("!CLAUDE.md",), ("CLAUDE.md",))
    brought_back = resolve_sources(("!CLAUDE.md",), ("CLAUDE.md",)).walk
    assert brought_back[0] == SourceRule("CLAUDE.md", True, "default")
    rules_removed = resolve_sources(("!.claude/rules/**",)).rules
    assert not is_selected(rules_removed, ".claude/rules/a/b.md", ())
    assert ".claude/rules/**/*.md" in [rule.pattern for rule in resolve_sources().walk]


def test_a_pattern_given_twice_is_walked_once() -> None:
    walk = resolve_sources(("docs/*.md", "CLAUDE.md"), ("docs/*.md",)).walk
    assert [rule.pattern for rule in walk].count("docs/*.md") == 1
    assert [rule.pattern for rule in walk].count("CLAUDE.md") == 1


def test_absolute_rules_match_absolute_paths_and_relative_rules_relative_ones() -> None:
    rules = resolve_sources(("/home/ann/notes/*.md", "!/home/ann/notes/private.md")).rules
    assert is_selected(rules, None, ("/home/ann/notes/go.md",))
    assert not is_selected(rules, None, ("/home/ann/notes/private.md",))
    # The real path of a file found through a link counts too.
    assert is_selected(rules, "linked.md", ("/w/linked.md", "/home/ann/notes/go.md"))
    assert not is_selected(rules, None, ("/w/CLAUDE.md",))
    assert is_selected(rules, "CLAUDE.md", ("/w/CLAUDE.md",))


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("*.md", "README.md", True),
        ("*.md", ".hidden.md", False),
        (".*.md", ".hidden.md", True),
        ("docs/*.md", "docs/a/b.md", False),
        ("docs/**/*.md", "docs/b.md", True),
        ("docs/**/*.md", "docs/a/b/c.md", True),
        ("docs/**", "docs/a/b/c.txt", True),
        ("docs/**", "docs/.git/config", False),
        ("**/*.md", "a/b.md", True),
        ("**/*.md", "b.md", True),
        ("doc?.md", "docs.md", True),
        ("doc?.md", "doc/.md", False),
        ("[ab].md", "b.md", True),
        ("[!ab].md", "c.md", True),
        ("[!ab].md", "a.md", False),
        ("[a-c]x.md", "bx.md", True),
        ("[]x].md", "].md", True),
        ("a[.md", "a[.md", True),  # an unclosed [ is an ordinary character
        ("a+b(1).md", "a+b(1).md", True),  # regular expression characters are literal
        ("a+b(1).md", "aab(1).md", False),
        ("/abs/*.md", "/abs/x.md", True),
        ("/abs/*.md", "abs/x.md", False),
    ],
)
def test_globs(pattern: str, path: str, matches: bool) -> None:
    assert pattern_matches(pattern, path) is matches


def test_segments_and_the_directories_an_absolute_pattern_could_reach() -> None:
    assert segment_matches("*.mdc", "go.mdc")
    assert not segment_matches("*", ".git")
    assert segment_matches(".claude", ".claude")
    assert could_contain("/shared/rules/**/*.md", "/shared/rules/deep/er")
    assert could_contain("/shared/*/x.md", "/shared/any")
    assert could_contain("/shared/a.md", "/shared")
    assert not could_contain("/shared/a.md", "/shared/sub")
    assert not could_contain("/shared/a.md", "/other")


@pytest.mark.parametrize(
    ("entry", "normal"),
    [
        ("./CLAUDE.md", "CLAUDE.md"),
        ("docs//adr/./*.md", "docs/adr/*.md"),
        ("!./AGENTS.md", "!AGENTS.md"),
        ("//abs//x.md", "/abs/x.md"),
        ("docs/**", "docs/**"),
    ],
)
def test_entries_are_normalised_and_normalising_again_changes_nothing(
    entry: str, normal: str
) -> None:
    assert parse_entry(entry, allow_absolute=True) == normal
    assert parse_entry(normal, allow_absolute=True) == normal


@pytest.mark.parametrize(
    ("entry", "reason"),
    [
        ("", "is empty"),
        ("!", "names no file after its !"),
        ("a\x00b", r"control character U\+0000"),
        ("a\nb", r"control character U\+000A"),
        ("../x.md", "uses .."),
        ("docs/../../x.md", "uses .."),
        ("docs/", "names a directory"),
        (".", "names no file"),
        (".memory/*.md", "names .memory/"),
        ("vendor/node_modules/**", "names node_modules/"),
        ("/repo/.git/HEAD", "names .git/"),
        ("~nobody-here/x.md", "names no home directory"),
        ("[z-a].md", "not valid"),
    ],
)
def test_refused_entries_say_why(entry: str, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        parse_entry(entry, allow_absolute=True)


@pytest.mark.parametrize("entry", ["/etc/passwd", "~/notes.md", "!/etc/passwd", "!~/x"])
def test_a_project_names_only_files_inside_its_workspace(entry: str) -> None:
    with pytest.raises(ValueError, match="not relative to the workspace root"):
        parse_entry(entry, allow_absolute=False)
    with pytest.raises(ValueError, match="not relative"):
        resolve_sources((), (entry,))
    assert parse_entry("docs/*.md", allow_absolute=False) == "docs/*.md"
