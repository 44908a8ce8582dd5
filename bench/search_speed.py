"""Search latency over a large synthetic workspace of developer rules.

Builds `n_entries` deterministic rule-like entries (a fixed `random.Random` seed) spread evenly
over the five categories, indexes each category once, then times `search` over all five for
`n_queries` queries of one to four words. Prints the index build time and the p50/p95/max
query latency in milliseconds.
"""

from __future__ import annotations

import argparse
import functools
import random
import time

from memd.core.format.categories import CATEGORIES, Category
from memd.core.format.mdformat import Entry
from memd.core.search.ranking import SearchIndex, build_index, search

SEED = 20240601
LIMIT = 10


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


_VERBS = _words(
    "use run write read lock open close cache validate escape log retry commit push review test "
    "deploy build format lint document rotate encrypt hash sign parse render store delete migrate "
    "pin vendor profile benchmark index bundle compress mock stub trace wrap import export"
)
_NOUNS = _words(
    "file lock database schema migration secret token key password config environment variable "
    "branch commit tag release changelog test fixture snapshot mock socket request response "
    "header cookie session cache queue worker thread process daemon service endpoint route "
    "handler middleware logger metric trace span error exception timeout retry backoff "
    "dependency package version lockfile container image volume network port certificate "
    "user account permission role policy audit input output path directory symlink encoding "
    "unicode timezone clock date json yaml markdown template component style theme font"
)
_QUALIFIERS = _words(
    "always never only before after when unless inside outside every each first last new old "
    "async sync strict local remote shared private public temporary permanent atomic"
)
_TEMPLATES = (
    "{q} {v} the {n} before you {v2} the {n2}",
    "{v} {n} with {n2}; do not {v2} {n} directly",
    "The {n} {v}s the {n2} {q}, so {v2} it {q2}",
    "Prefer {n} over {n2} for {n3}",
    "{q} {v} {n}s in the {n2} {n3}",
    "Do not {v} the {n} from the {n2} {q}; {v2} the {n3} instead",
    "{n} and {n2} must be {v}ed {q} the {n3} is {v2}ed",
)


def _pick(rng: random.Random, words: tuple[str, ...]) -> str:
    """Pick a word with a Zipf bias (the k-th word has weight 1/k), so a few are very common."""
    return rng.choices(words, cum_weights=_cumulative(len(words)))[0]


@functools.lru_cache
def _cumulative(n: int) -> list[float]:
    total = 0.0
    weights = []
    for rank in range(1, n + 1):
        total += 1.0 / rank
        weights.append(total)
    return weights


def _sentence(rng: random.Random) -> str:
    template = rng.choice(_TEMPLATES)
    text = template.format(
        q=_pick(rng, _QUALIFIERS),
        q2=_pick(rng, _QUALIFIERS),
        v=_pick(rng, _VERBS),
        v2=_pick(rng, _VERBS),
        n=_pick(rng, _NOUNS),
        n2=_pick(rng, _NOUNS),
        n3=_pick(rng, _NOUNS),
    )
    return text[0].upper() + text[1:] + "."


def make_entries(n_entries: int, seed: int = SEED) -> dict[Category, list[Entry]]:
    """Return `n_entries` synthetic rule entries spread evenly over the five categories.

    Args:
        n_entries: How many entries in total.
        seed: The seed of the `random.Random` that draws them.

    Returns:
        Each category's entries, with slugs and odd line numbers (as in a real file).
    """
    rng = random.Random(seed)
    by_category: dict[Category, list[Entry]] = {category: [] for category in CATEGORIES}
    for number in range(n_entries):
        category = CATEGORIES[number % len(CATEGORIES)]
        found = by_category[category]
        content = _sentence(rng)
        slug = "-".join(content.lower().rstrip(".").replace(";", "").split()[:3]) + f"-{number}"
        found.append(Entry(line=5 + 2 * len(found), slug=slug, content=content))
    return by_category


def make_queries(n_queries: int, seed: int = SEED + 1) -> list[str]:
    """Return `n_queries` deterministic queries of one to four rule words."""
    rng = random.Random(seed)
    pools = (_VERBS, _NOUNS, _NOUNS, _QUALIFIERS)
    return [
        " ".join(_pick(rng, rng.choice(pools)) for _ in range(rng.randint(1, 4)))
        for _ in range(n_queries)
    ]


def _percentile(sorted_values: list[float], fraction: float) -> float:
    position = min(len(sorted_values) - 1, round(fraction * (len(sorted_values) - 1)))
    return sorted_values[position]


def run(n_entries: int, n_queries: int) -> dict[str, float]:
    """Build the synthetic workspace, time the searches and print the figures.

    Args:
        n_entries: How many entries in total, over five categories.
        n_queries: How many queries to time.

    Returns:
        "build_ms" (building all five indexes), "p50_ms", "p95_ms", "max_ms" (per query over
        all five categories) and "mean_hits" (hits per query, at most 10).
    """
    entries = make_entries(n_entries)
    started = time.perf_counter()
    indexes: list[tuple[Category, SearchIndex]] = [
        (category, build_index(found)) for category, found in entries.items()
    ]
    build_ms = (time.perf_counter() - started) * 1000.0
    timings: list[float] = []
    hits = 0
    for query in make_queries(n_queries):
        started = time.perf_counter()
        result = search(indexes, query, limit=LIMIT)
        timings.append((time.perf_counter() - started) * 1000.0)
        hits += len(result.hits)
    timings.sort()
    figures = {
        "build_ms": build_ms,
        "p50_ms": _percentile(timings, 0.50),
        "p95_ms": _percentile(timings, 0.95),
        "max_ms": timings[-1],
        "mean_hits": hits / len(timings),
    }
    print(f"Search speed ({n_entries} entries, {n_queries} queries, limit {LIMIT})")
    print(
        f"  build {figures['build_ms']:.1f} ms  p50 {figures['p50_ms']:.3f} ms  "
        f"p95 {figures['p95_ms']:.3f} ms  max {figures['max_ms']:.3f} ms  "
        f"mean hits {figures['mean_hits']:.1f}"
    )
    return figures


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark from the command line (`--quick`: 300 entries, 20 queries)."""
    parser = argparse.ArgumentParser(prog="python -m bench.search_speed", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="300 entries, 20 queries")
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=500)
    args = parser.parse_args(argv)
    if args.quick:
        run(300, 20)
    else:
        run(args.entries, args.queries)


if __name__ == "__main__":
    main()
