"""A model's second opinion in the daemon: the redundancy check on a store, gap analysis after
every Nth store, and session review (`reflect`). Fail-open, off by default (`[llm]` config).

Rules (the pure ones are `memd.core.llm.policy`; prompts and parsers `memd.core.llm`):
- With no model (no `[llm] command`) and no verdict from the caller (`params.llm`), a store is
  the plain store path, untouched, and its result carries no `llm`.
- Otherwise a store the policy may ask about (no slug, not a dry run, not an episode) is made
  with `ask_first` (`transitions.Store`): in one go, as usual, unless it is one a model is asked
  about (a new entry near a `matched` entry it does not contradict: `policy.worth_asking`);
  that one is made as a dry run, and its result says so.
- The caller's own verdict (`params.llm`, the MCP bridge's sampling, which made its own dry
  run) is used as given, without a dry run or the daemon's model: "restates" names the entry
  (slug or exact text) as the category holds it now. Else the model command is asked
  (`prompts.redundancy` with the matched entry and the next closest ones, none it
  contradicts), holding no lock while it thinks. A store into Security is not sent to the
  command unless `send_security` is set.
- The store is then made with the verdict (`transitions.Store.restated`): the write decision
  re-runs under the lock, and the verdict applies only if it still does. The result's `llm`
  says what the model said; its message says when the verdict turned the store into an update
  (never a skip: `memd.core.llm.policy`). A stall, an error or an answer that does not parse
  is "no_opinion": the store is exactly the plain one, within the timeout.
- Gap analysis: every `gap_every`th successful store of a workspace that carries a
  conversation excerpt starts one analysis (prompts.gap: the workspace's recent stores, kept in
  memory, at most prompts.MAX_RECENT, and the excerpt) in the daemon's task group, after the
  reply; its proposals go to the review inbox (`propose`, source "gap"). One runs at a time per
  workspace: a due one is dropped while another runs (the next Nth store tries again). A
  failing analysis is logged, never raised.
- `reflect` asks the model (prompts.session) about a transcript and proposes its memories
  (source "session"); with no model it is an error saying how to configure one.
"""

from __future__ import annotations

import logging
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import msgspec
from anyio.abc import TaskGroup

from memd.config import LlmSettings
from memd.core.format.categories import Category
from memd.core.llm import answers, policy, prompts
from memd.core.writes import dedup, transitions
from memd.core.writes.judge import judge
from memd.server.llm.command_model import CommandModel
from memd.server.workspaces.workspace import Workspace
from memd_client import protocol as p
from memd_client.errors import InvalidParams

logger = logging.getLogger(__name__)

StoreInto = Callable[..., Awaitable[p.StoreResult]]
Propose = Callable[[p.ProposeParams], Awaitable[p.ProposeResult]]
"""Queue proposals into a workspace's inbox (the `propose` method), leasing the workspace."""

MAX_TRACKED_WORKSPACES = 256
"""Workspaces whose recent stores are kept for gap analysis (the least recent are forgotten)."""
SECURITY_WITHHELD = "Security text is not sent to llm_command unless [llm] send_security is set."
MODEL_WRITER = p.Writer(client="memd-llm", origin="extracted")
NO_ANSWER = "The model gave no answer in time (it stalled, failed or printed nothing)."
UNREADABLE = "The model answered, but not with the JSON the prompt asks for."


class _Recent:
    """One workspace's recent stores and gap analysis state."""

    def __init__(self) -> None:
        self.stores: deque[tuple[str, str]] = deque(maxlen=prompts.MAX_RECENT)
        self.with_conversation = 0
        self.running = False


