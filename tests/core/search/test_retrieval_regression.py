"""Retrieval regression: a fixed small project memory and the entry each query must find first
(or within the top three). A ranking change that breaks one of these needs a reason."""

from __future__ import annotations

import pytest

from memd.core.format.categories import Category
from memd.core.format.mdformat import Entry
from memd.core.search.ranking import build_index, search

MEMORY = {
    Category.SECURITY: [
        ("no-secrets", "Never commit .env files, API keys or tokens to the repository."),
        ("sql-params", "Always use parameterised SQL queries; never format user input into SQL."),
        ("prod-access", "Production database access goes through the bastion host only."),
    ],
    Category.INSTRUCTION: [
        ("run-tests", "Run make test before every commit and push."),
        ("pnpm", "Use pnpm, not npm or yarn, for the web frontend."),
        ("changelog", "Add a line to CHANGELOG.md for every user-visible change."),
        ("typing", "Every Python module passes mypy --strict."),
    ],
    Category.QUIRK: [
        ("watchfiles-blind", "watchfiles goes blind when the watched directory is recreated."),
        ("flaky-e2e", "The e2e suite flakes on macOS because of the 104-byte socket path limit."),
        ("sendlm", "sendLmRequest retries twice before raising LmTimeout."),
        ("utc-dates", "Dates in the API are UTC; the UI converts them to the user's time zone."),
    ],
    Category.PREFERENCE: [
        ("tabs-makefile", "Tabs in Makefiles, four spaces everywhere else."),
        ("fstrings", "Prefer f-strings over str.format and percent formatting."),
        ("small-prs", "Keep pull requests under 400 changed lines."),
    ],
    Category.DECISION: [
        ("helm", "We deploy the API with Helm charts to the staging cluster first."),
        ("msgspec", "msgspec Structs are the wire types; pydantic stays out of the core."),
        ("anyio", "All async code uses anyio task groups, never bare asyncio."),
        ("snake-case-db", "Database columns use snake_case names."),
        ("config-ts", "Frontend settings live in src/config.ts."),
    ],
}

INDEXES = [
    (
        category,
        build_index(
            [
                Entry(line=5 + n, slug=slug, content=content)
                for n, (slug, content) in enumerate(rows)
            ]
        ),
    )
    for category, rows in MEMORY.items()
]


@pytest.mark.parametrize(
    ("query", "first"),
    [
        ("how do we deploy to staging", "helm"),
        ("which package manager for the frontend", "pnpm"),
        ("can I commit the .env file", "no-secrets"),
        ("sql injection user input", "sql-params"),
        ("sendLmRequest timeout", "sendlm"),
        ("snake_case column names", "snake-case-db"),
        ("config.ts", "config-ts"),
        ("deplo", "helm"),  # a partial word
        ("watcher stopped seeing changes after the directory was recreated", "watchfiles-blind"),
        ("what should I run before committing", "run-tests"),
        ("time zone of dates", "utc-dates"),
        ("wire types pydantic", "msgspec"),
    ],
)
def test_the_right_memory_comes_first(query: str, first: str) -> None:
    hits = search(INDEXES, query, limit=3).hits
    assert hits, f"nothing found for {query!r}"
    assert hits[0].entry.slug == first, [hit.entry.slug for hit in hits]


@pytest.mark.parametrize(
    ("query", "within_three"),
    [
        ("formatting strings", "fstrings"),
        ("asyncio", "anyio"),
        ("macos socket path", "flaky-e2e"),
        ("pull request size", "small-prs"),
    ],
)
def test_the_right_memory_is_in_the_top_three(query: str, within_three: str) -> None:
    slugs = [hit.entry.slug for hit in search(INDEXES, query, limit=3).hits]
    assert within_three in slugs, slugs
