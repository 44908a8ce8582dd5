"""The protocol's methods: the method table, and one thin handler per wire method (parse the
params, call the workspaces or the search, convert the outcome with `memd.server.rpc.wire`).

Each handler takes its params Struct and the connection's `Session`, and returns its result
Struct. Writes go to the owning category actor; reads use the actors' current snapshots and never
wait for a commit. `query` and `context` rank with the one search (`memd.server.methods.search`).
`subscribe` registers the session with a workspace's change feed. Every result of a workspace
call names its workspace (`workspace.root`); a store says whether it created `.memory/` (it was
not there before the write and is after).

Size: over the ~400-line guide: twelve handlers, one per wire method, with the one store path
and the params checks they share (`memory_file`, `_agent_loads`), read as the daemon's method
table; what is not parse, call or convert lives in `search` and `memd.server.rpc.wire`.
"""

from __future__ import annotations

import datetime
import os
import posixpath
import time
from collections.abc import Sequence
from typing import Any, NamedTuple

import anyio
import msgspec

from memd import __version__
from memd.core.format.categories import BUILTIN, Categories, Category
from memd.core.format.episodes import render_episode
from memd.core.format.mdformat import Entry
from memd.core.search import file_scope, given, procedure_layer, prompt_block
from memd.core.search.shelves import origin
from memd.core.sources.source_globs import MAX_SOURCE_ENTRIES, parse_entry
from memd.core.transcripts.capture import outside
from memd.core.transcripts.chunks import render
from memd.core.writes import transitions
from memd.core.writes.cleanup import every_citation_gone
from memd.paths import MEMORY_DIR
from memd.server.methods import (
    capture,
    episodes,
    procedures,
    proposing,
    provenance,
    restore,
    review,
    search,
    undo,
)
from memd.server.methods.read_filters import (
    categories_named,
    loaded,
    parse_line_range,
    readable,
    wanted_tags,
)
from memd.server.methods.search import Search
from memd.server.methods.second_opinion import SecondOpinion
from memd.server.rpc import wire
from memd.server.rpc.dispatch import Handler
from memd.server.rpc.session import Session
from memd.server.semantic import SemanticService
from memd.server.workspaces import code_check
from memd.server.workspaces.chat_index import turns_between
from memd.server.workspaces.registry import Registry, check_path_length
from memd.server.workspaces.scopes import Scopes
from memd.server.workspaces.snapshot import Snapshot
from memd.server.workspaces.source_index import listed_as, read_lines
from memd.server.workspaces.workspace import Workspace
from memd_client import protocol as p
from memd_client.errors import EntryNotFound, InvalidParams, RpcError

_NO_TAGS: frozenset[str] = frozenset()
AGENT_LOADS = ("CLAUDE.md", "CLAUDE.local.md", ".claude/rules/**")
"""The files Claude Code loads on its own (its prompt hook is the usual `context` caller)."""
MAX_GET_TURNS = 200
"""The most turns of a past session one `get` asks for (before `around`)."""


