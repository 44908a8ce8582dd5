"""One search, for `query` and for the prompt block (`context`): gather what it reads, rank it
by words or by words and meaning, nudge it by usage, count its recalls.

Rules:
- Gather (`gather`): a search reads the project's categories (keyed by `Category`), the
  user-wide memory's (keyed by `Shelf("global", ...)`) and the project's read-only source files
  (keyed by `Shelf("file", path)`, `memd.server.workspaces.source_index`; not when one category
  is asked for), each from its own workspace; `sources` narrows it.
- Chat (`Search.chat`): the workspace's coding agents' past sessions
  (`memd.server.workspaces.chat_index`, keyed by `Shelf("chat", path)`) are searched only when
  `sources` names "chat" (a past conversation is not curated memory), never with one category
  or with tags (a session has neither). They are ranked by words alone, in every mode (no
  vectors for what was said), against their own corpus: naming "chat" never changes a memory's
  score. Their hits join the others by score (a chunk's priority, `shelves.CHAT_PRIORITY`, puts
  it under an equal memory or source chunk), cut at `limit`; no usage history, no recall.
- Rank (`Search.rank`, the one ranking of `query`, of the prompt block's layer B and of its
  layer C): hybrid (`memd.core.search.fusion`) when the mode is not lexical, the query has
  searchable terms, every searched entry has its vector and the model has something to say
  about the query; else by words alone (`memd.core.search.ranking`), asking semantic search for
  what is missing, never waiting for it. Mode semantic without a hybrid ranking is an error
  saying why.
- Decay (`usage_boost` too): an episode's score is multiplied by its decay
  (`memd.core.search.decay`, the workspace's `episode_half_life_days`), in every ranking.
- Boost (`usage_boost`): every ranking nudges each memory entry by its own workspace's usage
  history (`memd.core.search.usage`; a source's chunk has none), the prompt block's as
  `query`'s: decided in issue 31, so that the entries an agent finds first with `memd query`
  are the ones its prompt block offers first. The cut for a hybrid ranking's keyword matches is
  taken on the boosted score (`fusion.STRONG / ranking.MAX_BOOST`), for both alike.
- Outcomes (`outcome_rescored`): `query` moves each procedure's score by its reported
  successes and failures (`memd.core.search.outcomes`) after ranking, then orders the hits by
  score again (the cut at `limit` is taken before). The prompt block's layer C
  (`Search.procedures`) ranks the procedure categories alone, and layer B never ranks them.
- Recall (`count_recalls`): a query counts one recall of each entry it returns with a score (a
  listing is no recall); the prompt block counts none (its own entries would nudge themselves
  up, prompt after prompt).
- What the prompt block ranks differently, by design: only what the model finds related goes
  into a prompt (`related_only`: a hybrid result of at least `fusion.RELATED`), and a long
  prompt is ranked in a worker thread (`off_loop`), the indexes held unchanged meanwhile.

Size: a little over the ~400-line guide: gather, rank (lexical or hybrid), boost, recall and the
prompt block's two ranked layers, kept together so that `query` and `context` share each step.
"""

from __future__ import annotations

import contextlib
import datetime
import functools
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal, NamedTuple, Protocol, TypeVar

import anyio

from memd.core.format.categories import Category
from memd.core.format.mdformat import Entry
from memd.core.search import fusion, outcomes, prompt_block, ranking
from memd.core.search.decay import episode_factor
from memd.core.search.file_scope import NO_FILE, FileAt, fit
from memd.core.search.index import SearchIndex
from memd.core.search.shelves import Key, Shelf
from memd.core.sources.chunks import Chunk
from memd.core.sources.source_globs import pattern_matches
from memd.core.transcripts.chunks import ChatChunk
from memd.server.methods.read_filters import readable
from memd.server.semantic import NO_USABLE_VECTORS, SemanticService
from memd.server.workspaces.chat_index import ChatLook, ChatSession
from memd.server.workspaces.scopes import Scopes
from memd.server.workspaces.snapshot import Snapshot
from memd.server.workspaces.source_index import SourceFile, SourcesIndex, found_as
from memd.server.workspaces.workspace import Workspace
from memd_client import protocol as p
from memd_client.errors import SemanticSearchUnavailable

ORIGINS: tuple[p.Origin, ...] = ("memory", "global", "file")
Mode = Literal["lexical", "hybrid"]


