"""How a proposal (a memory suggested by a tool, not stored until a person accepts it) is
labelled in the review inbox.

Rules:
- A proposal's inbox reason starts with its source in words (`SOURCE_LABELS`: "extract",
  "gap analysis", "session review", "cleanup", "check"), then the proposer's own reason, if
  any: "gap analysis: the user corrected the test command". A person reading `memd review`
  sees where each entry came from.
- The reason is cleaned like every inbox reason (`inbox_format.clean_reason`): one line, no
  "]", no " · ".
- A text a person rejected in review is archived with a reason starting REJECTED. A proposal
  whose text is the same as a rejected one (`same_text_key`: case, runs of whitespace and final
  punctuation aside; a merely similar text is NOT the same) is not queued again:
  `rejected_before` maps each rejected text's key to the newest date it was rejected.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final, Literal

from memd.core.review.inbox_format import clean_reason

REJECTED: Final = "rejected in review"
"""How the archive reason of an inbox entry a person rejected begins."""
_FINAL_PUNCTUATION = ".!?;:,…"

ProposalSource = Literal["extract", "gap", "session", "cleanup", "check"]
"""Where a proposal came from (the wire's `ProposalSource`)."""

SOURCE_LABELS: Final[Mapping[ProposalSource, str]] = {
    "extract": "extract",
    "gap": "gap analysis",
    "session": "session review",
    "cleanup": "cleanup",
    "check": "check",
}


def proposal_reason(source: ProposalSource, reason: str) -> str:
    """Return the inbox reason of a proposal from `source` with the proposer's `reason`."""
    label = SOURCE_LABELS[source]
    words = " ".join(reason.split())
    return clean_reason(f"{label}: {words}" if words else label)


def same_text_key(text: str) -> str:
    """The form two texts share when they say the same words: case folded, whitespace runs
    made one space, final punctuation dropped ("Never use yarn." and "never  use yarn")."""
    words = " ".join(text.casefold().split())
    return words.rstrip(_FINAL_PUNCTUATION + " ")


def rejected_before(records: Iterable[tuple[str, str, str]]) -> dict[str, str]:
    """Each text rejected in review among the archive's records (`(date, reason, content)`, in
    file order), keyed by `same_text_key`, with the newest date it was rejected on."""
    found: dict[str, str] = {}
    for date, reason, content in records:
        if reason.startswith(REJECTED):
            found[same_text_key(content)] = date
    return found
