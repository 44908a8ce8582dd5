"""Every prompt memd sends to a model, in one place.

Rules:
- A prompt is short, plain text, and ends by asking for one small JSON object whose shape it
  spells out; `memd.core.llm.answers` parses exactly that shape and nothing else.
- A prompt names the categories it may mention with their one-line definitions (the
  workspace's set, custom categories too), so the model's words map back to a category.
- Size is bounded: every prompt is at most MAX_PROMPT_CHARS characters. Each memory text is cut
  to MAX_MEMORY_CHARS; at most MAX_CANDIDATES entries are compared and MAX_RECENT recent stores
  are shown; a conversation or transcript keeps its END (the newest part) within what is left.
- What may be sent: an external command (`llm_command`) never sees a Security entry's text, nor a
  store into Security, unless the configuration allows it (`may_send`); the MCP client's own
  model (sampling) already sees the conversation and may. A text that may not be sent is left
  out of the prompt, never sent in part.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from memd.core.format.categories import Category

MAX_PROMPT_CHARS = 6000
MAX_MEMORY_CHARS = 400
MAX_CANDIDATES = 3
MAX_RECENT = 10
MAX_PROPOSALS = 3
"""The most memories gap analysis asks for (session review asks for MAX_SESSION_PROPOSALS)."""
MAX_SESSION_PROPOSALS = 5
SECURITY = "Security"


def may_send(category: str, *, external: bool, security_allowed: bool) -> bool:
    """Whether a text of `category` may go into a prompt for this model (see the module rules)."""
    return not external or security_allowed or category != SECURITY


def _cut(text: str, limit: int = MAX_MEMORY_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _tail(text: str, limit: int) -> str:
    """The end of `text` within `limit` characters (the newest part of a conversation)."""
    if limit <= 0:
        return ""
    text = text.strip()
    return text if len(text) <= limit else "…" + text[-(limit - 1) :]


def _definitions(categories: Iterable[Category]) -> str:
    return "\n".join(f"- {c.name}: {_cut(c.description, 160)}" for c in categories)


def redundancy(category: Category, new: str, candidates: Sequence[str]) -> str:
    """Ask whether `new` (a memory about to be stored into `category`) restates one of
    `candidates` (existing entries of that category, most similar first)."""
    shown = "\n".join(
        f"{number}. {_cut(text)}" for number, text in enumerate(candidates[:MAX_CANDIDATES], 1)
    )
    return (
        "You check a project's memory file for repeats. Each memory is one sentence an AI "
        f"coding agent reads in later sessions. Category {category.name}: "
        f"{_cut(category.description, 160)}\n\n"
        f"Existing memories:\n{shown}\n\n"
        f"New memory:\n{_cut(new)}\n\n"
        "Does the new memory restate one existing memory: the same rule or fact, with no new "
        "value, choice, subject, condition or exception? A memory that changes, reverses, "
        "narrows or adds to one does NOT restate it.\n"
        'Answer with JSON only: {"restates": N, "reason": "..."} where N is the number of the '
        'memory it restates, or {"restates": null, "reason": "..."} if it restates none. '
        "The reason is one short sentence."
    )


def gap(
    categories: Sequence[Category], recent: Sequence[tuple[str, str]], conversation: str
) -> str:
    """Ask which memories (at most MAX_PROPOSALS) `conversation` implies that `recent`
    ((category, text) pairs of the newest stores) does not already hold."""
    return _proposals_prompt(
        "You help an AI coding agent keep a project's memory. Below are the memories it stored "
        "recently and an excerpt of its conversation. Find lessons the conversation implies "
        "that no stored memory holds yet",
        categories,
        recent,
        "Conversation excerpt",
        conversation,
        MAX_PROPOSALS,
    )


def session(
    categories: Sequence[Category], recent: Sequence[tuple[str, str]], transcript: str
) -> str:
    """Ask which memories (at most MAX_SESSION_PROPOSALS) a session's `transcript` implies."""
    return _proposals_prompt(
        "You review a finished session of an AI coding agent to keep the project's memory. "
        "Below are memories already stored and an excerpt of the session's transcript. Find the "
        "lessons worth keeping for later sessions that no stored memory holds yet",
        categories,
        recent,
        "Transcript excerpt",
        transcript,
        MAX_SESSION_PROPOSALS,
    )


def _proposals_prompt(
    task: str,
    categories: Sequence[Category],
    recent: Sequence[tuple[str, str]],
    label: str,
    text: str,
    most: int,
) -> str:
    stored = "\n".join(f"- [{c}] {_cut(t)}" for c, t in recent[-MAX_RECENT:]) or "- (none)"
    head = (
        f"{task}: a rule, a decision, a quirk, a preference or a security rule that the "
        "people involved stated or clearly settled. Never invent; leave out guesses, passing "
        "details and anything already stored.\n\n"
        f"Categories:\n{_definitions(categories)}\n\n"
        f"Stored memories:\n{stored}\n\n"
    )
    tail = (
        f"\n\nAnswer with JSON only: "
        '{"memories": [{"category": "...", "content": "..."}]}'
        f" with at most {most} memories, each content one self-contained sentence, and "
        '{"memories": []} if there is nothing to add.'
    )
    room = MAX_PROMPT_CHARS - len(head) - len(tail) - len(label) - 4
    return f"{head}{label}:\n{_tail(text, room)}{tail}"
