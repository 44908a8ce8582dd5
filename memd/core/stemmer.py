"""English Snowball ("Porter2") stemmer, written from the published algorithm description.

`stem(word)` maps a lowercase ASCII word to its stem, so "write", "writes" and "writing" all
become "write". Words may hold a-z, digits (treated as non-vowels) and apostrophes; anything
else, and any word of one or two characters, is returned unchanged. Results agree with the
current Snowball reference (3.x), which refines the 2006 description in a few places, marked
"(3.x)" below.

Definitions:
- Vowels are a, e, i, o, u, y. A "y" at the start of a word or right after a vowel is a
  consonant; it is marked as "Y" while stemming and turned back into "y" at the end.
- A double is bb, dd, ff, gg, mm, nn, pp, rr or tt. A valid li-ending is c, d, e, g, h, k, m, n,
  r or t.
- R1 is the region after the first non-vowel that follows a vowel (or the empty end of the
  word); words starting with "gener", "commun" or "arsen" (3.x: also "past", "univers",
  "later", "emerg", "organ", "inter") have R1 right after that prefix. R2 is the same rule
  applied again inside R1.
- A short syllable is a vowel followed by a non-vowel other than w, x or Y and preceded by a
  non-vowel, or a vowel at the start of the word followed by a non-vowel. A word is short when
  it ends in a short syllable and R1 is empty.

Steps, each finding the longest matching suffix of its list and acting only on that one:
- Exceptions: a fixed table of irregular forms ("skies" -> "sky", "dying" -> "die", "news";
  3.x keeps "paste" apart from "past").
- Prelude: drop a leading apostrophe, mark consonant "y" as "Y".
- Step 0: remove "'s'", "'s" or "'".
- Step 1a: "sses" -> "ss"; "ied"/"ies" -> "i" after more than one letter, else "ie"; "s" is
  dropped when a vowel occurs before the letter preceding it; "us" and "ss" stay.
- After step 1a, "inning", "outing", "canning", "herring", "earring", "proceed", "exceed" and
  "succeed" (3.x: and "evening") stop here.
- Step 1b: "eed"/"eedly" -> "ee" inside R1; "ed", "edly", "ing", "ingly" are dropped when a
  vowel precedes them, then "at"/"bl"/"iz" get an "e", a final double loses a letter (3.x:
  except in "add", "egg", "err", "off"... - a, e or o plus a double), and a short word gets an
  "e". (3.x: "ing" after a consonant plus "y", as in "vying", gives consonant + "ie".)
- Step 1c: a final "y"/"Y" after a non-vowel that is not the first letter becomes "i".
- Step 2 (suffix in R1): "tional" -> "tion", "enci" -> "ence", "ational" -> "ate", "li" is
  dropped after a valid li-ending, "ogi" -> "og" after "l", (3.x) "ogist" -> "og", and so on
  (see `_STEP2`).
- Step 3 (suffix in R1): "alize" -> "al", "icate" -> "ic", "ful"/"ness" dropped, "ative"
  dropped only inside R2, and so on (see `_STEP3`).
- Step 4 (suffix in R2): "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement",
  "ment", "ent", "ism", "ate", "iti", "ous", "ive", "ize" dropped; "ion" dropped after s or t.
- Step 5: a final "e" is dropped inside R2, or inside R1 when not after a short syllable; a
  final "l" is dropped inside R2 after another "l".
- Postlude: "Y" -> "y".
"""

from __future__ import annotations

import functools
import re

_VOWELS = frozenset("aeiouy")
_DOUBLES = ("bb", "dd", "ff", "gg", "mm", "nn", "pp", "rr", "tt")
_LI_ENDINGS = frozenset("cdeghkmnrt")
_WORD = re.compile(r"[a-z0-9']+")

_EXCEPTIONS = {
    "skis": "ski",
    "skies": "sky",
    "dying": "die",
    "lying": "lie",
    "tying": "tie",
    "idly": "idl",
    "gently": "gentl",
    "ugly": "ugli",
    "early": "earli",
    "only": "onli",
    "singly": "singl",
    "sky": "sky",
    "news": "news",
    "howe": "howe",
    "atlas": "atlas",
    "cosmos": "cosmos",
    "bias": "bias",
    "andes": "andes",
    "paste": "paste",
    "pastes": "paste",
    "pasted": "paste",
    "pasting": "paste",
}
_AFTER_STEP1A = frozenset(
    ("inning", "outing", "canning", "herring", "earring", "evening", "proceed", "exceed", "succeed")
)
_R1_PREFIXES = ("gener", "commun", "arsen", "past", "univers", "later", "emerg", "organ", "inter")

_STEP1B = ("eedly", "ingly", "edly", "eed", "ing", "ed")
_STEP2 = {
    "ational": "ate",
    "tional": "tion",
    "enci": "ence",
    "anci": "ance",
    "abli": "able",
    "entli": "ent",
    "izer": "ize",
    "ization": "ize",
    "ation": "ate",
    "ator": "ate",
    "alism": "al",
    "aliti": "al",
    "alli": "al",
    "fulness": "ful",
    "ousli": "ous",
    "ousness": "ous",
    "iveness": "ive",
    "iviti": "ive",
    "biliti": "ble",
    "bli": "ble",
    "ogi": "og",
    "ogist": "og",
    "fulli": "ful",
    "lessli": "less",
    "li": "",
}
_STEP3 = {
    "ational": "ate",
    "tional": "tion",
    "alize": "al",
    "icate": "ic",
    "iciti": "ic",
    "ical": "ic",
    "ful": "",
    "ness": "",
    "ative": "",
}
_STEP4 = (
    "ement",
    "ance",
    "ence",
    "able",
    "ible",
    "ment",
    "ant",
    "ent",
    "ism",
    "ate",
    "iti",
    "ous",
    "ive",
    "ize",
    "ion",
    "al",
    "er",
    "ic",
)


