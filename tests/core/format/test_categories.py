"""Categories as data: the built-in table, a workspace's set, and the custom tables' checks."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from memd.core.format.categories import (
    BUILTIN,
    CATEGORIES,
    HACKLM_CATEGORIES,
    MAX_CUSTOM,
    Categories,
    Category,
    custom_categories,
)
from memd.core.search.prompt_block import layer_a
from memd_client.errors import CategoryNotFound

RUNBOOK = {"name": "Runbook", "file": "runbooks.md", "limit": 40}
GATE = {"name": "Gate", "file": "gates.md", "limit": 10, "layer": "always"}


def test_hacklms_five_keep_their_names_files_limits_and_headers() -> None:
    # Exactly what HackLM's ensureMemoryFiles writes and its package.json limits.
    assert [(c.name, c.file, c.limit) for c in HACKLM_CATEGORIES] == [
        ("Instruction", "instructions.md", 30),
        ("Quirk", "quirks.md", 40),
        ("Preference", "preferences.md", 40),
        ("Decision", "decisions.md", 40),
        ("Security", "security.md", 30),
    ]
    assert Category.SECURITY.header == (
        "# Security\n\nRules that must NEVER be broken. Always read this file.\n\n"
    )
    assert all(c.hacklm and c.kind == "rule" for c in HACKLM_CATEGORIES)


def test_memds_own_kinds_follow_hacklms_and_never_go_to_layer_a() -> None:
    assert (*HACKLM_CATEGORIES, Category.PROCEDURE, Category.EPISODE) == CATEGORIES
    procedure, episode = Category.PROCEDURE, Category.EPISODE
    assert (procedure.file, procedure.limit, procedure.kind) == ("procedures.md", 40, "procedure")
    assert (episode.file, episode.limit, episode.kind) == ("episodes.md", 200, "episode")
    assert procedure.layer == "procedures" and episode.layer == "relevant"
    assert not procedure.hacklm and not episode.hacklm
    assert [c.position for c in CATEGORIES] == list(range(7))


def test_the_table_holds_what_was_spread_over_modules() -> None:
    weights = {c.name: c.cleanup_weight for c in HACKLM_CATEGORIES}
    assert weights == {
        "Security": 25,
        "Instruction": 20,
        "Decision": 15,
        "Quirk": 10,
        "Preference": 10,
    }
    assert Category.SECURITY.priority > Category.INSTRUCTION.priority > Category.QUIRK.priority
    assert layer_a(CATEGORIES) == (Category.SECURITY, Category.INSTRUCTION)


def test_a_set_finds_by_name_in_any_case_and_by_file() -> None:
    assert BUILTIN.parse("  qUIRK ") is Category.QUIRK
    assert BUILTIN.for_file("episodes.md") is Category.EPISODE
    assert BUILTIN.get("nope") is None and BUILTIN.find_file("nope.md") is None
    with pytest.raises(CategoryNotFound, match=r"use one of: Instruction, Quirk, .*Episode"):
        BUILTIN.parse("Nope")
    with pytest.raises(CategoryNotFound, match=r"Unknown memory file 'x\.md'"):
        BUILTIN.for_file("x.md")


def test_custom_categories_follow_the_built_ins_with_their_attributes() -> None:
    runbook, gate = custom_categories([RUNBOOK, GATE], BUILTIN)
    assert (runbook.name, runbook.file, runbook.limit, runbook.layer) == (
        "Runbook",
        "runbooks.md",
        40,
        "relevant",
    )
    assert runbook.header == "# Runbooks\n\nRunbook entries.\n\n"
    assert (runbook.position, gate.position) == (7, 8)
    assert gate.layer == "always" and gate.cleanup_weight == Category.INSTRUCTION.cleanup_weight
    every = BUILTIN.with_custom((runbook, gate))
    assert every.custom == (runbook, gate)
    assert every.parse("runbook") is runbook
    # Layer A: Security first, then the others of layer always by position.
    assert layer_a(every) == (Category.SECURITY, Category.INSTRUCTION, gate)


def test_sets_are_the_same_when_every_attribute_is() -> None:
    one = BUILTIN.with_custom(custom_categories([RUNBOOK], BUILTIN))
    two = BUILTIN.with_custom(custom_categories([RUNBOOK], BUILTIN))
    other = BUILTIN.with_custom(custom_categories([dict(RUNBOOK, limit=41)], BUILTIN))
    assert one.same_as(two) and not one.same_as(other) and not one.same_as(BUILTIN)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"name": "Runbook"}, "must be a list of tables"),
        ([RUNBOOK] * (MAX_CUSTOM + 1), "over the limit of 16"),
        (["Runbook"], "table 1 must be a table with name, file and limit"),
        ([dict(RUNBOOK, colour="red")], "unknown key 'colour'"),
        ([dict(RUNBOOK, name="runbook")], "must be a capitalised word"),
        ([dict(RUNBOOK, name="Run book")], "must be a capitalised word"),
        ([dict(RUNBOOK, file="Runbooks.md")], "lowercase bare name ending in .md"),
        ([dict(RUNBOOK, file="../runbooks.md")], "lowercase bare name ending in .md"),
        ([dict(RUNBOOK, file="runbooks.txt")], "lowercase bare name ending in .md"),
        ([dict(RUNBOOK, limit=0)], "whole number from 1 to 10000"),
        ([dict(RUNBOOK, limit=True)], "whole number from 1 to 10000"),
        ([dict(RUNBOOK, limit="40")], "whole number from 1 to 10000"),
        ([dict(RUNBOOK, layer="procedures")], 'must be "always" or "relevant"'),
        ([dict(RUNBOOK, title="Two\nlines")], "title must be one line"),
        ([dict(RUNBOOK, name="Quirk")], "the name 'Quirk' is taken"),
        ([dict(RUNBOOK, name="QUIRK")], "the name 'QUIRK' is taken"),
        ([dict(RUNBOOK, file="quirks.md")], "the file 'quirks.md' is taken"),
        ([dict(RUNBOOK, file="archive.md")], "the file 'archive.md' is taken"),
        ([dict(RUNBOOK, file="archive-2026-01-01.md")], "is taken"),
        ([dict(RUNBOOK, file="inbox.md")], "the file 'inbox.md' is taken"),
        ([RUNBOOK, dict(RUNBOOK, file="other.md")], "table 2: the name 'Runbook' is taken"),
        ([RUNBOOK, dict(RUNBOOK, name="Other")], "table 2: the file 'runbooks.md' is taken"),
    ],
)
def test_a_bad_table_is_one_sentence_naming_it(raw: object, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        custom_categories(raw, BUILTIN)


def test_a_project_cannot_take_a_configured_categorys_name() -> None:
    configured = BUILTIN.with_custom(custom_categories([RUNBOOK], BUILTIN))
    with pytest.raises(ValueError, match="the name 'Runbook' is taken"):
        custom_categories([dict(RUNBOOK, file="more.md")], configured)


@given(
    st.from_regex(r"[A-Z][A-Za-z0-9]{1,31}", fullmatch=True),
    st.from_regex(r"[a-z0-9][a-z0-9_-]{0,20}", fullmatch=True),
)
def test_every_accepted_name_is_found_again_in_any_case(name: str, stem: str) -> None:
    table = {"name": name, "file": f"{stem}.md", "limit": 5}
    if (
        name.lower() in {c.name.lower() for c in BUILTIN}
        or f"{stem}.md"
        in BUILTIN.files
        | {
            "archive.md",
            "inbox.md",
            "readme.md",
        }
        or stem.startswith("archive-")
    ):
        with pytest.raises(ValueError, match="is taken"):
            custom_categories([table], BUILTIN)
        return
    (made,) = custom_categories([table], BUILTIN)
    every = Categories((*BUILTIN, made))
    assert every.parse(name.lower()) is made and every.parse(name.upper()) is made
    assert every.for_file(f"{stem}.md") is made
