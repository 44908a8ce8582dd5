"""A tiny soak through a real daemon, so it cannot rot: the report has its shape and its bounds
are judged as documented; no time is asserted."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from bench import soak

TINY = soak.Settings(workspaces=12, spellings=4, spelling_bytes=2048, rewrites=6, idle_unload=0.3)


def test_soak_runs_tiny(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    output = tmp_path / "soak.json"
    report = soak.run(TINY, output=output)
    table = capsys.readouterr().out
    for when in ("start", "peak", "first_round", "end"):
        assert f"| {when} |" in table
    samples = report["samples"]
    for figures in samples.values():
        assert set(figures) == {f.name for f in dataclasses.fields(soak.Sample)}
    assert samples["peak"]["workspaces_loaded"] >= samples["end"]["workspaces_loaded"]
    assert samples["peak"]["inotify_instances"] == 1
    assert report["watch_mode"] == "inotify"
    assert set(report["bounds"]) == {"inotify", "threads", "fds", "released", "memory", "idle"}
    assert json.loads(output.read_text())["benchmark"] == "soak"


def _sample(**changes: float) -> soak.Sample:
    base = soak.Sample(
        inotify_instances=1,
        inotify_watches=2,
        threads=10,
        fds=20,
        rss_mb=40.0,
        workspaces_loaded=1,
    )
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


def test_the_bounds_are_judged_as_documented() -> None:
    start, calm = _sample(inotify_instances=0, inotify_watches=0, workspaces_loaded=0), _sample()
    verdicts = soak.judge(start, calm, calm, calm, idle_cpu=0.5)
    assert all(v["met"] and v["text"].endswith(": met") for v in verdicts.values())
    broken = {
        "inotify": (_sample(inotify_instances=2), calm, 0.0),
        "threads": (_sample(threads=10 + soak.THREAD_SLACK + 1), calm, 0.0),
        "fds": (_sample(fds=20 + soak.FD_SLACK + 1), calm, 0.0),
        "released": (calm, _sample(workspaces_loaded=2), 0.0),
        "memory": (calm, _sample(rss_mb=40 + soak.RSS_SLACK_MB + 1), 0.0),
        "idle": (calm, calm, soak.IDLE_CPU_PERCENT + 1),
    }
    for name, (top, end, cpu) in broken.items():
        verdicts = soak.judge(start, top, calm, end, idle_cpu=cpu)
        assert [n for n, v in verdicts.items() if not v["met"]] == [name], name
        assert verdicts[name]["text"].endswith("NOT met")
    assert soak.peak([start, _sample(threads=30), calm]).threads == 30
