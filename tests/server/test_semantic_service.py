"""The daemon's semantic service without a model: states, the bounded request queue, settings
reloads, the one-sentence errors, and the cosine helper."""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from memd.server import semantic
from memd.server.semantic import SemanticService, cosines


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
    assert service.vectors("/w", ["a", "b"]) == ({}, 2)
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


def test_cosines_are_dot_products_of_unit_rows() -> None:
    np = pytest.importorskip("numpy")
    query = np.array([1.0, 0.0], dtype=np.float32)
    rows = [np.array([1.0, 0.0]), np.array([0.0, 1.0]), np.array([math.sqrt(0.5)] * 2)]
    assert cosines(query, rows) == pytest.approx([1.0, 0.0, math.sqrt(0.5)])
    assert cosines(query, []) == []


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
        "semantic search needs the semantic extra (onnxruntime is missing): "
        "pip install 'memd-daemon[semantic]'"
    )
    with service_of(enabled=True) as service:
        assert (service.state, service.reason) == ("off", embedder.missing_extra())
        service.configure(enabled=False, model_dir=None)
        service.configure(enabled=True, model_dir=None)  # a reload says the same
        assert (service.state, service.reason) == ("off", embedder.missing_extra())
