"""`undo`'s `to` times (`memd.server.methods.undo.parse_time`): ages, and ISO times in local time
unless they say their zone."""

from __future__ import annotations

import datetime

import pytest

from memd.server.methods.undo import parse_time


def test_times_are_ages_or_iso_times_in_local_time_unless_they_say_their_zone() -> None:
    assert parse_time("10m", 1000.0) == 400.0
    assert parse_time("2h", 10_000.0) == 2800.0
    assert parse_time("1.5d", 200_000.0) == 200_000.0 - 129_600.0
    assert (
        parse_time("2026-11-20T14:05:00+00:00", 0.0)
        == datetime.datetime(2026, 11, 20, 14, 5, tzinfo=datetime.UTC).timestamp()
    )
    local = datetime.datetime(2026, 11, 20, 14, 5).astimezone().timestamp()
    assert parse_time("2026-11-20T14:05", 0.0) == local
    with pytest.raises(ValueError, match="give an age such as 10m"):
        parse_time("yesterday", 0.0)
