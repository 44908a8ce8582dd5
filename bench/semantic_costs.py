"""What semantic search costs beside the lexical path, measured in one run (issue 20).

Corpus and questions: `bench.query.make_corpus` (one-sentence developer rules from combined
vocabularies, most with a tool or module detail) spread over the five category files of one
workspace, and `make_questions`: distinct questions an agent would ask, generated from question
templates over the same vocabularies (deterministic, seeded; no data set is read).

Protocol, at each size of `SIZES` (1k and 10k entries), each daemon a real `memd serve`
subprocess with private state and its own XDG cache (`bench._daemon.running_daemon`):
- Semantic off (`semantic = false`): the workspace is written, loaded by a first query, warmed,
  then every question is asked once in mode auto and once in mode lexical (interleaved, the
  order alternating) through `memd_client.Client.query` (limit 10). VmRSS and VmHWM from
  /proc/<pid>/status after the queries.
- Semantic on: timed from the spawn. Once it serves, the workspace is written (that write is
  not counted), one mode auto query asks for the model and the vectors; `status` is polled
  every `POLL_S` until the model is ready and until it holds a vector for every distinct entry
  text (then `stats` confirms the workspace is complete). Model load = ready - first answer
  (the daemon asks for the model just before it answers); embedding = complete - ready, and
  texts/s = distinct texts / embedding. VmRSS at complete; then every question is asked in mode
  lexical and in mode semantic (hybrid), interleaved as above; VmRSS and VmHWM after.
- In process: `memd.semantic.embedder.load()` timed, `embed` on batches of the daemon's batch
  size over `THROUGHPUT_TEXTS` corpus texts (texts/s), `embed([question])` per question; and the
  steps a hybrid query adds in the daemon (`memd.server.methods.search`' `Search.rank` and
  `_fuse`, without the usage boost), each timed at the largest size on the same corpus (random
  unit vectors stand in for the entries', which costs the same): the lexical ranking of the hits
  that can be keyword matches (the lexical path ranks the top 10 instead), embedding the question,
  the dot product with the best rows picked and the rest counted, the fusion of those.
- Install size: the packages the `semantic` extra adds (its requirements in pyproject.toml and
  theirs, recursively, as importlib.metadata finds them installed, minus what the core
  dependencies pull in already), each the sum of the files its metadata lists, MB = 10^6 bytes.

Target (issue 20): hybrid p50 within `TARGET_DELTA_MS` (3 ms) of lexical at 10k entries (same
daemon, mode semantic - mode lexical); judged only when 10k is measured. Figures go to stdout as
Markdown tables and to `bench/results/semantic_costs.json` (`semantic_costs-quick.json` with
`--quick`: 50 and 200 entries, 20 questions). Without the extra it prints one line and skips.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import random
import statistics
import time
import tomllib
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from bench._daemon import percentile, running_daemon
from bench._report import RESULTS_DIR, commit, print_verdicts, save
from bench.lifecycle import proc_status_kb
from bench.query import _MODULES, _TOOLS, make_corpus, write_workspace
from bench.search_speed import _NOUNS, _VERBS, _pick
from memd.core.format.categories import Category
from memd.core.format.mdformat import Entry
from memd_client import Client, protocol as p

SIZES = (1_000, 10_000)
QUICK_SIZES = (50, 200)
QUESTIONS = 500
QUICK_QUESTIONS = 20
WARMUP = 10
THROUGHPUT_TEXTS = 2_000
QUICK_THROUGHPUT_TEXTS = 64
BREAKDOWN_QUESTIONS = 100
QUICK_BREAKDOWN_QUESTIONS = 10
LIMIT = 10
POLL_S = 0.05
QUERY_TIMEOUT = 120.0
EMBED_TIMEOUT = 900.0
SEED = 2026_11_25
TARGET_DELTA_MS = 3.0
TARGET_SIZE = 10_000
MB = 1e6
MIB = 1024 * 1024
PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"

PATHS: dict[str, str] = {
    "off_auto": "semantic off, mode auto",
    "off_lexical": "semantic off, mode lexical",
    "on_lexical": "semantic on, mode lexical",
    "on_hybrid": "semantic on, mode semantic (hybrid)",
}
STEPS: dict[str, str] = {
    "lexical_strong": "lexical ranking, every hit of at least fusion.STRONG",
    "lexical_top": "lexical ranking, top 10 (what the lexical path does)",
    "embed": "embed the question (one model run)",
    "nearest": "dot product, best rows, the rest counted (memd.semantic.nearest)",
    "fuse": "fusion.fuse over the keyword hits and the best rows",
}

_QUESTION_TEMPLATES = (
    "how do we {v} the {n}?",
    "what is the rule for the {n} in the {m} service?",
    "should I {v} the {n} before I {v2} the {n2}?",
    "can I {v} the {n} directly with {t}?",
    "which {n} does the {m} module use for the {n2}?",
    "where do we {v} the {n} when using {t}?",
    "is it ok to {v} the {n} from the {n2}?",
    "why shouldn't I {v} the {n} in {t}?",
    "what's our policy on the {n} and the {n2}?",
    "how should {t} handle the {n}?",
    "when do we {v} the {n} in the {m} worker?",
    "any gotchas with {t} and the {n}?",
    "what must happen before we {v} a {n}?",
    "who is allowed to {v} the {n} of the {m} app?",
    "do we still {v} {n}s with {t} or something else?",
)


# ---------------------------------------------------------------------------- inputs


def make_questions(count: int, seed: int = SEED) -> list[str]:
    """Return `count` distinct questions from templates over the corpus vocabularies."""
    rng = random.Random(seed)
    found: dict[str, None] = {}
    while len(found) < count:
        template = rng.choice(_QUESTION_TEMPLATES)
        question = template.format(
            v=_pick(rng, _VERBS),
            v2=_pick(rng, _VERBS),
            n=_pick(rng, _NOUNS),
            n2=_pick(rng, _NOUNS),
            t=rng.choice(_TOOLS),
            m=rng.choice(_MODULES),
        )
        found[question[0].upper() + question[1:]] = None
    return list(found)


def _contents(corpus: dict[Category, list[Entry]]) -> list[str]:
    return [entry.content for entries in corpus.values() for entry in entries]


def _ms(values: Iterable[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "p50_ms": percentile(ordered, 0.5),
        "p95_ms": percentile(ordered, 0.95),
        "mean_ms": statistics.fmean(ordered),
        "samples": float(len(ordered)),
    }


def _timed_modes(
    client: Client, questions: Sequence[str], modes: tuple[p.QueryMode, p.QueryMode]
) -> tuple[list[float], list[float]]:
    """Ask every question in both modes (the order alternating); ms per query for each mode."""
    timings: tuple[list[float], list[float]] = ([], [])
    for number, question in enumerate(questions):
        order = (0, 1) if number % 2 == 0 else (1, 0)
        for which in order:
            began = time.perf_counter()
            client.query(question, limit=LIMIT, mode=modes[which])
            timings[which].append((time.perf_counter() - began) * 1000.0)
    return timings


def _warm(client: Client, questions: Sequence[str], modes: Iterable[p.QueryMode]) -> None:
    for mode in modes:
        for question in questions[:WARMUP]:
            client.query(question, limit=LIMIT, mode=mode)


def _rss_mib(pid: int) -> dict[str, float]:
    return {
        "rss_mib": proc_status_kb(pid, "VmRSS") / 1024,
        "peak_mib": proc_status_kb(pid, "VmHWM") / 1024,
    }


# ---------------------------------------------------------------------------- daemons


def lexical_daemon(corpus: dict[Category, list[Entry]], questions: Sequence[str]) -> dict[str, Any]:
    """A daemon with semantic search off: query latency in modes auto and lexical, its memory."""
    with running_daemon(private_state=True) as (socket_path, root):
        workspace = root / "ws"
        write_workspace(workspace, corpus)
        with Client(socket_path, workspace=workspace, timeout=QUERY_TIMEOUT) as client:
            pid = client.status().pid
            began = time.perf_counter()
            client.query(questions[0], limit=LIMIT)  # load and index before anything is timed
            first_ms = (time.perf_counter() - began) * 1000.0
            _warm(client, questions, ("auto", "lexical"))
            auto, lexical = _timed_modes(client, questions, ("auto", "lexical"))
            memory = _rss_mib(pid)
    return {
        "first_query_ms": first_ms,
        "off_auto": _ms(auto),
        "off_lexical": _ms(lexical),
        "memory": memory,
    }


def semantic_daemon(
    corpus: dict[Category, list[Entry]],
    questions: Sequence[str],
    executable: str | None = None,
) -> dict[str, Any]:
    """A daemon with semantic search on (this tree's, or the `memd` program `executable`): the
    time from its spawn to complete vectors, query latency in modes lexical and semantic, its
    memory at complete and after the queries."""
    distinct = len(set(_contents(corpus)))
    spawned = time.perf_counter()
    with running_daemon(private_state=True, semantic=True, executable=executable) as (
        socket_path,
        root,
    ):
        serving = time.perf_counter()
        workspace = root / "ws"
        write_workspace(workspace, corpus)
        written = time.perf_counter()
        with Client(socket_path, workspace=workspace, timeout=QUERY_TIMEOUT) as client:
            pid = client.status().pid
            first = client.query(questions[0], limit=LIMIT, mode="auto")
            answered = time.perf_counter()
            ready = _poll(client, lambda info: info.state == "ready")
            complete = _poll(client, lambda info: info.vectors >= distinct)
            stats = client.stats()
            if not 0 < stats.semantic_entries == stats.semantic_vectors_ready:
                raise RuntimeError(f"vectors incomplete after the cache held {distinct}: {stats}")
            at_complete = _rss_mib(pid)
            _warm(client, questions, ("lexical", "semantic"))
            lexical, hybrid = _timed_modes(client, questions, ("lexical", "semantic"))
            after = _rss_mib(pid)
    embedding_s = complete - ready
    return {
        "distinct_texts": float(distinct),
        "first_mode": first.mode,
        "spawn_to_serving_s": serving - spawned,
        "write_s": written - serving,
        "first_query_ms": (answered - written) * 1000.0,
        "model_load_s": ready - answered,
        "embedding_s": embedding_s,
        "texts_per_s": distinct / embedding_s if embedding_s > 0 else float("inf"),
        "first_query_to_complete_s": complete - written,
        "spawn_to_complete_s": complete - spawned - (written - serving),
        "on_lexical": _ms(lexical),
        "on_hybrid": _ms(hybrid),
        "memory_at_complete": at_complete,
        "memory": after,
    }


def _poll(client: Client, done: Callable[[p.SemanticInfo], bool]) -> float:
    """Poll `status` every `POLL_S` until `done(its semantic info)`; return when it was seen."""
    deadline = time.monotonic() + EMBED_TIMEOUT
    while time.monotonic() < deadline:
        info = client.status().semantic
        if info is None or info.state == "off":
            raise RuntimeError(f"semantic search is off in the daemon: {info}")
        if done(info):
            return time.perf_counter()
        time.sleep(POLL_S)
    raise RuntimeError(f"semantic search did not get there within {EMBED_TIMEOUT:g} s")


# ---------------------------------------------------------------------------- in process


def in_process(
    corpus: dict[Category, list[Entry]],
    questions: Sequence[str],
    *,
    throughput_texts: int,
    breakdown_questions: int,
) -> dict[str, Any]:
    """The model in this process: load time, texts/s on the daemon's batches, one question's
    embedding, and the steps a hybrid query adds, each timed alone on `corpus`."""
    from memd.semantic import embedder as model
    from memd.server.semantic import BATCH

    began = time.perf_counter()
    embedder = model.load()
    load_s = time.perf_counter() - began
    texts = _contents(corpus)
    sample = (texts * (throughput_texts // max(1, len(texts)) + 1))[:throughput_texts]
    embedder.embed(sample[:BATCH])  # the first run allocates; not counted
    began = time.perf_counter()
    for start in range(0, len(sample), BATCH):
        embedder.embed(sample[start : start + BATCH])
    throughput_s = time.perf_counter() - began
    one: list[float] = []
    for question in questions:
        began = time.perf_counter()
        embedder.embed([question])
        one.append((time.perf_counter() - began) * 1000.0)
    return {
        "model_load_s": load_s,
        "batch": float(BATCH),
        "throughput_texts": float(len(sample)),
        "texts_per_s": len(sample) / throughput_s,
        "embed_question": _ms(one),
        "breakdown": _breakdown(embedder, corpus, questions[:breakdown_questions]),
    }


def _breakdown(
    embedder: Any, corpus: dict[Category, list[Entry]], questions: Sequence[str]
) -> dict[str, Any]:
    """p50 ms of each step a hybrid query adds (see `STEPS`), on `corpus`."""
    import numpy as np

    from memd.core.search import fusion, ranking
    from memd.semantic import nearest
    from memd.semantic.vectors import text_key

    indexes = [(category, ranking.build_index(entries)) for category, entries in corpus.items()]
    generator = np.random.default_rng(SEED)
    parts = []
    for category, entries in corpus.items():
        matrix = generator.standard_normal((len(entries), embedder.dimensions))
        matrix = (matrix / np.linalg.norm(matrix, axis=1, keepdims=True)).astype(np.float32)
        keys = [text_key(entry.content) for entry in entries]
        parts.append((category, nearest.Rows(entries, keys, matrix)))
    layout = nearest.Layout(parts)
    steps: dict[str, list[float]] = {step: [] for step in STEPS}
    clock = time.perf_counter
    for question in questions:
        # The steps of memd.server.methods.search.Search.rank and _fuse (no tags, no boost).
        began = clock()
        strong = ranking.search(indexes, question, limit=layout.size, min_score=fusion.STRONG)
        lexical = {layout.row(hit.key, hit.entry): hit.score for hit in strong.hits}
        ranked = clock()
        vector = embedder.embed([question])[0]
        embedded = clock()
        near = nearest.nearest(
            vector,
            layout,
            want=LIMIT + len(lexical),
            named=lexical,
            counted=fusion.semantic_result,
        )
        assert near is not None, "the model gave this question no usable vector"
        cosine, _ = near
        compared = clock()
        for result in fusion.fuse(lexical, cosine, limit=len(cosine) or 1)[:LIMIT]:
            layout.entry(result.key)  # type: ignore[arg-type]
        fused = clock()
        ranking.search(indexes, question, limit=LIMIT)
        done = clock()
        for step, seconds in (
            ("lexical_strong", ranked - began),
            ("lexical_top", done - fused),
            ("embed", embedded - ranked),
            ("nearest", compared - embedded),
            ("fuse", fused - compared),
        ):
            steps[step].append(seconds * 1000.0)
    return {
        "entries": float(layout.size),
        "questions": float(len(questions)),
        "p50_ms": {step: percentile(sorted(values), 0.5) for step, values in steps.items()},
    }


# ---------------------------------------------------------------------------- install size


def install_size(pyproject: Path = PYPROJECT) -> dict[str, Any]:
    """The installed packages the `semantic` extra adds and their sizes (see the protocol)."""
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    extra = _closure(project["optional-dependencies"]["semantic"])
    core = _closure(project["dependencies"])
    packages: dict[str, dict[str, Any]] = {}
    for name, found in sorted(extra.items()):
        if name in core:
            continue
        if found is None:
            packages[name] = {"version": None, "files": 0, "mb": 0.0}
            continue
        files = [found.locate_file(path) for path in found.files or ()]
        sizes = [Path(str(path)).stat().st_size for path in files if Path(str(path)).is_file()]
        packages[name] = {"version": found.version, "files": len(sizes), "mb": sum(sizes) / MB}
    return {
        "packages": packages,
        "already_core": sorted(name for name in extra if name in core),
        "total_mb": sum(package["mb"] for package in packages.values()),
    }


def _closure(requirements: Iterable[str]) -> dict[str, importlib.metadata.Distribution | None]:
    """Every distribution `requirements` pull in, recursively (None: required, not installed);
    requirements behind an extra or a marker that does not hold here are left out."""
    from packaging.requirements import Requirement  # onnxruntime requires it
    from packaging.utils import canonicalize_name

    found: dict[str, importlib.metadata.Distribution | None] = {}
    todo = list(requirements)
    while todo:
        requirement = Requirement(todo.pop())
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue
        name = canonicalize_name(requirement.name)
        if name in found:
            continue
        try:
            distribution = importlib.metadata.distribution(requirement.name)
        except importlib.metadata.PackageNotFoundError:
            found[name] = None
            continue
        found[name] = distribution
        todo.extend(distribution.requires or ())
    return found


# ---------------------------------------------------------------------------- the run


def run(
    *,
    sizes: Sequence[int] = SIZES,
    questions: int = QUESTIONS,
    throughput_texts: int = THROUGHPUT_TEXTS,
    breakdown_questions: int = BREAKDOWN_QUESTIONS,
    baselines: Sequence[str] = (),
    output: Path | None = None,
) -> dict[str, Any]:
    """Measure every cost at every size, print the tables, write the report. Each of
    `baselines` (another `memd` program: a base commit's) is measured with semantic search on
    beside this tree's daemon at each size, in the same run.

    Returns:
        The report: "sizes" (per size: "off" and "on", each daemon's figures, and "baselines":
        each baseline's "on"), "in_process", "install", "target", "seconds".
    """
    began = time.perf_counter()
    asked = make_questions(questions)
    by_size: dict[str, dict[str, Any]] = {}
    for size in sizes:
        corpus = make_corpus(size)
        by_size[str(size)] = {
            "off": lexical_daemon(corpus, asked),
            "on": semantic_daemon(corpus, asked),
            "baselines": {path: semantic_daemon(corpus, asked, path) for path in baselines},
        }
    largest = make_corpus(max(sizes))
    report: dict[str, Any] = {
        "benchmark": "semantic_costs",
        "commit": commit(),
        "questions": len(asked),
        "limit": LIMIT,
        "sizes": by_size,
        "in_process": in_process(
            largest,
            asked,
            throughput_texts=throughput_texts,
            breakdown_questions=breakdown_questions,
        ),
        "install": install_size(),
    }
    report["target"] = _target(by_size)
    report["seconds"] = time.perf_counter() - began
    print_report(report)
    save(report, output)
    return report


def _added_ms(steps: dict[str, float]) -> float:
    """What a hybrid query adds by its steps' p50s: the lexical hits of at least fusion.STRONG,
    embedding the question, the dot product and the fusion, less the lexical top 10 (which the
    lexical path does instead)."""
    spent = steps["lexical_strong"] + steps["embed"] + steps["nearest"] + steps["fuse"]
    return spent - steps["lexical_top"]


def _delta(figures: dict[str, Any], key: str, baseline: str | None = None) -> float:
    on = figures["on"] if baseline is None else figures["baselines"][baseline]
    value: float = on["on_hybrid"][key] - on["on_lexical"][key]
    return value


def _target(by_size: dict[str, dict[str, Any]]) -> dict[str, Any]:
    figures = by_size.get(str(TARGET_SIZE))
    if figures is None:
        return {"judged": False, "text": f"not judged ({TARGET_SIZE:,} entries not measured)"}
    delta = _delta(figures, "p50_ms")
    met = delta <= TARGET_DELTA_MS
    verdict = "met" if met else "NOT met"
    lexical = figures["on"]["on_lexical"]["p50_ms"]
    base = "".join(
        f"; baseline {path}: {_delta(figures, 'p50_ms', path):+.2f} ms"
        for path in figures.get("baselines", {})
    )
    return {
        "judged": True,
        "delta_p50_ms": delta,
        "baselines_delta_p50_ms": {
            path: _delta(figures, "p50_ms", path) for path in figures.get("baselines", {})
        },
        "met": met,
        "text": f"hybrid p50 {delta:+.2f} ms over lexical ({lexical:.2f} ms) at "
        f"{TARGET_SIZE:,} entries{base} (target <= {TARGET_DELTA_MS:g} ms: {verdict})",
    }


def print_report(report: dict[str, Any]) -> None:
    """Print the report's Markdown tables."""
    sizes = report["sizes"]
    print(
        f"Semantic search costs beside lexical ({report['questions']} distinct questions, "
        f"limit {report['limit']}, Client.query over the socket)\n"
    )
    print("| entries | path | p50 ms | p95 ms | mean ms |")
    print("|---|---|---|---|---|")
    for size, figures in sizes.items():
        for path, label in PATHS.items():
            row = figures["off" if path.startswith("off") else "on"][path]
            print(
                f"| {int(size):,} | {label} | {row['p50_ms']:.2f} | {row['p95_ms']:.2f} | "
                f"{row['mean_ms']:.2f} |"
            )
    print("\n| entries | hybrid - lexical p50 ms | p95 ms | hybrid - semantic-off auto p50 ms |")
    print("|---|---|---|---|")
    for size, figures in sizes.items():
        versus_off = figures["on"]["on_hybrid"]["p50_ms"] - figures["off"]["off_auto"]["p50_ms"]
        print(
            f"| {int(size):,} | {_delta(figures, 'p50_ms'):+.2f} | "
            f"{_delta(figures, 'p95_ms'):+.2f} | {versus_off:+.2f} |"
        )
        for path, base in figures.get("baselines", {}).items():
            print(
                f"| {int(size):,}, baseline {path} (lexical p50 "
                f"{base['on_lexical']['p50_ms']:.2f}, hybrid {base['on_hybrid']['p50_ms']:.2f}) | "
                f"{_delta(figures, 'p50_ms', path):+.2f} | "
                f"{_delta(figures, 'p95_ms', path):+.2f} | |"
            )
    print(
        "\n| entries | distinct texts | spawn to serving s | first query ms (semantic off) | "
        "model load s | embedding s | texts/s (daemon) | spawn to vectors complete s |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for size, figures in sizes.items():
        on = figures["on"]
        print(
            f"| {int(size):,} | {on['distinct_texts']:,.0f} | {on['spawn_to_serving_s']:.2f} | "
            f"{on['first_query_ms']:.0f} ({figures['off']['first_query_ms']:.0f}) | "
            f"{on['model_load_s']:.2f} | {on['embedding_s']:.1f} | "
            f"{on['texts_per_s']:.0f} | {on['spawn_to_complete_s']:.1f} |"
        )
    print(
        "\n| entries | RSS off, after queries MiB | RSS on, vectors complete MiB | "
        "RSS on, after queries MiB | added MiB | peak off MiB | peak on MiB |"
    )
    print("|---|---|---|---|---|---|---|")
    for size, figures in sizes.items():
        off, on = figures["off"]["memory"], figures["on"]["memory"]
        complete = figures["on"]["memory_at_complete"]
        print(
            f"| {int(size):,} | {off['rss_mib']:.0f} | {complete['rss_mib']:.0f} | "
            f"{on['rss_mib']:.0f} | {on['rss_mib'] - off['rss_mib']:+.0f} | "
            f"{off['peak_mib']:.0f} | {on['peak_mib']:.0f} |"
        )
    own = report["in_process"]
    question = own["embed_question"]
    print("\n| in process | figure |")
    print("|---|---|")
    print(f"| model load (embedder.load()) | {own['model_load_s']:.2f} s |")
    print(
        f"| embedding, batches of {own['batch']:.0f} over {own['throughput_texts']:,.0f} texts | "
        f"{own['texts_per_s']:.0f} texts/s |"
    )
    print(
        f"| embedding one question | p50 {question['p50_ms']:.2f} ms, "
        f"p95 {question['p95_ms']:.2f} ms |"
    )
    breakdown = own["breakdown"]
    print(
        f"\n| step of a hybrid query ({breakdown['entries']:,.0f} entries, in process) | p50 ms |"
    )
    print("|---|---|")
    for step, label in STEPS.items():
        print(f"| {label} | {breakdown['p50_ms'][step]:.2f} |")
    added = _added_ms(breakdown["p50_ms"])
    measured = _delta(sizes[str(int(breakdown["entries"]))], "p50_ms")
    print(
        "| what hybrid adds: lexical hits + embed + dot product + fusion - top 10 | "
        f"{added:.2f} (through the daemon at this size: {measured:+.2f}) |"
    )
    install = report["install"]
    print("\n| package the extra adds | version | MB |")
    print("|---|---|---|")
    for name, package in install["packages"].items():
        version = package["version"] or "not installed"
        print(f"| {name} | {version} | {package['mb']:.1f} |")
    print(f"| **total** | | **{install['total_mb']:.1f}** |")
    if install["already_core"]:
        print(f"(also required, already core dependencies: {', '.join(install['already_core'])})")
    print()
    print_verdicts({"hybrid within 3 ms of lexical": report["target"]})


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark from the command line (`--quick`: 50 and 200 entries, 20 questions)."""
    parser = argparse.ArgumentParser(prog="python -m bench.semantic_costs", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="50 and 200 entries, 20 questions")
    parser.add_argument(
        "--sizes", type=lambda text: [int(n) for n in text.split(",")], help="say 10000"
    )
    parser.add_argument(
        "--baseline-daemon",
        action="append",
        default=[],
        metavar="PATH",
        help="another memd program (a base commit's) measured beside this tree's, same run",
    )
    args = parser.parse_args(argv)
    from memd.semantic.embedder import missing_extra  # imports none of the extra

    missing = missing_extra()
    if missing is not None:
        print(f"semantic_costs: {missing}; skipped")
        return
    if args.quick:
        run(
            sizes=QUICK_SIZES,
            questions=QUICK_QUESTIONS,
            throughput_texts=QUICK_THROUGHPUT_TEXTS,
            breakdown_questions=QUICK_BREAKDOWN_QUESTIONS,
            baselines=args.baseline_daemon,
            output=RESULTS_DIR / "semantic_costs-quick.json",
        )
    else:
        run(
            sizes=args.sizes or SIZES,
            baselines=args.baseline_daemon,
            output=RESULTS_DIR / "semantic_costs.json",
        )


if __name__ == "__main__":
    main()
