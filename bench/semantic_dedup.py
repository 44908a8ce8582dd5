"""May semantic similarity serve as a second signal in the write-time duplicate check? (issue 20)

The question: "The write-time duplicate check may use semantic similarity as a second signal
only if measurements on write-decisions-dev show it catches paraphrased duplicates without a
single extra wrong skip." memd's first rule is never to lose a memory: a new rule or value is
never thrown away as a duplicate. This bench measures candidate rules; it changes nothing in
the daemon.

Protocol, in process, for every pair of three labelled sets (`bench.write_decisions` reads the
same files):
- `dev`: `../shared/data/write-decisions-dev/pairs.jsonl` (`MEMD_WRITE_DECISIONS_DIR`), labelled
  skip / update / store (update with or without conflict);
- `independent`: `bench/data/write-decisions-independent.jsonl`, same classes, written by
  writers who never saw the dev pairs;
- `adversarial`: `bench/data/write-decisions-adversarial.jsonl`, written to make memd lose
  data, each pair with the verdicts that are acceptable (`allowed`), stored in `Decision`.
1. memd's verdict: the existing entry alone in its category file (`write_decisions.
   category_file`), the new text stored with `dry_run` through `transitions.apply` (what the
   actor runs), keeping the verdict, the judge's relation (`no_candidate` when the lexical
   index does not even offer the entry) and its word overlap.
2. The cosine of the two texts (whitespace runs made one space, as a store does) under the
   shipped model (`memd.semantic.embedder.load()`, MiniLM-L6 int8, unit vectors).
3. Each second-signal rule, at each threshold t, changes memd's verdict on the pairs it may
   touch when cosine >= t, and never touches a pair memd skips:
   - `store|update -> skip`: the issue's form, any store or update;
   - `update -> skip`: only where the lexical judge already says "the same rule" (update);
   - `reworded -> skip`: only where the judge's relation is REWORDED (half the content words
     shared, and no value, choice, polarity, subject, role, detail, scope or tag change found);
   - `unexplained -> skip`: where the judge found no specific difference (REWORDED, DIFFERENT,
     UNRELATED, or no candidate at all);
   - `store -> update`: never a skip, so never a lost memory: a store becomes an update (the
     old text goes to the archive); its risk is replacing a valid rule;
   - `unexplained store -> update`: the same, only for DIFFERENT, UNRELATED, no candidate.

Figures, per rule, threshold and set; only pairs whose verdict the rule changes count:
- caught: duplicates (labelled skip; adversarial: skip allowed) that memd did not skip and the
  rule now skips (skip rules) or merges into the entry (store -> update rules);
- wrong skips: pairs not labelled skip (adversarial: skip not allowed) the rule now skips: a
  new rule or value thrown away;
- wrong replaces: pairs labelled store (adversarial: only store allowed) that memd stored and the
  rule now updates: a valid rule replaced.
Also: the frontier of each rule (the highest cosine among the pairs it must not change: a
threshold at or below it makes a wrong skip or replace; how many duplicates lie above it), the
cosine distribution (n, min, median, max) per label and set, and the pairs closest to the line.
Markdown tables go to stdout, the figures and every pair's cosine to
`bench/results/semantic_dedup.json` (`--quick`: one pair a class, 1 adversarial pair in 24).
Needs the semantic extra; without it the run says so in one line and stops.
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import msgspec

from bench._report import RESULTS_DIR, commit, save
from bench.write_decisions import (
    ADVERSARIAL,
    INDEPENDENT,
    VERDICT_OF_ACTION,
    Pair,
    Probe,
    dev_path,
    load_pairs,
    store_outcome,
)
from memd.semantic.embedder import Embedder, SemanticUnavailable, load, missing_extra

THRESHOLDS = (0.80, 0.85, 0.90, 0.92, 0.94, 0.95, 0.96, 0.97, 0.98, 0.99, 0.995)
NO_CANDIDATE = "no_candidate"
"""The relation of a store where the lexical index offered no entry to judge."""
UNEXPLAINED = frozenset({"reworded", "different", "unrelated", NO_CANDIDATE})
"""Relations where memd's judge found no specific difference between the texts."""
SETS = ("dev", "independent", "adversarial")


class Row(NamedTuple):
    """One pair: its labels, memd's decision and the texts' cosine."""

    set: str
    id: str
    group: str
    """The pair's class (adversarial: its group)."""
    label: str
    """skip, update, update+conflict or store (adversarial: the allowed verdicts, "/"-joined)."""
    allowed: frozenset[str]
    """The verdicts that are right (adversarial: acceptable)."""
    verdict: str
    """memd's verdict."""
    relation: str
    """memd's judge's relation (`NO_CANDIDATE` when the entry was not a candidate)."""
    cosine: float
    existing: str
    new: str

    @property
    def duplicate(self) -> bool:
        """A skip is right (or acceptable) here."""
        return "skip" in self.allowed

    @property
    def store_only(self) -> bool:
        """Only a store keeps both rules: an update would replace a valid one."""
        return self.allowed == frozenset({"store"})


