"""What a call's `file` decides for each entry, by the entry's path scope
(`memd.core.format.path_scopes`), and why `memd why` says an entry was or was not given.

Rules:
- An entry without a scope (or with a malformed marker) fits every call: "everywhere".
- A call that names no file decides nothing for a scoped entry ("no-file"): `query` ranks it
  as any other, `context` ranks it in layer B when it is not a Security or Instruction entry,
  and leaves a scoped Security or Instruction entry out of layer A (it is a rule for some
  files; the file hook, or a call naming the file, gives it).
- A call naming a file: a scoped entry "matches" when one of its globs matches the file's path
  relative to the workspace, else it is "elsewhere" (a file outside the workspace matches no
  scope). Entries "elsewhere" are left out of `query`'s hits and of both layers of `context`;
  entries that match go first: in `query` before the other hits, in `context`'s layer B before
  the ranked entries whatever their score (their scope says they are about this file), and a
  matching Security or Instruction entry goes into layer A.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from memd.core.format.path_scopes import PathScope, in_scope, relative_file, scope_of
from memd.core.search.prompt_block import Layer

Fit = Literal["everywhere", "matches", "elsewhere", "no-file"]


@dataclass(frozen=True)
class FileAt:
    """The file a call names: `given` False when it names none; `path` relative to the
    workspace (None when it is outside the workspace, or none is given)."""

    given: bool = False
    path: str | None = None


NO_FILE = FileAt()


def file_at(file: str | None, root: str) -> FileAt:
    """The file a call names (`file`: relative to the workspace `root`, or absolute)."""
    if not file:
        return NO_FILE
    return FileAt(True, relative_file(file, root))


def fit_of(scope: PathScope, at: FileAt) -> Fit:
    """How an entry with `scope` fits a call naming `at` (see the module rules)."""
    if not scope.scoped:
        return "everywhere"
    if not at.given:
        return "no-file"
    if at.path is not None and in_scope(scope, at.path):
        return "matches"
    return "elsewhere"


def fit(content: str, at: FileAt) -> Fit:
    """How the entry with `content` fits a call naming `at`."""
    return fit_of(scope_of(content), at)


def in_always_layer(content: str, at: FileAt) -> bool:
    """Whether a Security or Instruction entry goes into layer A for a call naming `at`."""
    return fit(content, at) in ("everywhere", "matches")


Reason = Literal["given", "scope", "score", "budget", "session"]
"""Given; or left out: scoped to other files, below layer B's score floor, no room, or the
call's session was already given it (`memd.core.search.given`)."""

ALREADY_GIVEN = "already given in this session (by its prompt hook or an earlier file hook)"


def why_not(
    content: str,
    at: FileAt,
    *,
    always: bool,
    score: float | None,
    floor: float,
    had: bool = False,
) -> tuple[Reason, str]:
    """Why an entry that `context` did not give for `at` was left out, in one phrase.

    Args:
        content: The entry's content.
        at: The file the call named.
        always: Whether it is a layer-A entry (Security or Instruction).
        score: Its layer-B ranking score (None: not ranked, or not related to the prompt).
        floor: The lowest score layer B kept (`MIN_RELATIVE_SCORE` of the best).
        had: Whether the call's session was already given it: the reason when nothing else
            (its scope, its score) would have left it out.
    """
    scope = scope_of(content)
    fits = fit_of(scope, at)
    if fits == "elsewhere":
        where = "the file is outside the workspace" if at.path is None else f"not {at.path}"
        return "scope", f"scoped to {', '.join(scope.globs)}: {where}"
    if fits == "no-file":
        return "scope", f"scoped to {', '.join(scope.globs)}, and no file was named"
    if always or fits == "matches" or (score is not None and score >= floor):
        if had:
            return "session", ALREADY_GIVEN
        return "budget", "no room left in the token budget"
    if score is None:
        return "score", "not related to the file's path words or the text"
    return "score", f"score {score:.3f}, below the floor {floor:.3f} (a fifth of the best)"


def why_given(content: str, at: FileAt, layer: Layer, category: str = "") -> str:
    """Why `context` gave an entry of `category` (its name) for `at` (in layer `layer`), in one
    phrase: an always-layer entry is named by its category (Security, Instruction or a custom
    category of layer "always")."""
    scope = scope_of(content)
    if fit_of(scope, at) == "matches":
        return f"scoped to {', '.join(scope.globs)}, which matches {at.path}"
    if layer == "always":
        return (
            f"a {category or 'Security or Instruction'} entry, in the always layer for every file"
        )
    return "related to the file's path words or the text"


def scope_problem(content: str) -> str:
    """What is wrong with the entry's scope marker ("" when nothing is)."""
    return scope_of(content).problem


def scoped_globs(content: str) -> Sequence[str]:
    """The entry's globs (empty: it applies everywhere)."""
    return scope_of(content).globs
