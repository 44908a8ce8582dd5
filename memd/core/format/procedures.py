"""A procedure's one line: a name and its steps (`procedures.md`, issue 33).

    - [deploy-staging] Deploy to staging: build the image; push it; run the migration job.

Rules:
- The content is the name, ": ", the steps joined by "; ", and one final period
  (`render_procedure`). Each part is trimmed and each run of whitespace inside it becomes one
  space (what a store does to any content), so a rendered line is stored as it is rendered.
- A name may not be empty nor hold ": " (the first ": " ends the name); a step may not be empty
  nor hold "; " (it separates steps). Such input is refused with an error saying what to change
  (`InvalidEntry`), never escaped: the line stays plain Markdown a person reads and edits.
- The final period belongs to the line, not to the last step: a last step's own final "." is
  the line's (so "push etc." is stored and read back as "push etc"), a last step ending with
  "!" or "?" gets none added ("done!" stays "done!"), and reading drops one final ".".
- Reading (`read_procedure`) never fails and never changes the line: content with a non-empty
  name before its first ": " and non-empty text after it is a name and its steps (split at
  "; ", empty pieces left out, the final period optional); any other content (a hand edit, a
  line HackLM's `store` wrote) is a procedure too, with no name and its whole text as its one
  step.
- Names are compared (`same_name`) ignoring case and runs of whitespace: "Deploy to  staging"
  names the same procedure as "deploy to staging".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from memd_client.errors import InvalidEntry

NAME_END = ": "
"""Ends a procedure's name."""
STEP_SEPARATOR = "; "
"""Separates two steps."""
_SENTENCE_ENDS = (".", "!", "?")


class Procedure(NamedTuple):
    """A procedure as read from an entry: its name (None when the line is not in the
    procedure shape) and its steps, in order (never empty)."""

    name: str | None
    steps: tuple[str, ...]


def _one_line(text: str) -> str:
    """`text` trimmed, each whitespace run one space (as `transitions.clean_content`)."""
    return " ".join(text.split())


def render_procedure(name: str, steps: Sequence[str]) -> str:
    """Return the entry content for a procedure `name` with `steps` (see the module rules).

    Raises:
        InvalidEntry: the name is empty or holds ": ", there is no step, or a step is empty or
            holds "; " (the message names the step and what to do).
    """
    clean_name = _one_line(name)
    if not clean_name:
        raise InvalidEntry("The procedure's name is empty; name it, like 'Deploy to staging'.")
    if NAME_END in clean_name:
        raise InvalidEntry(
            f"The procedure's name {clean_name!r} holds ': ', which ends a name; write it "
            "without, like 'Deploy to staging'."
        )
    if not steps:
        raise InvalidEntry("A procedure needs at least one step; pass its steps in order.")
    clean_steps = []
    for number, step in enumerate(steps, start=1):
        clean = _one_line(step)
        if not clean:
            raise InvalidEntry(f"Step {number} is empty; leave it out or say what to do.")
        if STEP_SEPARATOR in clean:
            raise InvalidEntry(
                f"Step {number} ({clean!r}) holds '; ', which separates steps; pass it as two "
                "steps, or write ',' instead."
            )
        clean_steps.append(clean)
    if clean_steps[-1].endswith("."):  # the line's final period stands for the step's own
        clean_steps[-1] = clean_steps[-1][:-1].rstrip()
        if not clean_steps[-1]:
            raise InvalidEntry(f"Step {len(steps)} is empty; leave it out or say what to do.")
    text = f"{clean_name}{NAME_END}{STEP_SEPARATOR.join(clean_steps)}"
    return text if text.endswith(_SENTENCE_ENDS) else text + "."


def read_procedure(content: str) -> Procedure:
    """Return the name and steps of an entry's `content` (see the module rules); never fails
    (steps are empty only for blank content, which no entry has)."""
    name, found, rest = content.partition(NAME_END)
    name, rest = name.strip(), rest.strip()
    if rest.endswith("."):
        rest = rest[:-1].rstrip()
    steps = tuple(step.strip() for step in rest.split(STEP_SEPARATOR) if step.strip())
    if not found or not name or not steps:
        whole = content.strip()
        return Procedure(None, (whole,) if whole else ())
    return Procedure(name, steps)


def same_name(first: str, second: str) -> bool:
    """True when `first` and `second` name the same procedure (see the module rules)."""
    return _one_line(first).casefold() == _one_line(second).casefold()