class Rule(NamedTuple):
    """Where memd's verdict may be changed into `to` when the cosine is at least a threshold."""

    name: str
    to: str
    touches: Callable[[Row], bool]

    def verdict(self, row: Row, threshold: float) -> str:
        """The verdict under this rule (a skip is never touched)."""
        if row.verdict != "skip" and self.touches(row) and row.cosine >= threshold:
            return self.to
        return row.verdict

    def harmful(self, row: Row) -> bool:
        """Changing this pair would lose data: a wrong skip or a wrong replace."""
        if self.to == "skip":
            return not row.duplicate
        return row.verdict == "store" and row.store_only


RULES = (
    Rule("store|update -> skip", "skip", lambda row: row.verdict in ("store", "update")),
    Rule("update -> skip", "skip", lambda row: row.verdict == "update"),
    Rule("reworded -> skip", "skip", lambda row: row.relation == "reworded"),
    Rule("unexplained -> skip", "skip", lambda row: row.relation in UNEXPLAINED),
    Rule("store -> update", "update", lambda row: row.verdict == "store"),
    Rule(
        "unexplained store -> update",
        "update",
        lambda row: row.verdict == "store" and row.relation in UNEXPLAINED,
    ),
)


class Settings(NamedTuple):
    per_class: int | None
    """Pairs per class of dev and independent (None: all)."""
    adversarial_step: int
    """Every n-th adversarial pair."""


FULL = Settings(per_class=None, adversarial_step=1)
QUICK = Settings(per_class=1, adversarial_step=24)


# ---------------------------------------------------------------------------- data


def labelled_sets(settings: Settings) -> dict[str, list[tuple[Pair, str, frozenset[str]]]]:
    """Each set found: its pairs, each with its label and the verdicts that are right."""
    found: dict[str, list[tuple[Pair, str, frozenset[str]]]] = {}
    for name, path in (("dev", dev_path()), ("independent", INDEPENDENT)):
        if not path.is_file():
            print(f"{name}: no pairs at {path}; skipped")
            continue
        found[name] = [
            (pair, pair.verdict + ("+conflict" if pair.conflict else ""), frozenset([pair.verdict]))
            for pair in load_pairs(path, settings.per_class)
        ]
    if ADVERSARIAL.is_file():
        lines = ADVERSARIAL.read_bytes().splitlines()[:: settings.adversarial_step]
        probes = [msgspec.json.decode(line, type=Probe) for line in lines]
        found["adversarial"] = [
            (
                Pair(
                    p.id, "Decision", p.existing, p.new, p.allowed[0], False, p.note, class_=p.group
                ),
                "/".join(sorted(p.allowed)),
                frozenset(p.allowed),
            )
            for p in probes
        ]
    return found


def memd_decision(pair: Pair) -> tuple[str, str]:
    """memd's verdict and its judge's relation for storing `pair.new` beside `pair.existing`."""
    outcome = store_outcome(pair)
    relation = outcome.relation.value if outcome.relation is not None else NO_CANDIDATE
    return VERDICT_OF_ACTION[outcome.action], relation


def cosines(embedder: Embedder, pairs: Sequence[tuple[str, str]]) -> list[float]:
    """The cosine of each pair of texts (each distinct text embedded once)."""

    def clean(text: str) -> str:
        return " ".join(text.split())

    texts = sorted({clean(text) for pair in pairs for text in pair})
    vectors = dict(zip(texts, embedder.embed(texts), strict=True))
    return [float(vectors[clean(a)] @ vectors[clean(b)]) for a, b in pairs]


def measure(embedder: Embedder, settings: Settings) -> list[Row]:
    """Every pair of every set found, with memd's decision and the cosine."""
    rows = []
    for name, labelled in labelled_sets(settings).items():
        found = cosines(embedder, [(pair.existing, pair.new) for pair, _, _ in labelled])
        for (pair, label, allowed), cosine in zip(labelled, found, strict=True):
            verdict, relation = memd_decision(pair)
            rows.append(
                Row(
                    name,
                    pair.id,
                    pair.class_,
                    label,
                    allowed,
                    verdict,
                    relation,
                    cosine,
                    pair.existing,
                    pair.new,
                )
            )
    return rows


# ---------------------------------------------------------------------------- figures


