"""Semantic search in the daemon: the model, loaded on first use, and every workspace's vectors.

Rules:
- Lazy: the model (and the kept vectors, `memd.semantic.vectors`) load in a worker thread when
  the first query asks for mode auto or semantic, never at start; a daemon that only stores
  never pays for it. `semantic = false` in the settings keeps it off.
- States: "off" (with the one-sentence reason: the setting, or why the model cannot load),
  "unloaded", "loading", "ready". Until ready, queries answer lexically, and a query of mode
  auto says it is still loading and how far (`loading`: entries with a vector of those
  searched); one answered lexically because semantic search is off says nothing of it.
- One task (`run`, in the daemon's services task group) owns the model and the cache: it loads
  the model, then embeds the texts the cache lacks of each workspace a query asked for, in
  batches of `BATCH` (one worker-thread call each), and saves the cache in a worker thread.
- Bounded: at most `MAX_REQUESTS` workspaces wait to be embedded (one request a workspace, its
  newest texts); a request beyond that is dropped, and the next query of that workspace asks
  again. A query never waits for embedding.
- Vectors are looked up by text digest: a store or an outside edit leaves only the changed
  texts missing, and a workspace is complete again once they are embedded.
- A query does no work per entry once its files' versions are known: each (workspace, searched file)
  keeps the matrix of its current version (`memd.semantic.nearest.Rows`), rebuilt in a worker
  thread when the file changes (taking the unchanged rows from the last one), bounded in rows
  by `MAX_ROWS` (least recently used dropped). A question's vector is embedded in a worker
  thread, and the last `QUESTIONS` are remembered (an agent asks again).
- Only finite unit vectors are kept (`memd.semantic.vectors.usable`, on loading the kept ones
  and on each batch the model embeds). When the model has nothing to say about a query (the
  question's vector is not usable, or no searched entry has a vector), `nearest` returns None
  and the query is answered lexically, as before the model was ready (`NO_USABLE_VECTORS` for
  mode semantic).
"""

from __future__ import annotations

import functools
import logging
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from memd.core.format.mdformat import Entry
from memd.core.search.shelves import Key
from memd.semantic.vectors import MAX_VECTORS, text_key
from memd_client import protocol as p

logger = logging.getLogger(__name__)

State = Literal["off", "unloaded", "loading", "ready"]
MAX_REQUESTS = 64
"""Workspaces waiting to be embedded, at most."""
BATCH = 64
"""Texts embedded in one worker-thread call (about half a second on one core)."""
OFF_BY_SETTING = "semantic = false in the settings"
MAX_ROWS = MAX_VECTORS
"""Rows kept in the matrices of current file versions, at most (float32: about 73 MiB)."""
QUESTIONS = 256
"""Question vectors remembered."""
NO_USABLE_VECTORS = (
    "Semantic search has no usable vector for this query (the model gave one that is not a "
    "finite unit vector, or none of the searched entries has one, as none longer than the model "
    "reads has); query with mode auto or "
    "lexical, and check semantic_model in the config file if you set one."
)
"""The sentence of a mode-semantic query the model has nothing to say about."""


