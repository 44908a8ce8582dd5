"""Every message on memd's socket, defined once as msgspec Structs.

Framing: one UTF-8 JSON-RPC 2.0 object or batch array per line, ended by "\\n".
Params are always by name. Schema evolution: new fields get defaults and go last; unknown
*response* fields are ignored so old clients keep working, while unknown *params* are rejected
so a misspelt option never silently does nothing.

Method names are fixed by the public contract: store, query, get, list, delete, cleanup, stats,
status, subscribe, unsubscribe (and since: context, extract, check, why). After `subscribe`, the
daemon also sends notifications (no `id`) on that connection: `changed` (a category file
changed) and `resync` (changes were dropped because the subscriber fell behind; re-read with
`list`).

Size: this module runs past the project's ~400-line guide on purpose: it is the wire contract, one
Struct per message and no logic, read top to bottom; split, the contract would have to be pieced
together from several files.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from msgspec import UNSET, Meta, Raw, UnsetType

from memd_client._constants import (
    DEFAULT_CONTEXT_BUDGET as DEFAULT_CONTEXT_BUDGET,
    PROTOCOL_VERSION as PROTOCOL_VERSION,
)
from memd_client.errors import ErrorObject

MAX_QUERY_LIMIT = 20
DEFAULT_QUERY_LIMIT = 10
MAX_ARCHIVE_REASON = 300
"""The longest archive reason a store may give (`StoreParams.reason`)."""

RequestId = int | str | None

# ---------------------------------------------------------------------------- envelope


class Request(msgspec.Struct):
    """A JSON-RPC request or notification (no `id`); `params` is decoded per method later."""

    method: str
    jsonrpc: Literal["2.0"] = "2.0"
    params: Raw | UnsetType = UNSET
    id: RequestId | UnsetType = UNSET


class Response(msgspec.Struct):
    """A JSON-RPC response: exactly one of `result` or `error` is set (UNSET is not sent)."""

    id: RequestId
    jsonrpc: Literal["2.0"] = "2.0"
    result: Any | UnsetType = UNSET
    error: ErrorObject | UnsetType = UNSET


class _Params(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True, kw_only=True):
    """Base of every params Struct: unknown fields are an error, defaults are not sent."""


class _Result(msgspec.Struct, kw_only=True):
    """Base of every result Struct."""


# ---------------------------------------------------------------------------- shared shapes

Workspace = Annotated[str, Meta(min_length=1, description="Absolute path to a project root.")]


Tags = Annotated[
    list[str],
    Meta(
        max_length=64,
        description=(
            "Inline #tags an entry must all carry, with or without the '#', in any case "
            "(e.g. ['security', '#db-migrations'])."
        ),
    ),
]


class EntryInfo(msgspec.Struct, kw_only=True):
    """A memory as the daemon reports it; `tags` are its inline #tags, folded, without the
    `#`, sorted. Every field is sent, defaults too (a reader of the JSON sees one shape); the
    defaults are for older daemons, which left out `tags` when empty and `source` when
    "memory"."""

    category: str
    file: str
    line: int
    slug: str | None
    content: str
    tags: list[str] = []
    source: Literal["memory", "global"] = "memory"
    """Where it lives: "memory" (the workspace's `.memory/`) or "global" (the user-wide
    memory)."""
    outcomes: OutcomeCounts | None = None
    """For a procedure, how often it was reported to have worked and failed (`outcome`); None
    for other entries (and from older daemons)."""


class FileProblem(msgspec.Struct, kw_only=True):
    """A category file an unscoped read could not use (the other files were still served)."""

    category: str
    file: str
    code: int
    message: str


class MatchedEntry(msgspec.Struct, kw_only=True):
    """The existing entry a store was compared with."""

    slug: str | None
    content: str
    line: int


# ---------------------------------------------------------------------------- store


CheckStatus = Literal["ok", "stale", "none"]
"""An entry checked against the code it cites (`check`)."""

Scope = Literal["project", "global"]
"""Where a store goes: the workspace's memory, or the user-wide one."""
Origin = Literal["memory", "global", "file", "chat"]
"""Where a query hit lives: the workspace's memory, the user-wide one, a read-only source file
of the workspace (CLAUDE.md, AGENTS.md, rules files, ...), or a past session of a coding agent
in the workspace (its transcript, read-only: "chat")."""
Agent = Literal["claude", "codex"]
"""A coding agent whose session transcripts memd reads: Claude Code, Codex."""


# ---------------------------------------------------------------------------- who writes

WriteOrigin = Literal["user", "agent", "extracted", "merged"]
"""Who a write comes from: "user" (the CLI, a person's hand edit), "agent" (MCP, the client
library), "extracted" (`extract` with `store`), "merged" (arrived by git)."""


class Writer(msgspec.Struct, kw_only=True, omit_defaults=True, forbid_unknown_fields=True):
    """Who makes a write, recorded in the workspace's provenance (`history`): the client's name
    and version (an MCP client's `clientInfo`, `memd` for the CLI, the library's `client_name`),
    the agent session if known, and the origin. A write without one is recorded as from an
    "agent" client named "unknown"."""

    client: Annotated[str, Meta(min_length=1, max_length=100)]
    version: Annotated[str, Meta(max_length=100)] | None = None
    origin: WriteOrigin = "agent"
    session: Annotated[str, Meta(min_length=1, max_length=200)] | None = None


# ---------------------------------------------------------------------------- second opinion

LlmVerdict = Literal["restates", "distinct", "no_opinion"]
"""A model's answer to "does this new memory restate that one?" ("no_opinion": no model was
asked, or it stalled, failed or answered something that did not parse)."""
LlmSource = Literal["sampling", "command"]
"""Where the model was: the MCP client's own (`sampling/createMessage`), or `llm_command`."""
MAX_CONVERSATION = 8000
"""The most characters of conversation a caller may send with a store (gap analysis)."""
MAX_TRANSCRIPT = 60000
"""The most characters of transcript `reflect` (session review) takes."""


