"""The three steps of issue 34's second opinion, with the MCP client's own model (sampling):
the redundancy check of a store, gap analysis every Nth store, and a session review.

Rules:
- Fail-open: the model can never make a store fail, wait past `[llm] timeout`, or throw a new
  rule or value away. With no opinion (no sampling, a stall, an error, garbage), a store is sent
  exactly as without a model.
- Redundancy: a store without a slug is first sent as a dry run. Only when the write decision
  would store it beside a similar entry (`worth_asking`) is the model asked whether it restates
  that entry; the real store then carries the verdict (`StoreParams.llm`, source "sampling"),
  which the daemon applies: "restates" becomes the update the write decision makes for
  that entry. At most the timeout plus two stores.
- The store's `conversation` excerpt goes to the daemon (for its own model's gap analysis) only
  when the bridge cannot ask the client's model; otherwise the bridge runs gap analysis itself,
  after every `[llm] gap_every`th successful store ("stored" or "updated") of this bridge
  session that carried an excerpt (`policy.gap_due`), given the session's recent stores and that
  excerpt. It runs after the tool's reply, in the bridge's task group (`GapAnalysis.tasks`: the
  server's lifespan waits for it), one at a time (one due while another runs is left out),
  bounded by the timeout plus one `propose`; its proposals go to the inbox (source "gap").
- A proposal is never a memory until a person accepts it (`memd review`, reviewInbox).
"""

from __future__ import annotations

import contextlib
import logging
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any

import anyio
import msgspec

from memd.config import LlmSettings
from memd.core.format.categories import Categories, Category
from memd.core.llm import answers, policy, prompts
from memd.mcp_bridge.sampling import SamplingModel, offers_sampling
from memd_client import protocol as p
from memd_client._calls import Call

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

    from memd_client.aio import AsyncClient

logger = logging.getLogger("memd.mcp")

SUCCESSFUL = ("stored", "updated")
"""The store actions gap analysis counts."""


def worth_asking(params: p.StoreParams, dry: p.StoreResult, category: Category) -> bool:
    """Whether the model is asked about the store `params`, from its dry run `dry`
    (`memd.core.llm.policy.worth_asking`: stored as a new entry beside a similar one it does
    not contradict)."""
    return policy.worth_asking(
        slug=params.slug,
        dry_run=params.dry_run,
        episode_category=category.kind == "episode",
        action=dry.action,
        matched=dry.matched is not None,
        conflict=dry.conflict,
    )


def category_of(categories: Categories, name: str) -> Category:
    """The category `name` as the prompts describe it (one a workspace defines that the bridge
    does not know gets no definition)."""
    known = categories.get(name)
    if known is not None:
        return known
    return Category(name, f"{name.lower()}.md", 0, title=name, description="", position=0)


def opinion(answer: answers.Restatement | None, matched: p.MatchedEntry) -> p.LlmOpinion:
    """The verdict a parsed redundancy answer gives about `matched` (None: no opinion)."""
    if answer is None:
        return p.LlmOpinion(
            consulted=True,
            verdict="no_opinion",
            reason="The client's model gave no answer that could be read.",
            source="sampling",
        )
    restates = answer.candidate is not None
    return p.LlmOpinion(
        consulted=True,
        verdict="restates" if restates else "distinct",
        reason=answer.reason[: p.MAX_ARCHIVE_REASON],
        restates=(matched.slug or matched.content) if restates else None,
        source="sampling",
    )


def store_call(
    params: p.StoreParams, *, llm: p.LlmOpinion | None, conversation: str | None
) -> Call:
    """`params` as a store request with a verdict and a conversation excerpt."""
    return Call(
        "store",
        msgspec.structs.replace(params, llm=llm, conversation=conversation),
        p.StoreResult,
    )


