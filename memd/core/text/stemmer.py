"""Word stems from the Snowball project's own stemmers (PyStemmer, libstemmer in C).

`stem(word)` maps a lowercase word to its stem, so "write", "writes" and "writing" all become
"write" and "очищается" / "очищаются" both become "очища".

Rules:
- The language goes by the word's script: a word holding a Cyrillic letter is stemmed as
  Russian, a Greek one as Greek, anything else as English (Snowball's "english", Porter2).
  Words in German, Spanish and other Latin-script languages get the English rules, which only
  ever strip English endings: harmless for matching, since both sides of a comparison get the
  same treatment.
- Words of one or two characters and words holding no letter are returned unchanged.
- PyStemmer objects are not safe to share between threads, so each thread gets its own.

Why not our own port: the English stemmer memd used to carry (a hand port of Porter2) agreed with
PyStemmer on every one of 128,744 distinct words of the tuning sets, and PyStemmer stems a word in
1.35 µs against the port's 7.5 µs (pure-Python snowballstemmer: 18 µs); it also covers every
language Snowball does.
"""

from __future__ import annotations

import sys
import threading

import Stemmer

_LANGUAGES = ("english", "russian", "greek")


class _PerThread(threading.local):
    """One PyStemmer object per language, for the current thread."""

    def __init__(self) -> None:
        # No cache of PyStemmer's own (10,000 words a thread by default): memd memoises the
        # words it stems where it reads them (`terms`, `wording`), once for all threads.
        self.stemmers = {name: Stemmer.Stemmer(name, 0) for name in _LANGUAGES}


_local = _PerThread()


def language_of(word: str) -> str:
    """Return the Snowball language `word` is stemmed with (see the module rules)."""
    if word.isascii():
        return "english"
    for char in word:
        if "\u0400" <= char <= "\u04ff":
            return "russian"
        if "\u0370" <= char <= "\u03ff":
            return "greek"
    return "english"


def stem(word: str) -> str:
    """Return the stem of the lowercase `word` (see the module rules)."""
    if len(word) < 3:
        return word
    # Interned: the search index and the dedup index hold one copy of each stem, not one each.
    stemmed: str = sys.intern(_local.stemmers[language_of(word)].stemWord(word))
    return stemmed
