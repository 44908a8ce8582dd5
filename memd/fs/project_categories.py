"""A workspace's categories as its files say: the built-ins, then memd's config file's custom
ones, then its `.memory/memd.toml`'s (`memd.core.format.categories` has the tables' rules);
and the review modes its memd.toml's `[review]` sets (`memd.core.review.policy`).

Rules:
- The set is read when the workspace loads. The registry looks at `.memory/memd.toml` (one
  `stat` on the event loop) on every request, and at the config's categories on SIGHUP; when
  either changed and the set is not the same, it unloads the workspace and loads it afresh
  (what its actors acknowledged is handed over, by file), so the next request already sees the
  new set, with no wait for the watcher; while a request holds the workspace, the reload waits
  for the first request after it.
- A project's tables are taken one by one: a table that cannot be used (bad, or clashing with
  a built-in, a configured category or an earlier table) is left out and `problem` names it,
  the others are kept; a memd.toml that cannot be read at all leaves every project category
  out, saying why. The workspace loads either way; `stats` shows the problem, and a store into
  an unknown category names it.
- `[review]` is read with the categories (and reloaded with them): a bad entry is left out
  and `review_problem` names it, the others kept; the project's modes win over memd's config
  file's per category (`policy.merged`, by the caller).
- A category dropped from the config keeps its file and entries on disk: memd stops serving
  them, never deletes them.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from types import MappingProxyType
from typing import NamedTuple

from memd.config import PROJECT_CONFIG_NAME, ConfigError
from memd.core.format.categories import BUILTIN, Categories, Category, custom_categories
from memd.core.review import policy
from memd.fs.source_files import read_project_config
from memd.paths import MEMORY_DIR

Fingerprint = tuple[int, int, int, int]
"""A file's (device, inode, size, modification time in ns)."""


class CategorySet(NamedTuple):
    """What `categories_of` found."""

    categories: Categories
    problem: str | None
    """Why the project's own categories were left out, if they were."""
    fingerprint: Fingerprint | None
    """`.memory/memd.toml`'s when it was read (None: there was none)."""
    review: Mapping[str, policy.ReviewMode] = MappingProxyType({})
    """The project's `[review]` modes (its good entries)."""
    review_problem: str | None = None
    """Which `[review]` entries were left out, and why."""


BUILTIN_SET = CategorySet(BUILTIN, None, None)
"""A workspace with the built-in categories alone, and no memd.toml."""


def project_config_fingerprint(root: str) -> Fingerprint | None:
    """Return the fingerprint of `root`'s `.memory/memd.toml` (no link followed), or None if
    there is none (one `lstat`: cheap enough for the event loop)."""
    with contextlib.suppress(OSError):
        st = os.lstat(os.path.join(root, MEMORY_DIR, PROJECT_CONFIG_NAME))
        return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    return None


def categories_of(root: str, configured: tuple[Category, ...]) -> CategorySet:
    """Return the categories of the workspace at `root`: the built-ins, `configured` (memd's
    config file's, already checked), then the project's own (blocking: reads memd.toml)."""
    base = BUILTIN.with_custom(configured)
    fingerprint = project_config_fingerprint(root)
    if fingerprint is None:
        return CategorySet(base, None, None)
    try:
        config = read_project_config(root)
    except ConfigError as exc:
        return CategorySet(base, str(exc), fingerprint)
    path = os.path.join(root, MEMORY_DIR, PROJECT_CONFIG_NAME)
    review, review_problems = (
        ({}, []) if config.review is None else policy.modes_and_problems(config.review)
    )
    review_problem = f"Bad {'; '.join(review_problems)} in {path}." if review_problems else None
    found = base
    problems = []
    for number, table in enumerate(config.categories, start=1):
        try:
            found = found.with_custom(custom_categories([table], found, first=number))
        except ValueError as exc:
            problems.append(f"{exc.args[0]} (left out)")
    problem = f"Bad {'; '.join(problems)} in {path}." if problems else None
    return CategorySet(found, problem, fingerprint, MappingProxyType(review), review_problem)
