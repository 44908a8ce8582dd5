"""The secret detector on a labelled set: precision and recall (issue 19).

`bench/data/secrets.tsv` holds texts that carry a secret value (cloud keys, tokens, passwords in
prose, private keys, connection strings; label 1) and look-alikes that must pass (commit hashes,
checksums, UUIDs, versions, example and placeholder keys in docs, rules that only name a secret;
label 0). It was written before the detector was measured on it and is not edited to fit it.
memd's detector (`memd.core.format.secrets`, used by every write path) is scored beside a naive
peer measured in the same run: "the text names a password, secret, token or key", the rule a
keyword filter would apply. Figures go to stdout and `bench/results/secrets.json`; every text
the detector gets wrong is listed. `--quick` scores the first ten of each label.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from bench._report import commit, save, settings_main
from memd.core.format.secrets import has_secret

DATA = Path(__file__).resolve().parent / "data" / "secrets.tsv"
_KEYWORD = re.compile(r"\b(?:passwords?|secrets?|tokens?|keys?|credentials?)\b", re.I)


class Settings(NamedTuple):
    per_label: int | None
    """Texts of each label scored (None: all)."""


FULL = Settings(per_label=None)
QUICK = Settings(per_label=10)


def load(path: Path = DATA, per_label: int | None = None) -> list[tuple[bool, str]]:
    """Return (carries a secret, text) pairs from the labelled set."""
    rows: list[tuple[bool, str]] = []
    counts = {True: 0, False: 0}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        label, text = line.split("\t", 1)
        secret = label == "1"
        if per_label is None or counts[secret] < per_label:
            rows.append((secret, text))
            counts[secret] += 1
    return rows


def score(rows: list[tuple[bool, str]], detect: Callable[[str], bool]) -> dict[str, Any]:
    """Precision, recall and the texts `detect` gets wrong."""
    found = [(secret, text, detect(text)) for secret, text in rows]
    tp = sum(secret and hit for secret, _, hit in found)
    fp = sum(hit and not secret for secret, _, hit in found)
    fn = sum(secret and not hit for secret, _, hit in found)
    return {
        "texts": len(rows),
        "precision": tp / (tp + fp) if tp + fp else None,
        "recall": tp / (tp + fn) if tp + fn else None,
        "missed": [text for secret, text, hit in found if secret and not hit],
        "flagged": [text for secret, text, hit in found if hit and not secret],
    }


def run(settings: Settings, *, output: Path | None = None) -> dict[str, Any]:
    """Score the detector and the keyword peer; print the table; save the report."""
    rows = load(per_label=settings.per_label)
    started = time.perf_counter()
    memd = score(rows, has_secret)
    per_text_us = (time.perf_counter() - started) / max(len(rows), 1) * 1e6
    peer = score(rows, lambda text: _KEYWORD.search(text) is not None)
    print("| detector | texts | precision | recall |")
    print("|---|---|---|---|")
    for name, figures in (("memd", memd), ("keyword filter", peer)):
        print(
            f"| {name} | {figures['texts']} | {_fmt(figures['precision'])} | "
            f"{_fmt(figures['recall'])} |"
        )
    print(f"\nmemd: {per_text_us:.1f} us a text")
    for label, texts in (("missed", memd["missed"]), ("flagged", memd["flagged"])):
        for text in texts:
            print(f"  {label}: {text}")
    report: dict[str, Any] = {
        "benchmark": "secrets",
        "commit": commit(),
        "memd": memd,
        "keyword": peer,
        "memd_us_per_text": per_text_us,
    }
    save(report, output)
    return report


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def main(argv: Sequence[str] | None = None) -> None:
    settings_main(
        argv,
        name="secrets",
        description=__doc__,
        quick_help="ten texts of each label",
        run=run,
        full=FULL,
        quick=QUICK,
    )


if __name__ == "__main__":
    main()
