"""The error hierarchy: unique codes, a complete registry, lossless wire round trips."""

from __future__ import annotations

import inspect

import pytest

from memd_client import errors
from memd_client.errors import ErrorObject, RpcError, from_wire, to_wire

CONCRETE = [
    cls
    for _, cls in inspect.getmembers(errors, inspect.isclass)
    if issubclass(cls, RpcError) and cls is not RpcError
]


def test_codes_are_unique_and_every_class_is_registered() -> None:
    codes = [cls.code for cls in CONCRETE]
    assert len(codes) == len(set(codes))
    assert set(errors._BY_CODE.values()) == set(CONCRETE)
    for cls in CONCRETE:
        assert cls.code >= 1000 or -32768 <= cls.code <= -32000


@pytest.mark.parametrize("cls", CONCRETE, ids=lambda c: c.__name__)
def test_wire_round_trip_keeps_class_message_and_data(cls: type[RpcError]) -> None:
    exc = cls("Something went wrong; do this next.", data={"path": "/x"})
    back = from_wire(to_wire(exc))
    assert type(back) is cls and back.message == exc.message and back.data == {"path": "/x"}


def test_unknown_codes_keep_their_code() -> None:
    back = from_wire(ErrorObject(code=4242, message="Future error."))
    assert type(back) is RpcError and back.code == 4242


def test_builtin_bases_for_except_clauses() -> None:
    assert issubclass(errors.DaemonUnavailable, ConnectionError)
    assert issubclass(errors.RequestTimeout, TimeoutError)
    assert issubclass(errors.LockTimeout, TimeoutError)