def effect(rule: Rule, threshold: float, rows: Sequence[Row]) -> dict[str, int]:
    """What `rule` at `threshold` changes on `rows` (see the module docstring)."""
    caught = wrong_skips = wrong_replaces = changed = 0
    for row in rows:
        verdict = rule.verdict(row, threshold)
        if verdict == row.verdict:
            continue
        changed += 1
        if row.duplicate:
            caught += 1
        if verdict == "skip" and not row.duplicate:
            wrong_skips += 1
        if verdict == "update" and row.store_only:
            wrong_replaces += 1
    return {
        "changed": changed,
        "caught": caught,
        "wrong_skips": wrong_skips,
        "wrong_replaces": wrong_replaces,
    }


def frontier(rule: Rule, rows: Sequence[Row]) -> dict[str, Any]:
    """The highest cosine among the pairs `rule` touches and must not change (None if none), the
    duplicates it touches, and how many of them lie above that cosine."""
    touched = [row for row in rows if row.verdict != "skip" and rule.touches(row)]
    harmful = [row.cosine for row in touched if rule.harmful(row)]
    line = max(harmful) if harmful else None
    duplicates = [row.cosine for row in touched if row.duplicate]
    return {
        "line": line,
        "duplicates": len(duplicates),
        "above": sum(1 for c in duplicates if line is None or c > line),
        "max_duplicate": max(duplicates) if duplicates else None,
    }


def distribution(values: Sequence[float]) -> dict[str, Any]:
    if not values:
        return {"n": 0, "min": None, "median": None, "max": None}
    return {
        "n": len(values),
        "min": min(values),
        "median": statistics.median(values),
        "max": max(values),
    }


def distributions(rows: Sequence[Row]) -> dict[str, dict[str, Any]]:
    """Cosines per label, and of the duplicates and non-duplicates memd does not skip."""
    groups: dict[str, list[float]] = {}
    for row in sorted(rows, key=lambda row: row.label):
        groups.setdefault(row.label, []).append(row.cosine)
    groups["duplicates memd does not skip"] = [
        r.cosine for r in rows if r.duplicate and r.verdict != "skip"
    ]
    groups["non-duplicates memd does not skip"] = [
        r.cosine for r in rows if not r.duplicate and r.verdict != "skip"
    ]
    return {label: distribution(values) for label, values in groups.items()}


# ---------------------------------------------------------------------------- report


