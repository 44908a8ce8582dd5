"""Write decisions on labelled store pairs: memd's judgement beside HackLM's rule (issue 16).

Protocol (the data's README.md): each pair's existing entry is alone in its category file (the
`# Decisions`-style header, a blank line, the description line, a blank line, `- [existing]
<text>`), the new text is stored with `dry_run`, and the reply's stored / updated / skipped
reads as store / update / skip. memd is asked through a real daemon over its socket (each
workspace holds one pair per category file); HackLM's rule (hacklm-spec.md §2.3: keyword
Jaccard without stemming, normalised-equal or >= 0.8 skips, >= 0.6 updates) is scored on the same
pairs in the same run. HackLM reports a conflict only on a slug update (§2.9), never on a store
without a slug, so its conflict figures are 0.

Figures, overall and per class: verdict accuracy; the wrong-skip rate (of the pairs labelled
update or store, the share skipped: a new rule or value thrown away); the wrong-replace rate (of
the pairs labelled store, the share updated: a valid rule replaced); conflict precision and
recall. Data sets:
- `dev`: `../shared/data/write-decisions-dev/pairs.jsonl` (`MEMD_WRITE_DECISIONS_DIR`), the
  tuning pairs; the targets are judged on these.
- `independent`: `bench/data/write-decisions-independent.jsonl`, pairs in the same classes
  written for memd from the data's labelling rules alone, by writers who never saw the dev
  pairs: whether the figures carry over to sentences no rule was tuned on.
- `adversarial`: `bench/data/write-decisions-adversarial.jsonl`, pairs written to make memd
  lose data (look-alike abbreviations, swapped small words, operators, identifiers, numbers
  that name things, bans widened, other languages), each with the verdicts that are acceptable;
  the data-losing mistakes are counted: a skip where it is not acceptable (a new rule
  thrown away), an update where only a store is (a valid rule replaced); and the accuracy, the
  share of pairs given an acceptable verdict.
Also: `apart`, how many ordered pairs of distinct memories in one category file of the
coding-memory tuning projects memd would not store apart (skip or update), and the time to
decide a pair in-process, beside HackLM's rule.

Targets (issue 16): on `dev`, wrong-skip <= 1 %, wrong-replace <= 5 %, accuracy >= 80 %,
conflict precision >= 0.8 and recall >= 0.6. Figures go to stdout as Markdown tables and to
`bench/results/write_decisions.json` (`--quick`: one pair a class).
"""

from __future__ import annotations

import collections
import os
import re
import statistics
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import msgspec

from bench._daemon import running_daemon
from bench._report import commit, print_verdicts, save, settings_main
from memd.core.format import mdformat
from memd.core.format.categories import Category, parse_category
from memd.core.writes import transitions
from memd.core.writes.judge import judge
from memd_client import Client

HERE = Path(__file__).resolve().parent
DEFAULT_DEV = HERE.parent.parent / "shared" / "data" / "write-decisions-dev" / "pairs.jsonl"
INDEPENDENT = HERE / "data" / "write-decisions-independent.jsonl"
ADVERSARIAL = HERE / "data" / "write-decisions-adversarial.jsonl"
CODING_MEMORY = HERE.parent.parent / "shared" / "data" / "coding-memory-dev"
VERDICT_OF_ACTION = {"stored": "store", "updated": "update", "skipped": "skip"}
TARGETS = {
    "wrong_skip": ("<=", 0.01),
    "wrong_replace": ("<=", 0.05),
    "accuracy": (">=", 0.80),
    "conflict_precision": (">=", 0.8),
    "conflict_recall": (">=", 0.6),
}
METRICS = ("accuracy", "wrong_skip", "wrong_replace", "conflict_precision", "conflict_recall")
SYSTEMS = {"memd": "memd (store dry run over the socket)", "hacklm": "HackLM's rule (§2.3)"}


class Pair(msgspec.Struct, frozen=True):
    """One labelled pair of the data set (its README gives the fields)."""

    id: str
    category: str
    existing: str
    new: str
    verdict: str
    conflict: bool
    reason: str
    class_: str = msgspec.field(name="class")


class Probe(msgspec.Struct, frozen=True):
    """One adversarial pair and the verdicts that are acceptable for it."""

    id: str
    group: str
    existing: str
    new: str
    allowed: list[str]
    note: str = ""


class Decision(NamedTuple):
    verdict: str
    conflict: bool


class Settings(NamedTuple):
    per_class: int | None
    """Pairs per class (None: all)."""
    daemon: bool
    """Ask a real daemon (else the same store rules in-process)."""
    apart: bool
    """Also judge the coding-memory projects' distinct memories pairwise."""


