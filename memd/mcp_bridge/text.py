"""What the agent reads: the text block of each tool result, and error sentences.

Rules:
- Entries are labelled `[Category] [slug]` with `memd.core.format.render.entry_label`, as in the CLI
  and the prompt block.
- Texts name tools, not CLI verbs: the agent cannot run `memd list`. A daemon sentence that
  points at a CLI verb keeps its wording (it is shared with the CLI) and gets one more sentence
  naming the tool that does the same (`name_tools`).
- Every text that can carry a path goes through `printable`: a path that is not valid UTF-8
  (a lone surrogate from a non-UTF-8 file name) would otherwise make the SDK fail to serialize
  the whole reply.
- The text block (what the agent reads and an MCP client shows a person) goes through
  `controls.visible`: a terminal escape or bidi control from a memory file is shown as an
  escape, so the agent and the person read the same text. Structured content keeps the exact
  text, as the protocol does.
- An error is one sentence saying what went wrong and what to do, then, when the workspace is
  known, "This call used workspace ... (from ...)."
- Nothing here imports `mcp`: these are plain functions of memd's protocol Structs.
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from memd.core.format.categories import BUILTIN
from memd.core.format.controls import visible
from memd.core.format.render import (
    cleanup_actions,
    entry_label,
    loading_note,
    loading_progress,
    match_label,
    search_mode,
)
from memd.core.search.outcomes import Record
from memd.core.search.procedure_layer import record_note
from memd.core.text.excerpt import excerpt
from memd.mcp_bridge.printable import printable
from memd_client import protocol as p

if TYPE_CHECKING:
    from memd.mcp_bridge.workspace import Workspace

_TOOL_HINTS: tuple[tuple[str, str], ...] = (
    ("`list`", "With these tools, call queryMemory with an empty query to list the entries."),
    ("`memd cleanup", "With these tools, call cleanupMemory to see the cleanup plan."),
    ("`memd stats`", "With these tools, call memoryStats."),
)
"""A CLI verb a daemon sentence may mention, and the sentence naming the tool for it."""


def tool_hints(text: str) -> list[str]:
    """One sentence naming a tool for each CLI verb `text` mentions."""
    return [hint for verb, hint in _TOOL_HINTS if verb in text]


def name_tools(sentence: str) -> str:
    """`sentence`, plus the `tool_hints` for it."""
    return " ".join([sentence, *tool_hints(sentence)])


def failure(sentence: str, workspace: Workspace | None) -> str:
    """An error for the agent: memd's sentence, then the workspace the call used, if known."""
    used = f" This call used {workspace.describe()}." if workspace is not None else ""
    return visible(printable(f"{name_tools(sentence)}{used}"))


def unexpected(exc: BaseException) -> str:
    """One sentence for an exception that is not a memd error (its traceback goes to the log)."""
    detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    if isinstance(exc, UnicodeError):
        return (
            "A path or text in this call is not valid UTF-8, which memd's protocol cannot carry "
            f"({detail}); use a UTF-8 path or text."
        )
    return f"memd's MCP server failed unexpectedly ({detail}); its log on stderr has the traceback."


def bad_arguments(tool: str, errors: Iterable[Mapping[str, Any]]) -> str:
    """One sentence per argument the SDK's validation rejected (`errors` as pydantic's
    `ValidationError.errors()` lists them), saying what to do instead."""
    sentences: list[str] = []
    for error in errors:
        field = ".".join(str(part) for part in error.get("loc", ())) or "arguments"
        kind = str(error.get("type", ""))
        given = error.get("input")
        if kind == "missing":
            sentence = f"Argument `{field}` is missing; call {tool} again with it."
        elif field.split(".")[0] == "category":
            valid = ", ".join(BUILTIN.names)
            sentence = f"Argument `category` is {given!r}, not a category; use one of: {valid}."
        else:
            why = str(error.get("msg", "it is not valid"))
            why = why.removeprefix("Input ").removeprefix("input ")
            sentence = (
                f"Argument `{field}` is {given!r}, but it {why}; call {tool} again with a valid "
                "value."
            )
        if sentence not in sentences:
            sentences.append(sentence)
    return " ".join(sentences)


def render_store(result: p.StoreResult, workspace: Workspace, scope: str = "project") -> str:
    """The daemon's sentence about the store (naming cleanupMemory when over the limit), then
    the workspace used when it came from the current directory (no --workspace, no client root)
    or the store created its `.memory/`; a store with scope "global" says it went to the
    user's own memory instead (no workspace was used)."""
    if scope == "global":
        where = f" ({result.workspace})" if result.workspace else ""
        return printable(
            f"{name_tools(result.message)} This call used your user-wide memory{where}."
        )
    if workspace.source != "current directory" and not result.created_memory_dir:
        return name_tools(result.message)
    used = msgspec.structs.replace(workspace, path=result.workspace or workspace.path)  # real path
    created = (
        f"; it created {os.path.join(used.path, '.memory')}/" if result.created_memory_dir else ""
    )
    return printable(f"{name_tools(result.message)} This call used {used.describe()}{created}.")