class LlmOpinion(msgspec.Struct, kw_only=True, omit_defaults=True):
    """What a model said about a store (the second opinion; fail-open: "no_opinion" leaves the
    store exactly as the write decision made it). In a store's params, a verdict the caller
    already got from its own model (the MCP bridge's sampling); in its result, whether a model
    was consulted and what it said."""

    consulted: bool = False
    verdict: LlmVerdict = "no_opinion"
    reason: Annotated[str, Meta(max_length=MAX_ARCHIVE_REASON)] = ""
    restates: str | None = None
    """With "restates": the slug (or, for an entry without one, the exact text) of the entry the
    new memory restates."""
    source: LlmSource | None = None


class StoreParams(_Params):
    """Store one memory: upsert by `slug`, otherwise dedup against the category."""

    workspace: Workspace
    category: str
    content: str
    slug: str | None = None
    dry_run: bool = False
    scope: Scope = "project"
    """"global": into the user-wide memory (`$XDG_DATA_HOME/memd/global/.memory/`), for rules
    that hold in every project; `workspace` still names where the call comes from."""
    replaces: str | None = None
    """With `slug`: update that entry only if it still says exactly this (the text the caller
    read); else nothing is stored and the error is `EntryNotFound`."""
    reason: Annotated[str, Meta(max_length=MAX_ARCHIVE_REASON)] | None = None
    """Why the text an update replaces goes to the archive, in the caller's words (its archive
    line says so; `memd check --fix` names the moved citation); one line."""
    writer: Writer | None = None
    """Who makes this write (recorded, see `Writer`)."""
    llm: LlmOpinion | None = None
    """A model's verdict the caller already has (the bridge's sampling): "restates" turns the
    store into the skip or update the write decision makes for that entry; the daemon does not
    ask its own model then."""
    conversation: Annotated[str, Meta(max_length=MAX_CONVERSATION)] | None = None
    """An excerpt of the caller's conversation, for gap analysis (never stored as a memory)."""


class EpisodeParams(_Params):
    """Store one episode: a dated event (`text`), its outcome and tags, dated by the daemon
    (today, unless `text` starts with a date), into the episode category (`episodes.md`)."""

    workspace: Workspace
    text: str
    outcome: str | None = None
    """How it ended, one word such as "fixed" or "failed": written as `#outcome/<outcome>`."""
    tags: Tags | None = None
    dry_run: bool = False
    scope: Scope = "project"
    writer: Writer | None = None
    """Who makes this write (recorded, see `Writer`)."""


StoreAction = Literal["stored", "updated", "skipped", "pending"]
""""pending": the store waits in the review inbox (`.memory/inbox.md`) for a person."""
QueryMode = Literal["auto", "lexical", "semantic"]
Match = Literal["keyword", "semantic", "both"]

StoreRelation = Literal[
    "same",
    "says_less",
    "tags",
    "adds_detail",
    "value_made_exact",
    "broadens",
    "narrows",
    "reworded",
    "changed_value",
    "changed_choice",
    "reversed",
    "other_subject",
    "other_roles",
    "different",
    "unrelated",
]
"""How new content relates to the entry it was compared with (store rules: docs/write-decisions.md).
Without a slug: skipped for "same" and "says_less"; updated for "tags", "adds_detail",
"value_made_exact", "broadens", "reworded" and, with `conflict`, "changed_value",
"changed_choice" and "reversed"; stored beside it for "narrows", "other_subject", "other_roles",
"different" and "unrelated". A store whose slug names an existing entry updates that entry
whatever the relation (unchanged text is skipped). A store with a new slug is always stored
under it, beside the entry it relates to, whatever the relation (`conflict` when it contradicts
that entry: both are kept)."""


class StoreResult(_Result):
    """What a store did (or, with `dry_run`, would do); `message` is a sentence for people."""

    action: StoreAction
    category: str
    file: str
    line: int
    slug: str | None
    content: str
    similarity: float
    matched: MatchedEntry | None
    message: str
    conflict: bool = False
    """`matched` and the content contradict each other ("reversed", "changed_value",
    "changed_choice"): an update replaced `matched` (its text is in the archive), or a store
    under a new slug kept both (delete the one that is wrong)."""
    over_limit: bool = False
    dry_run: bool = False
    entries: int = 0
    limit: int = 0
    normalized: bool = False
    """Line breaks or whitespace runs in the content became single spaces."""
    relation: StoreRelation | None = None
    """How the content relates to `matched` (why it was skipped, updated or stored apart)."""
    old_value: str | None = None
    """When a value, choice or subject was swapped: the words of `matched` that were replaced;
    with no `new_value`, the phrase limiting `matched` that the new text leaves out (a wider
    rule, "other_subject")."""
    new_value: str | None = None
    """The words that replaced `old_value`; with no `old_value`, the phrase limiting the new text
    that `matched` does not have (a narrower rule, "other_subject")."""
    workspace: str = ""
    """The real path of the project root this call used (empty from older daemons)."""
    created_memory_dir: bool = False
    """`.memory/` did not exist when this request arrived and its write created it (a write
    running beside it may have done so first)."""
    inbox_id: str | None = None
    """With action "pending": the id of its entry in the review inbox (`memd review`)."""
    pending_reason: str | None = None
    """With action "pending": why it waits (a reviewed category, or instruction-like text)."""
    llm: LlmOpinion | None = None
    """Whether a model was consulted on this store and what it said (None: no model is set up,
    or the store was not one a model is asked about)."""


# ---------------------------------------------------------------------------- review inbox

InboxKind = Literal["store", "prune"]
ResolveAction = Literal["accept", "reject"]