class Methods:
    """Every method memd serves, bound to one daemon's registry."""

    def __init__(
        self,
        registry: Registry,
        *,
        started: float,
        socket_path: str,
        semantic: SemanticService | None = None,
        second_opinion: SecondOpinion | None = None,
    ) -> None:
        self.registry = registry
        self.cursors = capture.Cursors()
        """How far `extract` captures read each transcript."""
        self.second_opinion = second_opinion or SecondOpinion()
        """The daemon's model (`[llm]`): a store's second opinion, gap analysis, `reflect`."""
        self.scopes = Scopes(registry)
        """The projects and the user-wide memory."""
        self.semantic = semantic
        """Semantic search (None: lexical only)."""
        self.search = Search(self.scopes, semantic)
        """The one search of `query` and `context`."""
        self.given = given.GivenLedger()
        """What each agent session was given by `context` (a file hook's memory)."""
        self.started = started
        self.socket_path = socket_path
        self.table: dict[str, tuple[type[msgspec.Struct], Handler]] = {
            "store": (p.StoreParams, self.store),
            "query": (p.QueryParams, self.query),
            "get": (p.GetParams, self.get),
            "list": (p.ListParams, self.list),
            "delete": (p.DeleteParams, self.delete),
            "cleanup": (p.CleanupParams, self.cleanup),
            "stats": (p.StatsParams, self.stats),
            "status": (p.StatusParams, self.status),
            "subscribe": (p.SubscribeParams, self.subscribe),
            "unsubscribe": (p.UnsubscribeParams, self.unsubscribe),
            "context": (p.ContextParams, self.context),
            "extract": (p.ExtractParams, self.extract),
            "check": (p.CheckParams, self.check),
            "why": (p.WhyParams, self.why),
            "episode": (p.EpisodeParams, self.episode),
            "procedure": (p.ProcedureParams, self.procedure),
            "outcome": (p.OutcomeParams, self.outcome),
            "history": (p.HistoryParams, self.history),
            "inbox": (p.InboxParams, self.inbox),
            "resolve": (p.ResolveParams, self.resolve),
            "propose": (p.ProposeParams, self.propose),
            "reflect": (p.ReflectParams, self.reflect),
            "undo": (p.UndoParams, self.undo),
            "restore": (p.RestoreParams, self.restore),
        }
        self.table = {name: (t, self._leasing(h)) for name, (t, h) in self.table.items()}
        self.quick = frozenset({"query", "get", "list", "stats", "status"})
        """The reads that never wait for a writer (nor a worker thread, once the workspace is
        loaded, but for a hybrid query's embedding, about 10 ms): a connection answers them
        before reading on."""

    def _leasing(self, handler: Handler) -> Handler:
        """Hold the workspaces a request uses until it is answered, so none unloads under it."""

        async def leased(params: Any, session: Session) -> Any:
            with self.registry.leases(), provenance.writing_as(params):
                return await handler(params, session)

        return leased

    async def store(self, params: p.StoreParams, session: Session) -> p.StoreResult:
        """Store one memory (see `transitions.store` for the rules), into the workspace's
        memory or, with scope global, the user-wide one (`memd.server.workspaces.scopes`)."""
        workspace = await self._scoped(params.workspace, params.scope)
        category = workspace.category(params.category)
        modes = review.modes(workspace, self.registry.limits.review)
        held = await review.hold(workspace, category, params, modes, self._store_into)
        if held is not None:
            return held
        if category.kind == "procedure" and params.slug is None:
            return await procedures.store_named(workspace, category, params, self._store_into)
        return await self.second_opinion.store(
            workspace, category, params, self._store_into, self._propose_later
        )

    async def _store_into(
        self,
        workspace: Workspace,
        category: Category,
        content: str,
        *,
        slug: str | None = None,
        dry_run: bool = False,
        replaces: str | None = None,
        reason: str | None = None,
        restated: transitions.Restated | None = None,
        ask_first: bool = False,
    ) -> p.StoreResult:
        """The one store path (`store`, `extract` with `store`): the category's actor decides
        and writes (`transitions.store`), and a stored entry is recorded in the usage sidecar
        (its freshness nudge, `cleanup`'s unused report)."""
        had_memory_dir = workspace.has_memory_dir()
        command = transitions.Store(
            content=content,
            slug=slug,
            dry_run=dry_run,
            replaces=replaces,
            reason=reason,
            restated=restated,
            ask_first=ask_first,
            max_length=self.registry.limits.max_entry_chars,
            allow_secrets=self.registry.limits.allow_secrets,
        )
        outcome = await workspace.actor(category).store(command)
        if outcome.action != "skipped" and not outcome.dry_run:
            stored = Entry(line=outcome.line, slug=outcome.slug, content=outcome.content)
            workspace.usage.record_store(category, stored, new=outcome.action == "stored")
        provenance.record_store(workspace, category, outcome)
        created = not (had_memory_dir or outcome.dry_run) and workspace.has_memory_dir()
        return wire.store_result(category, outcome, workspace.root, created)

    async def episode(self, params: p.EpisodeParams, session: Session) -> p.StoreResult:
        """Store one episode (`memd.core.format.episodes`), dated today by the daemon, through
        the one store path into the episode category (never skipped as another event's
        duplicate: `memd.core.writes.episode_store`)."""
        workspace = await self._scoped(params.workspace, params.scope)
        content = render_episode(episodes.today(), params.text, params.outcome, params.tags or ())
        return await self._store_into(workspace, Category.EPISODE, content, dry_run=params.dry_run)

    async def procedure(self, params: p.ProcedureParams, session: Session) -> p.StoreResult:
        """Store one procedure from a name and its steps (`memd.server.methods.procedures`)."""
        workspace = await self.scopes.project(params.workspace)
        return await procedures.store_procedure(workspace, params, self._store_into)

    async def outcome(self, params: p.OutcomeParams, session: Session) -> p.OutcomeResult:
        """Record that a procedure worked or failed (`memd.server.methods.procedures`)."""
        workspace = await self.scopes.project(params.workspace)
        return await procedures.record_outcome(workspace, params)

    async def query(self, params: p.QueryParams, session: Session) -> p.QueryResult:
        """Rank the workspace's entries against the query; with `tags`, only the entries that
        carry them all (filtered before `limit`, so `total` counts matching entries only).

        Mode auto ranks by words and the model's similarity (hybrid) once the model is ready
        and every searched entry has a vector, else by words alone, asking for what is missing;
        mode semantic is hybrid or an error saying why; mode lexical is words alone.
        """
        _check_sources(params)
        workspace = await self.scopes.project(params.workspace)
        wanted = wanted_tags(params.tags)
        categories = categories_named(workspace, params.category)
        answer = await self.search.query(
            workspace,
            params.query,
            categories=categories,
            sources=params.sources,
            tags=wanted,
            mode=params.mode,
            limit=params.limit,
            min_score=params.min_score,
            at=file_scope.file_at(params.file, workspace.root),
        )
        checks = _Checks(workspace)
        results = [
            wire.query_hit(
                *hit.found,
                memory_dir=hit.memory_dir,
                chunk=hit.chunk,
                checked=checks.of(hit.found.key, hit.found.entry),
                record=hit.record,
            )
            if hit.chat is None
            else wire.chat_hit(*hit.chat, hit.found.score, hit.found.match)
            for hit in answer.hits
        ]
        checks.done()
        total, unreadable = answer.total, answer.unreadable
        if params.include_archived and "memory" in (params.sources or ("memory",)):
            found, problems = await episodes.search_archive(
                workspace,
                params.query,
                params.limit,
                episodes.ArchiveFilter(frozenset(categories), wanted, params.min_score),
            )
            unreadable = [*unreadable, *problems]
            total += len(found)
            results += [episodes.archived_query_hit(hit) for hit in found]
            results.sort(key=lambda hit: -hit.score)  # stable: live hits first among equals
            del results[params.limit :]
        return p.QueryResult(
            results=results,
            total=total,
            unreadable=unreadable,
            workspace=workspace.root,
            mode=answer.mode,
            semantic_loading=answer.loading,
        )

    async def _scoped(self, path: str, scope: p.Scope) -> Workspace:
        """The workspace a management call acts on: the project at `path` (never the
        user-wide memory's directory), or with scope global the user-wide memory."""
        project = await self.scopes.project(path)
        if scope == "project":
            return project
        user_wide = await self.scopes.user_wide(create=True)
        assert user_wide is not None
        return user_wide

    async def get(self, params: p.GetParams, session: Session) -> p.EntriesResult:
        """Return the entries with a slug (one per category searched), or the entries within a
        line range of a file (with scope global, of the user-wide memory)."""
        workspace = await self._scoped(params.workspace, params.scope)
        if params.slug is not None:
            categories = categories_named(workspace, params.category)
            await workspace.refresh(categories)
            snapshots, unreadable = readable(workspace, categories)
            found = [
                (category, entry)
                for category, snapshot in snapshots.items()
                for entry in snapshot.entries
                if entry.slug == params.slug
            ]
            if not found:
                raise wire.no_entry_with_slug(params.slug, categories, unreadable)
            workspace.usage.record_recalls(found)
            return p.EntriesResult(
                entries=[wire.entry_info(c, entry, source=params.scope) for c, entry in found],
                unreadable=unreadable,
                workspace=workspace.root,
            )
        if params.file is None or params.lines is None:
            raise InvalidParams(
                "get needs either `slug` (and maybe `category`), or `file` and `lines`."
            )
        first, last = parse_line_range(params.lines)
        if params.scope == "project" and os.path.isabs(params.file):
            said = await self._chat_turns(workspace, params.file, first, last, params.around)
            if said is not None:
                return said
        category = memory_file(params.file, workspace.memory_dir, workspace.categories)
        if category is None and params.scope == "project":
            return await self._source_lines(workspace, params.file, first, last)
        if category is None:
            category = workspace.categories.for_file(params.file)  # raises, naming the files
        await workspace.refresh((category,))
        entries = loaded(workspace, category).entries
        return p.EntriesResult(
            entries=[
                wire.entry_info(category, e, source=params.scope)
                for e in entries
                if first <= e.line <= last
            ],
            workspace=workspace.root,
        )

    async def _source_stats(self, workspace: Workspace, scope: p.Scope) -> dict[str, Any]:
        """The `stats` fields of the workspace's read-only sources (none for the user-wide
        memory)."""
        if scope == "global":
            return {}
        look = await self.scopes.look(workspace)
        looked = time.time() - (time.monotonic() - look.at)
        indexed_at = datetime.datetime.fromtimestamp(looked, datetime.UTC).isoformat()
        chunks = {path: len(source.chunks) for path, source in look.files.items()}
        return wire.source_stats(chunks, look.refused, indexed_at)

    async def _chat_turns(
        self, workspace: Workspace, path: str, first: int, last: int, around: int
    ) -> p.EntriesResult | None:
        """Turns `first` - `around` to `last` + `around` of the past session `path` (one of the
        workspace's "chat" transcripts, read now, masked), or None when `path` is none of them
        (nothing else is ever read here)."""
        look = await self.scopes.chats(workspace)
        session = look.sessions.get(path)
        if session is None:
            return None
        if last - first + 1 > MAX_GET_TURNS:
            raise InvalidParams(
                f"lines {first}-{last} asks for {last - first + 1} turns of a past session; "
                f"ask for at most {MAX_GET_TURNS} at a time."
            )
        if first > session.turns:
            raise EntryNotFound(
                f"the past session {path} has {session.turns} turn(s); ask for lines within "
                f"1-{session.turns}."
            )
        start, end = max(1, first - around), last + around
        try:
            turns = await anyio.to_thread.run_sync(turns_between, session, start, end)
        except OSError as exc:
            raise EntryNotFound(
                f"the past session {path} cannot be read now ({exc}); query again for a "
                "current hit."
            ) from None
        return p.EntriesResult(entries=[], workspace=workspace.root, text=render(turns))

    async def _source_lines(
        self, workspace: Workspace, path: str, first: int, last: int
    ) -> p.EntriesResult:
        """Lines `first` to `last` of the read-only source `path`, and its chunks within them."""
        look = await self.scopes.look(workspace)
        source = look.files.get(path) or look.files.get(listed_as(posixpath.normpath(path)))
        if source is None:
            raise wire.not_a_source(path, workspace.categories)
        max_bytes = self.registry.limits.max_file_bytes
        text = await anyio.to_thread.run_sync(read_lines, source, first, last, max_bytes)
        chunks = [part for part in source.chunks if part.start <= last and part.end >= first]
        return wire.source_lines(path, chunks, text, workspace.root)

    async def list(self, params: p.ListParams, session: Session) -> p.ListResult:
        """Return every entry of the workspace, or of one category; with `tags`, only those
        carrying them all."""
        wanted = wanted_tags(params.tags)
        workspace = await self.scopes.project(params.workspace)
        categories = categories_named(workspace, params.category)
        sources = params.sources or ["memory", "global"]
        searched, unreadable = await search.gather(self.scopes, workspace, categories, sources)
        entries: list[p.EntryInfo] = []
        for key, searched_file in searched.items():
            if searched_file.category is None:
                continue
            for entry in searched_file.snapshot.entries:
                tags = searched_file.snapshot.tags.get(entry.line, _NO_TAGS)
                if wanted <= tags:
                    scope: p.Scope = "global" if origin(key) == "global" else "project"
                    entries.append(
                        wire.entry_info(searched_file.category, entry, tags, source=scope)
                    )
        procedures.add_outcomes(workspace, entries)
        return p.ListResult(entries=entries, unreadable=unreadable, workspace=workspace.root)

    async def delete(self, params: p.DeleteParams, session: Session) -> p.DeleteResult:
        """Delete one entry by slug, archiving it."""
        workspace = await self._scoped(params.workspace, params.scope)
        category = workspace.category(params.category)
        outcome = await workspace.actor(category).delete(transitions.Delete(slug=params.slug))
        provenance.record_delete(workspace, category, outcome.entry if outcome.deleted else None)
        return wire.delete_result(
            category, params.slug, outcome.entry, params.scope, workspace.root
        )

    async def cleanup(self, params: p.CleanupParams, session: Session) -> p.CleanupResult:
        """Plan (or apply) merges, prunes and slug assignments in every category at once."""
        if params.apply and params.propose:
            raise InvalidParams(_APPLY_OR_PROPOSE)
        workspace = await self._scoped(params.workspace, params.scope)
        outcomes: dict[Category, transitions.CleanupOutcome] = {}
        errors: list[RpcError] = []
        before = provenance.entries_now(workspace)

        async def run(category: Category) -> None:
            command = transitions.Cleanup(apply=params.apply)
            try:
                outcomes[category] = await workspace.actor(category).cleanup(command)
            except RpcError as error:
                errors.append(error)

        async with anyio.create_task_group() as tg:
            for category in workspace.categories:
                tg.start_soon(run, category)
        if params.apply:
            provenance.record_cleanup(workspace, before, provenance.entries_now(workspace))
        if errors:
            raise errors[0]
        plans = {c: outcomes[c].plan for c in workspace.categories}
        result = wire.cleanup_result(workspace.archive_path, plans, params.apply, params.scope)
        result.workspace = workspace.root
        if params.scope == "project":
            stale = await _stale(workspace, params.apply)
            if stale is None:
                result.message += (
                    " The check against the code did not finish in time, so no stale memory "
                    "was proposed or archived; run `memd check`, then clean up again."
                )
            result.stale = stale or []
        present = workspace.memory_entries()
        workspace.usage.forget_missing(present)
        # Security and Instruction entries go into every prompt block, which is use that no
        # recall count sees: they are never reported as unused.
        result.unused = [
            wire.entry_info(c, e, source=params.scope)
            for c, e in present
            if c.layer != "always" and workspace.usage.unused(c, e)
        ]
        result.consolidated, result.promoted = await episodes.consolidate(
            workspace,
            apply=params.apply,
            max_age_days=workspace.episode_max_age_days,
            store=self._store_into,
        )
        result.message += episodes.consolidation_message(
            result.consolidated, result.promoted, params.apply
        )
        if params.propose:
            result.proposed = await proposing.cleanup_plan(workspace, result)
            result.message += f" {result.proposed.message}"
        return result

    async def stats(self, params: p.StatsParams, session: Session) -> p.StatsResult:
        """Per-category entry counts, limits and the time the files were last read."""
        workspace = await self._scoped(params.workspace, params.scope)
        await workspace.refresh(workspace.categories)
        snapshots = {c: workspace.actor(c).snapshot for c in workspace.categories}
        rows = [
            wire.category_stats(
                c,
                entries=len(s.entries),
                exists=s.doc is not None,
                error=s.error,
                conflict=s.conflict,
            )
            for c, s in snapshots.items()
        ]
        loaded = max(s.loaded_at for s in snapshots.values())
        texts = [entry.content for s in snapshots.values() for entry in s.entries]
        semantic = self.semantic if self.semantic is not None and self.semantic.ready else None
        return p.StatsResult(
            workspace=workspace.root,
            categories=rows,
            total=sum(row.entries for row in rows),
            loaded_at=datetime.datetime.fromtimestamp(loaded, datetime.UTC).isoformat(),
            semantic_vectors_ready=0 if semantic is None else semantic.count_ready(texts),
            semantic_entries=0 if semantic is None else len(texts),
            semantic=None if self.semantic is None else self.semantic.info(),
            categories_problem=workspace.category_set.problem,
            review_problem=workspace.category_set.review_problem,
            **await self._source_stats(workspace, params.scope),
            **await self._chat_stats(workspace, params.scope),
        )

    async def _chat_stats(self, workspace: Workspace, scope: p.Scope) -> dict[str, Any]:
        """The `stats` fields of the workspace's past sessions (none for the user-wide memory)."""
        if scope == "global":
            return {}
        look = await self.scopes.chats(workspace)
        return {
            "chat_sessions": len(look.sessions),
            "chat_chunks": sum(len(session.chunks) for session in look.sessions.values()),
            "chat_left_out": look.left_out,
        }

    async def status(self, params: p.StatusParams, session: Session) -> p.StatusResult:
        """Version, pid, uptime, loaded workspaces and how they are watched."""
        return p.StatusResult(
            version=__version__,
            protocol_version=p.PROTOCOL_VERSION,
            pid=os.getpid(),
            uptime_s=round(anyio.current_time() - self.started, 3),
            workspaces=self.registry.roots,
            socket=self.socket_path,
            conflicts=self.registry.conflicts(),
            watch_mode=self.registry.watches.mode,
            workspaces_watched=self.registry.watches.watched,
            workspaces_unloaded=self.registry.unloaded,
            semantic=None if self.semantic is None else self.semantic.info(),
        )

    async def context(self, params: p.ContextParams, session: Session) -> p.ContextResult:
        """A prompt's memory block (its layers and budget: `memd.core.search.prompt_block`;
        what `file` decides by the entries' path scopes: `memd.core.search.file_scope`).

        A category file that cannot be read does not fail the call (a prompt hook must not
        fail over one bad file): an unreadable Security or Instruction file is named in the
        block, other categories just contribute nothing (`stats` reports them). Without
        `always` there is no layer A and every category is ranked. With `session`, what that
        agent session was given before is left out (never layer A; nothing with `repeat`) and
        what is given now is remembered (`memd.core.search.given`), checked after the last
        await so that two calls of one session at once never give the same entry.
        """
        made = await self._block(params)
        return made.result

    async def why(self, params: p.WhyParams, session: Session) -> p.WhyResult:
        """Which entries `context` would give for a file (and text), and why each other entry
        of the workspace (and each user-wide rule) would not be given
        (`memd.core.search.file_scope.why_not`; a procedure's: `procedure_layer.why_not`); with
        `session`, what it was already given is explained as such, and nothing is recorded."""
        context = p.ContextParams(
            workspace=params.workspace,
            text=params.text,
            file=params.file,
            budget_tokens=params.budget_tokens,
            session=params.session,
            always=params.always,
        )
        made = await self._block(context, record=False)
        block, at, had = made.block, made.at, made.had
        placed_at = {
            (placed.category, placed.source, placed.entry.line): (placed.layer, place)
            for place, placed in enumerate(block.entries)
        }
        ranked = [(c, e, s) for c, e, s in made.relevant if not given.was_given(c, e, had)]
        top = max((score for _, _, score in ranked), default=0.0)
        scores = {(c, entry.line): score for c, entry, score in made.relevant}
        left_out = {(placed.category, placed.entry.line) for placed in block.omitted_procedures}
        candidates: list[tuple[Category, Entry, prompt_block.Source]] = [
            (c, e, "memory") for c, s in made.snapshots.items() for e in s.entries
        ]
        candidates += [(c, e, "global") for c, e in made.user_rules]
        entries = []
        for category, entry, source in candidates:
            layer, _ = placed_at.get((category, source, entry.line), (None, 0))
            always = params.always and category.layer == "always"
            reason, detail = file_scope.why_not(
                entry.content,
                at,
                always=always,
                score=scores.get((category, entry.line)) if source == "memory" else None,
                floor=top * prompt_block.MIN_RELATIVE_SCORE,
                had=source == "memory" and not always and given.was_given(category, entry, had),
            )
            if layer is None and category.layer == "procedures" and reason != "scope":
                reason, detail = procedure_layer.why_not(
                    left_out=(category, entry.line) in left_out, with_text=bool(params.text.strip())
                )
            if layer is not None:
                reason, detail = (
                    "given",
                    file_scope.why_given(entry.content, at, layer, category.name),
                )
            entries.append(wire.why_entry(category, entry, source, layer, reason, detail))
        # The given entries in the block's order, then the others in file order.
        place = {(c.name, source, line): n for (c, source, line), (_, n) in placed_at.items() if c}
        entries.sort(key=lambda e: place.get((e.category, e.source, e.line), len(place)))
        return p.WhyResult(
            file=at.path or params.file,
            entries=entries,
            workspace=made.result.workspace,
            markdown=block.markdown,
            tokens=block.tokens,
            budget_tokens=params.budget_tokens,
        )

    async def _block(self, params: p.ContextParams, *, record: bool = True) -> _Made:
        """Build `context`'s block for `params`, with what `why` explains it by; `record`
        False (`why`): the session's ledger is read, never written."""
        workspace = await self.scopes.project(params.workspace)
        await workspace.refresh(workspace.categories)
        at = file_scope.file_at(params.file, workspace.root)
        snapshots = {c: workspace.actor(c).snapshot for c in workspace.categories}
        layer_a = prompt_block.layer_a(workspace.categories) if params.always else ()
        always, unreadable = _always(snapshots, at, layer_a)
        text = params.text[: prompt_block.MAX_QUERY_CHARS]
        query = " ".join(w for w in (text, prompt_block.path_words(at.path or params.file)) if w)
        skip = AGENT_LOADS if params.agent_loads is None else _agent_loads(params.agent_loads)
        keep = search.not_elsewhere(at) if at.given else None
        relevant, loading = await self.search.relevant(
            workspace, snapshots, query, keep, every_category=not params.always
        )
        scoped = _scoped_to_file(snapshots, at, layer_a, relevant)
        for_task = await procedures.for_task(self.search, workspace, snapshots, text, query, keep)
        chunks = await self.search.source_chunks(workspace, query, skip)
        chats = await self.search.chat_chunks(workspace, query, relevant)
        user_rules, user_unreadable = (
            await self.scopes.user_wide_rules(layer_a) if layer_a else ([], [])
        )
        rules = [(c, e) for c, e in user_rules if file_scope.in_always_layer(e.content, at)]
        # After the last await: two calls of one session at once never give the same entry.
        had = self.given.given(workspace.root, params.session) if params.session else frozenset()
        withheld = frozenset[int]() if params.repeat else had
        scoped = [(c, e, s) for c, e, s in scoped if not given.was_given(c, e, withheld)]
        candidates, already_given = given.not_given(
            given.Candidates(always, rules, relevant, chunks, chats), withheld
        )
        checks = _Checks(workspace)
        block = prompt_block.build(
            candidates.always,
            candidates.relevant,
            params.budget_tokens,
            unreadable,
            candidates.chunks,
            user_wide=candidates.user_wide,
            user_unreadable=user_unreadable,
            note_of=checks.note,
            scoped=scoped,
            relevant_heading=_relevant_heading(text, params.file),
            procedures=procedures.layer_c(workspace, for_task, had),
            chats=candidates.chats,
        )
        checks.done()
        if params.session and record:
            self.given.record(workspace.root, params.session, map(given.placed_key, block.entries))
        problems = [wire.file_problem(c, s.error) for c, s in snapshots.items() if s.error]
        result = wire.context_result(
            block,
            budget_tokens=params.budget_tokens,
            unreadable=problems,
            root=workspace.root,
            loading=loading,
            checked=checks.placed,
            already_given=already_given,
        )
        return _Made(result, block, at, snapshots, relevant, user_rules, withheld)

    async def check(self, params: p.CheckParams, session: Session) -> p.CheckResult:
        """Check every entry of the workspace (or of one category) against the code it cites
        (`memd.server.workspaces.code_check`): waits for an up-to-date check, gathered off the
        event loop."""
        workspace = await self.scopes.project(params.workspace)
        categories = categories_named(workspace, params.category)
        await workspace.refresh(workspace.categories)
        _, unreadable = readable(workspace, categories)
        checked = await workspace.code.current()
        entries = []
        for category, entry in checked.entries:
            verdict = checked.verdict(category, entry)
            if category in categories and verdict is not None:
                entries.append(wire.checked_entry(category, entry, *verdict))
        result = wire.check_result(
            entries,
            checked_at=code_check.checked_at(checked),
            root=workspace.root,
            git=checked.git,
            problem=checked.problem,
            unreadable=unreadable,
        )
        if params.propose:
            result.proposed = await proposing.stale_entries(
                workspace, result.entries, self._store_into
            )
        return result

    async def extract(self, params: p.ExtractParams, session: Session) -> p.ExtractResult:
        """Find memories in a message (`memd.core.extract.pipeline`), or in the person's turns of
        a session transcript (`transcript`, `memd.server.methods.capture`); with `store`, store
        each one through the normal store path (dedup included), with `propose` queue each one.
        A store that fails is reported on its candidate; the others still go ahead."""
        if params.store and params.propose:
            raise InvalidParams(
                "extract takes store or propose, not both: propose queues the candidates for "
                "review, store stores them now; drop one."
            )
        if params.transcript is not None and params.text:
            raise InvalidParams(
                "extract takes text or transcript, not both: pass the message, or the path "
                "of a session file to read the person's turns from."
            )
        workspace = await self.scopes.project(params.workspace)
        from memd.core.extract import pipeline  # large rules: loaded on first use

        with provenance.extracting():
            if params.transcript is not None:
                return await self._extract_transcript(workspace, params, params.transcript)
            # Off the event loop: a long message takes a while to scan, and other clients wait.
            found = await anyio.to_thread.run_sync(pipeline.extract, params.text)
            return await self._extract(workspace, params, found)

    async def _extract_transcript(
        self, workspace: Workspace, params: p.ExtractParams, path: str
    ) -> p.ExtractResult:
        """`extract` of a transcript: read it and extract each of the person's turns in one
        worker-thread hop (from this daemon's last capture of it, for a capture), keep the
        cursor once every candidate is stored or queued (`memd.server.methods.capture`)."""
        if not self.registry.limits.chat:
            raise InvalidParams(
                "memd's config says `chat = false`, so it reads no session transcripts; set "
                "`chat = true` in memd's config.toml (then `kill -HUP` the daemon), or extract "
                "the text instead."
            )
        from memd.core.extract import pipeline

        capturing = params.since_last and (params.store or params.propose)
        cursor = self.cursors.get(path) if capturing else None

        def read_and_extract() -> tuple[capture.TranscriptRead, list[Any]]:
            read = capture.read_transcript(path, cursor)
            return read, [found for text in read.turns.texts for found in pipeline.extract(text)]

        read, found = await anyio.to_thread.run_sync(read_and_extract)
        elsewhere = params.workspace_only and outside(read.turns.cwd, workspace.root)
        if elsewhere:  # listed only: the hook never keeps another workspace's session
            params = msgspec.structs.replace(params, store=False, propose=False)
        result = await self._extract(workspace, params, found)
        result.message = capture.summary(path, read, workspace.root, queued_none=elsewhere)
        if capturing and not any(c.error is not None for c in result.candidates):
            # a failed store is tried again next time
            self.cursors.set(path, read.cursor, from_kept=read.already_read)
        return result

    async def _extract(
        self, workspace: Workspace, params: p.ExtractParams, found_all: Sequence[Any]
    ) -> p.ExtractResult:
        """Candidates of what the extractor found (`found_all`, in order), stored or queued as
        `params` say; a candidate equal to an earlier one (same category and wording) is listed
        once."""
        candidates = []
        created_any = False
        seen: set[tuple[str, str]] = set()
        for found in found_all:
            if (found.category.name, found.content) in seen:
                continue
            seen.add((found.category.name, found.content))
            stored, error = None, None
            if params.store:
                try:
                    stored = await self._store_into(workspace, found.category, found.content)
                except RpcError as exc:
                    error = exc.message
                else:
                    created_any = created_any or stored.created_memory_dir
            candidates.append(
                p.Candidate(
                    kind=found.kind,
                    category=found.category.name,
                    content=found.content,
                    sentence=found.sentence,
                    stored=stored,
                    error=error,
                )
            )
        result = p.ExtractResult(
            candidates=candidates, workspace=workspace.root, created_memory_dir=created_any
        )
        if params.propose:
            result.proposed = await proposing.extracted(workspace, candidates, self._store_into)
        return result

    async def history(self, params: p.HistoryParams, session: Session) -> p.HistoryResult:
        """An entry's recorded versions (`memd.server.methods.provenance`)."""
        return await provenance.history(await self._scoped(params.workspace, params.scope), params)

    async def inbox(self, params: p.InboxParams, session: Session) -> p.InboxResult:
        """List the review inbox (`memd.server.methods.review`)."""
        return await review.inbox(await self._scoped(params.workspace, params.scope))

    async def resolve(self, params: p.ResolveParams, session: Session) -> p.ResolveResult:
        """Accept or reject one review inbox entry (`memd.server.methods.review`)."""
        workspace = await self._scoped(params.workspace, params.scope)
        return await review.resolve(workspace, params, self._store_into)

    async def propose(self, params: p.ProposeParams, session: Session) -> p.ProposeResult:
        """Queue proposals into the review inbox (`memd.server.methods.review`)."""
        workspace = await self.scopes.project(params.workspace)
        return await review.propose(workspace, params, self._store_into)

    async def _propose_later(self, params: p.ProposeParams) -> p.ProposeResult:
        """`propose` outside a request (gap analysis), holding its workspace meanwhile."""
        with self.registry.leases():
            workspace = await self.scopes.project(params.workspace)
            return await review.propose(workspace, params, self._store_into)

    async def reflect(self, params: p.ReflectParams, session: Session) -> p.ReflectResult:
        """Session review with the daemon's model (`memd.server.methods.second_opinion`)."""
        workspace = await self.scopes.project(params.workspace)
        return await self.second_opinion.reflect(workspace, params, self._propose_later)

    async def undo(self, params: p.UndoParams, session: Session) -> p.UndoResult:
        """Take back recorded write operations (`memd.server.methods.undo`)."""
        workspace = await self._scoped(params.workspace, params.scope)
        modes = review.modes(workspace, self.registry.limits.review)
        return await undo.Undo(workspace, params, modes, self.registry.limits.max_entry_chars).run()

    async def restore(self, params: p.RestoreParams, session: Session) -> p.RestoreResult:
        """Bring an archived entry back (`memd.server.methods.restore`)."""
        workspace = await self._scoped(params.workspace, params.scope)

        async def hold(
            at: Workspace, category: Category, store: p.StoreParams
        ) -> p.StoreResult | None:
            modes = review.modes(at, self.registry.limits.review)
            return await review.hold(at, category, store, modes, self._store_into)

        return await restore.restore(workspace, params, hold)

    async def subscribe(self, params: p.SubscribeParams, session: Session) -> p.SubscribeResult:
        """Send the workspace's (or the user-wide memory's) `changed` notifications to this
        connection from now on."""
        workspace = await self._feed(params.workspace, params.scope)
        workspace.subscribe(session)
        return p.SubscribeResult(workspace=workspace.root)

    async def unsubscribe(
        self, params: p.UnsubscribeParams, session: Session
    ) -> p.UnsubscribeResult:
        """Stop the workspace's (or the user-wide memory's) notifications to this connection."""
        workspace = await self._feed(params.workspace, params.scope)
        return p.UnsubscribeResult(
            workspace=workspace.root, subscribed=workspace.unsubscribe(session)
        )

    async def _feed(self, path: str, scope: p.Scope) -> Workspace:
        """The workspace whose change feed `subscribe` means: the project at `path`, or with
        scope global the user-wide memory, which a subscription never creates.

        Raises:
            InvalidParams: scope global and the user-wide memory holds nothing yet.
        """
        project = await self.scopes.project(path)
        if scope == "project":
            return project
        user_wide = await self.scopes.user_wide(create=False)
        if user_wide is None:
            raise InvalidParams(
                "The user-wide memory holds nothing yet, so it has no changes to follow; "
                "subscribe again once something is stored in it (memd store --global)."
            )
        return user_wide


