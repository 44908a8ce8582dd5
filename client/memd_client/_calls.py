"""What each client method sends: (method name, params, result type), shared by both clients."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any, Literal, NamedTuple

import msgspec

from memd_client import protocol as p
from memd_client._paths import find_workspace_with_reason


class Call(NamedTuple):
    """One prepared request."""

    method: str
    params: msgspec.Struct
    result_type: type[Any]


def client_workspace(explicit: str | os.PathLike[str] | None) -> str | None:
    """Return a client's default workspace: `explicit` made absolute, else the project root of
    the current directory, found by its `.memory/` or `.git` as the CLI finds it, decided once,
    when the client is made. None if there is none: the current directory is in no project (a
    library would otherwise create `.memory/` in a service's `/` or `$HOME` unseen) or cannot be
    read; a call then needs `workspace=`."""
    if explicit is not None:
        return os.path.abspath(os.fspath(explicit))
    try:
        found = find_workspace_with_reason()
    except OSError:
        return None
    return found.path if found.found_by != "start" else None


def workspace_path(explicit: str | os.PathLike[str] | None, default: str | None) -> str:
    """Return the absolute workspace path for a call (`default` is the client's).

    Raises:
        ValueError: the call names no workspace and the client has none (its current directory
            could not be read when it was made).
    """
    if explicit is None:
        if default is None:
            raise ValueError(
                "This client has no workspace (when it was made, its current directory was in "
                "no project, with no .memory/ or .git in it or above it, or could not be read); "
                "pass workspace= (a project root path) to the call or to the client."
            )
        return default if os.path.isabs(default) else os.path.abspath(default)
    return os.path.abspath(os.fspath(explicit))


def store(
    workspace: str,
    category: str,
    content: str,
    slug: str | None,
    dry_run: bool,
    scope: p.Scope = "project",
    replaces: str | None = None,
    reason: str | None = None,
    writer: p.Writer | None = None,
    conversation: str | None = None,
) -> Call:
    """Prepare a `store` request (`writer` None: the client's own)."""
    params = p.StoreParams(
        workspace=workspace,
        category=category,
        content=content,
        slug=slug,
        dry_run=dry_run,
        scope=scope,
        replaces=replaces,
        reason=reason,
        writer=writer,
        conversation=conversation,
    )
    return Call("store", params, p.StoreResult)


def inbox(workspace: str, scope: p.Scope = "project") -> Call:
    """Prepare an `inbox` request."""
    return Call("inbox", p.InboxParams(workspace=workspace, scope=scope), p.InboxResult)


def resolve(
    workspace: str,
    ident: str,
    action: p.ResolveAction,
    content: str | None = None,
    reason: str | None = None,
    scope: p.Scope = "project",
) -> Call:
    """Prepare a `resolve` request."""
    params = p.ResolveParams(
        workspace=workspace, id=ident, action=action, content=content, reason=reason, scope=scope
    )
    return Call("resolve", params, p.ResolveResult)


def propose(workspace: str, source: p.ProposalSource, proposals: Iterable[p.Proposal]) -> Call:
    """Prepare a `propose` request."""
    params = p.ProposeParams(workspace=workspace, source=source, proposals=list(proposals))
    return Call("propose", params, p.ProposeResult)


def reflect(workspace: str, transcript: str) -> Call:
    """Prepare a `reflect` request."""
    return Call(
        "reflect", p.ReflectParams(workspace=workspace, transcript=transcript), p.ReflectResult
    )


def query(
    workspace: str,
    query: str,
    category: str | None,
    limit: int,
    min_score: float | None,
    tags: Iterable[str] | None = None,
    mode: p.QueryMode = "auto",
    sources: Iterable[p.Origin] | None = None,
    file: str | None = None,
    include_archived: bool = False,
) -> Call:
    """Prepare a `query` request."""
    params = p.QueryParams(
        workspace=workspace,
        query=query,
        category=category,
        limit=limit,
        min_score=min_score,
        tags=tag_list(tags),
        mode=mode,
        sources=None if sources is None else list(sources),
        file=file,
        include_archived=include_archived,
    )
    return Call("query", params, p.QueryResult)


def episode(
    workspace: str,
    text: str,
    outcome: str | None,
    tags: Iterable[str] | None,
    dry_run: bool,
    scope: p.Scope = "project",
) -> Call:
    """Prepare an `episode` request."""
    params = p.EpisodeParams(
        workspace=workspace,
        text=text,
        outcome=outcome,
        tags=tag_list(tags),
        dry_run=dry_run,
        scope=scope,
    )
    return Call("episode", params, p.StoreResult)


def get(
    workspace: str,
    category: str | None,
    slug: str | None,
    file: str | None,
    lines: str | None,
    scope: p.Scope = "project",
    around: int = 2,
) -> Call:
    """Prepare a `get` request."""
    params = p.GetParams(
        workspace=workspace,
        category=category,
        slug=slug,
        file=file,
        lines=lines,
        scope=scope,
        around=around,
    )
    return Call("get", params, p.EntriesResult)


def list_entries(
    workspace: str,
    category: str | None,
    tags: Iterable[str] | None = None,
    sources: Iterable[Literal["memory", "global"]] | None = None,
) -> Call:
    """Prepare a `list` request."""
    params = p.ListParams(
        workspace=workspace,
        category=category,
        tags=tag_list(tags),
        sources=None if sources is None else list(sources),
    )
    return Call("list", params, p.ListResult)


def tag_list(tags: Iterable[str] | None) -> list[str] | None:
    """Return `tags` as the wire's list, or None (not sent) when there are none.

    Raises:
        TypeError: `tags` is a single string (pass a list: `tags=["security"]`).
    """
    if isinstance(tags, str):
        raise TypeError(f"tags must be a list of tags, not one string: tags=[{tags!r}].")
    chosen = list(tags or ())
    return chosen or None


def delete(workspace: str, category: str, slug: str, scope: p.Scope = "project") -> Call:
    """Prepare a `delete` request."""
    params = p.DeleteParams(workspace=workspace, category=category, slug=slug, scope=scope)
    return Call("delete", params, p.DeleteResult)


def history(workspace: str, slug: str | None, text: str | None, scope: p.Scope = "project") -> Call:
    """Prepare a `history` request."""
    params = p.HistoryParams(workspace=workspace, slug=slug, text=text, scope=scope)
    return Call("history", params, p.HistoryResult)


def undo(workspace: str, to: str | None, dry_run: bool, scope: p.Scope = "project") -> Call:
    """Prepare an `undo` request."""
    params = p.UndoParams(workspace=workspace, to=to, dry_run=dry_run, scope=scope)
    return Call("undo", params, p.UndoResult)


def restore(
    workspace: str,
    slug: str | None,
    text: str | None,
    category: str | None,
    dry_run: bool,
    scope: p.Scope = "project",
) -> Call:
    """Prepare a `restore` request."""
    params = p.RestoreParams(
        workspace=workspace,
        slug=slug,
        text=text,
        category=category,
        dry_run=dry_run,
        scope=scope,
    )
    return Call("restore", params, p.RestoreResult)


def cleanup(workspace: str, apply: bool, scope: p.Scope = "project", propose: bool = False) -> Call:
    """Prepare a `cleanup` request."""
    params = p.CleanupParams(workspace=workspace, apply=apply, scope=scope, propose=propose)
    return Call("cleanup", params, p.CleanupResult)


def check(workspace: str, category: str | None = None, propose: bool = False) -> Call:
    """Prepare a `check` request."""
    params = p.CheckParams(workspace=workspace, category=category, propose=propose)
    return Call("check", params, p.CheckResult)


def stats(workspace: str, scope: p.Scope = "project") -> Call:
    """Prepare a `stats` request."""
    return Call("stats", p.StatsParams(workspace=workspace, scope=scope), p.StatsResult)


def status() -> Call:
    """Prepare a `status` request."""
    return Call("status", p.StatusParams(), p.StatusResult)


def subscribe(workspace: str, scope: p.Scope = "project") -> Call:
    """Prepare a `subscribe` request (events then arrive on the same connection)."""
    params = p.SubscribeParams(workspace=workspace, scope=scope)
    return Call("subscribe", params, p.SubscribeResult)


def unsubscribe(workspace: str) -> Call:
    """Prepare an `unsubscribe` request."""
    return Call("unsubscribe", p.UnsubscribeParams(workspace=workspace), p.UnsubscribeResult)


def context(
    workspace: str,
    text: str,
    file: str | None,
    budget_tokens: int,
    agent_loads: Iterable[str] | None = None,
    session: str | None = None,
    always: bool = True,
    repeat: bool = False,
) -> Call:
    """Build a `context` call."""
    params = p.ContextParams(
        workspace=workspace,
        text=text,
        file=file,
        budget_tokens=budget_tokens,
        agent_loads=None if agent_loads is None else list(agent_loads),
        session=session,
        always=always,
        repeat=repeat,
    )
    return Call("context", params, p.ContextResult)


def procedure(
    workspace: str, name: str, steps: Iterable[str], slug: str | None, dry_run: bool
) -> Call:
    """Build a `procedure` call."""
    params = p.ProcedureParams(
        workspace=workspace, name=name, steps=list(steps), slug=slug, dry_run=dry_run
    )
    return Call("procedure", params, p.StoreResult)


def outcome(workspace: str, slug: str, kind: p.OutcomeKind) -> Call:
    """Build an `outcome` call."""
    params = p.OutcomeParams(workspace=workspace, slug=slug, outcome=kind)
    return Call("outcome", params, p.OutcomeResult)


def why(
    workspace: str,
    file: str,
    text: str,
    budget_tokens: int,
    session: str | None = None,
    always: bool = True,
) -> Call:
    """Build a `why` call."""
    params = p.WhyParams(
        workspace=workspace,
        file=file,
        text=text,
        budget_tokens=budget_tokens,
        session=session,
        always=always,
    )
    return Call("why", params, p.WhyResult)


def extract(
    workspace: str,
    text: str,
    store: bool,
    propose: bool = False,
    transcript: str | os.PathLike[str] | None = None,
    since_last: bool = False,
    workspace_only: bool = False,
) -> Call:
    """Build an `extract` call (`transcript` made absolute)."""
    path = None if transcript is None else os.path.abspath(transcript)
    params = p.ExtractParams(
        workspace=workspace,
        text=text,
        store=store,
        propose=propose,
        transcript=path,
        since_last=since_last,
        workspace_only=workspace_only,
    )
    return Call("extract", params, p.ExtractResult)
