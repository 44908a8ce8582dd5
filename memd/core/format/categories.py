"""Categories as data: each category's name, file, limit, header, cleanup weight, search
priority, context layer and kind in one table (hacklm-spec.md §1 for HackLM's five).

Rules:
- HackLM's five (`HACKLM_CATEGORIES`) are fixed in name, file, limit and header: HackLM reads
  and writes exactly these files. memd adds two kinds of its own, `Category.PROCEDURE`
  (procedures.md: named workflows and their steps) and `Category.EPISODE` (episodes.md: dated
  events and their outcome); HackLM never reads their files. `CATEGORIES` is the seven, in the
  order that is the iteration and tie order everywhere.
- A workspace may have more: custom categories from memd's config file and the project's
  `.memory/memd.toml` (`[[categories]]` tables, checked by `custom_categories`), after the
  built-ins, in the order given. A workspace's whole set is a `Categories`.
- A category is a plain value compared by identity: one object per category per set, so the
  dictionaries keyed by it (hot in ranking) hash in C.
- Code decides by a category's attributes (`layer`, `kind`), never by its name: a custom
  category with `layer = "always"` is a rule of layer A like Security and Instruction.
- Names are matched case-insensitively and always returned in canonical form.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from typing import ClassVar, Final, Literal

from memd_client.errors import CategoryNotFound

Layer = Literal["always", "relevant", "procedures"]
"""Where `context` gives a category's entries: `always` (layer A, the rules that always
apply), `relevant` (layer B, ranked against the task), `procedures` (layer C)."""
Kind = Literal["rule", "procedure", "episode"]
"""What a category's entries are: rules and lessons, named workflows, or dated events."""

DEFAULT_CLEANUP_WEIGHT = 10
"""The cleanup score points of a category that sets none (`memd.core.writes.cleanup`)."""
ALWAYS_CLEANUP_WEIGHT = 20
"""... of a custom category of layer `always` (Instruction's)."""
ALWAYS_PRIORITY = 1.05
"""The search score factor of a custom category of layer `always` (Instruction's)."""


class Category:
    """One category: see the module rules. Attributes are read-only by convention."""

    __slots__ = (
        "cleanup_weight",
        "description",
        "file",
        "hacklm",
        "kind",
        "layer",
        "limit",
        "name",
        "position",
        "priority",
        "title",
    )

    INSTRUCTION: ClassVar[Category]
    QUIRK: ClassVar[Category]
    PREFERENCE: ClassVar[Category]
    DECISION: ClassVar[Category]
    SECURITY: ClassVar[Category]
    PROCEDURE: ClassVar[Category]
    EPISODE: ClassVar[Category]

    def __init__(
        self,
        name: str,
        file: str,
        limit: int,
        *,
        title: str,
        description: str,
        position: int,
        cleanup_weight: int = DEFAULT_CLEANUP_WEIGHT,
        priority: float = 1.0,
        layer: Layer = "relevant",
        kind: Kind = "rule",
        hacklm: bool = False,
    ) -> None:
        self.name = name
        """The canonical name, as on the wire and in `[Category]` labels."""
        self.file = file
        """The bare file name inside `.memory/`."""
        self.limit = limit
        """The maximum number of entries (HackLM's package.json defaults for its five)."""
        self.title = title
        self.description = description
        self.position = position
        """Its place in the tie order (the built-ins 0-6, custom ones after)."""
        self.cleanup_weight = cleanup_weight
        """Cleanup's points for an entry of this category: more is kept longer."""
        self.priority = priority
        """Search's score factor: Security and Instruction rank above near-equals."""
        self.layer: Layer = layer
        self.kind: Kind = kind
        self.hacklm = hacklm
        """One of HackLM's five: its file is HackLM's too."""

    @property
    def header(self) -> str:
        """What a new category file starts with: title, blank line, description, blank line."""
        return f"# {self.title}\n\n{self.description}\n\n"

    def __repr__(self) -> str:
        return f"Category({self.name!r})"