class SemanticService:
    """The daemon's model and vectors (see the module rules)."""

    def __init__(self, *, enabled: bool, model_dir: str | None) -> None:
        self.enabled = enabled
        self.model_dir = model_dir
        self.state: State = "unloaded" if enabled else "off"
        self.reason: str | None = None if enabled else OFF_BY_SETTING
        if enabled:  # without the extra, say so from the start, not after the first query
            self._off_without_extra()
        self._embedder: Any = None
        self._cache: Any = None
        self._question: Callable[[str], Any] | None = None
        self._rows: OrderedDict[tuple[str, Key], Any] = OrderedDict()
        self._row_count = 0
        self._pending: dict[str, tuple[str, ...]] = {}
        self._closed = False
        self._send: MemoryObjectSendStream[str]
        self._receive: MemoryObjectReceiveStream[str]
        self._send, self._receive = anyio.create_memory_object_stream[str](MAX_REQUESTS)

    # ------------------------------------------------------------------ what queries see

    @property
    def ready(self) -> bool:
        """True when the model is loaded and queries may be hybrid."""
        return self.state == "ready"

    def info(self) -> p.SemanticInfo:
        """The state, for `status` (off as soon as the settings say so, even while a model
        that is loading has not yet been dropped)."""
        if not self.enabled:
            return p.SemanticInfo(state="off", model=None, reason=OFF_BY_SETTING, vectors=0)
        model = self._embedder.model_id if self._embedder is not None else None
        vectors = len(self._cache) if self._cache is not None else 0
        return p.SemanticInfo(state=self.state, model=model, reason=self.reason, vectors=vectors)

    def unavailable(self, done: int = 0, total: int = 0) -> str:
        """The sentence of a mode-semantic query that cannot be answered now."""
        if not self.enabled:
            return (
                f"Semantic search is off ({OFF_BY_SETTING}); set semantic = true in the config "
                "file, then `kill -HUP` the daemon, or query with mode auto or lexical."
            )
        if self.state == "off":
            return (
                f"Semantic search is off ({self.reason}); fix that, then `kill -HUP` the "
                "daemon, or query with mode auto or lexical."
            )
        if total > MAX_ROWS:
            return (
                f"Semantic search keeps vectors for {MAX_ROWS:,} entries and this search has "
                f"{total:,}; search fewer categories, or query with mode auto or lexical."
            )
        if self.state != "ready":
            return (
                "Semantic search is loading its model (it loads on first use); retry in a few "
                "seconds, or query with mode auto to get lexical results meanwhile."
            )
        return (
            f"Semantic search is still embedding this workspace's memories ({done} of {total} "
            "done); retry in a few seconds, or query with mode auto to get lexical results "
            "meanwhile."
        )

    def loading(self, missing: int, total: int) -> p.SemanticLoading | None:
        """What a query that `layout` answered with no layout (`missing` of its `total` entries
        without a vector) says of semantic search still loading: how many entries are ready (0
        until the model is); None when it is not loading but off (by the setting, or not
        installed: the install hint says so elsewhere), for a search with no entries or more
        than the cache keeps, and once every entry has a vector."""
        if not self.enabled or self.state == "off" or not 0 < total <= MAX_ROWS:
            return None
        if not self.ready:
            return p.SemanticLoading(ready=0, total=total)
        if missing == 0:
            return None
        return p.SemanticLoading(ready=total - missing, total=total)

    async def layout(self, files: Mapping[Key, tuple[str, Sequence[Entry]]]) -> tuple[Any, int]:
        """The vectors of `files` (each key's workspace root and entries, as of one version of
        its category file) as a `memd.semantic.nearest.Layout` that embeds questions with the
        same model, and how many entries have no vector yet (the layout is None then, until
        the model is ready, when the settings change meanwhile, and for a search with more
        entries than the cache keeps); asks for what is missing, never waits for it."""
        total = sum(len(entries) for _, entries in files.values())
        if self.state == "off" or total > MAX_ROWS:
            return None, total
        if not self.ready:
            self._request_all(files)
            return None, total
        from memd.semantic import nearest

        model = (self._embedder, self._cache, self._question)
        parts = []
        missing = 0
        for key, (root, entries) in files.items():
            rows = await self._current_rows(root, key, entries, model)
            if (self._embedder, self._cache, self._question) != model:
                return None, total  # the settings changed meanwhile: these rows are stale
            if isinstance(rows, int):
                missing += rows
            else:
                parts.append((key, rows))
        if missing:
            self._request_all(files)
            return None, missing
        return nearest.Layout(parts, question=model[2]), 0

    def _request_all(self, files: Mapping[Key, tuple[str, Sequence[Entry]]]) -> None:
        """Ask for the texts of every workspace of `files` (one request a workspace)."""
        by_root: dict[str, list[str]] = {}
        for root, entries in files.values():
            by_root.setdefault(root, []).extend(entry.content for entry in entries)
        for root, texts in by_root.items():
            self.request(root, texts)

    async def _current_rows(
        self,
        root: str,
        key: Key,
        entries: Sequence[Entry],
        model: tuple[Any, Any, Any],
    ) -> Any:
        """The `Rows` of this version of the file, or how many of its entries lack a vector;
        `model` is the (embedder, cache, question) they belong to."""
        from memd.semantic import nearest

        embedder, cache, _ = model
        held = self._rows.get((root, key))
        if held is not None and held.entries is entries:
            self._rows.move_to_end((root, key))
            return held
        keys = [text_key(entry.content) for entry in entries]
        unknown = nearest.unknown_rows(keys, held)
        found, missing = cache.lookup([entries[row].content for row in unknown])
        if missing:
            return len(missing)
        vectors = {unknown[position]: vector for position, vector in found.items()}
        rows = await anyio.to_thread.run_sync(
            nearest.build_rows, entries, keys, held, vectors, embedder.dimensions
        )
        if self._cache is cache:  # else the settings changed meanwhile: not kept
            self._keep_rows((root, key), rows)
        return rows

    def _keep_rows(self, key: tuple[str, Key], rows: Any) -> None:
        if (old := self._rows.pop(key, None)) is not None:
            self._row_count -= len(old)
        self._rows[key] = rows
        self._row_count += len(rows)
        while self._row_count > MAX_ROWS and len(self._rows) > 1:
            _, dropped = self._rows.popitem(last=False)
            self._row_count -= len(dropped)

    async def nearest(
        self,
        text: str,
        layout: Any,
        *,
        want: int,
        named: Iterable[int],
        allowed: Sequence[int] | None,
        counted: Callable[[Any], Any],
    ) -> tuple[dict[int, float], int] | None:
        """`memd.semantic.nearest.nearest` for the question `text`, in one worker-thread call:
        embedding the question (a few ms) and the O(entries) matrix product never run on the
        event loop. The matrices are replaced, never changed, so a thread may read them. None
        when the model has nothing to say about `text`."""
        from memd.semantic import nearest

        named = list(named)

        def compute() -> tuple[dict[int, float], int] | None:
            return nearest.nearest(
                layout.question(text),  # the model of the layout's rows, even if since dropped
                layout,
                want=want,
                named=named,
                allowed=allowed,
                counted=counted,
            )

        return await anyio.to_thread.run_sync(compute)

    def request(self, root: str, texts: Sequence[str]) -> None:
        """Ask for `texts` of workspace `root` to be embedded (never waits; see the rules); not
        for a workspace with more entries than the cache keeps, which would evict its own."""
        if self.state == "off" or len(texts) > MAX_ROWS:
            return
        if root in self._pending:
            self._pending[root] = tuple(texts)
            return
        try:
            self._send.send_nowait(root)
        except (anyio.WouldBlock, anyio.ClosedResourceError):
            return
        self._pending[root] = tuple(texts)

    def count_ready(self, texts: Sequence[str]) -> int:
        """How many of `texts` have a vector (0 until the model is ready)."""
        if not self.ready:
            return 0
        found, _ = self._cache.lookup(texts)
        return len(found)

    # ------------------------------------------------------------------ settings

    def configure(self, *, enabled: bool, model_dir: str | None) -> None:
        """Apply reloaded settings: off drops the model; on (again, or with another model
        directory) loads it on the next query that asks."""
        changed = model_dir != self.model_dir
        self.enabled, self.model_dir = enabled, model_dir
        if not enabled:
            self._drop("off", OFF_BY_SETTING)
        elif self.state == "off" or (changed and self.state == "ready"):
            self._drop("unloaded", None)
            self._off_without_extra()

    def _off_without_extra(self) -> None:
        from memd.semantic.embedder import missing_extra  # imports none of the extra

        if self.state == "unloaded" and (missing := missing_extra(self.model_dir)):
            self.state, self.reason = "off", missing
            logger.warning("semantic search is off: %s", missing)

    def _drop(self, state: State, reason: str | None) -> None:
        if self.state == "loading":  # `_load` sees the settings when it finishes
            return
        self.state, self.reason = state, reason
        self._embedder, self._cache, self._question = None, None, None
        self._rows.clear()
        self._row_count = 0
        self._pending.clear()

    def close(self) -> None:
        """End `run` once its current batch is done (the daemon is stopping)."""
        self._closed = True
        self._send.close()

    # ------------------------------------------------------------------ the task

    async def run(self) -> None:
        """Load the model on the first request, then embed each requested workspace."""
        async with self._receive:
            async for root in self._receive:
                texts = self._pending.pop(root, ())
                if self.state == "unloaded":
                    await self._load()
                if self.ready and texts:
                    await self._embed(texts)

    async def _load(self) -> None:
        from memd.semantic import embedder as model  # the extra's packages load in `load`

        self.state = "loading"
        model_dir = self.model_dir
        logger.info("loading the semantic search model")
        try:
            embedder, cache = await anyio.to_thread.run_sync(_load_blocking, model_dir)
        except model.SemanticUnavailable as exc:
            logger.warning("semantic search is off: %s", exc.message)
            self.state, self.reason = "off", exc.message
            return
        if not self.enabled or model_dir != self.model_dir:  # settings changed meanwhile
            self.state = "off" if not self.enabled else "unloaded"
            self.reason = None if self.enabled else OFF_BY_SETTING
            return
        self._embedder, self._cache = embedder, cache
        self._question = functools.lru_cache(maxsize=QUESTIONS)(
            lambda text: embedder.embed([text])[0]
        )
        self.state, self.reason = "ready", None
        logger.info("semantic search ready (%s, %d vectors kept)", embedder.model_id, len(cache))

    async def _embed(self, texts: Sequence[str]) -> None:
        embedder, cache = self._embedder, self._cache
        _, missing = cache.lookup(texts)
        todo = list(dict.fromkeys(texts[position] for position in missing))
        for start in range(0, len(todo), BATCH):
            if self._closed:  # keep what is done; the rest is embedded after the restart
                break
            batch = todo[start : start + BATCH]
            rows = await anyio.to_thread.run_sync(embedder.embed, batch)
            cache.add(batch, rows)
        if todo:
            logger.debug("embedded %d texts", len(todo))
            await anyio.to_thread.run_sync(cache.copy().save)


def _load_blocking(model_dir: str | None) -> tuple[Any, Any]:
    """The model and its kept vectors (blocking)."""
    from memd.semantic import embedder as model, vectors

    embedder = model.load(model_dir)
    return embedder, vectors.VectorCache.load(embedder.model_id, embedder.dimensions)