class SecondOpinion:
    """The daemon's model and what it is asked (see the module rules)."""

    def __init__(self, settings: LlmSettings | None = None) -> None:
        self.settings = LlmSettings()
        self.model: CommandModel | None = None
        self.tasks: TaskGroup | None = None
        """Where gap analyses run (the daemon's services); None: gap analysis does not run."""
        self._recent: OrderedDict[str, _Recent] = OrderedDict()
        self.configure(settings or LlmSettings())

    def configure(self, settings: LlmSettings) -> None:
        """Use `settings` from now on (a reload); the daemon-wide limit on commands stays."""
        previous = self.model
        self.settings = settings
        self.model = (
            None if settings.command is None else CommandModel(settings.command, settings.timeout)
        )
        if self.model is not None and previous is not None:
            self.model.share_turns(previous)

    # ------------------------------------------------------------------------ store

    async def store(
        self,
        workspace: Workspace,
        category: Category,
        params: p.StoreParams,
        store_into: StoreInto,
        propose: Propose,
    ) -> p.StoreResult:
        """Store `params` through `store_into`, with a model's opinion where one is asked."""
        plain: dict[str, Any] = {
            "slug": params.slug,
            "dry_run": params.dry_run,
            "replaces": params.replaces,
            "reason": params.reason,
        }
        askable = params.slug is None and not params.dry_run and category.kind != "episode"
        if not askable or (self.model is None and params.llm is None):
            result = await store_into(workspace, category, params.content, **plain)
        else:
            result = await self._store_with_opinion(workspace, category, params, store_into)
        self._after_store(workspace, category, params, result, propose)
        return result

    async def _store_with_opinion(
        self, workspace: Workspace, category: Category, params: p.StoreParams, store_into: StoreInto
    ) -> p.StoreResult:
        if params.llm is not None:
            opinion = msgspec.structs.replace(
                params.llm, consulted=True, source=params.llm.source or "sampling"
            )
            named = _named_entry(workspace, category, params.llm)
            return await self._store_as_judged(
                workspace, category, params, store_into, opinion, named
            )
        first = await store_into(
            workspace, category, params.content, reason=params.reason, ask_first=True
        )
        if not first.dry_run or first.matched is None:
            return first  # stored (or skipped, updated) in one go: nothing to ask about
        candidates = _candidates(workspace, category, first.content, first.matched)
        opinion, restated = await self._ask(category, first.content, candidates)
        return await self._store_as_judged(
            workspace, category, params, store_into, opinion, restated
        )

    async def _store_as_judged(
        self,
        workspace: Workspace,
        category: Category,
        params: p.StoreParams,
        store_into: StoreInto,
        opinion: p.LlmOpinion,
        restated: transitions.Restated | None,
    ) -> p.StoreResult:
        """Store `params` with the verdict (`restated`: what it restates, None: nothing)."""
        if restated is None:
            result = await store_into(workspace, category, params.content, reason=params.reason)
            return msgspec.structs.replace(result, llm=opinion)
        reason = params.reason or "a model judged the new text a restatement"
        result = await store_into(
            workspace, category, params.content, reason=reason, restated=restated
        )
        applied = result.action == "updated" and (
            result.matched is not None and result.matched.content == restated.content
        )
        message = result.message
        if applied:
            message = f"{message} {policy.verdict_message(restated.content)}"
        return msgspec.structs.replace(result, llm=opinion, message=message)

    async def _ask(
        self, category: Category, content: str, candidates: Sequence[p.MatchedEntry]
    ) -> tuple[p.LlmOpinion, transitions.Restated | None]:
        """The daemon's model's verdict on `content` and what it restates."""
        assert self.model is not None
        if not prompts.may_send(
            category.name, external=True, security_allowed=self.settings.send_security
        ):
            return p.LlmOpinion(reason=SECURITY_WITHHELD, source="command"), None
        prompt = prompts.redundancy(category, content, [c.content for c in candidates])
        answer = await self.model.ask(prompt)
        shown = candidates[: prompts.MAX_CANDIDATES]
        parsed = None if answer is None else answers.redundancy(answer, len(shown))
        if parsed is None:
            why = NO_ANSWER if answer is None else UNREADABLE
            return p.LlmOpinion(consulted=True, reason=why, source="command"), None
        if parsed.candidate is None:
            return (
                p.LlmOpinion(
                    consulted=True, verdict="distinct", reason=parsed.reason, source="command"
                ),
                None,
            )
        chosen = shown[parsed.candidate]
        opinion = p.LlmOpinion(
            consulted=True,
            verdict="restates",
            reason=parsed.reason,
            restates=chosen.slug or chosen.content,
            source="command",
        )
        return opinion, _restated(chosen)

    # ------------------------------------------------------------------------ gap analysis

    def _after_store(
        self,
        workspace: Workspace,
        category: Category,
        params: p.StoreParams,
        result: p.StoreResult,
        propose: Propose,
    ) -> None:
        if result.dry_run or result.action == "pending":
            return
        recent = self._recent.get(workspace.root)
        if recent is None:
            recent = self._recent[workspace.root] = _Recent()
            while len(self._recent) > MAX_TRACKED_WORKSPACES:
                self._recent.popitem(last=False)
        self._recent.move_to_end(workspace.root)
        recent.stores.append((category.name, result.content))
        if not params.conversation or self.model is None or self.tasks is None:
            return
        recent.with_conversation += 1
        if not policy.gap_due(recent.with_conversation, self.settings.gap_every):
            return
        if recent.running:
            logger.info("gap analysis of %s still runs; this one is skipped", workspace.root)
            return
        recent.running = True
        shown = self._sendable(recent.stores)
        categories = tuple(workspace.category_set.categories)
        self.tasks.start_soon(
            self._gap, workspace.root, categories, shown, params.conversation, recent, propose
        )

    def _sendable(self, stores: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
        allowed = self.settings.send_security
        return [
            (name, text)
            for name, text in stores
            if prompts.may_send(name, external=True, security_allowed=allowed)
        ]

    async def _gap(
        self,
        root: str,
        categories: Sequence[Category],
        recent: Sequence[tuple[str, str]],
        conversation: str,
        state: _Recent,
        propose: Propose,
    ) -> None:
        try:
            prompt = prompts.gap(categories, recent, conversation)
            result = await self._propose(root, categories, prompt, "gap", propose)
            told = result if isinstance(result, str) else result.message
            logger.info("gap analysis of %s: %s", root, told)
        except Exception:  # a failing analysis must never reach the daemon's task group
            logger.exception("gap analysis of %s failed", root)
        finally:
            state.running = False

    async def _propose(
        self,
        root: str,
        categories: Sequence[Category],
        prompt: str,
        source: p.ProposalSource,
        propose: Propose,
        writer: p.Writer | None = None,
    ) -> p.ProposeResult | str:
        """Ask the model `prompt` and propose what it answers; else why it gave no usable answer
        (an empty list of memories is a usable answer, proposed as nothing)."""
        assert self.model is not None
        answer = await self.model.ask(prompt)
        if answer is None:
            return NO_ANSWER
        most = prompts.MAX_PROPOSALS if source == "gap" else prompts.MAX_SESSION_PROPOSALS
        names = [category.name for category in categories]
        parsed = answers.proposals(answer, names, most)
        if parsed is None:
            return UNREADABLE
        kept, _dropped = parsed
        proposals = [
            p.Proposal(category=m.category, content=m.content, reason=f"{source} (llm_command)")
            for m in kept
        ]
        return await propose(
            p.ProposeParams(
                workspace=root, source=source, proposals=proposals, writer=writer or MODEL_WRITER
            )
        )

    # ------------------------------------------------------------------------ reflect

    async def reflect(
        self, workspace: Workspace, params: p.ReflectParams, propose: Propose
    ) -> p.ReflectResult:
        """Session review: propose the memories the model finds in `params.transcript`.

        Raises:
            InvalidParams: no model command is configured.
        """
        if self.model is None:
            raise InvalidParams(
                "No model is configured for the daemon: set [llm] command in memd's config file "
                '(e.g. command = ["ollama", "run", "llama3.2"]) and reload it (kill -HUP), or '
                "use the MCP tool under a client that offers sampling."
            )
        categories = tuple(workspace.category_set.categories)
        recent = self._recent.get(workspace.root)
        shown = self._sendable(recent.stores if recent is not None else ())
        prompt = prompts.session(categories, shown, params.transcript)
        proposed = await self._propose(
            workspace.root, categories, prompt, "session", propose, params.writer
        )
        if isinstance(proposed, str):
            return p.ReflectResult(
                llm=p.LlmOpinion(consulted=True, reason=proposed, source="command"),
                message=f"{proposed} Nothing was proposed.",
                workspace=workspace.root,
            )
        return p.ReflectResult(
            llm=p.LlmOpinion(consulted=True, verdict="distinct", source="command"),
            proposed=proposed,
            message=proposed.message,
            workspace=workspace.root,
        )


def _candidates(
    workspace: Workspace, category: Category, content: str, matched: p.MatchedEntry
) -> list[p.MatchedEntry]:
    """The matched entry, then the next closest entries the content does not contradict (at
    most prompts.MAX_CANDIDATES), from the category's current version."""
    found = [matched]
    catalog = workspace.actor(category).snapshot.catalog
    for entry in () if catalog is None else dedup.ranked(content, catalog.entries):
        if len(found) >= prompts.MAX_CANDIDATES:
            break
        if entry.content == matched.content or judge(entry.content, content).conflict:
            continue
        found.append(p.MatchedEntry(slug=entry.slug, content=entry.content, line=entry.line))
    return found


def _named_entry(
    workspace: Workspace, category: Category, given: p.LlmOpinion
) -> transitions.Restated | None:
    """The entry a caller's "restates" verdict names (by slug, or by its exact text), as the
    category holds it now; None for another verdict, or a name no entry has."""
    named = given.restates
    if given.verdict != "restates" or named is None:
        return None
    catalog = workspace.actor(category).snapshot.catalog
    for entry in () if catalog is None else catalog.entries:
        if named in (entry.slug, entry.content):
            return transitions.Restated(slug=entry.slug, content=entry.content)
    return None


def _restated(entry: p.MatchedEntry) -> transitions.Restated:
    return transitions.Restated(slug=entry.slug, content=entry.content)