_APPLY_OR_PROPOSE = (
    "cleanup takes apply or propose, not both: propose queues what it would prune for review, "
    "apply prunes now; drop one."
)


def _check_sources(params: p.QueryParams) -> None:
    """Refuse a query naming a category and only sources without categories.

    Raises:
        InvalidParams: `category` with sources ["file"], or with "chat" among them.
    """
    if params.category is not None and params.sources == ["file"]:
        raise InvalidParams(
            'A category names memory entries, and sources ["file"] only the read-only '
            "sources, which have none; leave out one of the two."
        )
    if params.category is not None and params.sources and "chat" in params.sources:
        raise InvalidParams(
            'A category names memory entries, and "chat" past sessions, which have none; '
            'leave out the category, or "chat" from sources.'
        )


async def _stale(workspace: Workspace, apply: bool) -> list[p.StaleInfo] | None:
    """The entries every citation of which is gone from the code (`cleanup`'s
    `every_citation_gone`), archived when `apply` (an entry without a slug, or changed
    meanwhile, is only proposed); None when the check does not finish in time. Before
    archiving, the code is looked at again in full (the cache may miss a file created
    untracked)."""
    try:
        checked = await workspace.code.current(full=apply)
    except RpcError:
        return None
    stale: list[p.StaleInfo] = []
    for category, entry in checked.entries:
        verdict = checked.verdict(category, entry)
        if verdict is None or not every_citation_gone(
            [found.status for found in verdict.check.anchors]
        ):
            continue
        archived = False
        if apply and entry.slug is not None:
            command = transitions.Delete(
                slug=entry.slug, content=entry.content, reason=wire.stale_reason(verdict.note)
            )
            archived = (await workspace.actor(category).delete(command)).deleted
        stale.append(wire.stale_info(category, entry, verdict.note, archived=archived))
    return stale


