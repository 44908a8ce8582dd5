"""An upgraded client beside a daemon that predates provenance (one still running after
`pip install -U`, until it restarts): its writes still succeed, recorded as before."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from bench._daemon import tree_at
from memd_client import Client
from tests.conftest import start_daemon

BEFORE_PROVENANCE = "a3ffc79"
"""main before provenance: its daemon refuses a write's `writer` as an unknown field."""


def test_an_upgraded_client_still_writes_to_an_older_daemon(
    short_tmp: Path, workspace: Path
) -> None:
    (short_tmp / "old").mkdir()
    old = tree_at(BEFORE_PROVENANCE, short_tmp / "old")
    if old is None:
        pytest.skip(f"{BEFORE_PROVENANCE} is not in this clone's history")
    # The older tree first on the path, before the current directory's `memd`.
    run_old = f"import sys; sys.path[:0] = [{str(old)!r}, {str(old / 'client')!r}]; " + (
        "from memd.cli.main import main; raise SystemExit(main())"
    )
    daemon = start_daemon(short_tmp, memd=(sys.executable, "-c", run_old))
    try:
        with Client(daemon.socket_path, workspace=workspace) as client:
            first = client.store(category="Quirk", content="The CI cache expires after a week.")
            second = client.store(category="Decision", content="We deploy with Helm.")
            listed = client.list()
        assert (first.action, second.action) == ("stored", "stored")
        assert {e.content for e in listed.entries} == {
            "The CI cache expires after a week.",
            "We deploy with Helm.",
        }
    finally:
        assert daemon.stop() == 0, daemon.stderr()