def render_delete(result: p.DeleteResult) -> str:
    """The daemon's sentence about the deletion."""
    return name_tools(result.message)


def unreadable_lines(problems: Sequence[p.FileProblem], shown: str = "") -> list[str]:
    """One sentence per category file a call left out because it cannot be read (none for a
    file `shown` already names)."""
    return [
        printable(f"{problem.file} cannot be read, so it was left out: {problem.message}")
        for problem in problems
        if f".memory/{problem.file}" not in shown
    ]


def render_query(result: p.QueryResult, query: str, tags: list[str] | None = None) -> str:
    """The hits as lines "- [Category] [slug] content (score 0.87)" (then "[by meaning]" or
    "[words and meaning]" for a hit the semantic model found, as in the CLI, and "[user-wide]"
    for one from the user's memory for every project), then the files that could not be
    read."""
    return "\n".join([_query_lines(result, query, tags), *unreadable_lines(result.unreadable)])


def _query_lines(result: p.QueryResult, query: str, tags: list[str] | None) -> str:
    loading = result.semantic_loading
    if not result.results:
        tagged = ""
        if tags:
            tagged = " tagged " + " and ".join(f"#{tag.removeprefix('#')}" for tag in tags)
        if query.strip():
            missed = f'No memories{tagged} found matching "{query}".'
            if loading is not None:
                note = loading_note(loading.ready, loading.total, found=False, again="call again")
                return f"{missed} {note}"
            return missed
        return f"No memories{tagged} found." if tags else "No memories stored yet."
    count = len(result.results)
    lines = [f"Found {count} {'memory' if count == 1 else 'memories'}:", ""]
    lines += [_hit_line(hit) for hit in result.results]
    if result.total > count:
        lines.append(f"({count} of {result.total} matches; raise limit to see more.)")
    if loading is not None:
        lines.append(loading_note(loading.ready, loading.total, found=True))
    return "\n".join(lines)


def worked(counts: p.OutcomeCounts | None) -> str:
    """What a procedure's line adds: how often it worked ("" with no reports, or for any other
    entry)."""
    note = "" if counts is None else record_note(Record(counts.successes, counts.failures))
    return f" ({note})" if note else ""


def _hit_line(hit: p.QueryHit) -> str:
    label = entry_label(hit.category, hit.slug)
    if hit.source == "file":
        label = f"[{hit.path}:{hit.lines}]"
    content = hit.content
    if hit.source == "chat":  # an excerpt: getMemory with its file and lines reads the turns
        when = f" {hit.at}" if hit.at else ""
        label = f"[past session {hit.session}{when}: {hit.path} turns {hit.lines}]"
        content = excerpt(content)
    line = f"- {label} {content} (score {hit.score:.2f})"
    if hit.status == "stale":
        line += f" (stale: {hit.stale})"
    if hit.archived:
        line += f" [archived {hit.archived_on}: {hit.archived_reason}]"
    line += worked(hit.outcomes)
    labels = [match_label(hit.match), "[user-wide]" if hit.source == "global" else ""]
    return " ".join([line, *(label for label in labels if label)])


def render_entries(entries: list[p.EntryInfo], unreadable: Sequence[p.FileProblem] = ()) -> str:
    """Entries as lines "- [Category] [slug] content (file:line)", then the files that could
    not be read."""
    lines = [
        f"- {entry_label(e.category, e.slug)} {e.content} ({e.file}:{e.line}){worked(e.outcomes)}"
        for e in entries
    ]
    return "\n".join([*lines, *unreadable_lines(unreadable)])


def render_stats(result: p.StatsResult, workspace: Workspace) -> str:
    """Per-category counts, headed by the workspace and where it came from."""
    lines = [f"Memory of {workspace.describe()}:"]
    for row in result.categories:
        note = ""
        if row.error:
            note = f"; cannot be read: {row.error}"
        elif row.conflict:
            note = f"; mid-merge, writes refused: {row.conflict}"
        elif not row.exists:
            note = "; no file yet"
        elif row.entries > row.limit:
            note = "; over its limit, run cleanupMemory"
        lines.append(f"- {row.category} ({row.file}): {row.entries} of {row.limit} entries{note}")
    if result.categories_problem:
        lines.append(f"Categories left out: {result.categories_problem}")
    if result.review_problem:
        lines.append(f"Review settings left out: {result.review_problem}")
    lines.append(f"Total: {result.total} {'entry' if result.total == 1 else 'entries'}.")
    mode = search_mode(result.semantic, result.semantic_vectors_ready, result.semantic_entries)
    if mode:
        lines.append(mode)
    return printable("\n".join(lines))