async def store_with_opinion(
    client: AsyncClient,
    params: p.StoreParams,
    model: SamplingModel | None,
    categories: Categories,
    conversation: str | None,
) -> p.StoreResult:
    """Store `params` (see the module rules: redundancy); `model` None: no sampling, and the
    conversation excerpt goes to the daemon."""
    if model is None or params.slug is not None:
        daemon_conversation = conversation if model is None else None
        result: p.StoreResult = await client.call(
            store_call(params, llm=None, conversation=daemon_conversation)
        )
        return result
    dry: p.StoreResult = await client.call(
        store_call(msgspec.structs.replace(params, dry_run=True), llm=None, conversation=None)
    )
    verdict: p.LlmOpinion | None = None
    category = category_of(categories, dry.category)
    if worth_asking(params, dry, category) and dry.matched is not None:
        prompt = prompts.redundancy(category, params.content, [dry.matched.content])
        text = await model.ask(prompt)
        verdict = opinion(answers.redundancy(text, 1) if text is not None else None, dry.matched)
    result = await client.call(store_call(params, llm=verdict, conversation=None))
    return result


class GapAnalysis:
    """The bridge session's gap analysis: its recent stores and when the next one is due."""

    def __init__(self, settings: LlmSettings, categories: Categories) -> None:
        self.settings = settings
        self.categories = categories
        self.recent: deque[tuple[str, str]] = deque(maxlen=prompts.MAX_RECENT)
        self.with_excerpt = 0
        """How many successful stores of this session carried a conversation excerpt."""
        self.running = False
        self.tasks: TaskGroup | None = None
        """The bridge's task group (set by the server's lifespan); None: gap analysis is off."""

    @contextlib.asynccontextmanager
    async def running_in_task_group(self) -> AsyncIterator[dict[str, Any]]:
        """The server's lifespan: gap analyses run in this task group, which waits for the
        one running (bounded by the timeout and one `propose`) when the client goes away."""
        async with anyio.create_task_group() as tasks:
            self.tasks = tasks
            try:
                yield {}
            finally:
                self.tasks = None

    def note(self, result: p.StoreResult, conversation: str | None) -> bool:
        """Count a store's result; whether gap analysis is due after it (see the module
        rules: `policy.gap_due` over the successful stores that carried an excerpt)."""
        if result.action not in SUCCESSFUL or result.dry_run:
            return False
        self.recent.append((result.category, result.content))
        if not (conversation and conversation.strip()):
            return False
        self.with_excerpt += 1
        return policy.gap_due(self.with_excerpt, self.settings.gap_every)

    def start(
        self,
        model: SamplingModel,
        conversation: str,
        propose: Callable[[list[p.Proposal]], Awaitable[object]],
    ) -> None:
        """Start one gap analysis in the bridge's task group; `propose(proposals)` sends what
        the model proposed to the daemon."""
        if self.tasks is None or self.running:
            logger.info("gap analysis is due but one is still running; this one is left out")
            return
        self.running = True
        recent = list(self.recent)
        self.tasks.start_soon(self._run, model, conversation, recent, propose)

    async def _run(
        self,
        model: SamplingModel,
        conversation: str,
        recent: list[tuple[str, str]],
        propose: Callable[[list[p.Proposal]], Awaitable[object]],
    ) -> None:
        try:
            proposals = await ask_for_proposals(
                model,
                prompts.gap(list(self.categories), recent, conversation),
                self.categories,
                prompts.MAX_PROPOSALS,
                "gap analysis",
            )
            if proposals:
                await propose(proposals)
        except Exception:  # a proposal lost is no memory lost; say so in the log
            logger.exception("gap analysis failed; nothing was proposed")
        finally:
            self.running = False


async def ask_for_proposals(
    model: SamplingModel, prompt: str, categories: Categories, most: int, what: str
) -> list[p.Proposal] | None:
    """The memories the model proposes in answer to `prompt` (None: no opinion); `what` names
    the step in the log."""
    text = await model.ask(prompt)
    parsed = answers.proposals(text, categories.names, most) if text is not None else None
    if parsed is None:
        return None
    kept, dropped = parsed
    if dropped:
        logger.info("%s: %d proposal(s) named no known category or were too long", what, dropped)
    reason = "proposed by the MCP client's own model"
    return [p.Proposal(category=c, content=text, reason=reason) for c, text in kept]


