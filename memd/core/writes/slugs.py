"""Slugs: validation of given slugs and derivation of new ones from content.

Rules:
- A slug is kebab-case: one or more runs of lowercase letters (of any script) and digits,
  joined by single hyphens, at most MAX_SLUG_LENGTH characters: `use-tabs`, `node-20`,
  `перед-коммитом`, `提交前先运行-make-lint`.
- A derived slug is built from the content's first SLUG_WORDS content words as
  `memd.core.writes.wording` reads them (no stop words, negators or prepositions), as written but
  lowercased; Latin letters lose their accents ("ausführen" gives "ausfuhren"), other scripts
  keep their letters, and a run of Chinese or Japanese characters is one word (at most
  CJK_RUN characters). Words of three or more characters are preferred; a text with none
  falls back to its shorter words, then to FALLBACK_SLUG.
- A derived slug is made unique within its file by a numeric suffix ("-2", "-3", ...).
- A given slug is refused if it holds a secret value: as written, with its hyphens read as
  spaces ("admin-password-hunter2" is "admin password hunter2"), or a part in upper case (an AWS
  key written in lower case).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Container

from memd.core.format import secrets
from memd.core.format.path_scopes import without_scopes
from memd.core.writes.wording import analyse, is_cjk
from memd_client.errors import InvalidEntry

MAX_SLUG_LENGTH = 64
SLUG_WORDS = 4
CJK_RUN = 8
FALLBACK_SLUG = "memory"

_SLUG = re.compile(r"[^\W_]+(?:-[^\W_]+)*")
_PART = re.compile(r"[^\W_]+")


def validate_slug(slug: str) -> str:
    """Return `slug` if it is a valid kebab-case slug.

    Raises:
        InvalidEntry: `slug` is empty, too long, not lowercase or not kebab-case.
    """
    if len(slug) > MAX_SLUG_LENGTH or not _SLUG.fullmatch(slug) or slug != slug.lower():
        raise InvalidEntry(
            f"Slug {slug!r} is not valid kebab-case; use 1-{MAX_SLUG_LENGTH} lowercase letters, "
            "digits and single hyphens, like 'use-tabs'."
        )
    parts = slug.split("-")
    if (
        secrets.has_secret(slug)
        or secrets.has_secret(" ".join(parts))  # "admin-password-hunter2" read as words
        or any(secrets.has_secret(part.upper()) for part in parts)
    ):
        raise InvalidEntry(
            "The slug looks like it holds a secret value; name the rule instead, like "
            "'prod-db-password-location'."
        )
    return slug


def derive_slug(content: str, taken: Container[str]) -> str:
    """Return a kebab-case slug for `content` that is not in `taken` (see the module rules)."""
    # A slug never carries a secret, nor a path scope's globs (they are not what it is about).
    words = _slug_words(secrets.without_secrets(without_scopes(content)))
    long = [word for word in words if len(word) > 2 or is_cjk(word)]
    base = _join_within_limit((long or words or [FALLBACK_SLUG])[:SLUG_WORDS], MAX_SLUG_LENGTH - 4)
    return unique_slug(base, taken)


def unique_slug(base: str, taken: Container[str]) -> str:
    """Return `base`, or `base-N` with the smallest N >= 2 that is not in `taken`."""
    if base not in taken:
        return base
    number = 2
    while f"{base}-{number}" in taken:
        number += 1
    return f"{base}-{number}"


def _slug_words(content: str) -> list[str]:
    """The content words of `content` as slug parts, CJK characters joined into runs."""
    words: list[str] = []
    run = ""
    for word in analyse(content).words:
        if not word.content:
            continue
        if is_cjk(word.text):
            run += word.text
            continue
        if run:
            words.append(run[:CJK_RUN])
            run = ""
        words.extend(_parts(word.text))
    if run:
        words.append(run[:CJK_RUN])
    return words


def _parts(text: str) -> list[str]:
    """The slug parts of one written word: lowercase, accents dropped from Latin letters only
    (Cyrillic "й" keeps its breve)."""
    lower = text.lower()
    if not lower.isascii():
        lower = "".join(_unaccented(char) for char in lower)
    return _PART.findall(lower)


def _unaccented(char: str) -> str:
    if char.isascii() or not unicodedata.name(char, "").startswith("LATIN"):
        return char
    return "".join(c for c in unicodedata.normalize("NFKD", char) if not unicodedata.combining(c))


def _join_within_limit(words: list[str], limit: int) -> str:
    slug = words[0][:limit]
    for word in words[1:]:
        if len(slug) + 1 + len(word) > limit:
            break
        slug = f"{slug}-{word}"
    return slug
