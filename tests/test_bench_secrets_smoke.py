"""The secret-detector benchmark runs on a tiny sample and reports its figures' shape."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import secrets


def test_secrets_benchmark_runs_quick(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = secrets.run(secrets.QUICK, output=tmp_path / "secrets.json")
    assert "| detector | texts | precision | recall |" in capsys.readouterr().out
    for system in ("memd", "keyword"):
        assert report[system]["texts"] == 20
        for metric in ("precision", "recall"):
            assert report[system][metric] is None or 0.0 <= report[system][metric] <= 1.0
    assert (tmp_path / "secrets.json").is_file()


def test_the_labelled_set_has_both_labels() -> None:
    rows = secrets.load()
    assert sum(secret for secret, _ in rows) >= 30
    assert sum(not secret for secret, _ in rows) >= 30
