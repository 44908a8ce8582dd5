"""Path scopes: the `(paths: ...)` marker that limits an entry to some files, and whether a file
is in an entry's scope.

Rules (a marker is plain text in the entry, so HackLM and hand edits keep it as it is):
- A marker is `(paths: ` or `(path: ` (lower case, the colon right after the word), then one or
  more globs separated by commas, then `)`: `(paths: src/db/**, *.sql)`, `(path: Makefile)`.
  Spaces around the commas and after the colon are optional.
- The `(` must start the content or follow whitespace: `f(paths: x)`, `\\(paths: x)` (the
  Markdown escape) and `https://x/(paths:y)` hold no marker.
- Nothing inside a Markdown code span counts (`` `(paths: src/**)` `` holds no marker), the
  same code spans as the tags' (`memd.core.format.tags.code_spans`).
- A glob is relative to the workspace root, with `/` between names, in the glob dialect of the
  read-only sources (`memd.core.format.globs`): `*` any run of characters in a name, `?` one,
  `[a-z]` a set, a `**` segment any depth of directories, a trailing `**` every file below; a
  wildcard never matches a name starting with a dot (write the dot: `.github/**`).
- A glob with no `/` matches a file's name at any depth, as in `.gitignore`: `*.sql` is every
  SQL file, `Makefile` every Makefile. A glob with a `/` is anchored at the root:
  `src/db/*.py`. A trailing `/` names a directory's whole tree (`src/db/` is `src/db/**`).
  A one-name glob without `.` or a wildcard must start with a capital (`Makefile`,
  `Dockerfile`): "(path: str)" in prose is a malformed marker, never a scope to files named
  `str` (write `**/justfile` for a lowercase name).
- Several markers in one entry add up: the entry applies to a file any of their globs matches.
  An entry without a marker applies everywhere.
- A marker that is malformed never hides an entry: it holds no glob, a glob holds a space, a
  control character, `..`, a leading `/`, `~` or `!`, `(`, `://`, a `\\` (a Windows path: it
  would match no file, hiding the entry everywhere), a `{...}` list (not expanded; its commas
  would split it into globs that match nothing), a `[...]` set that is not
  valid or too many wildcards (at most 2 `**` segments and 2 `*` in a name), or more than
  MAX_GLOBS globs, or `(paths:` is never closed. Then the entry applies everywhere (as if it
  had no marker) and `problem` says which marker is wrong and why, for `memd why` to show.
- Paths are compared as written (case-sensitive, not Unicode-folded): file systems differ,
  and a scope must not match more than its author wrote.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memd.core.format.globs import MAX_DEEP, MAX_STARS, pattern_matches
from memd.core.format.tags import code_spans

__all__ = ["MAX_GLOBS", "PathScope", "in_scope", "relative_file", "scope_of", "without_scopes"]

MAX_GLOBS = 16
"""The most globs one marker may hold."""

_OPEN = re.compile(r"(?<!\S)\(paths?:")
_PATH_LIKE = re.compile(r"[/.*?\[]")
"""What makes a one-name glob a path, not a word: `*.sql`, `go.mod`, `.env`; a bare name
needs a capital (`Makefile`, `Dockerfile`), so prose such as "(path: str)" holds no scope."""
_BAD_CHARS = re.compile(r"[\s\x00-\x1f\x7f()]")


@dataclass(frozen=True)
class PathScope:
    """The files an entry applies to: `globs` as written (normalised), empty for everywhere;
    `problem`, for a malformed marker, says what is wrong (the entry then applies everywhere)."""

    globs: tuple[str, ...] = ()
    problem: str = ""

    @property
    def scoped(self) -> bool:
        """Whether the entry applies to some files only."""
        return bool(self.globs)


EVERYWHERE = PathScope()


def scope_of(content: str) -> PathScope:
    """Return the path scope of one entry's content (see the module rules); never raises.

    Args:
        content: An entry's content (any text).

    Returns:
        Its globs (empty: everywhere), and what is wrong when a marker is malformed.
    """
    if "(path" not in content:
        return EVERYWHERE  # the common case, and the cheapest
    spans = code_spans(content) if "`" in content else []
    globs: list[str] = []
    for match in _OPEN.finditer(content):
        if any(start <= match.start() < end for start, end in spans):
            continue
        close = content.find(")", match.end())
        if close < 0:
            return PathScope(problem=f"{content[match.start() :][:40]!r} is never closed by ')'")
        marker = content[match.start() : close + 1]
        try:
            globs += _globs(content[match.end() : close])
        except ValueError as error:
            return PathScope(problem=f"{marker!r}: {error.args[0]}")
    if len(globs) > MAX_GLOBS:
        return PathScope(problem=f"more than {MAX_GLOBS} globs; name the files more broadly")
    return PathScope(tuple(dict.fromkeys(globs)))


def without_scopes(content: str) -> str:
    """Return `content` without its markers (those outside code spans and closed), for what
    should not read them as words: a slug (`memd.core.writes.slugs`)."""
    if "(path" not in content:
        return content
    spans = code_spans(content) if "`" in content else []
    pieces, position = [], 0
    for match in _OPEN.finditer(content):
        if match.start() < position or any(s <= match.start() < e for s, e in spans):
            continue
        close = content.find(")", match.end())
        if close < 0:
            break
        pieces.append(content[position : match.start()])
        position = close + 1
    pieces.append(content[position:])
    return "".join(pieces)


def _globs(body: str) -> list[str]:
    """The normalised globs of one marker's body (between the colon and the `)`).

    Raises:
        ValueError: the body is malformed; `args[0]` says why.
    """
    found = []
    for written in body.split(","):
        glob = written.strip(" ")
        if not glob:
            raise ValueError("names an empty glob (write one or more globs between commas)")
        found.append(_glob(glob))
    return found


def _glob(glob: str) -> str:
    """One glob normalised (`./` and repeated `/` dropped, a trailing `/` as `/**`).

    Raises:
        ValueError: the glob is malformed; `args[0]` says why.
    """
    if (bad := _BAD_CHARS.search(glob)) is not None:
        raise ValueError(f"{glob!r} holds {bad.group()!r}; a glob is one path without spaces")
    if "://" in glob:
        raise ValueError(f"{glob!r} is a URL, not a path in the workspace")
    if "\\" in glob:
        raise ValueError(f"{glob!r} holds '\\'; write '/' between names, as on every system")
    if "{" in glob or "}" in glob:
        raise ValueError(
            f"{glob!r} holds a {{...}} list, which globs here do not expand; write each glob "
            "between commas"
        )
    if glob[0] in "/~!":
        raise ValueError(
            f"{glob!r} starts with {glob[0]!r}; a glob is relative to the workspace root"
        )
    if glob.endswith("/"):
        glob += "**"
    segments = [segment for segment in glob.split("/") if segment not in ("", ".")]
    segments = [
        s for n, s in enumerate(segments) if not (s == "**" and segments[n - 1 : n] == ["**"])
    ]
    if not segments:
        raise ValueError(f"{glob!r} names no file")
    if len(segments) == 1 and not _PATH_LIKE.search(glob) and not glob[0].isupper():
        raise ValueError(
            f"{glob!r} reads as a word, not a path; write a glob with '/', '.' or a wildcard "
            f"(e.g. **/{glob})"
        )
    if ".." in segments:
        raise ValueError(f"{glob!r} uses '..'; name the path from the workspace root")
    if sum(segment == "**" for segment in segments) > MAX_DEEP or any(
        segment.count("*") > MAX_STARS for segment in segments if segment != "**"
    ):
        raise ValueError(
            f"{glob!r} has too many wildcards (at most {MAX_DEEP} ** segments and {MAX_STARS} * "
            "in a name)"
        )
    normal = "/".join(segments)
    try:
        pattern_matches(_anchored(normal), "")
    except re.error:
        raise ValueError(f"{glob!r} holds a [...] set that is not valid") from None
    return normal


def _anchored(glob: str) -> str:
    """The glob as matched against a path from the root: one without `/` at any depth."""
    if "/" in glob or glob == "**":
        return glob
    return f"**/{glob}"


def in_scope(scope: PathScope, path: str) -> bool:
    """Whether the file at `path` (relative to the workspace root, with `/`) is in `scope`; an
    entry without a scope (or with a malformed marker) applies to every file."""
    if not scope.globs:
        return True
    return any(pattern_matches(_anchored(glob), path) for glob in scope.globs)


def relative_file(file: str, root: str) -> str | None:
    """Return `file` (as a caller named it: relative to the workspace root, or absolute) as a
    normalised path relative to the absolute `root`; None when it is outside the workspace (no
    scope matches it then) or names no file. Pure: links are not resolved."""
    names: list[str] = []
    start = [] if file.startswith("/") else root.split("/")
    for name in [*start, *file.split("/")]:
        if name == "..":
            if names:
                names.pop()
        elif name not in ("", "."):
            names.append(name)
    base = [name for name in root.split("/") if name not in ("", ".")]
    if len(names) <= len(base) or names[: len(base)] != base:
        return None
    return "/".join(names[len(base) :])
