"""The citation check (issue 32) on three labelled sets, beside a backtick-only baseline, and its
cost in a 50,000-file repository.

Sets (`bench/data/citations/`, built and labelled as its README says):
- `memd-history.jsonl`: memories written at 41 old commits of memd's own history, checked at
  the frozen HEAD 56c55dd. The workspace is a clone of this repository at that HEAD with each
  memory committed on a branch at its old commit and merged forward (`.memory/*.md` merge with
  git's union driver), so `git blame` gives each memory its old commit as its baseline.
- `synthetic.json`: four small repositories the bench builds with real git (renames, deletions,
  removed scripts and subcommands, negations, ignored files, look-alike words, third-party
  names, paths outside the workspace, URLs; one without git), memories committed before the
  code moves.
- `public-repos.json`: bullets from public repositories' memory files, each citation span
  labelled by hand; replayed as one commit of the repository's tracked files (and the few
  source lines that define a cited symbol). Scored for anchor precision/recall; entries whose
  truth could not be established from the stored files (`holds: null`) are left out of the
  entry figures.

Checkers, measured in the same run on the same workspaces:
- memd: `anchors.anchors_of`, `code_facts.baselines` + `gather`, `verdicts.check_entry`;
- backtick: a backticked span (no blank inside) that is not an existing path makes the entry
  stale; every such span is its "anchor".

Figures: stale-entry recall, false alarms on current entries and on citation-free entries
(separately), anchor precision/recall on the public set, ms per entry for the first gather and
a second (cached) one; then the cost run: a synthetic git repository of 50,000 files (5,000
in `--quick`) with history, 500 entries (50) citing its files and functions, the whole check
(baselines + anchors + gather + verdicts) timed. Targets (issue 32): stale recall >= 70 %,
false alarms <= 2 %, the cost run under 1 s. Figures go to stdout and
`bench/results/citations.json`.

Size: over 400 lines because the three sets' workspace builders, the two checkers, the
scoring and the cost run belong to one measurement and share its entry type.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from bench._report import commit, print_verdicts, save, settings_main
from memd.core.citations import anchors as anchor_rules, verdicts
from memd.core.format.categories import Category
from memd.core.format.mdformat import Entry as MemoryEntry
from memd.fs import code_facts
from memd.server.workspaces.code_check import NOTHING, gather_verdicts

DATA_DIR = Path(__file__).resolve().parent / "data" / "citations"
HISTORY = DATA_DIR / "memd-history.jsonl"
SYNTHETIC = DATA_DIR / "synthetic.json"
PUBLIC = DATA_DIR / "public-repos.json"
FROZEN_HEAD = "56c55dd"
"""The memd commit the history set is labelled at."""
REPO_ROOT = Path(__file__).resolve().parent.parent
MIN_RECALL, MAX_FALSE_ALARMS, MAX_COST_S = 0.70, 0.02, 1.0
_GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}
_SPAN = re.compile(r"`([^`\s]+)`")


class Settings(NamedTuple):
    history: int | None
    """History-set entries checked (None: all)."""
    cost_files: int
    cost_entries: int


FULL = Settings(history=None, cost_files=50_000, cost_entries=500)
QUICK = Settings(history=24, cost_files=2_000, cost_entries=50)


class Entry(NamedTuple):
    """One labelled memory placed in a workspace: `label` is stale, current or none (None: its
    truth is unknown, left out of the entry figures); `line` is its 1-based line in `file`."""

    content: str
    label: str | None
    file: str
    line: int
    spans: tuple[str, ...] = ()


def git(root: Path, *args: str, stdin: bytes | None = None) -> str:
    """Run git in `root` with a fixed identity and no user config; return its stdout."""
    done = subprocess.run(
        ["git", *args],
        cwd=root,
        input=stdin,
        capture_output=True,
        check=True,
        env={**os.environ, **_GIT_ENV},
    )
    return done.stdout.decode("utf-8", "replace")


def entry_line(index: int, content: str) -> str:
    """Return the memory-file line (HackLM's `- [slug] text`) of the `index`th entry."""
    return f"- [bench-{index:04d}] {content}\n"


def _append(root: Path, category: str, lines: Iterable[str]) -> str:
    path = root / ".memory" / f"{category}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        handle.writelines(lines)
    return f".memory/{category}.md"


def _placed(
    root: Path, rows: Sequence[tuple[str, str | None, int, tuple[str, ...]]]
) -> list[Entry]:
    """Find each (content, label, index, spans)'s line in the memory files under `root`."""
    where: dict[str, tuple[str, int]] = {}
    for path in sorted((root / ".memory").glob("*.md")):
        for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            where[text + "\n"] = (f".memory/{path.name}", number)
    entries = []
    for content, label, index, spans in rows:
        file, line = where[entry_line(index, content)]
        entries.append(Entry(content, label, file, line, spans))
    return entries


def build_history(workdir: Path, limit: int | None) -> tuple[Path, list[Entry]]:
    """Clone this repository at FROZEN_HEAD and commit each history memory at its old commit
    on a branch of its own, merged forward; return the clone and its entries."""
    rows = [json.loads(line) for line in HISTORY.read_text(encoding="utf-8").splitlines()]
    rows = rows[:limit] if limit is not None else rows
    root = workdir / "memd"
    git(workdir, "clone", "--quiet", "--no-checkout", str(REPO_ROOT), str(root))
    git(root, "checkout", "--quiet", "-B", "bench", FROZEN_HEAD)
    (root / ".git" / "info" / "attributes").write_text(".memory/*.md merge=union\n")
    by_commit: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    for index, row in enumerate(rows):
        by_commit.setdefault(row["commit"], []).append((index, row))
    for number, (old, members) in enumerate(by_commit.items()):
        git(root, "checkout", "--quiet", "-B", f"memories-{number}", old)
        for index, row in members:
            _append(root, row["category"], [entry_line(index, row["content"])])
        git(root, "add", ".memory")
        git(root, "commit", "--quiet", "-m", f"memories at {old}")
        git(root, "checkout", "--quiet", "bench")
        git(root, "merge", "--quiet", "--no-edit", f"memories-{number}")
    placed = [(row["content"], row["label"], index, ()) for index, row in enumerate(rows)]
    return root, _placed(root, placed)


def build_synthetic(workdir: Path, repo: dict[str, Any]) -> tuple[Path, list[Entry]]:
    """Build one synthetic repository from its spec (commits of writes, git mv and git rm; the
    memories committed where the spec says); without git when `repo["git"]` is false."""
    root = workdir / repo["name"]
    root.mkdir()
    use_git = bool(repo["git"])
    if use_git:
        git(root, "init", "--quiet")
    placed: list[tuple[str, str | None, int, tuple[str, ...]]] = []
    for step in repo["commits"]:
        for old, new in step.get("move", {}).items():
            (root / new).parent.mkdir(parents=True, exist_ok=True)
            git(root, "mv", old, new)
        for gone in step.get("delete", []):
            git(root, "rm", "--quiet", gone)
        for name, text in step.get("write", {}).items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text, encoding="utf-8")
        if step.get("memories"):
            for index, entry in enumerate(repo["entries"]):
                _append(root, entry["category"], [entry_line(index, entry["content"])])
                placed.append((entry["content"], entry["label"], index, ()))
        if use_git:
            git(root, "add", "-A")
            git(root, "commit", "--quiet", "-m", step["message"])
    return root, _placed(root, placed)