def _f(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _text(text: str, width: int = 60) -> str:
    text = text.replace("|", "\\|")
    return text if len(text) <= width else text[: width - 1] + "…"


def print_distributions(by_set: dict[str, list[Row]]) -> dict[str, Any]:
    found = {}
    for name, rows in by_set.items():
        found[name] = table = distributions(rows)
        print(f"\nCosine of the two texts, {name} ({len(rows)} pairs)\n")
        print("| label | pairs | min | median | max |")
        print("|---|---|---|---|---|")
        for label, d in table.items():
            print(f"| {label} | {d['n']} | {_f(d['min'])} | {_f(d['median'])} | {_f(d['max'])} |")
    return found


def print_sweep(by_set: dict[str, list[Row]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    names = list(by_set)
    for rule in RULES:
        found[rule.name] = per = {}
        print(f"\nRule `{rule.name}` when cosine >= t: caught / wrong skips / wrong replaces\n")
        print("| t | " + " | ".join(names) + " |")
        print("|---|" + "---|" * len(names))
        for threshold in THRESHOLDS:
            per[str(threshold)] = effects = {n: effect(rule, threshold, by_set[n]) for n in names}
            cells = " | ".join(
                f"{e['caught']} / {e['wrong_skips']} / {e['wrong_replaces']}"
                for e in effects.values()
            )
            print(f"| {threshold} | {cells} |")
    return found


def print_frontiers(by_set: dict[str, list[Row]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    everything = [row for rows in by_set.values() for row in rows]
    print(
        "\nFrontier: the highest cosine among the pairs a rule touches and must not change (a "
        "threshold at or below it loses data), the duplicates it touches, how many lie above "
        "that line, and the highest duplicate cosine\n"
    )
    print("| rule | set | must-not-change max | duplicates touched | above the line | max dup |")
    print("|---|---|---|---|---|---|")
    for rule in RULES:
        found[rule.name] = per = {n: frontier(rule, rows) for n, rows in by_set.items()}
        per["all"] = frontier(rule, everything)
        for name, f in per.items():
            print(
                f"| {rule.name} | {name} | {_f(f['line'])} | {f['duplicates']} | {f['above']} | "
                f"{_f(f['max_duplicate'])} |"
            )
    return found


def print_closest(by_set: dict[str, list[Row]], count: int = 5) -> None:
    for name, rows in by_set.items():
        open_ = [row for row in rows if row.verdict != "skip"]
        print(f"\n{name}: the non-duplicates closest in cosine, and the duplicates memd misses\n")
        print("| cosine | label | memd | relation | existing | new |")
        print("|---|---|---|---|---|---|")
        worst = sorted((r for r in open_ if not r.duplicate), key=lambda r: -r.cosine)[:count]
        best = sorted((r for r in open_ if r.duplicate), key=lambda r: -r.cosine)[:count]
        for row in [*worst, *best]:
            print(
                f"| {row.cosine:.3f} | {row.label} | {row.verdict} | {row.relation} | "
                f"{_text(row.existing)} | {_text(row.new)} |"
            )


def print_blockers(by_set: dict[str, list[Row]], count: int = 3) -> None:
    """For each rule, the pairs of each set it touches and must not change, highest cosine
    first: the ones that put its line where it is."""
    print("\nWhat each rule would lose first: the pairs it must not change, highest cosine\n")
    print("| rule | set | cosine | label | memd | relation | existing | new |")
    print("|---|---|---|---|---|---|---|---|")
    for rule in RULES:
        for name, rows in by_set.items():
            touched = [r for r in rows if r.verdict != "skip" and rule.touches(r)]
            harmful = sorted((r for r in touched if rule.harmful(r)), key=lambda r: -r.cosine)
            for row in harmful[:count]:
                print(
                    f"| {rule.name} | {name} | {row.cosine:.3f} | {row.label} | {row.verdict} | "
                    f"{row.relation} | {_text(row.existing, 45)} | {_text(row.new, 45)} |"
                )


def conclusion(frontiers: dict[str, Any]) -> list[str]:
    """One line a rule: on each set and on all of them together, how many duplicates some
    threshold catches with no data lost (no wrong skip, no wrong replace), and from which
    cosine; then the answer to the issue's question."""
    lines = []
    for rule in RULES:
        per = frontiers[rule.name]
        parts = [
            f"{name} {f['above']} of {f['duplicates']} at "
            + ("any t" if f["line"] is None else f"t > {f['line']:.3f}")
            for name, f in per.items()
        ]
        lines.append(f"{rule.name}: duplicates caught with no data lost: " + "; ".join(parts))
    on_dev = [rule.name for rule in RULES if frontiers[rule.name].get("dev", {}).get("above")]
    everywhere = [rule.name for rule in RULES if frontiers[rule.name]["all"]["above"]]
    lines.append(
        "on dev alone, a threshold catches a duplicate with no data lost for: "
        + (", ".join(on_dev) or "no rule")
    )
    lines.append(
        "on dev, independent and adversarial together: "
        + (", ".join(everywhere) or "no rule and no threshold does")
    )
    return lines


def run(settings: Settings, *, output: Path | None = None) -> dict[str, Any] | None:
    """Measure every set found; print the tables; save the report (None: no semantic extra)."""
    reason = missing_extra()
    try:
        embedder = load() if reason is None else None
    except SemanticUnavailable as exc:
        reason = exc.message
        embedder = None
    if embedder is None:
        print(f"semantic_dedup: {reason}; skipped")
        return None
    rows = measure(embedder, settings)
    by_set = {name: [row for row in rows if row.set == name] for name in SETS}
    by_set = {name: found for name, found in by_set.items() if found}
    report: dict[str, Any] = {"benchmark": "semantic_dedup", "commit": commit()}
    report["memd"] = {
        name: {
            verdict: sum(1 for row in found if row.verdict == verdict)
            for verdict in ("skip", "update", "store")
        }
        for name, found in by_set.items()
    }
    report["distributions"] = print_distributions(by_set)
    report["sweep"] = print_sweep(by_set)
    report["frontiers"] = frontiers = print_frontiers(by_set)
    print_closest(by_set)
    print_blockers(by_set)
    report["conclusion"] = conclusion(frontiers)
    if settings != FULL:
        report["conclusion"].append("a sample (--quick): the answer is the full run's")
    print()
    for line in report["conclusion"]:
        print(f"- {line}")
    report["pairs"] = [
        {
            "set": row.set,
            "id": row.id,
            "label": row.label,
            "memd": row.verdict,
            "relation": row.relation,
            "cosine": row.cosine,
        }
        for row in rows
    ]
    save(report, output)
    return report


def main(argv: Sequence[str] | None = None) -> None:
    """`python -m bench.semantic_dedup [--quick]`."""
    parser = argparse.ArgumentParser(prog="python -m bench.semantic_dedup", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="one pair a class")
    args = parser.parse_args(argv)
    suffix = "-quick" if args.quick else ""
    run(QUICK if args.quick else FULL, output=RESULTS_DIR / f"semantic_dedup{suffix}.json")


if __name__ == "__main__":
    main()
