"""A procedure's line: render from a name and steps, read back, byte-exact through the Markdown
format, tolerant of hand edits and HackLM's writer."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from memd.core.format import mdformat
from memd.core.format.procedures import Procedure, read_procedure, render_procedure, same_name
from memd.core.writes.transitions import clean_content
from memd_client.errors import InvalidEntry
from tests.hacklm_standin import strip_date_headers

EXAMPLE = (
    "Deploy to staging: build the image; push it; run the migration job; restart the web pods."
)


def test_the_issue_example_renders_and_reads_back() -> None:
    steps = ["build the image", "push it", "run the migration job", "restart the web pods"]
    assert render_procedure("Deploy to staging", steps) == EXAMPLE
    assert read_procedure(EXAMPLE) == Procedure("Deploy to staging", tuple(steps))


@pytest.mark.parametrize(
    ("name", "steps", "content"),
    [
        ("  Release  ", ["  tag it ", "push\tthe tag"], "Release: tag it; push the tag."),
        ("Release", ["push etc."], "Release: push etc."),
        ("Release", ["is it green?"], "Release: is it green?"),
        ("Release", ["ship it!"], "Release: ship it!"),
        ("k8s:prod", ["kubectl apply -f k8s/"], "k8s:prod: kubectl apply -f k8s/."),
        ("Release", ["a;", "b"], "Release: a;; b."),
        ("Release", ["check: tests pass", "merge"], "Release: check: tests pass; merge."),
    ],
)
def test_render_normalises_like_a_store(name: str, steps: list[str], content: str) -> None:
    assert render_procedure(name, steps) == content
    assert clean_content(content) == content  # a store keeps it as rendered


@pytest.mark.parametrize(
    ("name", "steps", "says"),
    [
        ("", ["x"], "name is empty"),
        ("Deploy: staging", ["x"], "holds ': '"),
        ("Deploy", [], "at least one step"),
        ("Deploy", ["build", "  "], "Step 2 is empty"),
        ("Deploy", ["build; push"], "Step 1 ('build; push') holds '; '"),
        ("Deploy", ["build", "."], "Step 2 is empty"),
    ],
)
def test_render_refuses_what_would_not_read_back(name: str, steps: list[str], says: str) -> None:
    with pytest.raises(InvalidEntry) as caught:
        render_procedure(name, steps)
    assert says in caught.value.message


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("Deploy: build; push", Procedure("Deploy", ("build", "push"))),  # no final period
        ("Deploy:  build ;  push .", Procedure("Deploy", ("build", "push"))),
        ("Deploy: build; ; push.", Procedure("Deploy", ("build", "push"))),
        ("Run make lint before pushing.", Procedure(None, ("Run make lint before pushing.",))),
        ("build; push; deploy.", Procedure(None, ("build; push; deploy.",))),
        (": build; push.", Procedure(None, (": build; push.",))),
        ("Deploy: .", Procedure(None, ("Deploy: .",))),
        ("Deploy:build", Procedure(None, ("Deploy:build",))),
    ],
)
def test_hand_edited_lines_read_without_failing(content: str, expected: Procedure) -> None:
    assert read_procedure(content) == expected


def test_same_name_ignores_case_and_spacing() -> None:
    assert same_name("Deploy to  staging", " deploy TO staging")
    assert not same_name("Deploy to staging", "Deploy to production")


_WORD = st.text(
    st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\n\r"),
    min_size=1,
    max_size=12,
)
_PART = st.lists(_WORD, min_size=1, max_size=5).map(" ".join)


def _renders(name: str, steps: list[str]) -> str | None:
    try:
        return render_procedure(name, steps)
    except InvalidEntry:
        return None


@given(_PART, st.lists(_PART, min_size=1, max_size=6))
def test_render_then_read_gives_the_steps_back(name: str, steps: list[str]) -> None:
    content = _renders(name, steps)
    if content is None:
        return
    clean = [" ".join(step.split()) for step in steps]
    if clean[-1].endswith("."):
        clean[-1] = clean[-1][:-1].rstrip()
    read = read_procedure(content)
    assert read == Procedure(" ".join(name.split()), tuple(clean))
    assert read.name is not None
    assert render_procedure(read.name, read.steps) == content  # idempotent


@given(_PART, st.lists(_PART, min_size=1, max_size=6), st.sampled_from(["\n", "\r\n"]))
def test_a_procedure_line_round_trips_byte_exact_through_the_file_format(
    name: str, steps: list[str], eol: str
) -> None:
    content = _renders(name, steps)
    if content is None:
        return
    text = f"# Procedures{eol}{eol}Named workflows.{eol}{eol}- [deploy] {content}{eol}"
    doc = mdformat.parse(text)
    assert mdformat.render(doc) == text
    (entry,) = mdformat.entries(doc)
    assert entry.content == content
    assert read_procedure(entry.content) == read_procedure(content)


@given(_PART, st.lists(_PART, min_size=1, max_size=6))
def test_a_procedure_line_survives_hacklm_s_writer(name: str, steps: list[str]) -> None:
    """HackLM never writes procedures.md, but a person may run its rewrite over a copy, or
    append with its writer's shape: its date-header strip and blank-line collapse, and its
    append of `\\n- content\\n`, leave the procedure reading the same."""
    content = _renders(name, steps)
    if content is None:
        return
    text = f"# Procedures\n\n\n\n## 2026-11-20\n- [deploy] {content}\n"
    rewritten = strip_date_headers(text) + f"\n- {content.strip()}\n"
    found = mdformat.entries(mdformat.parse(rewritten))
    assert [entry.content for entry in found] == [content, content]
    assert {read_procedure(entry.content) for entry in found} == {read_procedure(content)}


@given(st.text(max_size=200))
def test_reading_never_fails_and_keeps_every_word(content: str) -> None:
    read = read_procedure(content)
    if not content.strip():
        return
    assert read.steps
    if read.name is None:
        assert read.steps == (content.strip(),)
