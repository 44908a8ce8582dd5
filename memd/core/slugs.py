"""Slugs: validation of given slugs and derivation of new ones from content.

Rules:
- A slug memd writes is kebab-case: one or more runs of [a-z0-9] joined by single hyphens, at
  most MAX_SLUG_LENGTH characters.
- A derived slug is built from the content's first keywords (stop words dropped, accents folded)
  and made unique within its file by a numeric suffix ("-2", "-3", ...).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Container

from memd.core.dedup import STOP_WORDS
from memd_client.errors import InvalidEntry

MAX_SLUG_LENGTH = 64
SLUG_WORDS = 4
FALLBACK_SLUG = "memory"

_SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_WORD = re.compile(r"[a-z0-9]+")


def validate_slug(slug: str) -> str:
    """Return `slug` if it is a valid kebab-case slug.

    Raises:
        InvalidEntry: `slug` is empty, too long or not kebab-case.
    """
    if len(slug) > MAX_SLUG_LENGTH or not _SLUG.fullmatch(slug):
        raise InvalidEntry(
            f"Slug {slug!r} is not valid kebab-case; use 1-{MAX_SLUG_LENGTH} lowercase letters, "
            "digits and single hyphens, like 'use-tabs'."
        )
    return slug


def derive_slug(content: str, taken: Container[str]) -> str:
    """Return a kebab-case slug for `content` that is not in `taken`."""
    folded = unicodedata.normalize("NFKD", content).encode("ascii", "ignore").decode().lower()
    words = [w for w in _WORD.findall(folded) if len(w) > 2 and w not in STOP_WORDS]
    if not words:
        words = [w for w in _WORD.findall(folded) if w not in STOP_WORDS] or [FALLBACK_SLUG]
    base = _join_within_limit(words[:SLUG_WORDS], MAX_SLUG_LENGTH - 4)
    return unique_slug(base, taken)


def unique_slug(base: str, taken: Container[str]) -> str:
    """Return `base`, or `base-N` with the smallest N >= 2 that is not in `taken`."""
    if base not in taken:
        return base
    number = 2
    while f"{base}-{number}" in taken:
        number += 1
    return f"{base}-{number}"


def _join_within_limit(words: list[str], limit: int) -> str:
    slug = words[0][:limit]
    for word in words[1:]:
        if len(slug) + 1 + len(word) > limit:
            break
        slug = f"{slug}-{word}"
    return slug