class SearchedFile(NamedTuple):
    """One searched file: its workspace, its snapshot and its category (None for a source, and
    then `sources`, the indexes of every source of its workspace, a segment each; None for a
    past session too)."""

    workspace: Workspace
    snapshot: Snapshot | SourceFile | ChatSession
    category: Category | None
    sources: tuple[SourcesIndex, ...] | None = None


class Found(NamedTuple):
    """A ranked entry: its key (a source's own file), the entry (a source's chunk as an entry),
    its score and what matched."""

    key: Key
    entry: Entry
    score: float
    match: p.Match


class Located(NamedTuple):
    """A query's hit, with what its wire form needs: the memory directory of its workspace, and
    for a source's hit its chunk."""

    found: Found
    memory_dir: str
    chunk: Chunk | None
    record: outcomes.Record | None = None
    """A procedure's outcome record (None for any other entry)."""
    chat: tuple[tuple[str, str, p.Agent], ChatChunk] | None = None
    """A past session's hit: its transcript's path, session and agent, and its chunk."""


class Answer(NamedTuple):
    """A query's answer: its hits, how many matched, the mode that ranked them, how far semantic
    search is when still loading, and the project's files that could not be read."""

    hits: list[Located]
    total: int
    mode: Mode
    loading: p.SemanticLoading | None
    unreadable: list[p.FileProblem]


class Ranked(NamedTuple):
    """The best hits of one search, how many matched, the mode that ranked them, and, for a
    lexical ranking because semantic search is still loading, how far it is."""

    hits: list[Found]
    total: int
    mode: Mode
    loading: p.SemanticLoading | None


class ChatRanked(NamedTuple):
    """Past sessions' chunks ranked: what was searched (by key) and the ranking."""

    searched: dict[Key, SearchedFile]
    ranked: Ranked


def segment_key(segment: SourcesIndex) -> Shelf:
    """The key under which a segment of a workspace's sources is ranked: its first file's, so
    that equal scores go by path across segments (the ranking never sees a file's own key)."""
    return Shelf("file", segment.paths[0])


Value = TypeVar("Value")


class Searchable:
    """What one search ranks for `searched`: each memory file's own index, and the sources as
    a few (`memd.server.workspaces.source_index.SourcesIndex`, a segment of files each, under
    `segment_key`). `hit` gives a source's hit back under its file's own key, with the chunk's
    own entry; `per_file` does the same for a filter or a boost, so each sees what it would see
    with one index a file."""

    def __init__(self, searched: Mapping[Key, SearchedFile]) -> None:
        self.indexes: list[tuple[Key, SearchIndex]] = []
        self.segments: dict[Key, SourcesIndex] = {}
        for key, searched_file in searched.items():
            if isinstance(searched_file.snapshot, Snapshot | ChatSession):
                self.indexes.append((key, searched_file.snapshot.index))
            elif searched_file.sources is not None and not self.segments:
                self.segments = {segment_key(found): found for found in searched_file.sources}
                self.indexes += [(key, found.index) for key, found in self.segments.items()]

    @classmethod
    def of_sources(cls, segments: Sequence[SourcesIndex]) -> Searchable:
        """What one search ranks for a workspace's sources alone."""
        searchable = cls({})
        searchable.segments = {segment_key(found): found for found in segments}
        searchable.indexes = [(key, found.index) for key, found in searchable.segments.items()]
        return searchable

    def owner(self, key: Key, entry: Entry) -> tuple[Key, Entry]:
        """The key and entry of a hit as one index a file would have given them."""
        segment = self.segments.get(key)
        if segment is None:
            return key, entry
        path, own = segment.owner(entry)
        return Shelf("file", path), own

    def hit(self, found: ranking.Hit[Key]) -> ranking.Hit[Key]:
        """A hit under its own file's key (see `owner`)."""
        if found.key not in self.segments:
            return found
        key, entry = self.owner(found.key, found.entry)
        return ranking.Hit(key=key, entry=entry, score=found.score)

    def per_file(self, judge: Callable[[Key, Entry], Value]) -> Callable[[Key, Entry], Value]:
        """`judge` (a filter or a boost) called with each entry's own key and entry (`judge`
        itself without sources: every index is then its own file's)."""
        if not self.segments:
            return judge
        return lambda key, entry: judge(*self.owner(key, entry))