# Exactly the files, limits and headers HackLM uses (hacklm-spec.md §1.3: `ensureMemoryFiles`).
Category.INSTRUCTION = Category(
    "Instruction", "instructions.md", 30, title="Instructions",
    description="How Copilot should behave in this project.", position=0,
    cleanup_weight=20, priority=ALWAYS_PRIORITY, layer="always", hacklm=True,
)  # fmt: skip
Category.QUIRK = Category(
    "Quirk", "quirks.md", 40, title="Quirks",
    description="Project-specific weirdness — the non-obvious stuff.", position=1, hacklm=True,
)  # fmt: skip
Category.PREFERENCE = Category(
    "Preference", "preferences.md", 40, title="Preferences",
    description="Style, tone, and design choices for this project.", position=2, hacklm=True,
)  # fmt: skip
Category.DECISION = Category(
    "Decision", "decisions.md", 40, title="Decisions",
    description="Architectural commitments made in this project.", position=3,
    cleanup_weight=15, hacklm=True,
)  # fmt: skip
Category.SECURITY = Category(
    "Security", "security.md", 30, title="Security",
    description="Rules that must NEVER be broken. Always read this file.", position=4,
    cleanup_weight=25, priority=1.1, layer="always", hacklm=True,
)  # fmt: skip
# memd's own kinds: HackLM never reads these files.
Category.PROCEDURE = Category(
    "Procedure", "procedures.md", 40, title="Procedures",
    description="Named workflows and their steps, ranked by whether they worked.", position=5,
    layer="procedures", kind="procedure",
)  # fmt: skip
Category.EPISODE = Category(
    "Episode", "episodes.md", 200, title="Episodes",
    description="Dated events and their outcome: what happened and what fixed it.", position=6,
    kind="episode",
)  # fmt: skip

HACKLM_CATEGORIES: Final = (
    Category.INSTRUCTION,
    Category.QUIRK,
    Category.PREFERENCE,
    Category.DECISION,
    Category.SECURITY,
)
"""HackLM's five, in HackLM's order."""
CATEGORIES: Final = (*HACKLM_CATEGORIES, Category.PROCEDURE, Category.EPISODE)
"""The seven built-in categories, in order."""

RESERVED_FILES = frozenset({"archive.md", "inbox.md", "memd.toml", "README.md", "readme.md"})
"""File names in `.memory/` no custom category may take (besides the built-ins')."""
MAX_CUSTOM = 16
"""The most custom categories one config file or `memd.toml` may add."""
MAX_CUSTOM_LIMIT = 10_000
"""The largest `limit` a custom category may set."""
_NAME = re.compile(r"[A-Z][A-Za-z0-9]{1,31}\Z")
_FILE = re.compile(r"[a-z0-9][a-z0-9_-]{0,59}\.md\Z")
_KEYS = ("name", "file", "limit", "layer", "title", "description")
_CUSTOM_LAYERS: tuple[Layer, ...] = ("always", "relevant")


class Categories:
    """One workspace's categories, in order: the built-ins, then custom ones (see the module
    rules). Iterating gives `Category` objects; a name or file finds one."""

    __slots__ = ("_all", "_by_file", "_by_name")

    def __init__(self, categories: Iterable[Category]) -> None:
        self._all = tuple(categories)
        self._by_name = {c.name.lower(): c for c in self._all}
        self._by_file = {c.file: c for c in self._all}

    def __iter__(self) -> Iterator[Category]:
        return iter(self._all)

    def __len__(self) -> int:
        return len(self._all)

    def __contains__(self, category: object) -> bool:
        return any(category is c for c in self._all)

    @property
    def custom(self) -> tuple[Category, ...]:
        """The custom categories, in order."""
        return self._all[len(CATEGORIES) :]

    @property
    def names(self) -> tuple[str, ...]:
        """Every category's canonical name, in order."""
        return tuple(c.name for c in self._all)

    @property
    def files(self) -> frozenset[str]:
        """Every category's bare file name."""
        return frozenset(self._by_file)

    def parse(self, name: str) -> Category:
        """Return the category called `name`, ignoring case.

        Raises:
            CategoryNotFound: no category of this set is called `name`.
        """
        try:
            return self._by_name[name.strip().lower()]
        except KeyError:
            raise CategoryNotFound(
                f"Unknown category {name!r}; use one of: {', '.join(self.names)} (a project adds "
                "its own in .memory/memd.toml, see docs/reference/categories.md)."
            ) from None

    def for_file(self, file: str) -> Category:
        """Return the category stored in the bare file name `file` (e.g. "decisions.md").

        Raises:
            CategoryNotFound: `file` is no category's file in this set.
        """
        try:
            return self._by_file[file.strip()]
        except KeyError:
            valid = ", ".join(c.file for c in self._all)
            raise CategoryNotFound(f"Unknown memory file {file!r}; use one of: {valid}.") from None

    def get(self, name: str) -> Category | None:
        """Return the category called `name` (any case), or None."""
        return self._by_name.get(name.lower())

    def find_file(self, file: str) -> Category | None:
        """Return the category stored in the bare file name `file`, or None."""
        return self._by_file.get(file)

    def with_custom(self, custom: Iterable[Category]) -> Categories:
        """Return this set with `custom` appended (already checked by `custom_categories`)."""
        return Categories((*self._all, *custom))

    def same_as(self, other: Categories) -> bool:
        """Return True if `other` holds categories equal in every attribute, in the same order."""
        return len(self) == len(other) and all(
            _attributes(a) == _attributes(b) for a, b in zip(self, other, strict=True)
        )


