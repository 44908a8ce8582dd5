"""`Client` and `AsyncClient` stay twins: the same methods, with the same signatures and docs.

The blocking and the anyio shell each spell out every protocol method; this test is what keeps
them in step. Differences by design are listed here and nowhere else: the async shell closes
with `aclose` and is an async context manager, and `subscribe` takes a callback in the blocking
shell but returns an async iterator in the other.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import pytest

from memd_client import Client, protocol as p
from memd_client.aio import AsyncClient

ASYNC_NAME = {"close": "aclose", "__enter__": "__aenter__", "__exit__": "__aexit__"}
"""Sync name -> async name, where the two shells follow their own language's convention."""
_RENAMED = {*ASYNC_NAME, *ASYNC_NAME.values()}
SHAPED_BY_THE_SHELL = {"subscribe"}
"""Methods whose signature differs by design (a callback thread vs an async iterator)."""
NOT_A_CLIENT_METHOD = {"unsubscribe"}
"""Protocol methods no client exposes: closing a subscription unsubscribes."""


def _public_methods(cls: type) -> dict[str, Callable[..., Any]]:
    return {
        name: member
        for name, member in vars(cls).items()
        if callable(member) and (not name.startswith("_") or name in _RENAMED)
    }


def _protocol_methods() -> set[str]:
    params = [
        cls
        for _, cls in inspect.getmembers(p, inspect.isclass)
        if issubclass(cls, p._Params) and cls is not p._Params
    ]
    return {cls.__name__.removesuffix("Params").lower() for cls in params} - NOT_A_CLIENT_METHOD


SYNC = _public_methods(Client)
ASYNC = _public_methods(AsyncClient)
SHARED = sorted(name for name in SYNC if name not in ASYNC_NAME)


def test_both_clients_expose_the_same_methods() -> None:
    assert {ASYNC_NAME.get(name, name) for name in SYNC} == set(ASYNC)


def test_every_protocol_method_has_a_client_method() -> None:
    assert _protocol_methods() <= set(SYNC)


@pytest.mark.parametrize("name", SHARED)
def test_methods_match_in_signature_and_doc(name: str) -> None:
    sync, async_ = SYNC[name], ASYNC[name]
    if name in SHAPED_BY_THE_SHELL:
        assert not inspect.iscoroutinefunction(async_)
        return
    assert inspect.iscoroutinefunction(async_) and not inspect.iscoroutinefunction(sync)
    assert inspect.signature(sync) == inspect.signature(async_)
    assert inspect.getdoc(sync) == inspect.getdoc(async_)


@pytest.mark.parametrize(("sync_name", "async_name"), sorted(ASYNC_NAME.items()))
def test_renamed_methods_match_in_parameters(sync_name: str, async_name: str) -> None:
    sync, async_ = SYNC[sync_name], ASYNC[async_name]
    assert inspect.iscoroutinefunction(async_) and not inspect.iscoroutinefunction(sync)
    assert list(inspect.signature(sync).parameters) == list(inspect.signature(async_).parameters)