class _Made(NamedTuple):
    """A `context` block, and what `why` explains it by: the file the call named, the
    workspace's snapshots, layer B's ranking and every user-wide rule."""

    result: p.ContextResult
    block: prompt_block.Block
    at: file_scope.FileAt
    snapshots: dict[Category, Snapshot]
    relevant: list[tuple[Category, Entry, float]]
    user_rules: list[tuple[Category, Entry]]
    had: frozenset[int]
    """What the call's session was given before and was left out for (`memd.core.search.given`;
    empty without a session, or with `repeat`)."""


def _always(
    snapshots: dict[Category, Snapshot], at: file_scope.FileAt, layer_a: Sequence[Category]
) -> tuple[list[tuple[Category, Entry]], list[Category]]:
    """Layer A's entries (a scoped rule only when the call's file is in its scope) and its
    categories that could not be read."""
    always = [
        (c, entry)
        for c in layer_a
        for entry in snapshots[c].entries
        if file_scope.in_always_layer(entry.content, at)
    ]
    return always, [c for c in layer_a if snapshots[c].error is not None]


def _scoped_to_file(
    snapshots: dict[Category, Snapshot],
    at: file_scope.FileAt,
    layer_a: Sequence[Category],
    relevant: Sequence[tuple[Category, Entry, float]],
) -> list[tuple[Category, Entry, float | None]]:
    """Layer B's first entries: those scoped to the call's file (none without a file), of the
    categories not in layer A nor C, with their rank's score where they have one."""
    if not at.given:
        return []
    ranked = {(c, entry.line): score for c, entry, score in relevant}
    return [
        (c, entry, ranked.get((c, entry.line)))
        for c in snapshots
        if c not in layer_a and c.layer != "procedures"
        for entry in snapshots[c].entries
        if file_scope.fit(entry.content, at) == "matches"
    ]


