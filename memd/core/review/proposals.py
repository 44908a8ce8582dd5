"""How a proposal (a memory suggested by a tool, not stored until a person accepts it) is
labelled in the review inbox.

Rules:
- A proposal's inbox reason starts with its source in words (`SOURCE_LABELS`: "extract",
  "gap analysis", "session review", "cleanup", "check"), then the proposer's own reason, if
  any: "gap analysis: the user corrected the test command". A person reading `memd review`
  sees where each entry came from.
- The reason is cleaned like every inbox reason (`inbox_format.clean_reason`): one line, no
  "]", no " · ".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, Literal

from memd.core.review.inbox_format import clean_reason

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