async def gather(
    scopes: Scopes,
    workspace: Workspace,
    categories: tuple[Category, ...],
    sources: Sequence[p.Origin] | None,
) -> tuple[dict[Key, SearchedFile], list[p.FileProblem]]:
    """The files one search reads, by key, and the project's files that could not be read (an
    unreadable user-wide file is left out silently: the user-wide memory is searched as a
    bonus, and `memd stats --global` names its problems).

    Raises:
        RpcError: none of the project's `categories` can be read (`read_filters.readable`).
    """
    wanted = set(sources or ORIGINS)
    found: dict[Key, SearchedFile] = {}
    problems: list[p.FileProblem] = []
    if "memory" in wanted:
        await workspace.refresh(categories)
        snapshots, problems = readable(workspace, categories)
        found.update({c: SearchedFile(workspace, s, c) for c, s in snapshots.items()})
    if "global" in wanted and (user := await scopes.user_wide(create=False)) is not None:
        # The user-wide memory's categories by name: a project's own custom category is not
        # among them, and one from the config is the same object in both.
        theirs = [c for c in map(user.categories.get, (c.name for c in categories)) if c]
        await user.refresh(theirs)
        for category in theirs:
            snapshot = user.actor(category).snapshot
            if snapshot.error is None:
                found[Shelf("global", category.file, category)] = SearchedFile(
                    user, snapshot, category
                )
    if "file" in wanted and len(categories) == len(workspace.categories):
        look = await scopes.look(workspace)
        for path, source in look.files.items():
            found[Shelf("file", path)] = SearchedFile(workspace, source, None, look.segments)
    return found, problems


def usage_boost(searched: Mapping[Key, SearchedFile]) -> ranking.Boost[Key] | None:
    """The usage nudge of each searched entry, from its own workspace's history (None when only
    sources are searched: their chunks have no history)."""
    workspaces = {
        id(searched_file.workspace): searched_file.workspace
        for searched_file in searched.values()
        if searched_file.category is not None
    }
    if not workspaces:
        return None
    boosts = {key: workspace.usage.make_boost() for key, workspace in workspaces.items()}
    today = datetime.date.fromtimestamp(time.time())
    # Each key's nudge, looked up once a search (a boost is asked for every entry walked).
    by_key: dict[Key, Callable[[Entry], float]] = {}
    for key, searched_file in searched.items():
        category = searched_file.category
        if category is None:  # a source's chunk: no usage history
            by_key[key] = _no_nudge
            continue
        nudge = boosts[id(searched_file.workspace)]
        if category.kind == "episode":
            half_life = searched_file.workspace.episode_half_life_days
            nudge = _decayed(nudge, today, half_life)
        by_key[key] = functools.partial(nudge, category)

    def boost(key: Key, entry: Entry) -> float:
        return by_key[key](entry)

    return boost


def _no_nudge(entry: Entry) -> float:
    """The boost of a source's chunk: none (it has no usage history)."""
    return 1.0


def _decayed(
    nudge: Callable[[Category, Entry], float], today: datetime.date, half_life_days: float
) -> Callable[[Category, Entry], float]:
    """An episode's boost: its usage nudge times its decay (`memd.core.search.decay`)."""

    def boost(category: Category, entry: Entry) -> float:
        return nudge(category, entry) * episode_factor(
            entry.slug, entry.content, today, half_life_days
        )

    return boost


def count_recalls(searched: Mapping[Key, SearchedFile], found: Iterable[Found]) -> None:
    """Count one recall of each entry found with a score, in its own workspace's history (a
    listing, score 0, is no recall), each workspace's at once."""
    recalled: dict[int, tuple[Workspace, list[tuple[Category, Entry]]]] = {}
    for hit in found:
        searched_file = searched[hit.key]
        if searched_file.category is not None and hit.score > 0:
            workspace = searched_file.workspace
            _, entries = recalled.setdefault(id(workspace), (workspace, []))
            entries.append((searched_file.category, hit.entry))
    for workspace, entries in recalled.values():
        workspace.usage.record_recalls(entries)


def outcome_rescored(searched: Mapping[Key, SearchedFile], hits: list[Found]) -> list[Found]:
    """`hits` with each of the workspace's procedures' scores moved by its record, best first
    again (stable: equal scores keep their order); unchanged when no hit has a record."""
    moved = False
    rescored = []
    for hit in hits:
        searched_file = searched[hit.key]
        category = searched_file.category
        if category is not None and category.kind == "procedure":
            record = searched_file.workspace.usage.record(category, hit.entry)
            if record != outcomes.NO_RECORD:
                hit = hit._replace(score=outcomes.ranked_score(hit.score, record))
                moved = True
        rescored.append(hit)
    if moved:
        rescored.sort(key=lambda hit: -hit.score)
    return rescored


