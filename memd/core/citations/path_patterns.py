"""Path patterns for the citation check: a cited glob (`src/**/*.ts`) and `.gitignore` rules,
matched against paths relative to the workspace root (segments separated by `/`). Pure.

Globs (`glob_regex`):
- `*` matches any run of characters within a segment, `?` one character, `[abc]`, `[a-z]`,
  `[!abc]` one of (or none of) a set; a segment that is exactly `**` matches zero or more
  segments (`src/**/*.ts` matches `src/a.ts` and `src/x/y/a.ts`; a trailing `**` matches
  everything below). Unlike a shell, `*` matches a leading dot: a citation names files, it is
  not a command line.
- An unclosed `[` is a literal `[`.

`.gitignore` (`parse_gitignore`, `is_ignored`), as git documents it:
- Blank lines and lines starting with `#` are skipped (`\\#` is a literal `#`); trailing
  spaces are dropped unless escaped with `\\`. `!` negates (`\\!` is a literal `!`).
- A trailing `/` matches directories only. A pattern with a `/` at its start or middle is
  anchored to the directory of its `.gitignore`; otherwise it matches a name at any depth.
- The last matching rule wins, the rules of a deeper `.gitignore` after those of the ones
  above it; a path under an ignored directory is ignored whatever the later rules say (git
  never looks inside an excluded directory).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from typing import NamedTuple

GLOB_CHARS = frozenset("*?[")
"""A key holding one of these is a glob."""


def is_glob(key: str) -> bool:
    """Whether the path key `key` is a glob (holds `*`, `?` or `[`)."""
    return any(char in GLOB_CHARS for char in key)


def _segment_regex(segment: str) -> str:
    """The regex of one glob segment (no `/` in it): `*` and `?` stay within the segment."""
    out: list[str] = []
    i = 0
    while i < len(segment):
        char = segment[i]
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            close = segment.find("]", i + 2 if segment[i + 1 : i + 2] in ("!", "^") else i + 1)
            if close == -1:
                out.append(re.escape(char))
            else:
                body = segment[i + 1 : close]
                negated = body[:1] in ("!", "^")
                body = body[1:] if negated else body
                body = body.replace("\\", "\\\\").replace("[", "\\[")
                out.append(f"[{'^/' if negated else ''}{body}]")
                i = close
        elif char == "\\" and i + 1 < len(segment):
            i += 1
            out.append(re.escape(segment[i]))
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out)


def _path_regex(pattern: str) -> str:
    """The regex (without anchors) of a `/`-separated glob with `**` segments."""
    segments = pattern.split("/")
    out = ""
    for index, segment in enumerate(segments):
        last = index == len(segments) - 1
        if segment == "**":
            out += ".*" if last else "(?:[^/]*/)*"
        else:
            out += _segment_regex(segment) + ("" if last else "/")
    return out


@functools.lru_cache(maxsize=1024)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """The compiled regex that matches the whole of a path `pattern` matches (see the rules)."""
    try:
        return re.compile(_path_regex(pattern.strip("/")) + r"\Z", re.DOTALL)
    except re.error:  # a set that is no valid class: match the pattern literally
        return re.compile(re.escape(pattern.strip("/")) + r"\Z")


class IgnoreRule(NamedTuple):
    """One `.gitignore` line: `regex` matches a path relative to the file's directory."""

    regex: re.Pattern[str]
    negated: bool
    directory_only: bool


def parse_gitignore(text: str) -> tuple[IgnoreRule, ...]:
    """Return the rules of a `.gitignore` file's text, in order; never raises."""
    rules: list[IgnoreRule] = []
    for raw in text.splitlines():
        line = _strip_trailing_spaces(raw)
        if not line or line.startswith("#"):
            continue
        negated = line.startswith("!")
        if negated or line.startswith(("\\!", "\\#")):
            line = line[1:]
        directory_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            continue
        anchored = "/" in line
        body = _path_regex(line.lstrip("/"))
        prefix = "" if anchored else "(?:.*/)?"
        try:
            regex = re.compile(prefix + body + r"\Z", re.DOTALL)
        except re.error:
            continue
        rules.append(IgnoreRule(regex, negated, directory_only))
    return tuple(rules)


def _strip_trailing_spaces(line: str) -> str:
    stripped = line.rstrip(" ")
    if stripped.endswith("\\") and len(stripped) < len(line):
        return stripped[:-1] + " "
    return stripped


def _verdict(rules: Sequence[IgnoreRule], relative: str, is_dir: bool) -> bool | None:
    """True (ignored), False (re-included) or None (no rule matches) for one path."""
    for rule in reversed(rules):
        if rule.directory_only and not is_dir:
            continue
        if rule.regex.match(relative):
            return not rule.negated
    return None


def is_ignored(
    rules_by_dir: Mapping[str, Sequence[IgnoreRule]], path: str, *, is_dir: bool = False
) -> bool:
    """Whether `path` (relative to the root, `/`-separated) is ignored by the `.gitignore`
    rules in `rules_by_dir` (keyed by each file's directory relative to the root, "" for the
    root's), directories above it included (see the rules)."""
    segments = [segment for segment in path.split("/") if segment]
    for depth in range(1, len(segments) + 1):
        here = "/".join(segments[:depth])
        if excluded_here(rules_by_dir, here, is_dir=is_dir if depth == len(segments) else True):
            return True
    return False


def excluded_here(
    rules_by_dir: Mapping[str, Sequence[IgnoreRule]], path: str, *, is_dir: bool = False
) -> bool:
    """Whether the rules exclude `path` itself (its directories not looked at: a walk that
    never enters an excluded directory asks only this)."""
    ignored: bool | None = None
    directory = ""
    while True:
        rules = rules_by_dir.get(directory)
        if rules:
            verdict = _verdict(rules, path[len(directory) + 1 :] if directory else path, is_dir)
            if verdict is not None:
                ignored = verdict
        slash = path.find("/", len(directory) + 1 if directory else 0)
        if slash == -1:
            return bool(ignored)
        directory = path[:slash]