FULL = Settings(per_class=None, daemon=True, apart=True)
QUICK = Settings(per_class=1, daemon=True, apart=False)


def dev_path() -> Path:
    configured = os.environ.get("MEMD_WRITE_DECISIONS_DIR")
    return Path(configured) / "pairs.jsonl" if configured else DEFAULT_DEV


def load_pairs(path: Path, per_class: int | None = None) -> list[Pair]:
    """The pairs of a JSON-lines file, at most `per_class` of each class (in file order)."""
    pairs = [msgspec.json.decode(line, type=Pair) for line in path.read_bytes().splitlines()]
    if per_class is None:
        return pairs
    seen: collections.Counter[str] = collections.Counter()
    kept = []
    for pair in pairs:
        seen[pair.class_] += 1
        if seen[pair.class_] <= per_class:
            kept.append(pair)
    return kept


# ---------------------------------------------------------------------------- HackLM's rule

_HACKLM_STOP_WORDS_TEXT = """
a an the is are was were be been being have has had do does did will would could should may might
must shall can need dare to of in for on with at by from as into through during before after
above below and but or nor not so yet both either neither each every all any few more most other
some such no only own same than too very just because if when while where how what which who whom
this that these those it its i me my we our you your they them their use used using always never
"""
HACKLM_STOP_WORDS = frozenset(_HACKLM_STOP_WORDS_TEXT.split())
"""HackLM's 103 stop words (hacklm-spec.md §2.3)."""
_HACKLM_DROP = re.compile(r"[^a-z0-9\s-]")
_HACKLM_NORMAL_DROP = re.compile(r"[^a-z0-9\s]")


def hacklm_keywords(text: str) -> frozenset[str]:
    """HackLM's keyword set: lowercase, only a-z, 0-9, whitespace and "-", tokens of three
    characters or more that are not stop words (no stemming)."""
    cleaned = _HACKLM_DROP.sub("", text.lower())
    return frozenset(t for t in cleaned.split() if len(t) > 2 and t not in HACKLM_STOP_WORDS)


def hacklm_decision(existing: str, new: str) -> Decision:
    """HackLM's `checkDuplicate` against one entry (§2.3); never a conflict on a store (§2.9)."""

    def normal(text: str) -> str:
        return " ".join(_HACKLM_NORMAL_DROP.sub("", text.lower()).split())

    if normal(existing) == normal(new):
        return Decision("skip", False)
    a, b = hacklm_keywords(existing), hacklm_keywords(new)
    similarity = len(a & b) / len(a | b) if a and b else 0.0
    if similarity >= 0.8:
        return Decision("skip", False)
    return Decision("update" if similarity >= 0.6 else "store", False)


# ---------------------------------------------------------------------------- memd


def category_file(category: Category, existing: str) -> str:
    """The category file holding only `existing` (the data's README)."""
    doc = mdformat.new_document(category)
    stored = transitions.apply(category, doc, transitions.Store(content=existing, slug="existing"))
    assert stored.doc is not None
    return mdformat.render(stored.doc)


def memd_in_process(pairs: Sequence[Pair]) -> list[Decision]:
    """memd's store rules on each pair, in-process (`transitions.apply`, what the actor runs)."""
    decisions = []
    for pair in pairs:
        outcome = store_outcome(pair)
        decisions.append(Decision(VERDICT_OF_ACTION[outcome.action], outcome.conflict))
    return decisions


def store_outcome(pair: Pair) -> transitions.StoreOutcome:
    """What storing `pair.new` beside `pair.existing` does, with `dry_run` (in-process)."""
    category = parse_category(pair.category)
    doc = mdformat.parse(category_file(category, pair.existing))
    outcome = transitions.apply(
        category, doc, transitions.Store(content=pair.new, dry_run=True)
    ).outcome
    assert isinstance(outcome, transitions.StoreOutcome)
    return outcome


def memd_over_socket(pairs: Sequence[Pair]) -> list[Decision]:
    """memd's decision on each pair from a real daemon: workspace n holds the n-th pair of each
    category, one pair per category file."""
    slots: dict[str, int] = collections.Counter()
    placed = []
    for pair in pairs:
        category = parse_category(pair.category)
        placed.append((pair, category, slots[category.file]))
        slots[category.file] += 1
    with running_daemon(private_state=True) as (socket_path, root):
        for pair, category, slot in placed:
            memory = root / f"pairs-{slot}" / ".memory"
            memory.mkdir(parents=True, exist_ok=True)
            (memory / category.file).write_text(category_file(category, pair.existing))
        decisions = []
        with Client(socket_path, timeout=60) as client:
            for pair, category, slot in placed:
                result = client.store(
                    category=category.name,
                    content=pair.new,
                    dry_run=True,
                    workspace=root / f"pairs-{slot}",
                    # The write decision alone: an agent's Security or Instruction store would
                    # answer "pending" (the review inbox) instead of the decision.
                    origin="user",
                )
                decisions.append(Decision(VERDICT_OF_ACTION[result.action], result.conflict))
    return decisions


