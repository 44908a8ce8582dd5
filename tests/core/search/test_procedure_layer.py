"""Layer C of the prompt block: procedures chosen by outcome, shown with their steps, packed
after layers A and B's minimum, never over the budget, and named when left out."""

from __future__ import annotations

from hypothesis import given, strategies as st

from memd.core.format.categories import Category
from memd.core.format.mdformat import Entry
from memd.core.search.outcomes import NO_RECORD, Record
from memd.core.search.procedure_layer import (
    HEADING,
    ProcedureHit,
    choose,
    procedure_text,
    record_note,
    why_not,
)
from memd.core.search.prompt_block import build, estimate_tokens

# Procedures live in their own category once categories are data; the layer decides by what
# it is handed, so any category stands in here.
PROC = Category.DECISION
SEC = Category.SECURITY
QUIRK = Category.QUIRK

DEPLOY = Entry(
    line=5,
    slug="deploy-staging",
    content="Deploy to staging: build the image; push it; restart the web pods.",
)
ROLLBACK = Entry(line=6, slug="rollback", content="Roll back: revert the tag; redeploy.")
HAND = Entry(line=7, slug="hand", content="Ask Dana before deploying on Fridays.")


def _no_note(category: Category, entry: Entry) -> str:
    return ""


def test_choose_puts_proven_first_and_keeps_three() -> None:
    records = {5: NO_RECORD, 6: Record(2, 0), 7: Record(0, 3), 8: NO_RECORD}
    extra = Entry(line=8, slug="extra", content="Extra: one step.")
    ranked = [(PROC, DEPLOY, 0.9), (PROC, ROLLBACK, 0.5), (PROC, HAND, 0.9), (PROC, extra, 0.8)]
    chosen = choose(ranked, lambda c, e: records[e.line], floor=0.2)
    assert [hit.entry.slug for hit in chosen] == ["rollback", "deploy-staging", "extra"]
    assert chosen[0].record == Record(2, 0)
    assert chosen[0].score > 0.5  # moved up by its record


def test_choose_leaves_out_weak_and_zero_matches() -> None:
    ranked = [(PROC, DEPLOY, 1.0), (PROC, ROLLBACK, 0.1), (PROC, HAND, 0.0)]
    chosen = choose(ranked, lambda c, e: NO_RECORD, floor=0.2)
    assert [hit.entry.slug for hit in chosen] == ["deploy-staging"]


def test_a_procedure_shows_its_steps_and_its_record() -> None:
    hit = ProcedureHit(PROC, DEPLOY, 0.9, Record(2, 1))
    assert procedure_text(hit) == (
        "- [deploy-staging] Deploy to staging (worked 2 of 3 times):\n"
        "  1. build the image\n"
        "  2. push it\n"
        "  3. restart the web pods"
    )
    assert procedure_text(ProcedureHit(PROC, HAND, 0.5, NO_RECORD), "cites gone.sh") == (
        "- [hand] Ask Dana before deploying on Fridays. (stale: cites gone.sh)"
    )
    assert record_note(Record(1, 0)) == "worked 1 of 1 time"
    assert record_note(NO_RECORD) == ""


def test_block_has_layers_a_b_c_in_order() -> None:
    always = [(SEC, Entry(line=3, slug="no-env", content="Never commit .env files."))]
    relevant = [(QUIRK, Entry(line=4, slug="pods", content="Web pods restart slowly."), 1.0)]
    procedures = [ProcedureHit(PROC, DEPLOY, 0.9, Record(1, 0))]
    block = build(always, relevant, 800, procedures=procedures)
    assert block.markdown == (
        "## Project memory (memd)\n"
        "Always follow:\n"
        "- [Security] [no-env] Never commit .env files.\n"
        "Relevant to this prompt:\n"
        "- [Quirk] [pods] Web pods restart slowly.\n"
        f"{HEADING}\n"
        "- [deploy-staging] Deploy to staging (worked 1 of 1 time):\n"
        "  1. build the image\n"
        "  2. push it\n"
        "  3. restart the web pods\n"
    )
    assert [p.layer for p in block.entries] == ["always", "relevant", "procedures"]
    assert block.entries[-1].record == Record(1, 0)


def test_procedures_get_room_before_the_rest_of_layer_b() -> None:
    relevant = [
        (QUIRK, Entry(line=n, slug=f"q{n}", content=f"Quirk number {n} about pods."), 1.0)
        for n in range(1, 30)
    ]
    procedures = [ProcedureHit(PROC, DEPLOY, 0.9, NO_RECORD)]
    block = build([], relevant, 200, procedures=procedures)
    layers = [p.layer for p in block.entries]
    assert "procedures" in layers
    assert layers.count("relevant") >= 3
    assert layers.index("procedures") == len(layers) - 1  # shown after layer B
    assert block.tokens <= 200


def test_a_procedure_that_does_not_fit_is_named() -> None:
    long = Entry(line=9, slug="long-one", content="Long: " + "; ".join(["step"] * 200) + ".")
    procedures = [
        ProcedureHit(PROC, DEPLOY, 0.9, NO_RECORD),
        ProcedureHit(PROC, long, 0.8, NO_RECORD),
    ]
    block = build([], [], 120, procedures=procedures)
    assert "- [deploy-staging] Deploy to staging:" in block.markdown
    assert "Not shown for space: procedure [long-one]; `memd get SLUG` shows one." in block.markdown
    assert [p.entry.slug for p in block.omitted_procedures] == ["long-one"]
    assert block.tokens <= 120


_procedure = st.builds(
    lambda n, steps, s, f: ProcedureHit(
        PROC,
        Entry(line=n, slug=f"p{n}", content=f"P{n}: " + "; ".join(steps) + "."),
        0.5,
        Record(s, f),
    ),
    st.integers(1, 1000),
    st.lists(st.text("abc xyz", min_size=1, max_size=30).filter(str.strip), min_size=1),
    st.integers(0, 3),
    st.integers(0, 3),
)


@given(st.lists(_procedure, max_size=3, unique_by=lambda hit: hit.entry.line), st.integers(1, 400))
def test_the_block_never_exceeds_the_budget_and_names_every_procedure_left_out(
    procedures: list[ProcedureHit], budget: int
) -> None:
    always = [(SEC, Entry(line=3, slug="no-env", content="Never commit .env files."))]
    block = build(always, [], budget, procedures=procedures)
    assert block.tokens == estimate_tokens(block.markdown) <= budget
    shown = [p.entry.line for p in block.entries if p.layer == "procedures"]
    left = [p.entry.line for p in block.omitted_procedures]
    assert sorted(shown + left) == sorted(hit.entry.line for hit in procedures)
    if left and shown:
        assert "Not shown for space: procedure" in block.markdown


def test_why_a_procedure_was_not_given() -> None:
    assert why_not(left_out=True, with_text=True)[0] == "budget"
    assert why_not(left_out=False, with_text=False) == (
        "score",
        "a procedure: offered for a task's text, never for a file alone",
    )
    assert "not among the 3" in why_not(left_out=False, with_text=True)[1]
