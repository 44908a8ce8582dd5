"""Characters that can hide text from a person while a program still reads it, and how memd
shows them.

A terminal obeys escape sequences (`ESC [8m` conceals what follows, `ESC [2K` and a carriage
return erase what came before, the C1 control U+009B is an 8-bit `ESC [`), and a bidi override
makes an editor show a line in another order than it holds. A repository's memory file can hold
any of them, so a line can look harmless to the human while the agent gets an instruction.

Rules:
- CONCEALING characters: the C0 controls U+0000-U+001F, DEL U+007F, the C1 controls
  U+0080-U+009F, the bidi embedding, override and isolate controls U+202A-U+202E and
  U+2066-U+2069 (the "Trojan Source" characters), and the Unicode tag characters
  U+E0000-U+E007F (invisible copies of ASCII a model still reads).
- Not concealing, so allowed everywhere: the implicit direction marks (U+200E, U+200F, U+061C)
  and the zero-width joiners and spaces, which right-to-left scripts, Indic scripts and emoji
  need and which cannot reorder or hide readable text.
- Stored content (`first_refused`) may hold none of them except the whitespace memd turns into
  one space before storing (LINE_WHITESPACE: tab, line feed, vertical tab, form feed, carriage
  return and NEL U+0085, a line break).
- Text shown to a person or put in a prompt (`visible`) shows each one as an escape, `\\x1b`,
  `\\x9b`, `\\u202e`, `\\U000e0041`, so nothing is hidden and every reader sees the same text.
  Line feeds (which separate the lines of a rendering) and tabs are kept.
"""

from __future__ import annotations

import re

_BEYOND_C1 = "\u202a-\u202e\u2066-\u2069\U000e0000-\U000e007f"
CONCEALING = re.compile(f"[\x00-\x1f\x7f-\x9f{_BEYOND_C1}]")
"""One concealing character (see the module rules)."""

LINE_WHITESPACE = "\t\n\x0b\x0c\r\x85"
"""The controls stored content may hold: whitespace, each run turned into one space."""

REFUSED = re.compile(f"[\x00-\x08\x0e-\x1f\x7f-\x84\x86-\x9f{_BEYOND_C1}]")
"""A concealing character stored content may not hold: all but LINE_WHITESPACE."""
_HIDDEN = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BEYOND_C1}]")
"""A concealing character `visible` escapes: all but line feed and tab."""


def first_refused(text: str) -> str | None:
    """Return the first character of `text` that stored content may not hold, or None."""
    found = REFUSED.search(text)
    return None if found is None else found.group()


def escape(character: str) -> str:
    """Return the visible form of one character: `\\x1b`, `\\u202e`, `\\U000e0041`."""
    code = ord(character)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def visible(text: str) -> str:
    """Return `text` with every concealing character but line feeds and tabs shown as an
    escape (see the module rules); text without one is returned as it is."""
    if _HIDDEN.search(text) is None:
        return text
    return _HIDDEN.sub(lambda found: escape(found.group()), text)
