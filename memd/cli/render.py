"""How the CLI shows each verb's result: one `render_*` function per result type, returning the
text to print on stdout (escapes are neutralised by the caller, `memd.cli.verbs`).

Rules:
- Formatting only: no I/O and no client calls (a watch line's time of day is the one clock
  read).
- A result's text holds the result alone; what went wrong beside it (a file left out, a
  candidate not stored) is worded here too (`unreadable_lines`) but goes to stderr.
"""

from __future__ import annotations

import datetime

from memd.core.format.render import (
    cleanup_actions,
    entry_text,
    loading_note,
    loading_progress,
    match_label,
    search_mode,
)
from memd.core.search.outcomes import Record
from memd.core.search.procedure_layer import record_note
from memd.mcp_bridge.text import render_history as render_history
from memd_client import protocol as p


def render_event(event: p.Event) -> str:
    """One line for a change notification: time, file, who changed it, and what it holds now."""
    now = datetime.datetime.now().strftime("%H:%M:%S")
    if isinstance(event, p.Resync):
        return f"{now} {event.message}"
    who = "memd" if event.source == "memd" else "by git" if event.git else "outside memd"
    if event.error is not None:
        return f"{now} {event.file} changed ({who}) and cannot be read: {event.error}"
    if event.conflict is not None:
        return f"{now} {event.file} changed ({who}) and is mid-merge: {event.conflict}"
    count = len(event.entries)
    return f"{now} {event.file} changed ({who}): {count} {'entry' if count == 1 else 'entries'}"


def unreadable_lines(problems: list[p.FileProblem], shown: str = "") -> list[str]:
    """One line per category file a read left out because it cannot be read (none for a file
    `shown` already names)."""
    return [
        f"{problem.file} cannot be read, so it was left out: {problem.message}"
        for problem in problems
        if f".memory/{problem.file}" not in shown
    ]


def render_query(result: p.QueryResult, text: str, tags: list[str] | None = None) -> str:
    """Return query results as readable lines, ending with a `loading_note` when they were
    ranked by words alone because semantic search is still loading (the files left out:
    `unreadable_lines`)."""
    loading = result.semantic_loading
    if not result.results:
        tagged = f" tagged {tag_words(tags)}" if tags else ""
        if text.strip():
            missed = f'No memories{tagged} match "{text}".'
            if loading is not None:
                return f"{missed} {loading_note(loading.ready, loading.total, found=False)}"
            return missed
        return f"No memories{tagged}." if tags else "No memories stored yet."
    lines = [
        f"{hit.score:7.3f}  {_text(hit)}  ({_where(hit)}){_matched(hit.match)}{_stale(hit)}"
        + worked(hit.outcomes)
        for hit in result.results
    ]
    shown = len(result.results)
    if result.total > shown:
        lines.append(f"({shown} of {result.total} matches; raise --limit to see more)")
    if loading is not None:
        lines.append(loading_note(loading.ready, loading.total, found=True))
    return "\n".join(lines)


def _text(hit: p.QueryHit) -> str:
    """A hit's text: an entry as its file line shows it, a source's chunk as it is."""
    if hit.source in ("file", "chat"):
        return hit.content
    return entry_text(hit.category, hit.slug, hit.content)


def _where(hit: p.QueryHit) -> str:
    """Where a hit is: `file:line` for the project's memory, `global:file:line` for the
    user-wide memory's, `path:a-b` for a read-only source's chunk, `session <id> <time>
    path:turns a-b` for a past session's."""
    if hit.source == "file":
        return f"{hit.path}:{hit.lines}"
    if hit.source == "chat":
        when = f" {hit.at}" if hit.at else ""
        return f"session {hit.session}{when} {hit.path}:turns {hit.lines}"
    prefix = "global:" if hit.source == "global" else ""
    return f"{prefix}{hit.file}:{hit.line}"