def render_cleanup(result: p.CleanupResult) -> str:
    """The daemon's summary, one line per action (as in the CLI: each entry named by file, line,
    slug and a short quote; a merge's kept entry first), how to apply it, then unused entries."""
    lines = [result.message]
    lines += [f"- {verb} {text}" for verb, text in cleanup_actions(result)]
    for stale in result.stale:
        verb = "archived" if stale.archived else "archive (its code is gone)"
        label = entry_label(stale.category, stale.entry.slug)
        lines.append(
            f"- {verb} {label} {stale.entry.content} ({stale.file}:{stale.entry.line}): {stale.why}"
        )
    if not result.applied and (result.merged or result.pruned or result.slugged or result.stale):
        lines.append("Call cleanupMemory with apply: true to carry it out.")
    for entry in result.unused:
        lines.append(
            f"- unused for 180 days: {entry_label(entry.category, entry.slug)} {entry.content} "
            f"({entry.file}:{entry.line}); ask the user whether it still holds"
        )
    return "\n".join(lines)


def render_check(result: p.CheckResult) -> str:
    """The stale entries, each with what is wrong and the fix it suggests, then the counts;
    the agent is asked to fix or confirm them with the user, never to act on them as they
    stand."""
    counts = result.counts
    total = counts.ok + counts.stale + counts.none
    summary = (
        f"Checked {total} {'memory' if total == 1 else 'memories'} against the code: "
        f"{counts.stale} stale, {counts.ok} current, {counts.none} citing nothing memd can check."
    )
    lines = [summary]
    for entry in result.entries:
        if entry.status != "stale":
            continue
        lines.append(
            f"- {entry_label(entry.category, entry.slug)} {entry.content} "
            f"({entry.file}:{entry.line}): {entry.note}"
        )
        if entry.fix is not None:
            lines.append(f"  suggested fix: {entry.fix}")
    if counts.stale:
        lines.append(
            "Do not act on a stale memory as it stands: ask the user to run `memd check --fix` "
            "(it rewrites moved citations, never over an edit), or whether it still holds."
        )
    if result.problem:
        lines.append(result.problem)
    lines += unreadable_lines(result.unreadable)
    return printable("\n".join(lines))


def render_context(result: p.ContextResult) -> str:
    """The block itself (then the `tool_hints` for it, if any, and a sentence while semantic
    search is still loading), or a sentence when memory has nothing for this task."""
    problems = unreadable_lines(result.unreadable, result.markdown)
    if (loading := result.semantic_loading) is not None:
        progress = loading_progress(loading.ready, loading.total)
        problems.append(
            f"{progress}; the relevant memories were matched by words only (call memoryContext "
            "again in a few seconds to match by meaning too)."
        )
    if not result.markdown.strip():
        return "\n".join(["No memories to add for this task.", *problems])
    hints = tool_hints(result.markdown)
    if not hints and not problems:
        return result.markdown
    return "\n\n".join([result.markdown.rstrip("\n"), " ".join([*hints, *problems])])


def structured(result: msgspec.Struct, workspace: Workspace, **extra: Any) -> dict[str, Any]:
    """The daemon's result as JSON-ready builtins, with the workspace used (the daemon's real
    path when the result names it, else the path asked for)."""
    data: dict[str, Any] = msgspec.to_builtins(result)
    if not data.get("workspace"):  # a daemon too old to name it
        data["workspace"] = workspace.path
    data["workspace_source"] = workspace.source
    data.update(extra)
    return data


def render_history(result: p.HistoryResult) -> str:
    """`memd blame`: each recorded version, oldest first (local time, what, who), its text and
    what it replaced; then the archive lines that name the entry."""
    lines = [result.message]
    for version in result.versions:
        when = datetime.datetime.fromtimestamp(version.at).strftime("%Y-%m-%d %H:%M:%S")
        who = version.client + (f" {version.version}" if version.version else "")
        session = f", session {version.session}" if version.session else ""
        lines.append(
            f"{when}  {version.action:<7} {version.category}  by {who} ({version.origin}{session})"
        )
        if version.text is not None:
            lines.append(f"    {version.text}")
        if version.replaced is not None:
            lines.append(
                f"    {'was' if version.text is not None else 'removed'}: {version.replaced}"
            )
    if result.archived:
        lines.append("In the archive:")
        lines.extend(f"    {line}" for line in result.archived)
    return "\n".join(visible(line) for line in lines)