# ---------------------------------------------------------------------------- scoring


def score(pairs: Sequence[Pair], decisions: Sequence[Decision]) -> dict[str, Any]:
    """The figures of `decisions` against the labels of `pairs` (see the module docstring)."""
    rows = list(zip(pairs, decisions, strict=True))
    not_skip = [(p, d) for p, d in rows if p.verdict != "skip"]
    stores = [(p, d) for p, d in rows if p.verdict == "store"]
    flagged = [(p, d) for p, d in rows if d.conflict]
    conflicts = [(p, d) for p, d in rows if p.conflict]

    def share(hits: int, total: int) -> float | None:
        return hits / total if total else None

    return {
        "pairs": len(rows),
        "accuracy": share(sum(p.verdict == d.verdict for p, d in rows), len(rows)),
        "wrong_skip": share(sum(d.verdict == "skip" for _, d in not_skip), len(not_skip)),
        "wrong_replace": share(sum(d.verdict == "update" for _, d in stores), len(stores)),
        "conflict_precision": share(sum(p.conflict for p, _ in flagged), len(flagged)),
        "conflict_recall": share(sum(d.conflict for _, d in conflicts), len(conflicts)),
        "wrong_skips": len([1 for _, d in not_skip if d.verdict == "skip"]),
        "wrong_replaces": len([1 for _, d in stores if d.verdict == "update"]),
    }


def by_class(pairs: Sequence[Pair], decisions: Sequence[Decision]) -> dict[str, Any]:
    """`score` for each class of pairs."""
    groups: dict[str, list[tuple[Pair, Decision]]] = collections.defaultdict(list)
    for pair, decision in zip(pairs, decisions, strict=True):
        groups[pair.class_].append((pair, decision))
    return {
        name: score([p for p, _ in rows], [d for _, d in rows])
        for name, rows in sorted(groups.items())
    }


def evaluate(pairs: Sequence[Pair], settings: Settings) -> dict[str, Any]:
    """Both systems on `pairs`: overall and per-class figures."""
    memd = memd_over_socket(pairs) if settings.daemon else memd_in_process(pairs)
    hacklm = [hacklm_decision(p.existing, p.new) for p in pairs]
    return {
        "pairs": len(pairs),
        "overall": {"memd": score(pairs, memd), "hacklm": score(pairs, hacklm)},
        "classes": {"memd": by_class(pairs, memd), "hacklm": by_class(pairs, hacklm)},
    }