def worked(counts: p.OutcomeCounts | None) -> str:
    """What a procedure's line adds: how often it worked ("" with no reports, or for any other
    entry)."""
    note = "" if counts is None else record_note(Record(counts.successes, counts.failures))
    return f"  ({note})" if note else ""


def _stale(hit: p.QueryHit) -> str:
    """What a stale hit's line adds: what is wrong with it, or for an archived one when and
    why it was archived (nothing for any other)."""
    if hit.archived:
        return f"  (archived {hit.archived_on}: {hit.archived_reason})"
    return f"  (stale: {hit.stale})" if hit.status == "stale" else ""


def render_check(result: p.CheckResult, fixed: dict[tuple[str, int], str] | None = None) -> str:
    """Return a check: each stale entry (they come first) with what is wrong and the fix it
    suggests (or, with `fixed`, what `--fix` did to it: "fixed: now ..." or "not fixed: ..."),
    each entry `--fix` fixed that is no longer stale ("fixed  file:line  its text now"), then
    one line of counts. Entries that are current or cite nothing are only counted."""
    done_by_place = fixed or {}
    lines: list[str] = []
    shown: set[tuple[str, int]] = set()
    for entry in result.entries:
        if entry.status != "stale":
            continue
        text = entry_text(entry.category, entry.slug, entry.content)
        lines.append(f"stale  {entry.file}:{entry.line}  {text}")
        lines.append(f"       {entry.note}")
        done = done_by_place.get((entry.file, entry.line))
        if done is not None:
            lines.append(f"       {done}")
            shown.add((entry.file, entry.line))
        elif entry.fix is not None:
            lines.append(f"       fix: {entry.fix}  (memd check --fix)")
    for (file, line), done in done_by_place.items():
        if (file, line) not in shown:
            outcome, _, what = done.partition(": now ")
            lines.append(f"{outcome}  {file}:{line}  {what}" if what else f"{file}:{line}  {done}")
    lines.append(check_counts(result))
    return "\n".join(lines)


def check_counts(result: p.CheckResult) -> str:
    """One line: how many entries are stale, current and cite nothing that can go stale."""
    counts = result.counts
    total = counts.ok + counts.stale + counts.none
    noun = "memory" if total == 1 else "memories"
    line = (
        f"{total} {noun} checked: {counts.stale} stale, {counts.ok} current, "
        f"{counts.none} citing nothing memd can check"
    )
    if not result.git:
        line = f"{line} (no git here: symbols cannot be checked)"
    return f"{line}\n{result.problem}" if result.problem else line


def _matched(match: str) -> str:
    """What a hybrid hit's line adds about what found it (nothing for a keyword match)."""
    label = match_label(match)
    return f"  {label}" if label else ""


def tag_words(tags: list[str]) -> str:
    """Return tags as the user would write them: "#security and #db"."""
    words = [tag if tag.startswith("#") else f"#{tag}" for tag in tags]
    return " and ".join(words)


def render_entries(result: p.ListResult, tags: list[str] | None = None) -> str:
    """Return entries grouped by file (the files left out: `unreadable_lines`)."""
    if not result.entries:
        return f"No entries tagged {tag_words(tags)}." if tags else "No entries."
    lines: list[str] = []
    current = ""
    for entry in result.entries:
        where = f"global:{entry.file}" if entry.source == "global" else entry.file
        if where != current:
            current = where
            user_wide = ", your user-wide memory" if entry.source == "global" else ""
            lines.append(f"{entry.category} ({entry.file}{user_wide})")
        slug = f"[{entry.slug}] " if entry.slug else ""
        lines.append(f"  {entry.line:>4}  {slug}{entry.content}{worked(entry.outcomes)}")
    return "\n".join(lines)