def build_public(workdir: Path, repo: dict[str, Any]) -> tuple[Path, list[Entry]] | None:
    """Replay one public repository's recorded files as one commit with its memory bullets;
    None when no file list was recorded (its bullets count for anchors only)."""
    if repo["files"] is None:
        return None
    root = workdir / repo["repo"].replace("/", "__")
    root.mkdir()
    git(root, "init", "--quiet")
    for name in repo["files"]:
        if name.startswith(".memory/"):
            continue
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(repo["sources"].get(name, ""), encoding="utf-8")
    (root / ".gitignore").write_text(repo["gitignore"], encoding="utf-8")
    placed: list[tuple[str, str | None, int, tuple[str, ...]]] = []
    for index, bullet in enumerate(repo["bullets"]):
        _append(root, bullet["category"], [entry_line(index, bullet["content"])])
        spans = tuple(anchor["text"] for anchor in bullet["anchors"])
        placed.append((bullet["content"], public_label(bullet), index, spans))
    git(root, "add", "-A")
    git(root, "commit", "--quiet", "-m", "replayed")
    return root, _placed(root, placed)


def public_label(bullet: dict[str, Any]) -> str | None:
    """A public bullet's entry label: none without citations, current when it holds, None when
    its truth is unknown."""
    if bullet["holds"] is None:
        return None
    if not bullet["anchors"]:
        return "none"
    return "current" if bullet["holds"] else "stale"