class InboxEntry(_Result):
    """One entry waiting in the review inbox: accepting a "store" stores `content` into
    `category` (under `slug` if set) as the user; accepting a "prune" deletes `slug`."""

    id: str
    kind: InboxKind
    category: str
    slug: str | None
    reason: str
    content: str


class InboxParams(_Params):
    """List the entries waiting in a workspace's review inbox."""

    workspace: Workspace
    scope: Scope = "project"
    """"global": the user-wide memory's inbox (where an agent's global store waits)."""


class InboxResult(_Result):
    """The review inbox's entries, in file order."""

    entries: list[InboxEntry]
    file: str
    workspace: str = ""


ProposalSource = Literal["extract", "gap", "session", "cleanup", "check"]
"""Where a proposal came from: `extract`, gap analysis, session review, `cleanup`'s would-prune
entries, or `check`'s stale entries."""


class Proposal(msgspec.Struct, kw_only=True, omit_defaults=True, forbid_unknown_fields=True):
    """A memory proposed for the inbox (not stored until a person accepts it)."""

    category: str
    content: Annotated[str, Meta(min_length=1)]
    slug: str | None = None
    reason: Annotated[str, Meta(max_length=MAX_ARCHIVE_REASON)] = ""


class ProposeParams(_Params):
    """Put proposals into the review inbox, each first run through the write decision as a dry
    run: one it would skip (the category already says it) is left out and says so."""

    workspace: Workspace
    source: ProposalSource
    proposals: Annotated[list[Proposal], Meta(max_length=20)]
    writer: Writer | None = None


class ProposalOutcome(_Result):
    """What became of one proposal: "queued" (its inbox id), "skipped" (the dry run skipped it:
    `message` says which entry already says it; or it already waits in the inbox: `inbox_id`
    names it) or "refused" (bad input: `message` says why)."""

    action: Literal["queued", "skipped", "refused"]
    category: str
    content: str
    inbox_id: str | None = None
    message: str = ""


class ProposeResult(_Result):
    """The outcome of each proposal, in order."""

    outcomes: list[ProposalOutcome]
    message: str
    workspace: str = ""


class ReflectParams(_Params):
    """Ask the daemon's model (`llm_command`) which memories a transcript excerpt implies, and
    propose them into the inbox (`propose`, source "session")."""

    workspace: Workspace
    transcript: Annotated[str, Meta(min_length=1, max_length=MAX_TRANSCRIPT)]
    writer: Writer | None = None


class ReflectResult(_Result):
    """Whether a model was consulted, and what became of its proposals."""

    llm: LlmOpinion
    proposed: ProposeResult | None = None
    message: str = ""
    workspace: str = ""


class ResolveParams(_Params):
    """Accept or reject one inbox entry (by `id`). Accepting a "store" entry stores it (with
    `content`, if given, instead of its text: an edit) through the normal store path as the
    user; rejecting moves it to the archive with `reason`."""

    workspace: Workspace
    id: Annotated[str, Meta(pattern=r"^p-[0-9a-f]{8}$")]
    action: ResolveAction
    content: Annotated[str, Meta(min_length=1)] | None = None
    reason: Annotated[str, Meta(max_length=MAX_ARCHIVE_REASON)] | None = None
    scope: Scope = "project"
    """"global": an entry of the user-wide memory's inbox."""


class ResolveResult(_Result):
    """What resolving did: the store an accept made (`stored`), or that it was archived."""

    id: str
    action: ResolveAction
    entry: InboxEntry
    stored: StoreResult | None = None
    deleted: bool = False
    message: str = ""
    workspace: str = ""


# ---------------------------------------------------------------------------- query


class QueryParams(_Params):
    """Search a workspace's memories by relevance; with `tags`, only among the entries carrying
    all of them (an empty `query` then lists those entries)."""

    workspace: Workspace
    query: str
    category: str | None = None
    limit: Annotated[int, Meta(ge=1, le=MAX_QUERY_LIMIT)] = DEFAULT_QUERY_LIMIT
    min_score: Annotated[float, Meta(ge=0.0, le=1.0)] | None = None
    tags: Tags | None = None
    mode: QueryMode = "auto"
    """"lexical": words only; "semantic": words and the model's similarity (error 1009 when
    that cannot run); "auto": as semantic when it can run, else lexical."""
    sources: list[Origin] | None = None
    """Where to search: "memory" (the workspace's category files), "global" (the user-wide
    memory), "file" (its read-only sources; not with `category`), "chat" (coding agents' past
    sessions in the workspace; not with `category`, only when named); None: the first three."""
    file: str | None = None
    """A file the search is about (relative to the workspace, or absolute): entries whose
    `(paths: ...)` scope matches it come first, entries scoped to other files are left out."""
    include_archived: bool = False
    """Also search the entries memd archived (`.memory/archive.md`); their hits say
    `archived: true` and why they were archived."""