def render_cleanup(result: p.CleanupResult, apply: str = "memd cleanup --apply") -> str:
    """Return the cleanup plan: the daemon's summary, one line per action (each entry named by
    file, line, slug and a short quote, so two entries with one slug stay apart; a merge's kept
    entry first, then each entry folded into it; why in words), then how to apply it (`apply`:
    the command, with the options that chose this workspace and daemon). Entries whose every
    citation is gone from the code are proposed for the archive ("stale"), or were archived."""
    lines = [result.message]
    lines += [f"  {verb:<6} {text}" for verb, text in cleanup_actions(result)]
    for stale in result.stale:
        verb = "archived" if stale.archived else "stale"
        text = entry_text(stale.category, stale.entry.slug, stale.entry.content)
        lines.append(f"  {verb:<6} {stale.file}:{stale.entry.line} {text} ({stale.why})")
    for old in result.consolidated:
        verb = "archived" if old.archived else "old"
        text = entry_text(old.category, old.entry.slug, old.entry.content)
        lines.append(f"  {verb:<6} {old.file}:{old.entry.line} {text} ({old.why})")
    for lesson in result.promoted:
        done = lesson.stored is not None and lesson.stored.action != "skipped"
        verb = "stored" if done else "lesson"
        lines.append(f"  {verb:<6} {lesson.category}: {lesson.content}")
    changes = result.stale or result.consolidated or result.promoted
    if not result.applied and (result.merged or result.pruned or result.slugged or changes):
        lines.append(f"Run `{apply}` to carry it out.")
    if result.unused:
        lines.append("Not recalled for 180 days (archive candidates; cleanup leaves them):")
    for entry in result.unused:
        text = entry_text(entry.category, entry.slug, entry.content)
        lines.append(f"  unused {entry.file}:{entry.line} {text}")
    return "\n".join(lines)


def render_stats(result: p.StatsResult, origin: str = "") -> str:
    """Return per-category counts as a small table, headed by the workspace and `origin` (how
    it was found, e.g. "found by its .git")."""
    lines = [f"Workspace {result.workspace}" + (f" ({origin})" if origin else "")]
    for row in result.categories:
        flag = "  OVER LIMIT" if row.entries > row.limit else ""
        missing = f"  ERROR: {row.error}" if row.error else "" if row.exists else "  (no file yet)"
        if row.conflict:
            missing = f"  MERGE CONFLICT: {row.conflict}"
        lines.append(
            f"  {row.category:<11} {row.file:<16} {row.entries:>4} / {row.limit}{flag}{missing}"
        )
    for source in result.sources:
        lines.append(f"  {'Source':<11} {source.path:<16} {source.chunks:>4} chunks (read-only)")
    lines += [f"  Left out: {refused}" for refused in result.sources_refused]
    if result.chat_sessions:
        lines.append(
            f"  {'Chat':<11} {result.chat_sessions} past session(s), {result.chat_chunks} chunks"
        )
    lines += [f"  Left out: {left}" for left in result.chat_left_out]
    if result.categories_problem:
        lines.append(f"  Categories left out: {result.categories_problem}")
    if result.review_problem:
        lines.append(f"  Review settings left out: {result.review_problem}")
    lines.append(f"  {'Total':<28} {result.total:>4}")
    mode = search_mode(result.semantic, result.semantic_vectors_ready, result.semantic_entries)
    if mode:
        lines.append(f"  {mode}")
    return "\n".join(lines)


def context_loading_note(loading: p.SemanticLoading) -> str:
    """The stderr line of `memd context` while semantic search is still loading (the block
    itself, which goes into a prompt, does not say so)."""
    progress = loading_progress(loading.ready, loading.total)
    return f"{progress}; the block's relevant entries are word matches only."


def render_context(result: p.ContextResult) -> str:
    """Return the block itself (nothing when no memory applies; the files left out that it does
    not name: `unreadable_lines`)."""
    return result.markdown.rstrip("\n")