def check_memd(root: Path, entries: Sequence[Entry]) -> tuple[list[bool], float, float]:
    """Run memd's check over `entries`; return which are stale and the seconds of a first and
    of a second (cached) pass (baselines + anchors + gather + verdicts)."""
    stale: list[bool] = []
    seconds = []
    for _ in range(2):
        started = time.perf_counter()
        files = sorted({entry.file for entry in entries})
        lines = code_facts.baselines(str(root), files)
        found = [anchor_rules.anchors_of(entry.content) for entry in entries]
        bases = [lines.get((entry.file, entry.line), "") for entry in entries]
        facts = code_facts.gather(str(root), [a for f in found for a in f], set(bases))
        checks = [verdicts.check_entry(f, facts, b) for f, b in zip(found, bases, strict=True)]
        seconds.append(time.perf_counter() - started)
        stale = [check.status == "stale" for check in checks]
    return stale, seconds[0], seconds[1]


def check_backtick(root: Path, entries: Sequence[Entry]) -> list[bool]:
    """The baseline: an entry is stale when a backticked span is not an existing path."""
    return [
        any(not (root / span.lstrip("./")).exists() for span in _SPAN.findall(entry.content))
        for entry in entries
    ]


def entry_figures(entries: Sequence[Entry], stale: Sequence[bool]) -> dict[str, Any]:
    """Stale recall and false-alarm rates by label, with the counts behind them."""
    counts: dict[str, list[int]] = {"stale": [0, 0], "current": [0, 0], "none": [0, 0]}
    for entry, flagged in zip(entries, stale, strict=True):
        if entry.label in counts:
            counts[entry.label][0] += 1
            counts[entry.label][1] += flagged

    def rate(label: str) -> float | None:
        return counts[label][1] / counts[label][0] if counts[label][0] else None

    return {
        "entries": {label: pair[0] for label, pair in counts.items()},
        "flagged": {label: pair[1] for label, pair in counts.items()},
        "stale_recall": rate("stale"),
        "false_alarms_current": rate("current"),
        "false_alarms_none": rate("none"),
    }


