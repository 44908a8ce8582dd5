"""The secret-detector benchmark runs on a tiny sample and reports its figures' shape."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import secrets


def test_secrets_benchmark_runs_quick(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = secrets.run(secrets.QUICK, output=tmp_path / "secrets.json")
    assert "| set | detector | ordinary | false refusals |" in capsys.readouterr().out
    assert set(report["sets"]) == {path.name for path in secrets.SETS}
    for figures in report["sets"].values():
        for system in ("memd", "previous", "keyword"):
            assert figures[system]["texts"] == 20
            for metric in ("false_refusal_rate", "miss_rate", "precision", "recall"):
                value = figures[system][metric]
                assert value is None or 0.0 <= value <= 1.0
    assert set(report["us_per_text"]) == {"memd", "previous"}
    assert (tmp_path / "secrets.json").is_file()


def test_the_labelled_sets_have_both_labels() -> None:
    rows = secrets.load()
    assert sum(secret for secret, _ in rows) >= 30
    assert sum(not secret for secret, _ in rows) >= 30
    prose = secrets.load(secrets.PROSE)
    assert sum(secret for secret, _ in prose) >= 50
    assert sum(not secret for secret, _ in prose) >= 100
