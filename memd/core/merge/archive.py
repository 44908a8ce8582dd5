"""The merge of `.memory/archive.md` (and its dated, moved-aside files): a union of records.

The archive only grows (`memd.core.format.archive`): every line is a removed memory, so a merge
keeps every record either side has, whatever base had.

Rules:
- A record is a line `- YYYY-MM-DD | ...`. The head (the lines before a version's first
  record: the title and description) merges by the line-level three-way rule (`lines`).
- The body (from the first record on) is ours' lines in ours' order, plus theirs' lines ours
  does not have (counted: a record twice in theirs and once in ours is added once). Theirs'
  records go in date order: each before the first of ours' records with a later date, ties
  after ours'; theirs' other body lines go at the end.
- Where both sides changed the file, a record deleted on one side is kept (union): a deleted
  archive line would be a lost memory. Where one side left it unchanged, the other side is taken
  as it is, as git itself does without calling the driver. The archive merge conflicts only
  where both sides changed its head differently.
"""

from __future__ import annotations

import re
from collections import Counter

from memd.core.format.mdformat import Document, Line, line_ending, parse, render
from memd.core.merge.lines import merge_lines, shortcut
from memd.core.merge.result import MergeResult, Output

_RECORD = re.compile(r"- (\d{4}-\d{2}-\d{2}) \| ")


def record_date(text: str) -> str | None:
    """Return the date of the archive record `text`, or None if it is not a record."""
    match = _RECORD.match(text)
    return match.group(1) if match else None


def _split(text: str) -> tuple[str, list[Line]]:
    """Return the head's text and the body's lines."""
    lines = parse(text).lines
    first = next((n for n, line in enumerate(lines) if record_date(line.text)), len(lines))
    return render(Document(lines[:first])), list(lines[first:])


def merge_archive(base: str, ours: str, theirs: str) -> MergeResult:
    """Return the union of the two archives (see the module rules)."""
    done = shortcut(base, ours, theirs)
    if done is not None:
        return done
    (base_head, _), (ours_head, ours_body), (theirs_head, theirs_body) = map(
        _split, (base, ours, theirs)
    )
    head = merge_lines(base_head, ours_head, theirs_head)
    out = Output(line_ending(parse(ours)))
    out.add(parse(head.text).lines)
    out.starts = [number - 1 for number in head.conflicts]
    have = Counter(line.text for line in ours_body)
    extra: list[Line] = []
    for line in theirs_body:
        if have[line.text]:
            have[line.text] -= 1
        else:
            extra.append(Line(line.text, out.eol))
    records = sorted((line for line in extra if record_date(line.text)), key=_date)
    others = [line for line in extra if not record_date(line.text)]
    at = 0
    for line in ours_body:
        date = record_date(line.text)
        while date is not None and at < len(records) and _date(records[at]) < date:
            out.add([records[at]])
            at += 1
        out.add([line])
    out.add(records[at:])
    out.add(others)
    return out.finish()


def _date(line: Line) -> str:
    return record_date(line.text) or ""
