"""A query's walk through the server visits each module once (issue 31): `Methods.query` parses
its params (`read_filters`), finds the project (`workspaces.scopes`), hands the rest to the one
search (`methods.search`: gather, rank, boost, recall) and converts the answer (`rpc.wire`),
never coming back to a module it has left. Checked by tracing the calls the handler's own frame
makes, on a warm workspace with memories, a read-only source and a tag filter."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from types import FrameType
from typing import Any

import anyio

from memd.server.methods.handlers import Methods
from memd.server.workspaces.registry import Registry
from memd_client import protocol as p

SERVER = Path(__file__).resolve().parents[3] / "memd" / "server"


def _server_module(frame: FrameType | None) -> str | None:
    """The dotted name under memd.server of the module `frame` runs in, or None."""
    if frame is None:
        return None
    path = Path(frame.f_code.co_filename)
    if not path.is_relative_to(SERVER):
        return None
    return ".".join(path.relative_to(SERVER).with_suffix("").parts)


def _walk_of_query(calls: list[tuple[str, str, str]]) -> list[str]:
    """The modules the handler's `query` frame calls into, each run of calls to one module
    (a coroutine resumed again and again included) once."""
    walk: list[str] = []
    for caller, function, callee in calls:
        # (before Python 3.12, a list comprehension runs in a frame of its own)
        own = caller == "methods.handlers" and function in {"query", "<listcomp>"}
        if own and callee != caller and (not walk or walk[-1] != callee):
            walk.append(callee)
    return walk


async def test_a_query_visits_each_server_module_once(tmp_path: Path) -> None:
    (tmp_path / ".memory").mkdir()
    (tmp_path / ".memory" / "decisions.md").write_text(
        "# Decisions\n\n- [helm] Deploy with helm #ops\n- [ci] Run the tests in CI #ops\n"
    )
    (tmp_path / "README.md").write_text("# Deploying\n\nDeploy with helm from the main branch.\n")
    calls: list[tuple[str, str, str]] = []

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event != "call":
            return
        callee, caller = _server_module(frame), _server_module(frame.f_back)
        if callee is not None and caller is not None and frame.f_back is not None:
            calls.append((caller, frame.f_back.f_code.co_name, callee))

    async with anyio.create_task_group() as services:
        registry = Registry(services, clock=time.time)
        methods = Methods(registry, started=0.0, socket_path="unused")
        params = p.QueryParams(workspace=str(tmp_path), query="deploy helm", tags=["ops"])
        with registry.leases():
            await methods.query(params, None)  # type: ignore[arg-type]  # loads it: warm
            sys.setprofile(profile)
            try:
                result = await methods.query(params, None)  # type: ignore[arg-type]
            finally:
                sys.setprofile(None)
        registry.close()
    assert [hit.slug for hit in result.results] == ["helm"]  # the tag kept the source out
    assert _walk_of_query(calls) == [
        "workspaces.scopes",
        "methods.read_filters",
        "methods.search",
        "rpc.wire",
    ]
