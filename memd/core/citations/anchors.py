"""Which of an entry's words cite this workspace's artifacts (STUB: backticked paths only; the
rule table replaces it)."""

from __future__ import annotations

import re

from memd.core.citations.model import Anchor

_SPAN = re.compile(r"`([^`\s]+)`")


def anchors_of(content: str) -> tuple[Anchor, ...]:
    """Return the citations in `content`, in text order; never raises."""
    found: list[Anchor] = []
    for match in _SPAN.finditer(content):
        text = match.group(1)
        if "/" in text and "://" not in text and not text.startswith("~"):
            key = text.lstrip("./").rstrip("/") if text.startswith("./") else text.strip("/")
            found.append(Anchor(text, "path", key, match.start(1), match.end(1), quoted=True))
    return tuple(found)
