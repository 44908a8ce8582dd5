"""The `.gitattributes` line `memd git-setup` (and `memd init --git`) adds, so git merges
`.memory/*.md` with memd's entry-aware driver (`memd merge-file`).

A `.gitattributes` line only names the driver: git runs it once the clone's own config defines
`merge.memd.driver` (never committed, so every clone needs `memd git-setup`). A line naming a
driver with no config behind it makes git fall back to its line merge without a word, which
`names_merge_driver` lets `memd status` see. Pure functions; `memd.cli.git_setup` does the I/O.

Rules:
- A file that already has a line giving `.memory/*.md` (or `/.memory/*.md`, `**/.memory/*.md`)
  the attribute `merge=memd` is left as it is.
- Otherwise a comment and `MERGE_LINE` are appended; everything before stays byte for byte, a
  last line without a line break gets one, and the file's line breaks (LF or CRLF) are kept.
- A line names the driver when an attribute of it (after the pattern) is `merge=memd`; comment
  lines (`#`) never do.
"""

from __future__ import annotations

from memd.core.project.gitignore import with_lines_appended

DRIVER = "memd"
PATTERN = ".memory/*.md"
MERGE_LINE = f"{PATTERN} merge={DRIVER}"
COMMENT = "# memd: merge memory files entry by entry (run `memd git-setup` in each clone)"
_COVERING = frozenset({PATTERN, "/" + PATTERN, "**/" + PATTERN})


def _attributes(line: str) -> tuple[str, list[str]] | None:
    """A line's pattern and attributes; None for a blank or comment line."""
    parts = line.split()
    if not parts or parts[0].startswith("#"):
        return None
    return parts[0], parts[1:]


def merges_memory(text: str) -> bool:
    """True when `text` (a .gitattributes) gives `.memory/*.md` the memd merge driver."""
    for line in text.splitlines():
        found = _attributes(line)
        if found is not None and found[0] in _COVERING and f"merge={DRIVER}" in found[1]:
            return True
    return False


def names_merge_driver(text: str) -> bool:
    """True when any line of `text` (a .gitattributes) names the memd merge driver."""
    for line in text.splitlines():
        found = _attributes(line)
        if found is not None and f"merge={DRIVER}" in found[1]:
            return True
    return False


def with_merge_driver(text: str | None) -> str:
    """Return `text` (None: no .gitattributes yet) with `.memory/*.md` merged by memd (see
    the rules)."""
    if text is not None and merges_memory(text):
        return text
    return with_lines_appended(text, COMMENT, MERGE_LINE)