class QueryHit(_Result):
    """One search result; `tags` as in `EntryInfo`. Every field is sent, defaults too (older
    daemons left out `tags`, `match` and `source` at their defaults)."""

    category: str
    file: str
    line: int
    slug: str | None
    content: str
    score: float
    tags: list[str] = []
    match: Match = "keyword"
    """What found it: "keyword" (its words), "semantic" (the model alone) or "both"."""
    source: Origin = "memory"
    """Where it lives: "memory" (the workspace's `file`), "global" (the user-wide memory's
    `file`; `path` is then absolute), "file" (a chunk of the read-only source `path`, at
    `lines`; `category` is then empty and `content` the chunk's text) or "chat" (turns `lines`
    of the session transcript `path`, absolute; `category` is then empty, `content` the turns'
    words with secret values masked, and `session`, `at` and `agent` say whose and when)."""
    path: str = ""
    """The file holding it: relative to the workspace for "memory" (`.memory/<file>`) and
    "file" (absolute if the source is outside the workspace), absolute for "global" (from
    newer daemons)."""
    lines: str = ""
    """Its lines in that file, "a-b" (from newer daemons); for "chat", its turns' numbers in
    the session (from 1, in file order)."""
    session: str = ""
    """For "chat": the session's id as its agent names it."""
    at: str = ""
    """For "chat": when its first turn was written (ISO 8601 as the agent wrote it; "" unknown)."""
    agent: Agent | Literal[""] = ""
    """For "chat": the agent whose session it is."""
    status: CheckStatus | None = None
    """Whether the code it cites still holds (`check`): "ok", "stale" (a cited file, symbol or
    command is gone or moved: `stale` says what), "none" (it cites nothing that can go stale);
    None when it was not checked yet, or for a source's chunk."""
    stale: str = ""
    """For a stale entry, what is wrong in one sentence ("cites src/old.ts, which no longer
    exists; moved to src/new.ts")."""
    archived: bool = False
    """The hit is an archived entry (`include_archived`): `file` is the archive, `category` the
    category it was removed from, `archived_reason` why and `archived_on` when."""
    archived_reason: str = ""
    archived_on: str = ""
    outcomes: OutcomeCounts | None = None
    """For a procedure, its reported successes and failures (its `score` is moved by them:
    docs/reference/file-format.md#procedures); None otherwise."""


class QueryResult(_Result):
    """The best `limit` results and how many entries matched in all."""

    results: list[QueryHit]
    total: int
    unreadable: list[FileProblem] = []
    """The category files that could not be read, so were not searched (from newer daemons)."""
    workspace: str = ""
    """The real path of the project root this call used (empty from older daemons)."""
    mode: Literal["lexical", "hybrid"] = "lexical"
    """How it was ranked: "lexical" (words only) or "hybrid" (words and the model)."""
    semantic_loading: SemanticLoading | None = None
    """Set when mode auto ranked this query by words alone because semantic search is still
    loading (its model, or the searched entries' vectors); None when it ranked by meaning too,
    when semantic search is off or not installed, for mode lexical, and from older daemons."""


class SemanticLoading(_Result):
    """Semantic search is still loading: `ready` of the `total` entries searched have a vector
    it can use (0 while the model itself loads); until all do, queries rank by words alone."""

    ready: int
    total: int


# ---------------------------------------------------------------------------- get / list / delete


class GetParams(_Params):
    """Fetch entries by `slug` (in `category`, or in every category when it is left out) or by
    (`file`, `lines` "a-b"): a category file's name ("decisions.md") or its path as query
    results give it (".memory/decisions.md"; absolute for the user-wide memory's), or a
    read-only source's path as query results give it (a root source named like a category
    file as "./decisions.md")."""

    workspace: Workspace
    category: str | None = None
    slug: str | None = None
    file: str | None = None
    lines: str | None = None
    scope: Scope = "project"
    """"global": from the user-wide memory (for a hit whose `source` is "global")."""
    around: Annotated[int, Meta(ge=0, le=50)] = 2
    """For a "chat" hit's `file` (its transcript's `path`) and `lines` (turns "a-b"): how many
    turns before and after them to read as well."""


class ListResult(_Result):
    """A list of entries, in category then file order (`list`; older daemons also sent an
    empty `text`, which is ignored)."""

    entries: list[EntryInfo]
    unreadable: list[FileProblem] = []
    """The category files that could not be read, so were not searched (from newer daemons)."""
    workspace: str = ""
    """The real path of the project root this call used (empty from older daemons)."""


class EntriesResult(ListResult):
    """The entries `get` found, in category then file order."""

    text: str = ""
    """For `get` by `file` and `lines` of a read-only source: those lines as they are (the
    `entries` are then its chunks within them, with an empty `category`); of a past session
    ("chat"): its turns `lines`, `around` more either side, each as "<role> (turn N, <time>):"
    and its words, secret values masked (`entries` empty)."""


class ListParams(_Params):
    """List every entry of a workspace, or of one category; with `tags`, only the entries
    carrying all of them."""

    workspace: Workspace
    category: str | None = None
    tags: Tags | None = None
    sources: list[Literal["memory", "global"]] | None = None
    """"memory" (the workspace's entries), "global" (the user-wide memory's); None: both, the
    workspace's first."""


class DeleteParams(_Params):
    """Delete one entry by slug; it is moved to the archive, not lost."""

    workspace: Workspace
    category: str
    slug: str
    scope: Scope = "project"
    """"global": from the user-wide memory (its archive keeps it)."""
    writer: Writer | None = None
    """Who makes this write (recorded, see `Writer`)."""


class DeleteResult(_Result):
    """Whether an entry was deleted, and which."""

    deleted: bool
    entry: EntryInfo | None
    message: str = ""
    workspace: str = ""
    """The real path of the project root this call used (empty from older daemons)."""


# ---------------------------------------------------------------------------- history


class HistoryParams(_Params):
    """The recorded versions of one entry: by `slug`, or for an entry without one by its exact
    `text` (its history is followed back through the texts it replaced)."""

    workspace: Workspace
    slug: str | None = None
    text: str | None = None
    scope: Scope = "project"


VersionAction = Literal["store", "update", "delete", "cleanup", "edit", "merge", "undo", "restore"]


class Version(_Result):
    """One recorded change of an entry: when (`at`, Unix seconds), what did it, its text after
    (None: removed) and before (`replaced`, None: new), and who (see `Writer`)."""

    at: float
    action: VersionAction
    category: str
    slug: str | None
    text: str | None
    replaced: str | None
    client: str
    version: str | None = None
    origin: WriteOrigin = "agent"
    session: str | None = None
    operation: int = 0
    """The write operation it was part of (one store, delete, cleanup, edit or merge)."""
    undoes: int | None = None
    """For an undo's change: the operation it undid."""