def anchor_figures(bullets: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Anchor precision and recall on the public bullets (a found anchor is right when it
    overlaps a labelled span), for memd's rules and for every backticked span."""
    result = {}
    for name in ("memd", "backtick"):
        right = found = labelled = caught = 0
        for bullet in bullets:
            content = bullet["content"]
            truth = [_span(content, anchor["text"]) for anchor in bullet["anchors"]]
            if name == "memd":
                spans = [(a.start, a.end) for a in anchor_rules.anchors_of(content)]
            else:
                spans = [m.span(1) for m in _SPAN.finditer(content)]
            found += len(spans)
            right += sum(any(_overlap(s, t) for t in truth) for s in spans)
            labelled += len(truth)
            caught += sum(any(_overlap(s, t) for s in spans) for t in truth)
        result[name] = {
            "found": found,
            "labelled": labelled,
            "precision": right / found if found else None,
            "recall": caught / labelled if labelled else None,
        }
    return result


def _span(content: str, text: str) -> tuple[int, int]:
    start = content.index(text)
    return start, start + len(text)


def _overlap(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def measure_set(name: str, workspaces: Sequence[tuple[Path, list[Entry]]]) -> dict[str, Any]:
    """memd's and the baseline's figures over one set's workspaces, and memd's cost."""
    entries: list[Entry] = []
    memd_stale: list[bool] = []
    base_stale: list[bool] = []
    first = cached = 0.0
    for root, placed in workspaces:
        stale, first_s, cached_s = check_memd(root, placed)
        entries += placed
        memd_stale += stale
        base_stale += check_backtick(root, placed)
        first += first_s
        cached += cached_s
    return {
        "set": name,
        "memd": entry_figures(entries, memd_stale),
        "backtick": entry_figures(entries, base_stale),
        "ms_per_entry_first": 1000 * first / len(entries) if entries else None,
        "ms_per_entry_cached": 1000 * cached / len(entries) if entries else None,
        "missed": [
            e.content
            for e, s in zip(entries, memd_stale, strict=True)
            if e.label == "stale" and not s
        ],
        "false_alarms": [
            e.content
            for e, s in zip(entries, memd_stale, strict=True)
            if e.label in ("current", "none") and s
        ],
    }


def cost_run(workdir: Path, files: int, entries: int) -> dict[str, Any]:
    """A git repository of `files` files with history (a second commit renames and deletes some)
    and `entries` memories citing its files and functions: the whole check, timed."""
    root = workdir / "big"
    root.mkdir()
    git(root, "init", "--quiet")
    stream = [
        _fast_import_commit(
            1, [(_big_path(i), f"def func_{i}():\n    pass\n") for i in range(files)]
        )
    ]
    moves = [(_big_path(i), _big_path(i).replace("/mod_", "/moved_")) for i in range(0, files, 97)]
    stream.append(
        _fast_import_commit(
            2, [], renames=moves, deletes=[_big_path(i) for i in range(1, files, 89)]
        )
    )
    git(root, "fast-import", "--quiet", stdin="".join(stream).encode())
    git(root, "reset", "--quiet", "--hard", "refs/heads/main")
    lines = []
    for n in range(entries):
        i = (n * 7919) % files
        lines.append(
            entry_line(
                n,
                f"`{_big_path(i)}` defines `func_{i}()`; call it before `func_{(i + 1) % files}`.",
            )
        )
    _append(root, "decisions", lines)
    git(root, "add", ".memory")
    git(root, "commit", "--quiet", "-m", "memories")
    placed = _placed(
        root, [(line.split("] ", 1)[1].rstrip("\n"), None, n, ()) for n, line in enumerate(lines)]
    )
    stale, first, cached = check_memd(root, placed)
    daemon = daemon_check_costs(root, placed)
    return {
        "files": files,
        "entries": entries,
        "first_s": first,
        "cached_s": cached,
        "stale": sum(stale),
        **daemon,
    }


def daemon_check_costs(root: Path, placed: Sequence[Entry]) -> dict[str, float]:
    """The daemon's own check (`code_check.gather_verdicts`, what `check` runs in its worker
    thread): the first, the next with nothing changed (its cache at one tree state), and the
    next after a tracked file is edited in the working tree (a new tree state: every entry
    with citations gathered again)."""
    entries = [
        (Category.DECISION, MemoryEntry(line=e.line, slug=None, content=e.content)) for e in placed
    ]
    seconds: dict[str, float] = {}
    checked = NOTHING
    for step in ("daemon_first_s", "daemon_unchanged_s", "daemon_after_edit_s"):
        if step == "daemon_after_edit_s":
            edited = root / _big_path(2)  # neither renamed nor deleted
            edited.write_text(edited.read_text() + "# edited\n")
        started = time.perf_counter()
        checked = gather_verdicts(str(root), entries, checked, full=False)
        seconds[step] = time.perf_counter() - started
    return seconds


def _big_path(i: int) -> str:
    return f"src/pkg_{i // 500:03d}/mod_{i}.py"


def _fast_import_commit(
    mark: int,
    writes: Sequence[tuple[str, str]],
    renames: Sequence[tuple[str, str]] = (),
    deletes: Sequence[str] = (),
) -> str:
    parts = [f"commit refs/heads/main\nmark :{mark}\n"]
    parts.append(f"committer bench <bench@example.invalid> {1_700_000_000 + mark} +0000\n")
    parts.append(f"data 7\ncommit{mark}\n")
    if mark > 1:
        parts.append(f"from :{mark - 1}\n")
    for path, text in writes:
        data = text.encode()
        parts.append(f"M 100644 inline {path}\ndata {len(data)}\n{text}\n")
    parts += [f'R "{old}" "{new}"\n' for old, new in renames]
    parts += [f"D {path}\n" for path in deletes]
    return "".join(parts) + "\n"


def run(settings: Settings, *, output: Path | None = None) -> dict[str, Any]:
    """Build every set's workspaces, measure memd and the baseline, run the cost run; print the
    table and the verdicts; save the report."""
    report: dict[str, Any] = {"benchmark": "citations", "commit": commit(), "sets": {}}
    with tempfile.TemporaryDirectory(prefix="memd-bench-citations-") as temporary:
        workdir = Path(temporary)
        sets: dict[str, list[tuple[Path, list[Entry]]]] = {}
        if (REPO_ROOT / ".git").exists():
            sets["memd-history"] = [build_history(workdir, settings.history)]
        else:
            print("memd-history: skipped (the bench needs memd's git history)")
        synthetic = json.loads(SYNTHETIC.read_text(encoding="utf-8"))
        sets["synthetic"] = [build_synthetic(workdir, repo) for repo in synthetic]
        public = json.loads(PUBLIC.read_text(encoding="utf-8"))
        sets["public"] = [w for w in (build_public(workdir, repo) for repo in public) if w]
        for name, workspaces in sets.items():
            report["sets"][name] = measure_set(name, workspaces)
        report["anchors_public"] = anchor_figures([b for repo in public for b in repo["bullets"]])
        shutil.rmtree(workdir / "memd", ignore_errors=True)
        report["cost"] = cost_run(workdir, settings.cost_files, settings.cost_entries)
    _print(report)
    report["targets"] = _targets(report)
    print_verdicts(report["targets"])
    save(report, output)
    return report


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f} %"


def _ratio(figures: dict[str, Any], label: str, rate: str) -> str:
    return f"{figures['flagged'][label]}/{figures['entries'][label]} ({_percent(figures[rate])})"


def _verdict(met: bool) -> str:
    return "met" if met else "NOT met"


def _print(report: dict[str, Any]) -> None:
    print(
        "| set | checker | stale found | false alarms (current) | false alarms (no citation) "
        "| ms/entry first | cached |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, figures in report["sets"].items():
        for checker in ("memd", "backtick"):
            f = figures[checker]
            cost = (
                f"{figures['ms_per_entry_first']:.2f} | {figures['ms_per_entry_cached']:.2f}"
                if checker == "memd"
                else "- | -"
            )
            print(
                f"| {name} | {checker} | {_ratio(f, 'stale', 'stale_recall')} "
                f"| {_ratio(f, 'current', 'false_alarms_current')} "
                f"| {_ratio(f, 'none', 'false_alarms_none')} | {cost} |"
            )
    for checker, f in report["anchors_public"].items():
        print(
            f"anchors on the public set, {checker}: precision {_percent(f['precision'])} "
            f"({f['found']} found), recall {_percent(f['recall'])} ({f['labelled']} labelled)"
        )
    cost = report["cost"]
    print(
        f"cost run: {cost['entries']} entries in a {cost['files']:,}-file git repository: "
        f"{cost['first_s']:.3f} s first, {cost['cached_s']:.3f} s cached; through the "
        f"daemon's checker {cost['daemon_first_s']:.3f} s first, "
        f"{cost['daemon_unchanged_s']:.3f} s with nothing changed, "
        f"{cost['daemon_after_edit_s']:.3f} s after an edit"
    )


def _targets(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    targets: dict[str, dict[str, Any]] = {}
    entries = [report["sets"][name]["memd"] for name in report["sets"]]
    flagged = sum(f["flagged"]["stale"] for f in entries)
    total = sum(f["entries"]["stale"] for f in entries)
    recall = flagged / total if total else 0.0
    met = recall >= MIN_RECALL
    targets["stale_recall"] = {
        "value": recall,
        "met": met,
        "text": f"stale entries found {_percent(recall)} (all sets) >= 70 %: {_verdict(met)}",
    }
    for label in ("current", "none"):
        alarms = sum(f["flagged"][label] for f in entries)
        count = sum(f["entries"][label] for f in entries)
        rate = alarms / count if count else 0.0
        met = rate <= MAX_FALSE_ALARMS
        targets[f"false_alarms_{label}"] = {
            "value": rate,
            "met": met,
            "text": f"false alarms on {label} entries {_percent(rate)} <= 2 %: {_verdict(met)}",
        }
    cost = report["cost"]
    met = cost["first_s"] < MAX_COST_S
    targets["cost"] = {
        "value": cost["first_s"],
        "met": met,
        "text": (
            f"check of {cost['entries']} entries in {cost['files']:,} files "
            f"{cost['first_s']:.3f} s < 1 s: {_verdict(met)}"
        ),
    }
    return targets


def main(argv: Sequence[str] | None = None) -> None:
    """`python -m bench.citations [--quick]`."""
    settings_main(
        argv,
        name="citations",
        description=__doc__,
        quick_help="24 history entries and a 2,000-file cost run",
        run=run,
        full=FULL,
        quick=QUICK,
    )


if __name__ == "__main__":
    main()