class _Checks:
    """The statuses a `query` or `context` reads from the workspace's citation check, never
    waiting for it; `done` wakes a refresh when an entry was not checked yet (or the check may
    be out of date). Only the workspace's own entries have one (not the user-wide memory's, nor
    a source's chunks)."""

    def __init__(self, workspace: Workspace) -> None:
        self.code = workspace.code
        self.unchecked = False

    def of(self, key: object, entry: Entry) -> wire.StatusNote:
        """The status and stale note of the entry `entry` found under `key`."""
        if not isinstance(key, Category):
            return (None, "")
        verdict = self.code.verdict(key, entry)
        if verdict is None:
            self.unchecked = True
            return (None, "")
        return (verdict.check.status, verdict.note)

    def note(self, category: Category, entry: Entry) -> str:
        """The stale note of one of the workspace's entries ("" when current or unchecked)."""
        return self.of(category, entry)[1]

    def placed(self, placed: prompt_block.Placed) -> wire.StatusNote:
        """The status and note of an entry of the prompt block."""
        if placed.category is None or placed.source != "memory":
            return (None, "")
        return self.of(placed.category, placed.entry)

    def done(self) -> None:
        self.code.wake(unchecked=self.unchecked)


def memory_file(file: str, memory_dir: str, categories: Categories = BUILTIN) -> Category | None:
    """The category whose file `file` names: by its bare name ("decisions.md"), as query
    results give a workspace's (".memory/decisions.md") or by its absolute path (under
    `memory_dir`, as results give the user-wide memory's); None for any other file.

    Raises:
        InvalidParams: `file` is longer than PATH_MAX bytes (no file has such a path; resolving
            one would cost time growing with the square of its length).
    """
    check_path_length(file, "file path", "use a path as query results give it")
    name = posixpath.basename(file)
    category = categories.find_file(name)
    if category is None:
        return None
    if file == name or posixpath.normpath(file) == f"{MEMORY_DIR}/{name}":
        return category
    if os.path.isabs(file) and os.path.realpath(os.path.dirname(file)) == os.path.realpath(
        memory_dir
    ):
        return category  # (a few lstats: only for an absolute path)
    return None


def _relevant_heading(text: str, file: str | None) -> str:
    """Layer B's heading: a block asked for a file alone (a file hook's) names the file."""
    if file and not text.strip():
        return f"Relevant to {file}:"
    return prompt_block.RELEVANT_HEADING


def _agent_loads(globs: list[str]) -> list[str]:
    """The `agent_loads` globs, checked as a project's `sources` entries are (relative, few
    wildcards: a glob is a regular expression, and one must not stall the daemon).

    Raises:
        InvalidParams: too many globs, or one that is refused (the message says why).
    """
    if len(globs) > MAX_SOURCE_ENTRIES:
        raise InvalidParams(
            f"agent_loads names {len(globs)} globs; name at most {MAX_SOURCE_ENTRIES}."
        )
    checked = []
    for glob in globs:
        try:
            checked.append(parse_entry(glob, allow_absolute=False))
        except ValueError as exc:
            raise InvalidParams(f"agent_loads entry {glob!r} {exc}.") from None
    return checked