class HistoryResult(_Result):
    """An entry's versions, oldest first; `archived` holds archive lines that name it (the
    text of versions recorded before provenance existed, or beyond its bound)."""

    versions: list[Version]
    archived: list[str] = []
    message: str = ""
    workspace: str = ""


# ---------------------------------------------------------------------------- undo, restore


class UndoParams(_Params):
    """Take back the workspace's newest write operation not undone yet (a store, update,
    delete, applied cleanup, restore, hand edit or git merge), or with `to` every operation
    recorded after that time: an age ("10m", "2h", "1d") or an ISO 8601 time (local unless it
    names its zone). A line changed since is refused, never overwritten."""

    workspace: Workspace
    to: Annotated[str, Meta(min_length=1, max_length=64)] | None = None
    dry_run: bool = False
    scope: Scope = "project"
    writer: Writer | None = None
    """Who makes this write (recorded, see `Writer`)."""


UndoOutcome = Literal["reverted", "unchanged", "refused"]
"""What an undo did to one change ("reverted": in a dry run, would revert)."""


class UndoneChange(_Result):
    """One change an undo took back (or refused to), with the operation it was part of."""

    operation: int
    action: VersionAction
    """What made the change (`store`, `update`, `delete`, `cleanup`, `edit`, `merge`, ...)."""
    at: float
    category: str
    slug: str | None
    text: str | None
    """The text the operation wrote (None: it removed the entry)."""
    replaced: str | None
    """The text before it (None: the operation added the entry)."""
    outcome: UndoOutcome
    reason: str = ""
    """Why it was refused or left unchanged."""
    now_slug: str | None = None
    """The slug the entry has after the undo, when it was brought back under a new one."""


class UndoResult(_Result):
    """Every change of the operations taken back, newest operation first."""

    changes: list[UndoneChange]
    operations: list[int] = []
    """The operations taken back (in a dry run: that would be)."""
    dry_run: bool = False
    message: str = ""
    workspace: str = ""


class RestoreParams(_Params):
    """Bring an archived entry back into its category, word for word under its slug: by `slug`
    (the newest archive line with it), or by the archived `text`; `category` narrows the
    search."""

    workspace: Workspace
    slug: str | None = None
    text: str | None = None
    category: str | None = None
    dry_run: bool = False
    scope: Scope = "project"
    writer: Writer | None = None
    """Who makes this write (recorded, see `Writer`)."""


RestoreOutcome = Literal["restored", "unchanged", "refused", "pending"]


class RestoreResult(_Result):
    """What a restore did ("restored": in a dry run, would restore; "pending": an agent's
    restore of a reviewed text waits in the review inbox, as `inbox_id`)."""

    outcome: RestoreOutcome
    category: str
    slug: str | None
    content: str
    line: int = 0
    message: str = ""
    dry_run: bool = False
    workspace: str = ""
    inbox_id: str | None = None


# ---------------------------------------------------------------------------- cleanup


class CleanupParams(_Params):
    """Plan (or with `apply`, carry out) merges, prunes and slug assignments."""

    workspace: Workspace
    apply: bool = False
    scope: Scope = "project"
    """"global": the user-wide memory's files instead of the workspace's."""
    writer: Writer | None = None
    """Who makes this write (recorded, see `Writer`)."""
    propose: bool = False
    """Instead of applying: queue the entries the plan would prune, and the stale ones, into
    the review inbox as "prune" items (`proposed`); not with `apply`."""


class MergeInfo(_Result):
    """Near-duplicates folded into one entry."""

    category: str
    file: str
    kept: EntryInfo
    removed: list[EntryInfo]
    content: str
    slug: str
    why: list[str] = msgspec.field(default_factory=list)
    """For each entry of `removed`, in order, why it could be folded in ("the same words",
    "a shorter form of it")."""


class PruneInfo(_Result):
    """An entry removed because its category was over its limit."""

    category: str
    file: str
    entry: EntryInfo
    score: int
    why: str = ""
    """Why this entry goes, in words: the limit, its score, and on a tie the entry that stays."""
    tied_with: EntryInfo | None = None
    """The earliest entry that stays with the same score (it stays as the newer one), if any."""
    contradicted_by: EntryInfo | None = None
    """The newer entry contradicting this one (a reversed rule, another value or choice) that
    stays although the limit would have pruned it too: cleanup keeps one side of a
    contradiction (from newer daemons)."""


class SlugInfo(_Result):
    """A slug given to an entry that had none."""

    category: str
    file: str
    entry: EntryInfo
    slug: str


class CleanupResult(_Result):
    """The cleanup plan, and whether it was applied; `unused` lists entries stored long ago
    and not recalled since (archive candidates: reported, never removed by cleanup)."""

    applied: bool
    merged: list[MergeInfo]
    pruned: list[PruneInfo]
    slugged: list[SlugInfo]
    archive: str
    message: str
    unused: list[EntryInfo] = []
    workspace: str = ""
    """The real path of the project root this call used (empty from older daemons)."""
    stale: list[StaleInfo] = []
    """Entries every citation of which is missing from the code (not moved, not unverifiable):
    proposed for the archive, archived only with `apply` (never deleted; from newer daemons)."""
    consolidated: list[ConsolidatedInfo] = []
    """Old episodes nobody recalled: proposed for the archive, archived with `apply`."""
    promoted: list[PromotedInfo] = []
    """Recurring lessons: proposed as new Quirks, stored with `apply`."""
    proposed: ProposeResult | None = None
    """With `propose`: what became of each prune queued into the review inbox."""


class ConsolidatedInfo(_Result):
    """An episode `cleanup` archives: older than `episode_max_age_days`, recalled by nobody
    within it (`memd.core.writes.consolidation`)."""

    category: str
    file: str
    entry: EntryInfo
    why: str
    archived: bool = False
    """It was archived by this cleanup (`apply`)."""