BUILTIN: Final = Categories(CATEGORIES)
"""The built-in categories alone: a workspace without custom ones, and the merge driver."""
CATEGORY_FILES: Final = BUILTIN.files
"""The built-in categories' bare file names."""


def parse_category(name: str) -> Category:
    """Return the built-in category called `name`, ignoring case (`Categories.parse`)."""
    return BUILTIN.parse(name)


def category_for_file(file: str) -> Category:
    """Return the built-in category stored in the bare file name `file` (`Categories.for_file`)."""
    return BUILTIN.for_file(file)


def custom_categories(raw: object, base: Categories, *, first: int = 1) -> tuple[Category, ...]:
    """Return the custom categories a config's `categories` value (`raw`: a list of tables)
    describes, to follow `base` (`first`: the number the first table has in its file, for
    messages).

    Each table holds `name` (a capitalised word of 2-32 ASCII letters and digits, e.g.
    "Runbook"),
    `file` (a lowercase bare name ending in `.md`, e.g. "runbooks.md"), `limit` (1 to
    MAX_CUSTOM_LIMIT entries), and optionally `layer` ("always" or "relevant", the default),
    `title` (the file's heading, default the name plus "s") and `description` (its first line).
    No name (in any case) or file may repeat one of `base`'s or another table's, nor be one of
    `RESERVED_FILES`.

    Raises:
        ValueError: `raw` is not such a list; the message names the table and the key, in one
            sentence that says what is allowed.
    """
    if not isinstance(raw, list | tuple):
        raise ValueError("categories must be a list of tables ([[categories]] in TOML)")
    if len(raw) > MAX_CUSTOM:
        raise ValueError(f"categories holds {len(raw)} tables, over the limit of {MAX_CUSTOM}")
    names = {c.name.lower() for c in base}
    files = set(base.files) | RESERVED_FILES
    made: list[Category] = []
    for index, table in enumerate(raw):
        number = first + index
        category = _custom(table, number, position=len(base) + index)
        if category.name.lower() in names:
            raise ValueError(f"categories table {number}: the name {category.name!r} is taken")
        if category.file in files or category.file.startswith("archive-"):
            raise ValueError(f"categories table {number}: the file {category.file!r} is taken")
        names.add(category.name.lower())
        files.add(category.file)
        made.append(category)
    return tuple(made)


def _custom(table: object, number: int, *, position: int) -> Category:
    where = f"categories table {number}"
    if not isinstance(table, Mapping):
        raise ValueError(f"{where} must be a table with name, file and limit")
    unknown = sorted(set(table) - set(_KEYS))
    if unknown:
        raise ValueError(f"{where}: unknown key {unknown[0]!r}; the keys are {', '.join(_KEYS)}")
    name, file, limit = table.get("name"), table.get("file"), table.get("limit")
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(
            f"{where}: name {name!r} must be a capitalised word of 2-32 letters and digits, "
            'like "Runbook"'
        )
    if not isinstance(file, str) or not _FILE.match(file):
        raise ValueError(
            f"{where}: file {file!r} must be a lowercase bare name ending in .md, "
            'like "runbooks.md"'
        )
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_CUSTOM_LIMIT:
        raise ValueError(
            f"{where}: limit {limit!r} must be a whole number from 1 to {MAX_CUSTOM_LIMIT}"
        )
    layer = table.get("layer", "relevant")
    if layer not in _CUSTOM_LAYERS:
        raise ValueError(f'{where}: layer {layer!r} must be "always" or "relevant"')
    title = _one_line(table.get("title", f"{name}s"), where, "title")
    description = _one_line(table.get("description", f"{name} entries."), where, "description")
    always = layer == "always"
    return Category(
        name,
        file,
        limit,
        title=title,
        description=description,
        position=position,
        cleanup_weight=ALWAYS_CLEANUP_WEIGHT if always else DEFAULT_CLEANUP_WEIGHT,
        priority=ALWAYS_PRIORITY if always else 1.0,
        layer=layer,
    )


def _one_line(value: object, where: str, key: str) -> str:
    if not isinstance(value, str) or not value.strip() or "\n" in value or len(value) > 200:
        raise ValueError(f"{where}: {key} must be one line of text of at most 200 characters")
    return value.strip()


def _attributes(category: Category) -> tuple[object, ...]:
    return tuple(getattr(category, name) for name in Category.__slots__)
