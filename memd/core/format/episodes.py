"""Episodes: dated events with their outcome, one line each in `episodes.md`.

The line format (issue 33):

    - [2026-11-20-migration-timeout] 2026-11-20: Migration 0042 timed out on the prod
      replica; batching the backfill fixed it. #outcome/fixed

(one line in the file). An episode is an ordinary entry (`memd.core.format.mdformat`): its
content starts with its date, then `: ` and the event; its outcome and its other tags are plain
`#tags` (`memd.core.format.tags`), so HackLM, a text editor and `memd query --tag` all read
them as they are.

Rules:
- `render_episode` writes the content: `YYYY-MM-DD: text`, then ` #outcome/<outcome>` when
  there is one, then ` #<tag>` for each tag not already in the text, in the order given. A text
  that already starts with a date keeps it (the caller said when it happened), else it gets the
  date given (the daemon's today).
- An outcome or a tag is one tag body: whitespace runs become "-", a leading `#` is dropped,
  and the rest must read as a tag (a letter, then letters, digits, `-_./`); anything else is
  refused with `InvalidEntry`.
- Reading is tolerant of hand edits and never fails: `episode_date` is the ISO date that opens
  the content (followed by the end, whitespace, `:`, `-` or `,`), else the one that opens the
  slug (`2026-11-20-...`), else None: an undated line is still an episode. An impossible date
  (2026-13-45) is no date. `episode_outcome` is the first `#outcome/...` tag in the text
  (folded like every tag); None without one. Nothing here rewrites a line.
- A new episode's slug starts with its date (`memd.core.writes.episode_store`).
"""

from __future__ import annotations

import datetime
import re
import unicodedata
from collections.abc import Sequence

from memd.core.format.tags import TAG_PATTERN, InvalidTag, normalize_tag, tags_of
from memd_client.errors import InvalidEntry

OUTCOME_TAG = "outcome/"
"""The prefix of the tag that holds an episode's outcome: `#outcome/fixed`."""

_LEADING_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})(?=$|[\s:,\-])")


def render_episode(
    date: datetime.date, text: str, outcome: str | None = None, tags: Sequence[str] = ()
) -> str:
    """Return an episode's content (see the module rules), before the store path cleans it.

    Raises:
        InvalidEntry: `text` is blank, or the outcome or a tag cannot be a tag.
    """
    event = " ".join(text.split())
    if not event:
        raise InvalidEntry("An episode needs text: say what happened, in one sentence.")
    if leading_date(event) is None:
        event = f"{date.isoformat()}: {event}"
    parts = [event]
    present = set(tags_of(event))
    if outcome is not None and outcome.strip():
        body = OUTCOME_TAG + tag_body(outcome, what="outcome")
        if normalize_tag(body) not in present:
            parts.append("#" + body)
            present.add(normalize_tag(body))
    for tag in tags:
        body = tag_body(tag, what="tag")
        if normalize_tag(body) not in present:
            parts.append("#" + body)
            present.add(normalize_tag(body))
    return " ".join(parts)


def tag_body(value: str, *, what: str) -> str:
    """Return `value` as one tag's body (no `#`), whitespace runs joined by "-".

    Raises:
        InvalidEntry: it is empty or does not read as a tag (`what` names it in the message).
    """
    body = "-".join(value.strip().lstrip("#").split()).rstrip("./_-")
    try:
        valid = bool(body) and TAG_PATTERN.fullmatch(normalize_tag(body)) is not None
    except InvalidTag:
        valid = False
    if not valid:
        raise InvalidEntry(
            f"The {what} {value!r} cannot be a tag; use a word such as 'fixed' or 'db' (a letter, "
            "then letters, digits, '-', '_', '.' or '/')."
        )
    return body


def leading_date(content: str) -> datetime.date | None:
    """The valid ISO date that opens `content` (see the module rules), else None."""
    match = _LEADING_DATE.match(content.lstrip())
    if match is None:
        return None
    try:
        return datetime.date(int(match[1]), int(match[2]), int(match[3]))
    except ValueError:
        return None


def episode_date(slug: str | None, content: str) -> datetime.date | None:
    """The date of an episode: its content's leading date, else its slug's, else None."""
    found = leading_date(content)
    if found is None and slug:
        found = leading_date(slug)
    return found


def episode_outcome(content: str) -> str | None:
    """The outcome of an episode: its first `#outcome/...` tag (a tag by the tags' rules, so
    never one in a code span), folded; None without one."""
    found = [tag for tag in tags_of(content) if tag.startswith(OUTCOME_TAG) and tag != OUTCOME_TAG]
    if not found:
        return None
    folded = unicodedata.normalize("NFKC", content).casefold()
    first = min(found, key=lambda tag: (folded.find("#" + tag), tag))
    return first.removeprefix(OUTCOME_TAG)


def episode_text(content: str) -> str:
    """The event itself: `content` without its leading date (and the `:` after it)."""
    stripped = content.lstrip()
    match = _LEADING_DATE.match(stripped)
    if match is None or leading_date(stripped) is None:
        return content.strip()
    rest = stripped[match.end() :]
    return re.sub(r"^[\s:,\-]*", "", rest).strip()