TaggedLines = dict[Key, set[int]]
"""Per category (only those with any), the lines of the entries carrying the wanted tags."""


class Tagged(Protocol):
    """Anything searched with tags: a category file's snapshot, a source file."""

    @property
    def tags(self) -> dict[int, frozenset[str]]: ...


def tagged_lines(snapshots: Mapping[Key, Tagged], wanted: frozenset[str]) -> TaggedLines:
    """Return where the entries carrying every `wanted` tag are, in `snapshots`' order."""
    return {
        category: lines
        for category, snapshot in snapshots.items()
        if (lines := {line for line, tags in snapshot.tags.items() if wanted <= tags})
    }


def within(allowed: TaggedLines) -> Callable[[Key, Entry], bool]:
    """Return the test "is this entry one of the tagged ones"."""
    untagged: set[int] = set()

    def tagged(category: Key, entry: Entry) -> bool:
        return entry.line in allowed.get(category, untagged)

    return tagged


def not_elsewhere(at: FileAt) -> Callable[[Key, Entry], bool]:
    """Return the test "is this entry not scoped to other files than `at`" (a source's chunk
    has no scope)."""

    def kept(key: Key, entry: Entry) -> bool:
        return (isinstance(key, Shelf) and key.scope == "file") or fit(
            entry.content, at
        ) != "elsewhere"

    return kept


def _and(
    first: Callable[[Key, Entry], bool] | None, second: Callable[[Key, Entry], bool]
) -> Callable[[Key, Entry], bool]:
    """Both tests (`first` None: `second` alone)."""
    if first is None:
        return second
    return lambda key, entry: first(key, entry) and second(key, entry)


def located(searched_file: SearchedFile, found: Found) -> Located:
    """A query's hit with what its wire form needs (see `Located`)."""
    chunk = None
    said = None
    if isinstance(searched_file.snapshot, SourceFile):
        chunk = searched_file.snapshot.chunk_at[found.entry.line]
    elif isinstance(searched_file.snapshot, ChatSession):
        session = searched_file.snapshot
        where = (session.path, session.session, session.agent)
        said = (where, session.chunk_at(found.entry.line))
    record = None
    if searched_file.category is not None and searched_file.category.kind == "procedure":
        record = searched_file.workspace.usage.record(searched_file.category, found.entry)
    return Located(found, searched_file.workspace.memory_dir, chunk, record, said)


