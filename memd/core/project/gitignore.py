"""The `.gitignore` lines `memd init` adds, so `.memory/.lock` (and, with `--claude-local`,
`.claude/settings.local.json`) is never committed.

A committed lock names a pid and a time from another machine: every clone would start with a
lock that memd (and HackLM) must first judge stale. Pure functions; `memd.init` does the I/O.

Rules:
- A file that already has a line ignoring the lock (`.memory/.lock`, `/.memory/.lock` or
  `**/.memory/.lock`, surrounding spaces aside) is left as it is.
- Otherwise a comment and the pattern are appended; everything before stays byte for byte, a
  last line without a line break gets one, and the file's line breaks (LF or CRLF) are kept.
"""

from __future__ import annotations

LOCK_PATTERN = ".memory/.lock"
COMMENT = "# memd and HackLM Memory: the lock on .memory/ (never commit it)"
_COVERING = frozenset({LOCK_PATTERN, "/" + LOCK_PATTERN, "**/" + LOCK_PATTERN})


def ignores_lock(text: str) -> bool:
    """Return True if `text` (a .gitignore) has a line that ignores `.memory/.lock`."""
    return any(line.strip() in _COVERING for line in text.splitlines())


def with_lock_ignored(text: str | None) -> str:
    """Return `text` (None: no .gitignore yet) with `.memory/.lock` ignored (see the rules)."""
    if text is not None and ignores_lock(text):
        return text
    return with_lines_appended(text, COMMENT, LOCK_PATTERN)


CLAUDE_LOCAL_PATTERN = ".claude/settings.local.json"
CLAUDE_LOCAL_COMMENT = "# Claude Code: one person's settings (memd init --claude-local's hooks)"
_CLAUDE_DIRECTORY = (".claude", ".claude/", ".claude/*", ".claude/*.local.json")
_COVERING_CLAUDE_LOCAL = frozenset(
    prefix + pattern
    for prefix in ("", "/", "**/")
    for pattern in (CLAUDE_LOCAL_PATTERN, *_CLAUDE_DIRECTORY)
) | {"settings.local.json", "**/settings.local.json", "*.local.json"}


def ignores_claude_local(text: str) -> bool:
    """Return True if `text` (a .gitignore) has a line that plainly ignores
    `.claude/settings.local.json` (the file itself, its directory, or a `*.local.json`)."""
    return any(line.strip() in _COVERING_CLAUDE_LOCAL for line in text.splitlines())


def with_claude_local_ignored(text: str | None) -> str:
    """Return `text` (None: no .gitignore yet) with `.claude/settings.local.json` ignored, as
    the lock (see the rules), so memd's hooks for one person are never committed."""
    if text is not None and ignores_claude_local(text):
        return text
    return with_lines_appended(text, CLAUDE_LOCAL_COMMENT, CLAUDE_LOCAL_PATTERN)


def with_lines_appended(text: str | None, *lines: str) -> str:
    """Return `text` (None: no file yet) with `lines` appended: everything before byte for byte,
    a last line without a line break given one, the file's line breaks (LF or CRLF) kept."""
    base = text or ""
    eol = "\r\n" if "\r\n" in base else "\n"
    if base and not base.endswith(("\n", "\r")):
        base += eol
    return base + "".join(line + eol for line in lines)