class SecondOpinion:
    """What the bridge's tools share for the second opinion: the settings, the categories the
    prompts describe, and the session's gap analysis."""

    def __init__(self, settings: LlmSettings, categories: Categories) -> None:
        self.settings = settings
        self.categories = categories
        self.gap = GapAnalysis(settings, categories)

    def model(self, ctx: Any, *, in_call: bool = True) -> SamplingModel | None:
        """The client's model for a tool call's context, or None: sampling is off, or the
        client does not offer it (`offers_sampling`). `in_call` False: for a question asked
        after the call's reply."""
        if not self.settings.sampling or ctx is None or not offers_sampling(ctx):
            return None
        related = str(ctx.request_id) if in_call else None
        return SamplingModel(ctx.session, self.settings.timeout, related)

    async def store(
        self, client: AsyncClient, params: p.StoreParams, ctx: Any, conversation: str | None
    ) -> p.StoreResult:
        """Store `params` into `client`'s workspace, asking the client's model of the tool call
        `ctx` first when it is worth asking (`store_with_opinion`)."""
        params = msgspec.structs.replace(params, workspace=client.workspace or "")
        model = self.model(ctx)
        return await store_with_opinion(client, params, model, self.categories, conversation)

    def after_store(
        self,
        ctx: Any,
        result: p.StoreResult,
        conversation: str | None,
        propose: Callable[[list[p.Proposal]], Awaitable[object]],
    ) -> None:
        """Count a store and, when due, start gap analysis (see the module rules)."""
        due = self.gap.note(result, conversation)
        model = self.model(ctx, in_call=False)
        if due and model is not None and conversation is not None:
            self.gap.start(model, conversation, propose)

    async def session_review(
        self, client: AsyncClient, model: SamplingModel, transcript: str
    ) -> p.ReflectResult:
        """Ask the client's model which memories `transcript` implies and propose them into
        the inbox (source "session"), as the daemon's `reflect` does with its own model."""
        prompt = prompts.session(list(self.categories), list(self.gap.recent), transcript)
        proposals = await ask_for_proposals(
            model, prompt, self.categories, prompts.MAX_SESSION_PROPOSALS, "session review"
        )
        if proposals is None:
            return p.ReflectResult(
                llm=p.LlmOpinion(
                    consulted=True,
                    verdict="no_opinion",
                    reason="The client's model gave no answer that could be read.",
                    source="sampling",
                ),
                message="The client's model gave no answer that could be read; nothing was "
                "proposed. Try again, or review the session yourself and store what matters.",
                workspace=client.workspace or "",
            )
        consulted = p.LlmOpinion(
            consulted=True,
            verdict="distinct",
            reason=f"{len(proposals)} memories proposed.",
            source="sampling",
        )
        if not proposals:
            return p.ReflectResult(
                llm=consulted,
                message="The client's model found nothing in the session that memory lacks.",
                workspace=client.workspace or "",
            )
        proposed = await propose(client, "session", proposals)
        return p.ReflectResult(
            llm=consulted, proposed=proposed, message=proposed.message, workspace=proposed.workspace
        )


async def propose(
    client: AsyncClient, source: p.ProposalSource, proposals: list[p.Proposal]
) -> p.ProposeResult:
    """Send `proposals` to the daemon's review inbox (`propose`)."""
    return await client.propose(source, proposals)


def render_opinion(llm: p.LlmOpinion | None) -> str:
    """One sentence on what a model said about a store ("" when none was consulted)."""
    if llm is None or not llm.consulted:
        return ""
    who = "The client's model" if llm.source == "sampling" else "memd's model"
    reason = f" ({llm.reason})" if llm.reason else ""
    if llm.verdict == "restates":
        return f"{who} called it a restatement{reason}."
    if llm.verdict == "distinct":
        return f"{who} judged it distinct from the similar entry{reason}."
    return f"{who} was asked and gave no opinion{reason}; the store went ahead as decided."


def render_session_review(result: p.ReflectResult) -> str:
    """What a session review queued for review, and how to review it."""
    lines = [result.message] if result.message else []
    outcomes = result.proposed.outcomes if result.proposed is not None else []
    for outcome in outcomes:
        where = f" as {outcome.inbox_id}" if outcome.inbox_id else ""
        why = f": {outcome.message}" if outcome.message else ""
        lines.append(f"- {outcome.action}{where} [{outcome.category}] {outcome.content}{why}")
    if any(outcome.action == "queued" for outcome in outcomes):
        lines.append(
            "Nothing is stored until the person accepts it: show them the list (reviewInbox) "
            "or tell them to run `memd review`."
        )
    return "\n".join(lines) or "Nothing was proposed."