class PromotedInfo(_Result):
    """A recurring lesson: three or more similar episodes, promoted into a new Quirk that names
    them (the episodes stay)."""

    category: str
    """The category of the new entry ("Quirk")."""
    content: str
    episodes: list[EntryInfo]
    stored: StoreResult | None = None
    """What storing it did (`apply`); None in a plan."""


class StaleInfo(_Result):
    """An entry whose every citation is gone from the code (`cleanup`'s proposal)."""

    category: str
    file: str
    entry: EntryInfo
    why: str
    """What is gone, in one sentence (the `check` note)."""
    archived: bool = False
    """It was archived by this cleanup (`apply`)."""


# ---------------------------------------------------------------------------- stats / status


class StatsParams(_Params):
    """Per-category counts for a workspace."""

    workspace: Workspace
    scope: Scope = "project"
    """"global": the user-wide memory's files instead of the workspace's."""


class CategoryStats(_Result):
    """One category's file, entry count and limit; `error` says why a file could not be read,
    `conflict` that it holds git conflict markers (reads serve its last good entries, writes
    are refused until the merge is resolved)."""

    category: str
    file: str
    entries: int
    limit: int
    exists: bool
    error: str | None = None
    conflict: str | None = None


class StatsResult(_Result):
    """Per-category counts, the total, and when the files were last read."""

    workspace: str
    categories: list[CategoryStats]
    total: int
    loaded_at: str
    semantic_vectors_ready: int = 0
    """Entries whose text has a vector of the semantic model (0 while it is not loaded)."""
    semantic_entries: int = 0
    """Entries in all (0 while the semantic model is not loaded)."""
    semantic: SemanticInfo | None = None
    """The daemon's semantic search, as `status` reports it (None from an older daemon)."""
    sources: list[SourceStats] = []
    """The workspace's read-only sources searched, by path (none for the user-wide memory)."""
    sources_refused: list[str] = []
    """Sources left out, one sentence each (a link out of the workspace, a file too big...)."""
    sources_indexed_at: str = ""
    """When the sources were last looked at (ISO 8601; empty: not yet)."""
    chat_sessions: int = 0
    """Past sessions of coding agents in the workspace that its "chat" source holds."""
    chat_chunks: int = 0
    """Their searchable chunks (see `QueryHit.source`)."""
    chat_left_out: list[str] = []
    """Why some sessions were left out of the "chat" source, one sentence each (too much text
    in all: the oldest go first)."""
    categories_problem: str | None = None
    """Why some of the project's own categories (`.memory/memd.toml`) were left out, if any
    were."""
    review_problem: str | None = None
    """Which entries of the project's `[review]` (`.memory/memd.toml`) were left out, and why."""


class SourceStats(_Result):
    """One read-only source: its path (relative to the workspace) and how many chunks it has."""

    path: str
    chunks: int


class StatusParams(_Params):
    """No params."""


class SemanticInfo(_Result):
    """Semantic search in this daemon: `state` "off" (`reason` says why), "unloaded" (the
    model loads on the first query that asks for it), "loading" or "ready"; the model's id and
    how many vectors are cached."""

    state: Literal["off", "unloaded", "loading", "ready"]
    model: str | None = None
    reason: str | None = None
    vectors: int = 0


class StatusResult(_Result):
    """Who is serving: versions, pid, uptime, the loaded workspaces and how they are watched."""

    version: str
    protocol_version: int
    pid: int
    uptime_s: float
    workspaces: list[str]
    socket: str = ""
    conflicts: list[str] = msgspec.field(default_factory=list)
    """Memory files of loaded workspaces that hold git conflict markers (writes refused)."""
    watch_mode: str = ""
    """How outside changes are noticed: "inotify" (one instance for every workspace),
    "watchfiles" (the fallback, a bounded number of workspaces), "on-access" (none is watched:
    files are checked when read), or "starting" before the first workspace loads."""
    workspaces_watched: int = 0
    """Loaded workspaces whose outside changes are noticed as they happen; the others are
    checked on access."""
    workspaces_unloaded: int = 0
    """Times a workspace was unloaded after `idle_unload_seconds` unused (it reloads on use)."""
    semantic: SemanticInfo | None = None
    """Semantic search's state (None from older daemons)."""


# ---------------------------------------------------------------------------- subscriptions


class SubscribeParams(_Params):
    """Receive `changed` notifications for a workspace on this connection."""

    workspace: Workspace
    scope: Scope = "project"
    """"global": the user-wide memory's changes instead (refused while it holds nothing)."""


class SubscribeResult(_Result):
    """The subscription is active from the moment this reply is sent."""

    workspace: str
    subscribed: bool = True


class UnsubscribeParams(_Params):
    """Stop `changed` notifications for a workspace on this connection."""

    workspace: Workspace
    scope: Scope = "project"
    """"global": the user-wide memory's."""


class UnsubscribeResult(_Result):
    """`subscribed` was True if the connection had been subscribed."""

    workspace: str
    subscribed: bool


# ---------------------------------------------------------------------------- context


class ContextParams(_Params):
    """Ask for a memory block to put in a prompt: always the Security and Instruction entries,
    then the entries most relevant to `text` (and to `file`'s path words), within the budget."""

    workspace: Workspace
    text: str = ""
    file: str | None = None
    budget_tokens: Annotated[int, Meta(ge=1, le=100_000)] = DEFAULT_CONTEXT_BUDGET
    agent_loads: list[str] | None = None
    """Globs (relative to the workspace) of the files the calling agent already loads on its
    own, whose chunks the block leaves out; None: Claude Code's (`CLAUDE.md`,
    `CLAUDE.local.md`, `.claude/rules/**`), since its prompt hook is the usual caller."""
    session: Annotated[str, Meta(min_length=1, max_length=200)] | None = None
    """The calling agent's session (Claude Code's `session_id`): an entry this session was
    already given by a `context` call with the same session is left out, and what this call
    gives is remembered (in the daemon's memory, bounded); None: no such memory."""
    always: bool = True
    """False: no always layer (a file hook, whose agent gets it with every prompt already);
    Security and Instruction entries then compete with the rest by relevance."""
    repeat: bool = False
    """With `session`: True leaves nothing out (the block is as without a session) but still
    records what it gives, so the session's later calls without `repeat` skip it (the prompt
    hook's block, which must stand on its own). Layer A is never left out either way."""


