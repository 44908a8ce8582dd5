"""Inline `#tags` in memory content, and the tags a `query` or `list` asks for.

Rules (a tag is plain text in the entry, so HackLM and hand edits keep it as it is):
- A tag is `#` followed by a letter, then any letters, digits, `-`, `_`, `.` and `/`:
  `#security`, `#db-migrations`, `#v2`, `#node.js`, `#team/backend`. Letters and digits are
  Unicode ones (`#übersetzung` is a tag).
- Tags are compared folded: the content is NFKC-normalised and case-folded first, so `#Perf`,
  `#PERF` and `#perf` are one tag, `perf`.
- Trailing `.`, `-`, `_` and `/` are not part of the tag: `#perf.` and `#perf-` are `perf`,
  `#v2.1.` is `v2.1`. So a tag always ends with a letter or digit.
- The `#` must start the content or follow whitespace or one of `( [ { " ' * , ;` (or a
  typographic opening quote). So `a#b`, `page.html#intro`, `https://x/#anchor`, `&#38;` and
  `\\#not-a-tag` (the Markdown escape) hold no tag.
- The character after `#` must be a letter: `#1` and `#123` (issue and PR references), `# `
  (a comment or heading), `##`, and `C#` / `F#` (nothing after the `#`) hold no tag.
- Nothing inside a Markdown code span counts: `` `grep '#include'` `` holds no tag. A code span
  is a run of backticks up to the next run of the same length, as in Markdown; a lone backtick
  is just a character.
- Known false positive: a CSS colour made only of the letters a-f (`#fafafa`, `#fff`) reads as a
  tag; a colour with a leading digit (`#1e1e1e`) does not. Escape it (`\\#fff`) or put it in
  backticks.
- A query's tags are written with or without the leading `#` and folded the same way
  (`normalize_tag`); an entry matches when it carries every tag asked for.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["TAG_PATTERN", "InvalidTag", "normalize_tag", "strip_tags", "tags_of"]

TAG_PATTERN = re.compile(r"[^\W\d_](?:[\w./-]*[^\W_])?")
"""What a (folded) tag looks like: a letter, then letters, digits, `-_./`, ending in a letter
or digit."""

_BODY = r"[^\W\d_][\w./-]*"
_TRAILING = "./_-"
_OPENERS = "\\s(\\[{\"'*,;\u201c\u2018\u00ab"  # a regex character-set body
_TAG = re.compile(rf"(?<![^{_OPENERS}])#({_BODY})")
_WHOLE_BODY = re.compile(_BODY)
_BACKTICKS = re.compile(r"`+")
_EMPTY: frozenset[str] = frozenset()


class InvalidTag(ValueError):
    """A query asked for something that cannot be a tag; the message names it and says why."""


def _fold(text: str) -> str:
    """Return `text` NFKC-normalised and case-folded (idempotent)."""
    return unicodedata.normalize("NFKC", text).casefold()


def _mask_code_spans(text: str) -> str:
    """Replace each code span with a space, in linear time (see `code_spans`)."""
    pieces = []
    position = 0
    for start, end in code_spans(text):
        pieces.append(text[position:start])
        pieces.append(" ")
        position = end
    pieces.append(text[position:])
    return "".join(pieces)


def tags_of(content: str) -> frozenset[str]:
    """Return the tags of one entry's content (see the module rules); never raises.

    Args:
        content: An entry's content (any text).

    Returns:
        The folded tags, without `#`; empty for content without tags.
    """
    if "#" not in content and content.isascii():
        return _EMPTY  # the common case, and the cheapest
    folded = _fold(content)
    if "#" not in folded:
        return _EMPTY
    if "`" in folded:
        folded = _mask_code_spans(folded)
    return frozenset(match.group(1).rstrip(_TRAILING) for match in _TAG.finditer(folded))


def strip_tags(content: str) -> str:
    """Return `content` with each of its tags (see the module rules) replaced by a space;
    everything else, code spans included, stays as written (not folded)."""
    if "#" not in content:
        return content
    pieces = []
    position = 0
    for start, end in code_spans(content):
        pieces.append(_TAG.sub(" ", content[position:start]))
        pieces.append(content[start:end])
        position = end
    pieces.append(_TAG.sub(" ", content[position:]))
    return "".join(pieces)


def code_spans(text: str) -> list[tuple[int, int]]:
    """Return the (start, end) of each code span of `text`, backticks included (CommonMark: a
    backtick run opens a span that the next run of the same length closes)."""
    runs = [(match.start(), match.end()) for match in _BACKTICKS.finditer(text)]
    partner: list[int | None] = [None] * len(runs)
    last: dict[int, int] = {}
    for number in range(len(runs) - 1, -1, -1):
        length = runs[number][1] - runs[number][0]
        partner[number] = last.get(length)
        last[length] = number
    spans = []
    number = 0
    while number < len(runs):
        closing = partner[number]
        if closing is None or runs[closing][0] == runs[number][1]:
            number += 1
            continue
        spans.append((runs[number][0], runs[closing][1]))
        number = closing + 1
    return spans


def normalize_tag(text: str) -> str:
    """Return the tag a query means by `text`: `"#Security"`, `"security"` and `" security. "`
    all mean `security`.

    Args:
        text: One tag as a user typed it, with or without the leading `#`.

    Returns:
        The folded tag, as `tags_of` reports it.

    Raises:
        InvalidTag: `text` is empty or cannot be a tag (the message names it and says why).
    """
    body = _fold(text.strip())
    body = body.removeprefix("#")
    if _WHOLE_BODY.fullmatch(body) is None:
        raise InvalidTag(
            f"{text!r} is not a tag; a tag is a letter, then letters, digits, '-', '_', '.' "
            "or '/', with or without a leading '#' (for example 'security' or '#db-migrations')."
        )
    return body.rstrip(_TRAILING)
