"""The five HackLM categories, their files, limits and bootstrap headers (hacklm-spec.md §1).

Rules:
- The order of `CATEGORIES` is fixed and is the iteration order everywhere.
- Names are matched case-insensitively and always returned in canonical form.
"""

from __future__ import annotations

import enum

from memd_client.errors import CategoryNotFound


class Category(enum.Enum):
    """A memory category; the value is the canonical name used on the wire and in files."""

    INSTRUCTION = "Instruction"
    QUIRK = "Quirk"
    PREFERENCE = "Preference"
    DECISION = "Decision"
    SECURITY = "Security"

    # Members are singletons compared by identity, so the identity hash is right, and it is
    # computed in C: categories key many dictionaries that ranking reads per matching entry.
    __hash__ = object.__hash__

    @property
    def file(self) -> str:
        """The bare file name inside `.memory/`."""
        return _FILES[self]

    @property
    def limit(self) -> int:
        """HackLM's default maximum number of entries (package.json defaults)."""
        return _LIMITS[self]

    @property
    def header(self) -> str:
        """What a new category file starts with: title, blank line, description, blank line."""
        plural, description = _HEADERS[self]
        return f"# {plural}\n\n{description}\n\n"


CATEGORIES: tuple[Category, ...] = tuple(Category)

_FILES = {
    Category.INSTRUCTION: "instructions.md",
    Category.QUIRK: "quirks.md",
    Category.PREFERENCE: "preferences.md",
    Category.DECISION: "decisions.md",
    Category.SECURITY: "security.md",
}

_LIMITS = {
    Category.INSTRUCTION: 30,
    Category.QUIRK: 40,
    Category.PREFERENCE: 40,
    Category.DECISION: 40,
    Category.SECURITY: 30,
}

# Exactly the strings HackLM's `ensureMemoryFiles` writes at activation (hacklm-spec.md §1.3).
_HEADERS = {
    Category.INSTRUCTION: ("Instructions", "How Copilot should behave in this project."),
    Category.QUIRK: ("Quirks", "Project-specific weirdness — the non-obvious stuff."),
    Category.PREFERENCE: ("Preferences", "Style, tone, and design choices for this project."),
    Category.DECISION: ("Decisions", "Architectural commitments made in this project."),
    Category.SECURITY: ("Security", "Rules that must NEVER be broken. Always read this file."),
}

_BY_LOWER_NAME = {c.value.lower(): c for c in Category}
_BY_FILE = {c.file: c for c in Category}
CATEGORY_FILES = frozenset(_BY_FILE)
"""The five category files' bare names."""


def parse_category(name: str) -> Category:
    """Return the category called `name`, ignoring case.

    Raises:
        CategoryNotFound: `name` is not one of the five categories.
    """
    try:
        return _BY_LOWER_NAME[name.strip().lower()]
    except KeyError:
        valid = ", ".join(c.value for c in CATEGORIES)
        raise CategoryNotFound(f"Unknown category {name!r}; use one of: {valid}.") from None


def category_for_file(file: str) -> Category:
    """Return the category stored in the bare file name `file` (e.g. "decisions.md").

    Raises:
        CategoryNotFound: `file` is not one of the five category files.
    """
    try:
        return _BY_FILE[file.strip()]
    except KeyError:
        valid = ", ".join(c.file for c in CATEGORIES)
        raise CategoryNotFound(f"Unknown memory file {file!r}; use one of: {valid}.") from None
