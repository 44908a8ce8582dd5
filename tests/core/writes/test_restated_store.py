"""A model's "restates" verdict on a store (`transitions.Store.restated`): it makes the update
the write decision makes for a reworded entry, only while it still applies; never a skip, so a
wrong verdict never throws a text away."""

from __future__ import annotations

from memd.core.format import mdformat
from memd.core.format.categories import Category
from memd.core.format.mdformat import Document
from memd.core.writes import transitions
from memd.core.writes.transitions import Restated, Store, StoreOutcome

CAT = Category.DECISION
OLD = "Deploy the web app from the main branch only."
NEW = "Web app deploys must come from main."


def _doc() -> Document:
    result = transitions.apply(CAT, None, Store(content=OLD))
    assert result.doc is not None
    return result.doc


def _store(doc: Document, content: str, restated: Restated | None) -> transitions.Transition:
    return transitions.apply(CAT, doc, Store(content=content, restated=restated))


def test_without_a_verdict_the_reworded_text_is_stored_apart() -> None:
    outcome = _store(_doc(), NEW, None).outcome
    assert isinstance(outcome, StoreOutcome) and outcome.action == "stored"


def test_an_update_verdict_replaces_the_entry_keeping_its_slug_and_archives_the_old_text() -> None:
    doc = _doc()
    slug = mdformat.entries(doc)[0].slug
    result = _store(doc, NEW, Restated(slug=slug, content=OLD))
    assert isinstance(result.outcome, StoreOutcome) and result.outcome.action == "updated"
    assert result.doc is not None
    assert [(e.slug, e.content) for e in mdformat.entries(result.doc)] == [(slug, NEW)]
    assert [a.content for a in result.archived] == [OLD]


def test_a_verdict_about_an_entry_changed_since_changes_nothing() -> None:
    doc = _doc()
    slug = mdformat.entries(doc)[0].slug
    stale = Restated(slug=slug, content="Deploy from main.")
    outcome = _store(doc, NEW, stale).outcome
    assert isinstance(outcome, StoreOutcome) and outcome.action == "stored"


def test_a_verdict_on_a_contradicting_text_leaves_the_decision_its_own() -> None:
    doc = transitions.apply(CAT, None, Store(content="Session tokens expire after 15 minutes."))
    assert doc.doc is not None
    slug = mdformat.entries(doc.doc)[0].slug
    verdict = Restated(slug=slug, content="Session tokens expire after 15 minutes.")
    new = "Session tokens expire after 60 minutes."
    result = _store(doc.doc, new, verdict)
    assert isinstance(result.outcome, StoreOutcome)
    assert result.outcome.action == "updated" and result.outcome.conflict  # the decision's own
    assert result.doc is not None and mdformat.render(result.doc).count(new) == 1


def test_a_wrong_verdict_on_a_reversed_rule_keeps_the_new_text() -> None:
    old = "Prefer composition to inheritance in the UI layer."
    new = "Prefer inheritance to composition in the UI layer."
    doc = transitions.apply(CAT, None, Store(content=old)).doc
    assert doc is not None
    slug = mdformat.entries(doc)[0].slug
    result = _store(doc, new, Restated(slug=slug, content=old))
    assert isinstance(result.outcome, StoreOutcome) and result.outcome.action != "skipped"
    assert result.doc is not None and new in mdformat.render(result.doc)