class Search:
    """The one search of a daemon (see the module rules), over its scopes and its semantic
    search (None: lexical only)."""

    def __init__(self, scopes: Scopes, semantic: SemanticService | None) -> None:
        self.scopes = scopes
        self.semantic = semantic

    async def query(
        self,
        workspace: Workspace,
        text: str,
        *,
        categories: tuple[Category, ...],
        sources: Sequence[p.Origin] | None,
        tags: frozenset[str],
        mode: p.QueryMode,
        limit: int,
        min_score: float | None,
        at: FileAt = NO_FILE,
    ) -> Answer:
        """The whole search of `query`: gather, keep the entries carrying every one of `tags`
        (none: every entry) and, for a call naming a file (`at`), not scoped elsewhere; rank,
        put the entries scoped to that file first (`memd.core.search.file_scope`), count the
        recalls, locate each hit.

        Raises:
            RpcError: nothing to search can be read (`gather`), or mode semantic and no hybrid
                ranking (`rank`).
        """
        searched, unreadable = await gather(self.scopes, workspace, categories, sources)
        with_chat = bool(sources and "chat" in sources and not tags)
        with_chat = with_chat and len(categories) == len(workspace.categories)
        # With tags, every entry still shapes the statistics (so each score is the one it has
        # without tags); only tagged entries can be hits, before `limit` (a query without
        # words lists them, as it lists every entry without tags).
        snapshots = {key: searched_file.snapshot for key, searched_file in searched.items()}
        keep = within(tagged_lines(snapshots, tags)) if tags else None
        if at.given:
            keep = _and(keep, not_elsewhere(at))
        ranked = Ranked([], 0, "lexical", None)
        if searched or not with_chat:
            ranked = await self.rank(
                searched, text, mode=mode, limit=limit, min_score=min_score, keep=keep
            )
        if with_chat:
            searched, ranked = await self._with_chat(
                workspace, text, searched, ranked, limit, min_score
            )
        found_hits = outcome_rescored(searched, ranked.hits)
        if at.given:
            found_hits.sort(key=lambda hit: fit(hit.entry.content, at) != "matches")
        count_recalls(searched, found_hits)
        hits = [located(searched[found.key], found) for found in found_hits]
        return Answer(hits, ranked.total, ranked.mode, ranked.loading, unreadable)

    async def rank(
        self,
        searched: Mapping[Key, SearchedFile],
        query: str,
        *,
        mode: p.QueryMode,
        limit: int,
        min_score: float | None = None,
        keep: ranking.Keep[Key] | None = None,
        related_only: bool = False,
        off_loop: bool = False,
    ) -> Ranked:
        """The best `limit` entries of `searched` for `query` (see the module rules), of at
        least `min_score`, only those `keep` accepts (each still shapes the statistics).

        Raises:
            SemanticSearchUnavailable: mode semantic, and no hybrid ranking (saying why).
        """
        boost = usage_boost(searched)
        layout, loading = None, None
        if mode != "lexical" and ranking.query_weights(query):
            layout, loading = await self._layout(mode, searched)
        if layout is not None:
            # Taken after the wait: a store meanwhile may have moved an index on to its next
            # version (the snapshot then builds its own).
            searchable = Searchable(searched)
            # The lexical hits that can be keyword matches (same statistics, boost and filter
            # as the lexical path); weaker ones count for nothing in the fusion.
            strong = await _search(
                searchable,
                query,
                off_loop,
                limit=max(1, layout.size),
                min_score=fusion.STRONG / ranking.MAX_BOOST,  # the cut is before the boost
                boost=boost,
                keep=keep,
            )
            fused_min = fusion.RELATED if related_only else min_score
            if related_only and min_score is not None:
                fused_min = max(min_score, fusion.RELATED)
            fused = await self._fuse(
                query, layout, [searchable.hit(hit) for hit in strong.hits], limit, fused_min, keep
            )
            if fused is not None:
                return Ranked(fused[0], fused[1], "hybrid", None)
            if mode == "semantic":
                raise SemanticSearchUnavailable(NO_USABLE_VECTORS)
        searchable = Searchable(searched)  # after the waits (see above)
        found = await _search(
            searchable, query, off_loop, limit=limit, min_score=min_score, boost=boost, keep=keep
        )
        hits = [
            Found(hit.key, hit.entry, hit.score, "keyword")
            for hit in map(searchable.hit, found.hits)
        ]
        return Ranked(hits, found.total, "lexical", loading)

    async def relevant(
        self,
        workspace: Workspace,
        snapshots: Mapping[Category, Snapshot],
        query: str,
        keep: ranking.Keep[Key] | None = None,
        *,
        every_category: bool = False,
    ) -> tuple[list[tuple[Category, Entry, float]], p.SemanticLoading | None]:
        """Layer B of a prompt's block: the entries of the categories not always in it (of
        every category with `every_category`: a block without layer A) ranked against the
        prompt by `rank` in mode auto, only those `keep` accepts (and how far semantic search is
        when it is still loading); never a procedure (layer C's, `procedures`)."""
        wanted = [
            c
            for c in snapshots
            if c.layer == "relevant" or (every_category and c.layer == "always")
        ]
        return await self._ranked_layer(workspace, snapshots, wanted, query, keep)

    async def procedures(
        self,
        workspace: Workspace,
        snapshots: Mapping[Category, Snapshot],
        query: str,
        keep: ranking.Keep[Key] | None = None,
    ) -> list[tuple[Category, Entry, float]]:
        """Layer C's candidates: the entries of the procedure categories ranked against the
        prompt as layer B's are (`relevant`), best first (before their outcomes order them)."""
        wanted = [c for c in snapshots if c.layer == "procedures"]
        found, _ = await self._ranked_layer(workspace, snapshots, wanted, query, keep)
        return found

    async def _ranked_layer(
        self,
        workspace: Workspace,
        snapshots: Mapping[Category, Snapshot],
        wanted: Sequence[Category],
        query: str,
        keep: ranking.Keep[Key] | None,
    ) -> tuple[list[tuple[Category, Entry, float]], p.SemanticLoading | None]:
        """The entries of the `wanted` categories (those that can be read) ranked against the
        prompt by `rank` in mode auto, related ones only, in a worker thread."""
        searched: dict[Key, SearchedFile] = {
            c: SearchedFile(workspace, snapshots[c], c)
            for c in wanted
            if c in snapshots and snapshots[c].error is None
        }
        if not query.strip() or not any(s.snapshot.entries for s in searched.values()):
            return [], None  # nothing to rank: no worker-thread hop
        ranked = await self.rank(
            searched,
            query,
            mode="auto",
            limit=prompt_block.RELEVANT_LIMIT,
            keep=keep,
            related_only=True,
            off_loop=True,
        )
        relevant = [
            (category, hit.entry, hit.score)
            for hit in ranked.hits
            if (category := searched[hit.key].category) is not None
        ]
        return relevant, ranked.loading

    async def source_chunks(
        self, workspace: Workspace, query: str, skip: Sequence[str]
    ) -> list[prompt_block.SourceChunk]:
        """Layer C of a prompt's block: the chunks of the workspace's read-only sources ranked
        against the prompt by `rank` (lexical), but for the files matching a glob of `skip`
        (those the calling agent loads on its own: they still shape the statistics, being the
        project's words too, but none of their chunks is a hit)."""
        if not query.strip():
            return []
        look = await self.scopes.look(workspace)
        loaded = {
            path
            for path in look.files
            if any(pattern_matches(glob, found_as(path)) for glob in skip)
        }
        if len(loaded) == len(look.files):
            return []
        searched: dict[Key, SearchedFile] = {
            Shelf("file", path): SearchedFile(workspace, source, None, look.segments)
            for path, source in look.files.items()
        }
        skipped = {Shelf("file", path) for path in loaded}

        def kept(key: Key, entry: Entry) -> bool:
            return key not in skipped

        ranked = await self.rank(
            searched,
            query,
            mode="lexical",
            limit=prompt_block.RELEVANT_LIMIT,
            keep=kept if loaded else None,
            off_loop=True,
        )
        chunks = []
        for hit in ranked.hits:
            assert isinstance(hit.key, Shelf)
            part = look.files[hit.key.path].chunk_at[hit.entry.line]
            chunks.append(
                prompt_block.SourceChunk(hit.key.path, part.start, part.end, part.text, hit.score)
            )
        return chunks

    async def _with_chat(
        self,
        workspace: Workspace,
        text: str,
        searched: dict[Key, SearchedFile],
        ranked: Ranked,
        limit: int,
        min_score: float | None = None,
    ) -> tuple[dict[Key, SearchedFile], Ranked]:
        """`ranked` joined by score with the past sessions' best hits (see the module rules),
        and what was searched, the sessions too."""
        chats = await self.chat(workspace, text, limit=limit, min_score=min_score)
        joined = sorted([*ranked.hits, *chats.ranked.hits], key=lambda hit: -hit.score)
        total = ranked.total + chats.ranked.total
        return {**searched, **chats.searched}, ranked._replace(hits=joined[:limit], total=total)

    async def chat(
        self,
        workspace: Workspace,
        query: str,
        *,
        limit: int,
        min_score: float | None = None,
        look: ChatLook | None = None,
    ) -> ChatRanked:
        """The workspace's past sessions' chunks ranked against `query` by words alone (see the
        module rules), in a worker thread; none when `chat` is off."""
        if look is None:
            look = await self.scopes.chats(workspace)
        searched: dict[Key, SearchedFile] = {
            Shelf("chat", path): SearchedFile(workspace, session, None)
            for path, session in look.sessions.items()
            if session.chunks
        }
        if not searched:
            return ChatRanked(searched, Ranked([], 0, "lexical", None))
        ranked = await self.rank(
            searched, query, mode="lexical", limit=limit, min_score=min_score, off_loop=True
        )
        return ChatRanked(searched, ranked)

    async def chat_chunks(
        self, workspace: Workspace, query: str, relevant: Sequence[tuple[Any, Any, float]]
    ) -> list[prompt_block.ChatHit]:
        """The prompt block's past sessions' chunks: the best `prompt_block.CHAT_LIMIT` of
        those that score well beside layer B's `relevant` entries (`prompt_block.chat_floor`),
        best first; none while the workspace's first look at them is being taken (a prompt
        hook never waits for reading every transcript)."""
        if not query.strip() or not self.scopes.registry.limits.chat:
            return []
        floor = prompt_block.chat_floor(max((score for _, _, score in relevant), default=None))
        look = await self.scopes.chats(workspace, wait=False)  # a prompt never waits for a look
        ranked = await self.chat(
            workspace, query, limit=prompt_block.CHAT_LIMIT, min_score=floor, look=look
        )
        chats = []
        for hit in ranked.ranked.hits:
            session = ranked.searched[hit.key].snapshot
            assert isinstance(session, ChatSession)
            part = session.chunk_at(hit.entry.line)
            chats.append(
                prompt_block.ChatHit(
                    session.path,
                    part.first,
                    part.last,
                    part.text,
                    hit.score,
                    session.session,
                    part.timestamp,
                )
            )
        return chats

    def _semantic_service(self) -> SemanticService:
        """The daemon's semantic search (there is one whenever a layout was given)."""
        assert self.semantic is not None
        return self.semantic

    async def _layout(
        self, mode: str, searched: Mapping[Key, SearchedFile]
    ) -> tuple[Any, p.SemanticLoading | None]:
        """The vectors of the searched entries (`memd.semantic.nearest.Layout`) for a hybrid
        ranking, or None when it cannot run now and `mode` is auto, with how far semantic
        search is when it is still loading (`SemanticService.loading`): asks for what is
        missing (and for the model, until it is loaded), never waits for it.

        Raises:
            SemanticSearchUnavailable: mode semantic, and no layout (saying why).
        """
        semantic = self.semantic
        if semantic is None:
            if mode == "semantic":
                raise SemanticSearchUnavailable("Semantic search is off.")
            return None, None
        files = {key: (s.workspace.root, s.snapshot.entries) for key, s in searched.items()}
        layout, missing = await semantic.layout(files)
        if layout is not None:
            return layout, None
        total = sum(len(entries) for _, entries in files.values())
        if mode == "semantic":
            raise SemanticSearchUnavailable(semantic.unavailable(total - missing, total))
        return None, semantic.loading(missing, total)

    async def _fuse(
        self,
        query: str,
        layout: Any,
        strong: Sequence[ranking.Hit[Key]],
        limit: int,
        min_score: float | None,
        keep: ranking.Keep[Key] | None,
    ) -> tuple[list[Found], int] | None:
        """The hybrid ranking (`memd.core.search.fusion`) of the `layout`'s entries, given the
        lexical hits of at least `fusion.STRONG`, and how many results there are in all; None
        when the model has nothing to say about `query` (the caller ranks lexically). Only
        those hits and the best entries by cosine are fused; the other entries the model would
        return are counted."""
        lexical = {layout.row(hit.key, hit.entry): hit.score for hit in strong}
        allowed = None
        if keep is not None:
            allowed = [row for row, (c, entry) in enumerate(layout.entries()) if keep(c, entry)]

        def counted(cosines: Any) -> Any:
            return fusion.semantic_result(cosines, min_score)

        want = limit + len(lexical)
        nearest = await self._semantic_service().nearest(
            query, layout, want=want, named=lexical, allowed=allowed, counted=counted
        )
        if nearest is None:
            return None
        cosine, others = nearest
        fused = fusion.fuse(lexical, cosine, limit=len(cosine) or 1, min_score=min_score)
        hits: list[Found] = []
        for result in fused[:limit]:
            category, entry = layout.entry(result.key)
            hits.append(Found(category, entry, round(result.score, 4), result.match))
        return hits, len(fused) + others


async def _search(
    searchable: Searchable,
    query: str,
    off_loop: bool,
    *,
    limit: int,
    min_score: float | None,
    boost: ranking.Boost[Key] | None,
    keep: ranking.Keep[Key] | None,
) -> ranking.SearchResult[Key]:
    """`ranking.search` over `searchable`, the boost and the filter per file; `off_loop`, in a
    worker thread with the indexes held unchanged meanwhile (a store may move on to the next
    version of one; while held, a search in a worker thread and one on the loop leave their
    caches alone)."""

    def search() -> ranking.SearchResult[Key]:
        return ranking.search(
            searchable.indexes,
            query,
            limit=limit,
            min_score=min_score,
            boost=None if boost is None else searchable.per_file(boost),
            keep=None if keep is None else searchable.per_file(keep),
        )

    if not off_loop:
        return search()
    with contextlib.ExitStack() as held:
        for _, index in searchable.indexes:
            held.enter_context(index.reading())
        return await anyio.to_thread.run_sync(search)