def adversarial(path: Path, settings: Settings) -> dict[str, Any]:
    """The data-losing mistakes of both systems on the adversarial pairs."""
    probes = [msgspec.json.decode(line, type=Probe) for line in path.read_bytes().splitlines()]
    if settings.per_class is not None:
        probes = probes[:: max(1, len(probes) // 20)]
    as_pairs = [
        Pair(p.id, "Decision", p.existing, p.new, p.allowed[0], False, p.note, class_=p.group)
        for p in probes
    ]
    memd = memd_over_socket(as_pairs) if settings.daemon else memd_in_process(as_pairs)
    hacklm = [hacklm_decision(p.existing, p.new) for p in probes]

    def mistakes(decisions: Sequence[Decision]) -> dict[str, Any]:
        skips = replaces = acceptable = 0
        for probe, decision in zip(probes, decisions, strict=True):
            acceptable += decision.verdict in probe.allowed
            if decision.verdict == "skip" and "skip" not in probe.allowed:
                skips += 1
            if decision.verdict == "update" and probe.allowed == ["store"]:
                replaces += 1
        return {
            "pairs": len(probes),
            "accuracy": acceptable / len(probes) if probes else None,
            "wrong_skips": skips,
            "wrong_replaces": replaces,
        }

    return {"memd": mistakes(memd), "hacklm": mistakes(hacklm)}


def apart(root: Path) -> dict[str, Any]:
    """Ordered pairs of distinct memories of one category file in the coding-memory projects
    that memd would not store apart."""
    files = sorted(root.glob("*/.memory/*.md"))
    total, together = 0, []
    for path in files:
        entries = mdformat.entries(mdformat.parse(path.read_text(encoding="utf-8")))
        for old in entries:
            for new in entries:
                if old is new:
                    continue
                total += 1
                judged = judge(old.content, new.content)
                if judged.verdict.value != "store":
                    together.append([old.content, new.content, judged.relation.value])
    return {"files": len(files), "ordered_pairs": total, "not_apart": together}


def timing(pairs: Sequence[Pair]) -> dict[str, float]:
    """Median microseconds to decide one pair, memd's judgement (fresh texts) and HackLM's."""

    def median_us(decide: Callable[[str, str], object], texts: Iterable[tuple[str, str]]) -> float:
        samples = []
        for existing, new in texts:
            started = time.perf_counter()
            decide(existing, new)
            samples.append((time.perf_counter() - started) * 1e6)
        return statistics.median(samples)

    # A suffix unique to each round makes every text new to memd's caches.
    fresh = [(f"{p.existing} ({n})", f"{p.new} ({n})") for n, p in enumerate(pairs)]
    return {
        "memd_judge_us": median_us(judge, fresh),
        "hacklm_rule_us": median_us(hacklm_decision, fresh),
    }


# ---------------------------------------------------------------------------- report


def _cell(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def print_overall(name: str, result: dict[str, Any]) -> None:
    print(f"\n{name}: {result['pairs']} pairs\n")
    print("| system | accuracy | wrong-skip | wrong-replace | conflict P | conflict R |")
    print("|---|---|---|---|---|---|")
    for system, label in SYSTEMS.items():
        figures = result["overall"][system]
        cells = " | ".join(_cell(figures[metric]) for metric in METRICS)
        print(f"| {label} | {cells} |")


def print_classes(result: dict[str, Any]) -> None:
    print("\n| class | pairs | memd acc | HackLM acc | memd wrong-skip | memd wrong-replace |")
    print("|---|---|---|---|---|---|")
    memd, hacklm = result["classes"]["memd"], result["classes"]["hacklm"]
    for name, figures in memd.items():
        print(
            f"| {name} | {figures['pairs']} | {_cell(figures['accuracy'])} | "
            f"{_cell(hacklm[name]['accuracy'])} | {_cell(figures['wrong_skip'])} | "
            f"{_cell(figures['wrong_replace'])} |"
        )


def verdicts(dev: dict[str, Any]) -> dict[str, dict[str, Any]]:
    figures = dev["overall"]["memd"]
    targets = {}
    for metric, (how, bound) in TARGETS.items():
        value = figures[metric]
        met = value is not None and (value <= bound if how == "<=" else value >= bound)
        targets[f"{metric}_met"] = {
            "met": met,
            "text": f"{metric} {_cell(value)} (target {how} {bound}): "
            + ("met" if met else "NOT met"),
        }
    return targets


def run(settings: Settings, *, output: Path | None = None) -> dict[str, Any]:
    """Score both systems on every data set found; print the tables; save the report."""
    report: dict[str, Any] = {"benchmark": "write_decisions", "commit": commit(), "sets": {}}
    for name, path in (("dev", dev_path()), ("independent", INDEPENDENT)):
        if not path.is_file():
            print(f"{name}: no pairs at {path}; skipped")
            continue
        pairs = load_pairs(path, settings.per_class)
        result = evaluate(pairs, settings)
        report["sets"][name] = result
        print_overall(name, result)
        print_classes(result)
        if name == "dev":
            report["timing"] = timing(pairs)
            report["targets"] = verdicts(result)
    if ADVERSARIAL.is_file():
        found = report["adversarial"] = adversarial(ADVERSARIAL, settings)
        print(
            f"\nadversarial: {found['memd']['pairs']} pairs written to make memd lose data: "
            f"memd {found['memd']['wrong_skips']} wrong skips, "
            f"{found['memd']['wrong_replaces']} wrong replaces, "
            f"{_cell(found['memd']['accuracy'])} acceptable; HackLM's rule "
            f"{found['hacklm']['wrong_skips']} and {found['hacklm']['wrong_replaces']}, "
            f"{_cell(found['hacklm']['accuracy'])}"
        )
    if settings.apart and CODING_MEMORY.is_dir():
        report["apart"] = apart(CODING_MEMORY)
        found = report["apart"]
        print(
            f"\nDistinct memories of one file not stored apart: {len(found['not_apart'])} of "
            f"{found['ordered_pairs']:,} ordered pairs ({found['files']} files)"
        )
    if "timing" in report:
        t = report["timing"]
        print(
            f"\nTime to decide a pair (median, new texts): memd {t['memd_judge_us']:.0f} us, "
            f"HackLM's rule {t['hacklm_rule_us']:.0f} us"
        )
    if "targets" in report:
        print()
        print_verdicts(report["targets"])
    save(report, output)
    return report


def main(argv: Sequence[str] | None = None) -> None:
    settings_main(
        argv,
        name="write_decisions",
        description=__doc__,
        quick_help="one pair of each class",
        run=run,
        full=FULL,
        quick=QUICK,
    )


if __name__ == "__main__":
    main()