ContextLayer = Literal["always", "relevant", "procedures", "source", "chat"]


class ContextEntry(_Result):
    """One entry in the block: `always` (Security, Instruction), `relevant` (ranked),
    `procedures` (a procedure matching the task, proven first), `source` (a ranked chunk of
    a read-only source: `category` empty, `file` its path) or `chat` (a past session's turns
    that scored well: `file` the transcript's path, `lines` the turns, `session` and `at`)."""

    layer: ContextLayer
    category: str
    file: str
    line: int
    slug: str | None
    content: str
    score: float | None = None
    lines: str = ""
    """A source chunk's lines, "a-b" (a past session's turns for "chat")."""
    source: Origin = "memory"
    """Where it lives: the workspace's memory, the user-wide one, a read-only source, or a
    past session ("chat")."""
    session: str = ""
    """For "chat": the session's id."""
    at: str = ""
    """For "chat": when its first turn was written ("" unknown)."""
    status: CheckStatus | None = None
    """Whether the code it cites still holds (`check`): "ok", "stale" (a cited file, symbol or
    command is gone or moved: `stale` says what), "none" (it cites nothing that can go stale);
    None when it was not checked yet, or for a source's chunk."""
    stale: str = ""
    """For a stale entry, what is wrong in one sentence ("cites src/old.ts, which no longer
    exists; moved to src/new.ts")."""
    outcomes: OutcomeCounts | None = None
    """For a procedure, its reported successes and failures; None otherwise."""


class ContextResult(_Result):
    """The block (`markdown`, empty when there is nothing to say) and what went into it;
    `tokens` is the block's estimated size, never above `budget_tokens`; `omitted` counts the
    always-layer entries that did not fit."""

    markdown: str
    tokens: int
    budget_tokens: int
    entries: list[ContextEntry]
    omitted: int
    unreadable: list[FileProblem] = []
    """The category files that could not be read, so gave nothing (from newer daemons)."""
    workspace: str = ""
    """The real path of the project root this call used (empty from older daemons)."""
    semantic_loading: SemanticLoading | None = None
    """Set when the relevant layer was ranked by words alone because semantic search is still
    loading (as in `QueryResult`); the block itself does not say so."""
    already_given: int = 0
    """With `session`: how many entries that would have been considered were left out because
    the session was already given them."""
    omitted_procedures: list[str] = []
    """The slugs of the matching procedures left out of the block for space (its procedures
    layer names them too)."""


# ---------------------------------------------------------------------------- procedures


class OutcomeCounts(_Result):
    """How often a procedure was reported to have worked (`successes`) and failed."""

    successes: int = 0
    failures: int = 0


class ProcedureParams(_Params):
    """Store one procedure, `name: step; step; ... .` in procedures.md, under `slug` (else the
    slug of the procedure with the same name, else one derived from the name); the result is a
    `StoreResult`."""

    workspace: Workspace
    name: str
    steps: Annotated[list[str], Meta(min_length=1)]
    slug: str | None = None
    dry_run: bool = False
    writer: Writer | None = None
    """Who makes this write (recorded, see `Writer`)."""


OutcomeKind = Literal["success", "failure"]


class OutcomeParams(_Params):
    """Record that the procedure `slug` worked ("success") or failed ("failure")."""

    workspace: Workspace
    slug: str
    outcome: OutcomeKind


class OutcomeResult(_Result):
    """The procedure the outcome was recorded for, and its counts now."""

    category: str
    file: str
    slug: str
    content: str
    outcomes: OutcomeCounts
    message: str = ""
    workspace: str = ""


# ---------------------------------------------------------------------------- why


class WhyParams(_Params):
    """Ask which entries `context` would give for `file` (and `text`), and why each other one
    would not be given."""

    workspace: Workspace
    file: str
    """Relative to the workspace, or absolute."""
    text: str = ""
    budget_tokens: Annotated[int, Meta(ge=1, le=100_000)] = DEFAULT_CONTEXT_BUDGET
    session: Annotated[str, Meta(min_length=1, max_length=200)] | None = None
    """An agent session (as `ContextParams.session`): the entries it was already given are
    explained as "session"; `why` itself records nothing. None: as a call without a session."""
    always: bool = True
    """As `ContextParams.always`: False explains the file hook's block (no always layer)."""


WhyReason = Literal["given", "scope", "score", "budget", "session"]


class WhyEntry(_Result):
    """One entry of the workspace (or a user-wide Security or Instruction entry) and what
    `context` would do with it: `reason` "given" (then `layer` says where), or why not: "scope"
    (its `(paths: ...)` scope does not match the file), "score" (below layer B's score floor,
    or not related at all), "budget" (no room left), "session" (the session named in the call
    was already given it); `detail` says it in one phrase."""

    category: str
    file: str
    line: int
    slug: str | None
    content: str
    reason: WhyReason
    detail: str = ""
    layer: ContextLayer | None = None
    source: Literal["memory", "global"] = "memory"
    paths: list[str] = []
    """Its scope's globs (empty: it applies everywhere)."""
    problem: str = ""
    """What is wrong with its scope marker (it then applies everywhere); "" when nothing."""


class WhyResult(_Result):
    """Every entry with what `context` would do with it, and the block itself."""

    file: str
    """The file, relative to the workspace (as given when it is outside it)."""
    entries: list[WhyEntry]
    markdown: str
    tokens: int
    budget_tokens: int
    workspace: str = ""


# ---------------------------------------------------------------------------- check


