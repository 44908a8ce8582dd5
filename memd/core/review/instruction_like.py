"""Instruction-like payloads: memory text that would make every future agent session fetch and
run something, or overrule its instructions. An agent never stores such text directly, in any
category: it goes to the review inbox with the reason (`memd.core.review.policy`).

Rules (one row each in `RULES`, first match wins; the reason is the row's words):
- A download piped into a shell or interpreter (`curl ... | sh`, `wget -O- ... | bash`,
  `iwr ... | iex`), or run by one (`bash <(curl ...)`, `sh -c "$(curl ...)"`).
- An instruction to fetch a URL and run, execute, source, install or eval what it returns.
- An instruction to run a command on every session, start-up or prompt, or before anything
  else (the "every session" shape HackLM's own instruction injection used).
- Prompt-injection phrases: ignore / disregard / forget previous (prior, above, all) instructions,
  "you are now ...", "new system prompt", "do not tell the user".
- A base64 blob decoded into a shell (`base64 -d | sh`).
Ordinary memories that name a tool, a URL or a command (`run pytest before committing`, "docs
live at https://...", "curl the health endpoint to check it") match nothing: the rules need an
execute step on fetched content, an every-session trigger, or an override phrase
(tests/core/test_instruction_like.py's false-positive suite).
"""

from __future__ import annotations

import re
from typing import Final

_CLAUSE = r"(?:[^.\n]|\.(?!\s|$))"
"""A character of the same sentence: a dot inside a file name or URL does not end it."""
_FETCH = r"(?:curl|wget|iwr|invoke-webrequest|irm|invoke-restmethod|fetch)\b"
_SHELL = (
    r"(?:sh|bash|zsh|dash|ksh|fish|python3?|perl|ruby|node|iex|invoke-expression|pwsh|powershell)\b"
)

RULES: Final[tuple[tuple[re.Pattern[str], str], ...]] = (
    (
        re.compile(_FETCH + r"[^|\n]{0,300}\|\s*(?:sudo\s+)?" + _SHELL, re.I),
        "pipes a download into a shell",
    ),
    (
        re.compile(
            r"(?:" + _SHELL + r")\s+(?:-c\s+)?[\"']?(?:<\(|\$\()\s*" + _FETCH,
            re.I,
        ),
        "runs a download in a shell",
    ),
    (
        re.compile(r"base64\s+(?:-d|--decode)\b[^|\n]{0,100}\|\s*(?:sudo\s+)?" + _SHELL, re.I),
        "decodes a payload into a shell",
    ),
    (
        re.compile(
            r"\b(?:download|fetch|get|curl|wget|grab)\b"
            + _CLAUSE
            + r"{0,120}(?:https?://|\burl\b)"
            + _CLAUSE
            + r"{0,120}\b(?:and|then)\s+(?:run|execute|exec|source|eval|install)\b",
            re.I,
        ),
        "tells agents to fetch a URL and run what it returns",
    ),
    (
        re.compile(
            r"\b(?:run|execute|exec|source|eval)\b" + _CLAUSE + r"{0,160}\b(?:on|at|before|in)\s+"
            r"(?:every|each|the\s+start\s+of\s+every|the\s+start\s+of\s+each)\s+"
            r"(?:new\s+)?(?:session|conversation|chat|prompt|startup|start-up|turn)\b",
            re.I,
        ),
        "tells agents to run a command on every session",
    ),
    (
        re.compile(
            r"\b(?:every|each)\s+(?:new\s+)?(?:session|conversation|chat)\b[^.\n]{0,60}"
            r"\b(?:run|execute|exec|source|eval|curl|wget)\b",
            re.I,
        ),
        "tells agents to run a command on every session",
    ),
    (
        re.compile(
            r"\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+)?(?:of\s+)?(?:the\s+|your\s+)?"
            r"(?:previous|prior|above|earlier|preceding|system|other)\s+"
            r"(?:instructions?|prompts?|rules|directions|messages)\b",
            re.I,
        ),
        "tries to override the agent's instructions",
    ),
    (
        re.compile(r"\bignore\s+all\s+(?:instructions|rules)\b", re.I),
        "tries to override the agent's instructions",
    ),
    (
        re.compile(
            r"\b(?:new|updated)\s+system\s+prompt\b|\byou\s+are\s+now\s+(?:a|an|in|DAN)\b", re.I
        ),
        "tries to override the agent's instructions",
    ),
    (
        re.compile(
            r"\b(?:do\s+not|don't|never)\s+(?:tell|inform|show|mention\s+(?:this\s+)?to)\s+the\s+user\b",
            re.I,
        ),
        "tells agents to hide something from the user",
    ),
)


def instruction_like(text: str) -> str | None:
    """Return why `text` is an instruction-like payload (the first matching rule's words), or
    None if it is an ordinary memory."""
    for pattern, reason in RULES:
        if pattern.search(text):
            return reason
    return None
