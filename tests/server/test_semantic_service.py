"""The daemon's semantic service without a model: states, the bounded request queue, settings
reloads, the one-sentence errors, and the bound on kept matrices."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import anyio
import pytest

from memd.core.format.categories import Category
from memd.core.format.mdformat import Entry
from memd.core.search.shelves import Key
from memd.server import semantic
from memd.server.semantic import SemanticService
from memd_client import protocol as p


@contextmanager
def service_of(*, enabled: bool) -> Iterator[SemanticService]:
    """A service whose task never runs: its queue is closed at the end."""
    service = SemanticService(enabled=enabled, model_dir=None)
    try:
        yield service
    finally:
        service.close()
        service._receive.close()


def test_off_by_setting_says_so_and_asks_for_nothing() -> None:
    with service_of(enabled=False) as service:
        _off(service)


def _off(service: SemanticService) -> None:
    assert service.info().state == "off"
    assert service.info().reason == semantic.OFF_BY_SETTING
    entries = _entries("a", "b")
    assert anyio.run(service.layout, _files(entries)) == (None, 2)
    assert service._pending == {}
    message = service.unavailable()
    assert "semantic = true" in message and message.endswith(".")


def test_requests_are_one_a_workspace_and_bounded() -> None:
    with service_of(enabled=True) as service:
        _requests(service)


def _requests(service: SemanticService) -> None:
    assert service.info().state == "unloaded"
    service.request("/w", ["old"])
    service.request("/w", ["new"])  # the newest texts, still one request
    assert service._pending == {"/w": ("new",)}
    for number in range(semantic.MAX_REQUESTS + 5):
        service.request(f"/w{number}", ["text"])
    assert len(service._pending) == semantic.MAX_REQUESTS  # the rest dropped, asked again later


def test_a_reload_turns_it_off_and_on_again() -> None:
    with service_of(enabled=True) as service:
        _reload(service)


def _reload(service: SemanticService) -> None:
    service.request("/w", ["text"])
    service.configure(enabled=False, model_dir=None)
    assert (service.state, service._pending) == ("off", {})
    service.configure(enabled=True, model_dir=None)
    assert (service.state, service.reason) == ("unloaded", None)
    assert "loading" in service.unavailable()


def test_a_query_before_the_model_is_ready_asks_for_it_and_its_texts() -> None:
    with service_of(enabled=True) as service:
        entries = _entries("a", "b")
        assert anyio.run(service.layout, _files(entries)) == (None, 2)
        assert service._pending == {"/w": ("a", "b")}


def test_kept_matrices_are_bounded_in_rows_least_recently_used_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(semantic, "MAX_ROWS", 5)
    with service_of(enabled=True) as service:
        for name, size in (("/a", 2), ("/b", 2), ("/c", 2)):
            service._keep_rows((name, Category.DECISION), _entries(*["x"] * size))
        assert [root for root, _ in service._rows] == ["/b", "/c"]
        assert service._row_count == 4
        service._keep_rows(("/c", Category.DECISION), _entries("y"))  # a new version replaces
        assert service._row_count == 3


def _files(entries: tuple[Entry, ...]) -> dict[Key, tuple[str, Sequence[Entry]]]:
    return {Category.DECISION: ("/w", entries)}


def _entries(*texts: str) -> tuple[Entry, ...]:
    return tuple(
        Entry(line=5 + number, slug=None, content=text) for number, text in enumerate(texts)
    )


def test_without_the_extra_it_is_off_from_the_start_saying_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import importlib.util

    from memd.semantic import embedder

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "onnxruntime" else real(name)
    )
    assert embedder.missing_extra() == (
        f"semantic search needs the semantic extra (onnxruntime is missing): "
        f"{embedder.install_hint()}"
    )
    with service_of(enabled=True) as service:
        assert (service.state, service.reason) == ("off", embedder.missing_extra())
        service.configure(enabled=False, model_dir=None)
        service.configure(enabled=True, model_dir=None)  # a reload says the same
        assert (service.state, service.reason) == ("off", embedder.missing_extra())


def test_a_search_larger_than_the_cache_is_never_embedded_and_says_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Embedding it would evict its own first vectors: it would never be complete.
    monkeypatch.setattr(semantic, "MAX_ROWS", 1)
    with service_of(enabled=True) as service:
        entries = _entries("a", "b")
        assert anyio.run(service.layout, _files(entries)) == (None, 2)
        assert service._pending == {}
        message = service.unavailable(0, 2)
        assert "keeps vectors for 1 entries and this search has 2" in message
        assert "mode auto or lexical" in message


def test_a_query_answered_by_words_says_how_far_loading_is_and_nothing_when_off() -> None:
    with service_of(enabled=True) as service:
        entries = _entries("a", "b", "c")
        layout, missing = anyio.run(service.layout, _files(entries))
        assert layout is None
        assert service.loading(missing, 3) == p.SemanticLoading(ready=0, total=3)
        service.state = "loading"
        assert service.loading(3, 3) == p.SemanticLoading(ready=0, total=3)
        service.state = "ready"  # the model is loaded; 1 entry still lacks a vector
        assert service.loading(1, 3) == p.SemanticLoading(ready=2, total=3)
        assert service.loading(0, 3) is None
        assert service.loading(0, 0) is None  # nothing searched: nothing to say
        service.state = "unloaded"
        assert service.loading(semantic.MAX_ROWS + 1, semantic.MAX_ROWS + 1) is None  # too big
        service.configure(enabled=False, model_dir=None)
        assert service.loading(3, 3) is None  # off: the setting says so elsewhere
    with service_of(enabled=True) as service:
        service.state, service.reason = "off", "the extra is missing"
        assert service.loading(3, 3) is None  # not installed: the install hint's job