AnchorStatusName = Literal["ok", "moved", "missing", "unverifiable"]
AnchorKindName = Literal["path", "symbol", "command", "config", "env"]


class CheckParams(_Params):
    """Check every memory of a workspace (or of one category) against the code it cites."""

    workspace: Workspace
    category: str | None = None
    propose: bool = False
    """Queue each stale entry into the review inbox (`proposed`): as a "store" of its `fix`
    where there is one (accepting updates the entry), else as a "prune"."""


class AnchorInfo(_Result):
    """One citation of an entry and its verdict: "ok" (it holds), "moved" (gone, and git says
    where it went: `moved_to`), "missing" (gone), "unverifiable" (memd cannot tell; never makes
    an entry stale); `evidence` says why in a few words."""

    text: str
    kind: AnchorKindName
    status: AnchorStatusName
    evidence: str
    moved_to: str | None = None


class CheckedEntry(_Result):
    """One entry checked: its status ("ok", "stale" or "none"), its citations, what is wrong
    (`note`, for a stale entry) and the content `memd check --fix` would store (`fix`: each
    moved citation rewritten to where it went; None when nothing moved)."""

    category: str
    file: str
    line: int
    slug: str | None
    content: str
    status: CheckStatus
    anchors: list[AnchorInfo]
    note: str = ""
    fix: str | None = None


class CheckCounts(_Result):
    """How many entries are current, stale, and cite nothing that can go stale."""

    ok: int = 0
    stale: int = 0
    none: int = 0


class CheckResult(_Result):
    """Every entry checked, stale ones first (then in category and file order), the counts, and
    when the code was looked at (ISO 8601)."""

    entries: list[CheckedEntry]
    counts: CheckCounts
    checked_at: str
    workspace: str = ""
    git: bool = False
    """The workspace is in a git work tree (without git, symbols are unverifiable)."""
    unreadable: list[FileProblem] = []
    """The category files that could not be read, so were not checked."""
    problem: str = ""
    """Why the check could say less than it should, one sentence ("" when nothing went wrong):
    git could not read the repository, so nothing could be found stale from its history."""
    proposed: ProposeResult | None = None
    """With `propose`: what became of each stale entry queued into the review inbox."""


# ---------------------------------------------------------------------------- extract


class ExtractParams(_Params):
    """Find memories in a user's message (no LLM), or in the person's own turns of a coding
    agent's session transcript (`transcript`); with `store`, store each one."""

    workspace: Workspace
    text: Annotated[str, Meta(max_length=100_000)] = ""
    transcript: Annotated[str, Meta(min_length=1, max_length=4096)] | None = None
    """The absolute path of a session transcript (Claude Code's or Codex's JSON lines) to read
    instead of `text`: only what the person typed is looked at (never the assistant's words,
    tool output or what the agent's harness injected)."""
    store: bool = False
    writer: Writer | None = None
    """Who makes this write (recorded, see `Writer`)."""
    propose: bool = False
    """Queue each candidate into the review inbox (`proposed`) instead of storing it; not with
    `store`."""
    since_last: bool = False
    """With `transcript` and `store` or `propose` (the capture hook sets it): read only what was
    appended since this daemon's last such call on the same file. Without it the whole window is
    read every time (what is stored or waiting already is skipped anyway)."""
    workspace_only: bool = False
    """With `transcript` (the capture hook sets it): a session that ran outside the workspace
    (its `cwd`) is listed but nothing of it is stored or queued; `message` says so."""


CandidateKind = Literal["preference", "correction", "constraint"]


class Candidate(_Result):
    """A memory found in the message: its category, its wording as a memory, the sentence it
    came from, and with `store` what storing it did (`stored`) or why it failed (`error`)."""

    kind: CandidateKind
    category: str
    content: str
    sentence: str
    stored: StoreResult | None = None
    error: str | None = None


class ExtractResult(_Result):
    """Every candidate found, in message order (empty when nothing qualifies)."""

    candidates: list[Candidate]
    workspace: str = ""
    """The real path of the project root this call used (empty from older daemons)."""
    created_memory_dir: bool = False
    """`.memory/` did not exist when this request arrived and a store of this call created it
    (a write running beside it may have done so first)."""
    proposed: ProposeResult | None = None
    """With `propose`: what became of each candidate queued into the review inbox."""
    message: str = ""
    """With `transcript`: one sentence saying what of it was looked at (empty for a text)."""


Source = Literal["memd", "external"]


class Changed(msgspec.Struct, kw_only=True):
    """Params of the `changed` notification: a category file now holds `entries`.

    `source` is "memd" after memd's own commit and "external" after a change made by someone
    else (a hand edit, git, HackLM). `error` says why the file cannot be read (then `entries` is
    empty and memd will not write to the file until it is fixed). `conflict` says the file holds
    git conflict markers: `entries` are its last good entries, and memd refuses writes to it
    until the merge is resolved (the next `changed` has no `conflict`). `git` says the change
    came from git (a checkout, merge, rebase, stash or reset): memd waited for git to finish
    and read every file once.
    """

    workspace: str
    category: str
    file: str
    source: Source
    entries: list[EntryInfo]
    error: str | None = None
    conflict: str | None = None
    git: bool = False


class Resync(msgspec.Struct, kw_only=True):
    """Params of the `resync` notification: notifications for `workspace` were dropped because
    this subscriber did not read them fast enough; call `list` to catch up."""

    workspace: str
    dropped: int
    message: str


class Notification(msgspec.Struct):
    """A JSON-RPC notification sent by the daemon (`changed` or `resync`)."""

    method: str
    params: Any
    jsonrpc: Literal["2.0"] = "2.0"


Event = Changed | Resync
"""What a subscription yields."""

NOTIFICATION_TYPES: dict[str, type[Changed] | type[Resync]] = {"changed": Changed, "resync": Resync}