@functools.lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """Return the Porter2 stem of `word`.

    Args:
        word: A lowercase ASCII word; digits and apostrophes are allowed ("utf8", "dog's").

    Returns:
        The stem, e.g. "generously" -> "generous", "skies" -> "sky". Words of one or two
        characters and anything that is not a lowercase ASCII word come back unchanged.
    """
    if len(word) <= 2 or not _WORD.fullmatch(word):
        return word
    if word in _EXCEPTIONS:
        return _EXCEPTIONS[word]
    w = _prelude(word)
    r1, r2 = _regions(w)
    w = _step1a(_step0(w))
    if w in _AFTER_STEP1A:
        return w
    w = _step1c(_step1b(w, r1))
    w = _step5(_step4(_step3(_step2(w, r1), r1, r2), r2), r1, r2)
    return w.replace("Y", "y")


def _is_vowel(w: str, i: int) -> bool:
    return w[i] in _VOWELS


def _prelude(word: str) -> str:
    """Drop a leading apostrophe and mark consonant "y" (initial or after a vowel) as "Y"."""
    w = word[1:] if word.startswith("'") else word
    chars = list(w)
    for i, ch in enumerate(chars):
        if ch == "y" and (i == 0 or chars[i - 1] in _VOWELS):
            chars[i] = "Y"
    return "".join(chars)


def _region_after(w: str, start: int) -> int:
    """Return the index after the first non-vowel that follows a vowel, from `start` on."""
    for i in range(start + 1, len(w)):
        if not _is_vowel(w, i) and _is_vowel(w, i - 1):
            return i + 1
    return len(w)


def _regions(w: str) -> tuple[int, int]:
    """Return the start indexes of R1 and R2."""
    r1 = next((len(p) for p in _R1_PREFIXES if w.startswith(p)), None)
    if r1 is None:
        r1 = _region_after(w, 0)
    return r1, _region_after(w, r1)


def _ends_short_syllable(w: str) -> bool:
    """Whether `w` ends in a short syllable (see the module rules)."""
    n = len(w)
    if n == 2:
        return _is_vowel(w, 0) and not _is_vowel(w, 1)
    return (
        n >= 3
        and not _is_vowel(w, n - 3)
        and _is_vowel(w, n - 2)
        and not _is_vowel(w, n - 1)
        and w[-1] not in "wxY"
    )


def _is_short(w: str, r1: int) -> bool:
    return r1 >= len(w) and _ends_short_syllable(w)


def _has_vowel(w: str) -> bool:
    return any(ch in _VOWELS for ch in w)


def _step0(w: str) -> str:
    for suffix in ("'s'", "'s", "'"):
        if w.endswith(suffix):
            return w[: -len(suffix)]
    return w


def _step1a(w: str) -> str:
    if w.endswith("sses"):
        return w[:-2]
    if w.endswith(("ied", "ies")):
        return w[:-2] if len(w) > 4 else w[:-1]
    if w.endswith(("us", "ss")):
        return w
    if w.endswith("s") and _has_vowel(w[:-2]):
        return w[:-1]
    return w


def _step1b(w: str, r1: int) -> str:
    suffix = next((s for s in _STEP1B if w.endswith(s)), None)
    if suffix is None:
        return w
    base = w[: -len(suffix)]
    if suffix in ("eed", "eedly"):
        return base + "ee" if len(base) >= r1 else w
    if suffix == "ing" and len(base) == 2 and base[1] == "y" and not _is_vowel(base, 0):
        return base[0] + "ie"
    if not _has_vowel(base):
        return w
    if base.endswith(("at", "bl", "iz")):
        return base + "e"
    if base.endswith(_DOUBLES) and not (len(base) == 3 and base[0] in "aeo"):
        return base[:-1]
    if _is_short(base, r1):
        return base + "e"
    return base


def _step1c(w: str) -> str:
    if len(w) > 2 and w[-1] in "yY" and not _is_vowel(w, len(w) - 2):
        return w[:-1] + "i"
    return w


def _longest(w: str, suffixes: tuple[str, ...] | dict[str, str]) -> str | None:
    """Return the longest of `suffixes` that `w` ends with, if any."""
    found = [s for s in suffixes if w.endswith(s)]
    return max(found, key=len) if found else None


def _step2(w: str, r1: int) -> str:
    suffix = _longest(w, _STEP2)
    if suffix is None or len(w) - len(suffix) < r1:
        return w
    base = w[: -len(suffix)]
    if suffix == "ogi" and not base.endswith("l"):
        return w
    if suffix == "li" and (not base or base[-1] not in _LI_ENDINGS):
        return w
    return base + _STEP2[suffix]


def _step3(w: str, r1: int, r2: int) -> str:
    suffix = _longest(w, _STEP3)
    if suffix is None or len(w) - len(suffix) < r1:
        return w
    if suffix == "ative" and len(w) - len(suffix) < r2:
        return w
    return w[: -len(suffix)] + _STEP3[suffix]


def _step4(w: str, r2: int) -> str:
    suffix = _longest(w, _STEP4)
    if suffix is None or len(w) - len(suffix) < r2:
        return w
    base = w[: -len(suffix)]
    if suffix == "ion" and not base.endswith(("s", "t")):
        return w
    return base


def _step5(w: str, r1: int, r2: int) -> str:
    if w.endswith("e"):
        base = w[:-1]
        if len(base) >= r2 or (len(base) >= r1 and not _ends_short_syllable(base)):
            return base
        return w
    if w.endswith("ll") and len(w) - 1 >= r2:
        return w[:-1]
    return w
