"""Which stores wait in the review inbox instead of going into their file.

Rules:
- Only an agent's store can wait (origin "agent"; also "extracted", an agent's `extract --store`
  when it ran through memd's own pipeline with the inbox on). A person's store (origin "user":
  the CLI, accepting in `memd review`) always goes direct.
- An agent's store whose text is instruction-like (`instruction_like`) always waits, whatever
  the category and the config: the reason says which rule matched.
- Otherwise it waits when its category's review mode is "pending": the project's
  `.memory/memd.toml` `[review]` table (`Category = "pending" | "direct"`), over memd's config
  file's `[review]`, over `DEFAULT_MODES`, category by category (`merged`). By default Security
  and Instruction are pending (they go into every prompt, so an agent's rule there steers every
  later session) and every other category is direct; `Security = "direct"` turns it off.
- In a project's `[review]`, a bad entry is left out and named (`modes_and_problems`), the
  others kept; in memd's own config a bad entry is an error at start (`check_modes`).
- A dry run never waits: it reports what would happen (a store into a pending category says
  it would wait).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, Literal

from memd.core.review.instruction_like import instruction_like

ReviewMode = Literal["direct", "pending"]
Origin = Literal["user", "agent", "extracted", "merged"]
DEFAULT_MODES: Final[Mapping[str, ReviewMode]] = {
    "Security": "pending",
    "Instruction": "pending",
}


def mode_of(category: str, configured: Mapping[str, ReviewMode]) -> ReviewMode:
    """Return `category`'s review mode: the configured one (names matched case-insensitively),
    else the default."""
    for name, mode in configured.items():
        if name.lower() == category.lower():
            return mode
    for name, mode in DEFAULT_MODES.items():
        if name.lower() == category.lower():
            return mode
    return "direct"


def merged(
    user: Mapping[str, ReviewMode], project: Mapping[str, ReviewMode]
) -> dict[str, ReviewMode]:
    """Return the review modes of a workspace: `project`'s over `user`'s, per category (names
    matched case-insensitively)."""
    modes = dict(user)
    for name, mode in project.items():
        for known in [n for n in modes if n.lower() == name.lower()]:
            del modes[known]
        modes[name] = mode
    return modes


def pending_reason(
    origin: Origin, category: str, content: str, configured: Mapping[str, ReviewMode]
) -> str | None:
    """Return why a store must wait for review (a short phrase), or None if it goes direct."""
    if origin in ("user", "merged"):
        return None
    payload = instruction_like(content)
    if payload is not None:
        return f"instruction-like: {payload}"
    if mode_of(category, configured) == "pending":
        return f"{origin} store into {category}, which is reviewed"
    return None


def check_modes(raw: object) -> dict[str, ReviewMode]:
    """Return the config's `[review]` table as modes.

    Raises:
        ValueError: it is not a table of category names to "direct" or "pending" (the message
            says what to write instead).
    """
    if not isinstance(raw, Mapping):
        raise ValueError('[review] must be a table such as  Security = "pending"')
    modes: dict[str, ReviewMode] = {}
    for name, mode in raw.items():
        if not isinstance(name, str) or mode not in ("direct", "pending"):
            raise ValueError(
                f'[review] {name} = {mode!r}: write  {name} = "pending"  or  {name} = "direct"'
            )
        modes[name] = "pending" if mode == "pending" else "direct"
    return modes


def modes_and_problems(raw: object) -> tuple[dict[str, ReviewMode], list[str]]:
    """Return a project's `[review]` table as modes, every bad entry left out, and a phrase
    naming each one left out (or the whole table, if it is not one)."""
    if not isinstance(raw, Mapping):
        return {}, ['[review] is not a table such as  Security = "pending"  (left out)']
    modes: dict[str, ReviewMode] = {}
    problems = []
    for name, mode in raw.items():
        try:
            modes.update(check_modes({name: mode}))
        except ValueError as exc:
            problems.append(f"{exc.args[0]} (left out)")
    return modes, problems
