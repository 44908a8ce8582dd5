"""Memo caches are bounded in bytes, whatever text they are given."""

from __future__ import annotations

import gc
import random
import string
import tracemalloc

from memd.core.format import mdformat
from memd.core.search import terms
from memd.core.text import memo
from memd.core.writes import wording


def _words(rng: random.Random, count: int, low: int, high: int) -> list[str]:
    alphabet = string.ascii_lowercase
    return [
        "".join(rng.choice(alphabet) for _ in range(rng.randint(low, high))) for _ in range(count)
    ]


def test_old_versions_of_long_lines_are_not_kept_alive() -> None:
    """Parsing 30 versions of a file of long lines keeps at most the line memo's budget, not
    every version (a count-bounded cache kept them all)."""
    rng = random.Random(1)
    versions = [  # made before tracing starts: only what parsing keeps is counted
        "".join(
            f"- [v{version}-{n}] "
            + " ".join(f"w{rng.getrandbits(32):x}" for _ in range(400))
            + "\n"
            for n in range(40)
        )
        for version in range(30)
    ]
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for text in versions:
            mdformat.entries(mdformat.parse(text))
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    # 30 versions x 40 lines x ~2.5 kB, twice (the line and its content): ~6 MB if kept
    assert kept < mdformat._LINE_BUDGET + (1 << 20)


def test_every_memo_stays_within_its_budget_on_hostile_text() -> None:
    rng = random.Random(2)
    joined = ["-".join(_words(rng, 30, 1, 1)) for _ in range(1000)]  # "a-b-c-...": many parts
    camel = ["".join(w.capitalize() for w in _words(rng, 12, 1, 3)) for _ in range(1000)]
    for token in joined + camel:
        wording.analyse(f"Use {token} for {token[:9]}.")
        terms.tokenize(token)
        terms.entry_terms(mdformat.Entry(line=1, slug=token.lower()[:60], content=token))
    assert 0 < memo.used_bytes() <= memo.budget_bytes()
    assert memo.budget_bytes() <= 64 << 20


def test_a_memoised_function_returns_what_the_function_returns() -> None:
    calls: list[str] = []

    @memo.memo(1 << 16, base=100, per_char=2)
    def shout(text: str, times: int = 1) -> str:
        calls.append(text)
        return text.upper() * times

    assert shout("ab") == "AB" and shout("ab") == "AB" and calls == ["ab"]
    assert shout("ab", 2) == "ABAB" and calls == ["ab", "ab"]  # another key
    long = "x" * 20_000  # charged more than budget / 64: computed, never kept
    assert shout(long) == long.upper() and shout(long) == long.upper()
    assert calls.count(long) == 2
    for n in range(2000):
        shout(f"key{n}")
    assert shout.cache_bytes() <= 1 << 16  # type: ignore[attr-defined]
