"""memd's MCP prompts: the common asks, as slash commands (`/mcp__memd__remember` in Claude
Code).

- `remember` (argument `what`): store it with `storeMemory`, in the right category, as one
  short sentence.
- `recall` (argument `topic`): what do we know about it: `queryMemory` over the project's
  memory, the user-wide memory, the project's files and past sessions.
- `review` (no argument): go through the review inbox with the person (`reviewInbox`, then
  `resolveInboxEntry` for each entry, on the person's word only).

Rules:
- A prompt only words a request to the agent; it calls nothing itself. The tool names it
  gives are the bridge's own (a test checks each one is served).
- Names are single lowercase words, so they read the same in lowerCamel and kebab case.
- `mcp` is an optional extra: it is imported only inside `register_prompts`. The SDK reads
  the prompts' annotations, so this module does not use `from __future__ import annotations`.
"""

from typing import TYPE_CHECKING, Annotated, Any

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

__all__ = ["PROMPT_NAMES", "recall_text", "register_prompts", "remember_text", "review_text"]

PROMPT_NAMES = ("remember", "recall", "review")


def remember_text(what: str) -> str:
    """The request behind `remember`: store `what` with storeMemory."""
    return (
        "Store this in the project's memory with the storeMemory tool: "
        f"{what.strip()}\n\n"
        "Write it as one short, self-contained sentence (the rule or lesson itself, not the "
        "story around it) and pick the category that fits: Instruction, Quirk, Preference, "
        "Decision, Security, Procedure or Episode. Give a kebab-case slug only if you mean to "
        "update this entry later (the same slug updates, not duplicates). Use scope "
        '"global" only for a rule that holds in every project. Then say what memd answered.'
    )


def recall_text(topic: str) -> str:
    """The request behind `recall`: what memd knows about `topic`."""
    return (
        f"What do we know about: {topic.strip()}\n\n"
        "Call the queryMemory tool with that as the query and sources "
        '["memory", "global", "file", "chat"] (the project\'s memory, the user-wide memory, '
        "the project's instruction files and past agent sessions). Answer from what it "
        "returns, citing each entry's slug or each session's time; read more of a past "
        "session with getMemory if a hit needs it. If nothing relevant comes back, say so "
        "rather than guess."
    )


def review_text() -> str:
    """The request behind `review`: resolve the review inbox with the person."""
    return (
        "Review the memories waiting in memd's review inbox with me. Call the reviewInbox "
        'tool (and with scope "global" for the user-wide memory\'s inbox), then show me each '
        "waiting entry one at a time: what accepting it would do, why it waits and its "
        "text. Resolve each with resolveInboxEntry only after I answer: accept (with my "
        "edited text if I give one) or reject. Never resolve an entry on your own."
    )


def register_prompts(server: "MCPServer[Any]") -> None:
    """Add `remember`, `recall` and `review` to `server`."""
    from mcp.server.mcpserver.prompts.base import UserMessage
    from pydantic import Field

    What = Annotated[str, Field(description="The rule, decision or lesson to remember.")]
    Topic = Annotated[str, Field(description='What to recall, e.g. "the auth bug".')]

    @server.prompt(
        name="remember",
        title="Remember this",
        description="Store something in memd's memory as one short sentence, in its category.",
    )
    def remember(what: What) -> list[UserMessage]:
        return [UserMessage(remember_text(what))]

    @server.prompt(
        name="recall",
        title="What do we know about...",
        description="Search memd's memory, the project's files and past sessions for a topic.",
    )
    def recall(topic: Topic) -> list[UserMessage]:
        return [UserMessage(recall_text(topic))]

    @server.prompt(
        name="review",
        title="Review pending memories",
        description="Go through memd's review inbox with you, one entry at a time.",
    )
    def review() -> list[UserMessage]:
        return [UserMessage(review_text())]
