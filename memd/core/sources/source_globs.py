"""Which files are a workspace's read-only sources: the default patterns, then `sources` from
memd's config file, then `sources` from the project's `.memory/memd.toml`.

An entry of `sources` is one of:

- a glob relative to the workspace root: `docs/adr/*.md`, `notes/**/*.md`, `README.md`;
- (memd's own config file only) an absolute path or glob: `/home/me/notes/*.md` (`~/` is
  expanded by the config reader before it gets here);
- `!` and a pattern: an exclusion, `!CLAUDE.md`, `!docs/private/**`.

Rules:
- A pattern is a glob in memd's one dialect (`memd.core.format.globs`: `*`, `?`, `[a-z]`,
  `**` segments, no wildcard entering a dot-name: write `.claude/rules/*.md`).
- Order matters, as in `.gitignore`: the rules are the defaults, then the config file's
  entries, then the project's, in the order written, and a file is a source if the last rule
  that matches it includes it (an exclusion after a pattern takes files away from it; a
  pattern after an exclusion brings them back). `!CLAUDE.md` removes that default, and
  `!.claude/rules/**` every rule file.
- A relative rule matches a file's path relative to the workspace root (as found, through
  any link); an absolute rule matches its absolute path as found or with every link resolved.
- Entries are normalised (`./` and repeated `/` dropped) and refused when they cannot name a
  file inside what the user named: empty, a control character (NUL included), `..`, a trailing
  `/` (a directory: name its files), a `.git`, `.memory` or `node_modules` segment (memd never
  reads sources there: the category files are not sources), or, in a project's memd.toml (a
  cloned repository controls it), an absolute path or one starting with `~`.
- At most `MAX_SOURCE_ENTRIES` entries in each file.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Literal, NamedTuple

from memd.core.format.globs import (
    MAX_DEEP,
    MAX_STARS,
    is_literal,
    path_regex,
    pattern_matches,
    segment_matches,
    split_pattern,
)

__all__ = [
    "DEFAULT_SOURCES",
    "MAX_DEEP",
    "MAX_SOURCE_ENTRIES",
    "MAX_STARS",
    "SKIPPED_DIRS",
    "SourceRule",
    "SourceSelection",
    "could_contain",
    "is_literal",
    "is_selected",
    "parse_entry",
    "pattern_matches",
    "resolve_sources",
    "segment_matches",
    "split_pattern",
]

DEFAULT_SOURCES: tuple[str, ...] = (
    "CLAUDE.md",
    "AGENTS.md",
    ".claude/rules/**/*.md",
    ".cursor/rules/**/*.mdc",
    ".github/copilot-instructions.md",
    "MEMORY.md",
    "memory/*.md",
)
"""The instruction and memory files agents keep, looked for in every workspace."""

MAX_SOURCE_ENTRIES = 64
"""The most entries `sources` may hold in one file (memd's config file, or a memd.toml)."""

SKIPPED_DIRS = frozenset({".git", ".memory", "node_modules"})
"""Directories never searched for sources, at any depth."""

Origin = Literal["default", "global", "project"]


class SourceRule(NamedTuple):
    """One normalised entry: a relative glob, or an absolute one starting with `/`."""

    pattern: str
    include: bool
    """False for an exclusion (an entry written with a leading `!`)."""
    origin: Origin


class SourceSelection(NamedTuple):
    """The rules in force for one workspace, and the patterns to look for."""

    rules: tuple[SourceRule, ...]
    """Every rule, in order: defaults, config file, project; the last match decides."""
    walk: tuple[SourceRule, ...]
    """The including rules worth looking for: each pattern once, in first-written order,
    leaving out a pattern whose last mention is an exclusion of that same text."""


def parse_entry(entry: str, *, allow_absolute: bool) -> str:
    """Return `entry` normalised (`!` kept, `./` and repeated `/` dropped).

    Raises:
        ValueError: the entry is refused; `args[0]` says why, as a phrase that follows the
            entry ("is empty", "uses ..", ...), without a full stop.
    """
    for char in entry:
        if ord(char) < 0x20 or ord(char) == 0x7F:
            raise ValueError(f"holds the control character U+{ord(char):04X}")
    exclude = entry.startswith("!")
    body = entry[1:] if exclude else entry
    if not body:
        raise ValueError("names no file after its !" if exclude else "is empty")
    absolute = body.startswith("/")
    if not allow_absolute and (absolute or body.startswith("~")):
        raise ValueError(
            "is not relative to the workspace root; a project's memd.toml names only files "
            "inside the workspace (absolute paths belong in memd's own config file)"
        )
    if body.startswith("~"):
        raise ValueError("starts with ~ but names no home directory")
    if body.endswith("/"):
        raise ValueError("ends with /, so it names a directory; name its files (docs/*.md)")
    segments = [segment for segment in body.split("/") if segment not in ("", ".")]
    segments = [
        s for n, s in enumerate(segments) if not (s == "**" and segments[n - 1 : n] == ["**"])
    ]
    if not segments:
        raise ValueError("names no file")
    if sum(segment == "**" for segment in segments) > MAX_DEEP or any(
        segment.count("*") > MAX_STARS for segment in segments if segment != "**"
    ):
        # A glob is matched by a regular expression: more wildcards could make one match run
        # for seconds, and a cloned repository's memd.toml must not be able to stall memd.
        raise ValueError(
            f"has too many wildcards (at most {MAX_DEEP} ** segments and {MAX_STARS} * in a "
            "name); name the files more plainly"
        )
    if ".." in segments:
        raise ValueError("uses .., which memd does not follow; name the path without it")
    skipped = next((segment for segment in segments if segment in SKIPPED_DIRS), None)
    if skipped is not None:
        raise ValueError(
            f"names {skipped}/, which memd never reads sources from (it skips .git, .memory "
            "and node_modules)"
        )
    normal = ("/" if absolute else "") + "/".join(segments)
    try:
        path_regex(normal)
    except re.error:
        raise ValueError("holds a [...] set that is not valid (a range backwards?)") from None
    return ("!" if exclude else "") + normal


def resolve_sources(
    global_entries: Sequence[str] = (), project_entries: Sequence[str] = ()
) -> SourceSelection:
    """Return the rules for one workspace: `DEFAULT_SOURCES`, then `global_entries` (memd's
    config file; absolute entries allowed), then `project_entries` (its `.memory/memd.toml`;
    relative only). Entries are normalised again here (the config readers already did).

    Raises:
        ValueError: an entry is refused (see `parse_entry`).
    """
    rules = [SourceRule(pattern, True, "default") for pattern in DEFAULT_SOURCES]
    given: tuple[tuple[Sequence[str], Origin], ...] = (
        (global_entries, "global"),
        (project_entries, "project"),
    )
    for entries, origin in given:
        for entry in entries:
            normal = parse_entry(entry, allow_absolute=origin == "global")
            exclude = normal.startswith("!")
            rules.append(SourceRule(normal[1:] if exclude else normal, not exclude, origin))
    last_says = {rule.pattern: rule.include for rule in rules}
    walk: dict[str, SourceRule] = {}
    for rule in rules:
        if rule.include and last_says[rule.pattern] and rule.pattern not in walk:
            walk[rule.pattern] = rule
    return SourceSelection(tuple(rules), tuple(walk.values()))


def is_selected(
    rules: Sequence[SourceRule], relative: str | None, absolutes: Iterable[str]
) -> bool:
    """Whether the last rule matching a file includes it (no rule matching: not a source).

    `relative` is its path relative to the workspace root (None for a file outside it), which
    relative rules match; `absolutes` are its absolute paths (as found, and real), which
    absolute rules match.
    """
    paths = tuple(absolutes)
    for rule in reversed(rules):
        if rule.pattern.startswith("/"):
            hit = any(pattern_matches(rule.pattern, path) for path in paths)
        else:
            hit = relative is not None and pattern_matches(rule.pattern, relative)
        if hit:
            return rule.include
    return False


def could_contain(pattern: str, directory: str) -> bool:
    """Whether a file below the absolute `directory` could match the absolute `pattern`: each
    of the directory's names matches the pattern's segment in its place, up to a `**`."""
    _, segments = split_pattern(pattern)
    _, names = split_pattern(directory)
    for place, name in enumerate(names):
        if place >= len(segments) - 1:
            return False  # the pattern's last segment names the file itself
        if segments[place] == "**":
            return True
        if not segment_matches(segments[place], name):
            return False
    return True