def render_why(result: p.WhyResult) -> str:
    """Return the entries `context` would give for the file, then the others with why not
    (one line each), and each malformed scope
    marker's problem."""
    lines = [f"Given for {result.file} ({result.tokens}/{result.budget_tokens} tokens):"]
    given = [entry for entry in result.entries if entry.reason == "given"]
    others = [entry for entry in result.entries if entry.reason != "given"]
    for entry in given:
        lines += _why_lines(entry, f"{entry.layer}: {entry.detail}")
    if not given:
        lines.append("  (nothing)")
    if others:
        lines.append("Not given:")
    for entry in others:
        lines += _why_lines(entry, f"{entry.reason}: {entry.detail}")
    return "\n".join(lines)


def _why_lines(entry: p.WhyEntry, why: str) -> list[str]:
    where = "user-wide " if entry.source == "global" else ""
    text = entry_text(entry.category, entry.slug, entry.content)
    lines = [f"  - {text}", f"    {where}{entry.file}:{entry.line}; {why}"]
    if entry.problem:
        lines.append(f"    its scope marker is ignored (it applies everywhere): {entry.problem}")
    return lines


def render_extract(result: p.ExtractResult) -> str:
    """Return one line per candidate, with what storing it did (why a store failed goes to
    stderr, from `memd.cli.verbs`); for a transcript, what of it was read comes first."""
    if not result.candidates:
        nothing = "No memories found in " + ("those turns." if result.message else "that message.")
        return f"{result.message}\n{nothing}" if result.message else nothing
    lines = [result.message] if result.message else []
    for candidate in result.candidates:
        lines.append(f"{candidate.category}: {candidate.content}  ({candidate.kind})")
        if candidate.stored is not None:
            lines.append(f"  {candidate.stored.message}")
    return "\n".join(lines)


def render_status(result: p.StatusResult, current: str = "", origin: str = "") -> str:
    """Return the daemon's status as readable lines, ending with the `current` directory's
    workspace and `origin` (how it was found) when given."""
    workspaces = "\n".join(f"    {root}" for root in result.workspaces) or "    (none loaded yet)"
    conflicts = "\n".join(f"    {path}" for path in result.conflicts)
    if conflicts:
        conflicts = f"\n  git conflict markers (writes refused until resolved):\n{conflicts}"
    return (
        f"memd {result.version} (protocol {result.protocol_version}) pid {result.pid}, "
        f"up {result.uptime_s:.0f} s, socket {result.socket}\n  workspaces:\n{workspaces}"
        + _watching_line(result)
        + _semantic_line(result.semantic)
        + conflicts
        + (f"\n  current workspace: {current} ({origin})" if current else "")
    )


def _semantic_line(info: p.SemanticInfo | None) -> str:
    """Return semantic search's state (empty from a daemon too old to say)."""
    if info is None:
        return ""
    if info.state == "ready":
        return f"\n  semantic search: ready ({info.model}, {info.vectors} vectors)"
    if info.state == "off":
        return f"\n  semantic search: off ({info.reason})"
    if info.state == "loading":
        return "\n  semantic search: loading the model"
    return "\n  semantic search: on (the model loads on the first query)"


def _watching_line(result: p.StatusResult) -> str:
    """Return how outside changes are noticed (empty from a daemon too old to say)."""
    if not result.watch_mode:
        return ""
    loaded = len(result.workspaces)
    return (
        f"\n  watching: {result.watch_mode}, {result.workspaces_watched} of {loaded} "
        f"workspace{'s' * (loaded != 1)} watched (the rest are checked when read), "
        f"{result.workspaces_unloaded} unloaded while idle"
    )


def render_proposed(proposed: p.ProposeResult | None) -> str:
    """Return what `--propose` queued, one line per proposal after a blank line ("" without
    `--propose`)."""
    if proposed is None:
        return ""
    lines = [f"  {o.action}: {o.category}: {o.content}\n    {o.message}" for o in proposed.outcomes]
    return "\n\n" + "\n".join([proposed.message, *lines])
