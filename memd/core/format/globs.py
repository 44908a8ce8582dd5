"""The glob dialect of memd's paths (the read-only sources' `sources` entries, and entries'
`(paths: ...)` scopes): how a glob is split and matched against a path.

Rules:
- Segments are separated by `/`. `*` matches any run of characters within a name, `?` one
  character, `[abc]`, `[a-z]` and `[!abc]` one of (or none of) a set. A segment that is exactly
  `**` matches zero or more directories; a trailing `**` matches every file at any depth below
  (`docs/**` is `docs/**/*`). A wildcard never matches a name that starts with a dot (as in a
  shell): write the dot (`.claude/rules/*.md`, `.*`) to reach one.
- Globs are matched by regular expressions, so their wildcards are bounded (`MAX_DEEP`,
  `MAX_STARS`) by whoever accepts a glob from a file: more could make one match run for seconds.
"""

from __future__ import annotations

import functools
import re

MAX_DEEP = 2
"""`**` segments an entry may hold (repeated ones count once)."""
MAX_STARS = 2
"""`*` wildcards one name of an entry may hold."""


def split_pattern(pattern: str) -> tuple[bool, tuple[str, ...]]:
    """Return whether `pattern` is absolute, and its segments (a trailing `**` becomes `**`,
    `*`: every file at any depth below)."""
    segments = tuple(segment for segment in pattern.split("/") if segment)
    if segments and segments[-1] == "**":
        segments = (*segments, "*")
    return pattern.startswith("/"), segments


def is_literal(segment: str) -> bool:
    """Whether `segment` names one name (holds no `*`, `?` or `[`)."""
    return not any(char in segment for char in "*?[")


def segment_matches(segment: str, name: str) -> bool:
    """Whether the file or directory name `name` matches the pattern segment `segment`
    (not `**`)."""
    if is_literal(segment):
        return segment == name
    return _segment_regex(segment).fullmatch(name) is not None


def pattern_matches(pattern: str, path: str) -> bool:
    """Whether `path` (relative with `/`, or absolute) matches `pattern` as a whole."""
    return path_regex(pattern).fullmatch(path) is not None


_DIRECTORIES = r"(?:(?!\.)[^/]+/)*"
"""Zero or more directories none of whose names starts with a dot: a `**` segment."""


@functools.lru_cache(maxsize=1024)
def path_regex(pattern: str) -> re.Pattern[str]:
    absolute, segments = split_pattern(pattern)
    parts = ["/" if absolute else ""]
    for place, segment in enumerate(segments):
        last = place == len(segments) - 1
        if segment == "**":
            parts.append(_DIRECTORIES)
        else:
            parts.append(_segment_source(segment) + ("" if last else "/"))
    return re.compile("".join(parts))


@functools.lru_cache(maxsize=1024)
def _segment_regex(segment: str) -> re.Pattern[str]:
    return re.compile(_segment_source(segment))


def _segment_source(segment: str) -> str:
    """The regular expression for one segment: `*`, `?` and `[...]` never match `/`, and a
    wildcard never matches a leading dot (a segment that starts with a dot matches it)."""
    out = [] if segment.startswith(".") else [r"(?!\.)"]
    place = 0
    while place < len(segment):
        char = segment[place]
        place += 1
        if char == "*":
            if not out or out[-1] != "[^/]*":
                out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[" and (end := _class_end(segment, place)) > 0:
            out.append(_char_class(segment[place:end]))
            place = end + 1
        else:
            out.append(re.escape(char))
    return "".join(out)


def _class_end(segment: str, start: int) -> int:
    """The index of the `]` closing a class opened just before `start`, or -1 (then the `[`
    is an ordinary character). A `]` first in the class (after any `!`) is part of it."""
    place = start
    if place < len(segment) and segment[place] in "!^":
        place += 1
    if place < len(segment) and segment[place] == "]":
        place += 1
    return segment.find("]", place)


def _char_class(body: str) -> str:
    negate = body[:1] in ("!", "^")
    if negate:
        body = body[1:]
    chars = []
    for place, char in enumerate(body):
        inner_hyphen = (
            char == "-"
            and 0 < place < len(body) - 1
            and "-" not in (body[place - 1], body[place + 1])
        )
        chars.append("-" if inner_hyphen else re.escape(char))
    return ("[^/" if negate else "[") + "".join(chars) + "]"
