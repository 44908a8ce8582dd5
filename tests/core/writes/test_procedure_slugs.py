"""A procedure's slug: given, else its namesake's, else a new one that takes no other's."""

from __future__ import annotations

from hypothesis import given, strategies as st

from memd.core.format.mdformat import Entry
from memd.core.writes.procedure_slugs import procedure_slug

DEPLOY = Entry(line=5, slug="deploy-staging", content="Deploy to staging: build; push.")


def test_the_issue_example_derives_its_slug_from_the_name() -> None:
    assert procedure_slug("Deploy to staging", []) == "deploy-staging"


def test_the_same_name_updates_its_entry() -> None:
    assert procedure_slug("deploy  TO staging", [DEPLOY]) == "deploy-staging"


def test_a_different_name_never_takes_another_procedure_s_slug() -> None:
    assert procedure_slug("Deploy staging", [DEPLOY]) == "deploy-staging-2"
    hand = Entry(line=6, slug="deploy-staging", content="Deploy staging by hand, ask Dana.")
    assert procedure_slug("Deploy to staging", [hand]) == "deploy-staging-2"


def test_a_given_slug_is_used_as_given() -> None:
    assert procedure_slug("Other", [DEPLOY], given="deploy-staging") == "deploy-staging"


@given(st.lists(st.sampled_from(["Deploy", "Deploy!", "Release it", "release  IT", "Roll back"])))
def test_names_that_differ_get_slugs_that_differ(names: list[str]) -> None:
    entries: list[Entry] = []
    slug_of: dict[str, str] = {}
    for number, name in enumerate(names):
        slug = procedure_slug(name, entries)
        key = " ".join(name.split()).casefold()
        assert slug_of.setdefault(key, slug) == slug
        if all(entry.slug != slug for entry in entries):
            entries.append(Entry(line=number, slug=slug, content=f"{name}: step."))
    assert len(set(slug_of.values())) == len(slug_of)
