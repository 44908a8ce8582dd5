"""Negated mentions: a citation the entry itself says is gone ("removed the old `init()`") is
never one that can go stale.

Rules (case-insensitive; the scope of a cue is its clause, and at most `CUE_WINDOW` characters
either side of the citation, so the work per citation is bounded):
- A clause ends at `.`, `!`, `?` or `;` followed by a space or the end, or at a line break.
  Code spans are blanked first, so a dot inside `a.b` never ends one.
- A prefix cue before the citation in its clause negates it: a removal ("removed", "deleted",
  "dropped", "retired", "deprecated", "obsoleted", "replaced", "renamed", "moved", "ripped
  out", "got rid of", "removal of", "deletion of"), a change of place ("migrated / moved /
  switched / ported / changed / converted / upgraded / renamed / went (away) from"), a past
  ("no longer", "no more", "formerly", "previously", "used to", "was once", "originally"), an
  alternative ("instead of", "rather than", "in place of"), an advice against ("don't / do
  not / never / stop / no need to" + use, call, import, rely on, depend on, run, add, touch;
  "avoid", "stop using"), or "not" right before the citation ("use `x`, not `y`").
- A turn between the cue and the citation ends the cue's scope: "to", "into", "with", "by",
  "in favour of", "but", "so", "which", "because", "since", "then", "now", "while",
  "whereas", "except", "unless", "see", or ", use / and use / prefer / call / run". So in
  "replaced `a` with `b`" and "migrated from `x` to `y`" only `a` and `x` are negated; in
  "don't use `x`, use `y`" only `x`.
- A postfix cue right after the citation negates it: "is / are / was / were / has been / have
  been / had been / got (now|since|long|already|fully|also)? removed, deleted, dropped,
  deprecated, gone, retired, obsolete, renamed, replaced, superseded, moved, unused, dead";
  without an auxiliary "moved", "renamed", "went away", "disappeared"; "(is) no longer exists
  / used / needed / present / there / available / maintained / supported / in use / required
  / called"; and "(deprecated)", "(removed)", "(deleted)", "(gone)", "(old)", "(legacy)". A
  "renamed / moved / replaced" followed by "from" names the new place, not the old one
  ("`y` was renamed from `x`": `y` stands). Between the citation and the cue only spaces,
  punctuation, other citations joined by "and" / "or", and a noun such as "file", "function",
  "script" may come ("the `x` and `y` helpers were removed").
- Imperatives are not negations: "remove `x` before release" and "do not edit `gen.ts` by hand"
  say the thing exists now.
"""

from __future__ import annotations

import bisect
import re

__all__ = ["CUE_WINDOW", "Clauses"]

CUE_WINDOW = 160
"""Characters before and after a citation in which a cue can negate it."""

_CLAUSE_END = re.compile(r"[.!?;](?=\s|$)|\n")

_PREFIX_CUE = re.compile(
    r"\b(?:removed|deleted|dropped|retired|deprecated|obsoleted|replaced|renamed|moved"
    r"|ripped\s+out|got\s+rid\s+of|getting\s+rid\s+of|removal\s+of|deletion\s+of"
    r"|(?:migrated|moved|switched|ported|changed|converted|upgraded|renamed|went)\s+(?:away\s+)?from"
    r"|no\s+longer|no\s+more|formerly|previously|used\s+to|was\s+once|originally"
    r"|instead\s+of|rather\s+than|in\s+place\s+of"
    r"|(?:don'?t|do\s+not|never|stop|no\s+need\s+to)\s+"
    r"(?:use|using|call|calling|import|importing|rely\s+on|depend\s+on|run|add|touch)"
    r"|avoid(?:ed|ing)?|stop(?:ped)?\s+using)\b",
    re.IGNORECASE,
)
_TURN = re.compile(
    r"\b(?:to|into|with|by|in\s+favou?r\s+of|but|so|which|because|since|then|now|while|whereas"
    r"|except|unless|see)\b|(?:,|\band|\u2014|\s-)\s*(?:use|prefer|call|run)\b",
    re.IGNORECASE,
)
_NOT_BEFORE = re.compile(r"\bnot\s*(?:the\s*)?$", re.IGNORECASE)
_POST_GAP = (
    r"(?:[\s,'\"()`_*]|\b(?:and|or|also|both|too|old|file|files|function|functions|class|classes"
    r"|method|methods|script|scripts|target|targets|directory|directories|folder|folders|module"
    r"|modules|helper|helpers|variable|variables|command|commands|key|keys|setting|settings)\b)*"
)
_POSTFIX_CUE = re.compile(
    _POST_GAP + r"(?:\b(?:is|are|was|were|has\s+been|have\s+been|had\s+been|got|been)\s+"
    r"(?:(?:now|since|long|already|fully|also)\s+)?"
    r"(?:removed|deleted|dropped|deprecated|gone|retired|obsolete|renamed|replaced|superseded"
    r"|moved|unused|dead)\b(?!\s+from)"
    r"|\b(?:moved|renamed|went\s+away|disappeared)\b(?!\s+from)"
    r"|\b(?:(?:is|are)\s+)?no\s+longer\s+(?:exists?|used|needed|present|there|available"
    r"|maintained|supported|in\s+use|required|called)\b"
    r"|\((?:deprecated|removed|deleted|gone|old|legacy)\))",
    re.IGNORECASE,
)


class Clauses:
    """One entry's text with its code spans blanked, and where its clauses end; answers
    whether a citation at `text[start:end]` is negated (see the module rules)."""

    def __init__(self, blanked: str) -> None:
        """`blanked`: the entry's text with each code span replaced by as many `"`."""
        self._text = blanked
        self._ends = [match.start() for match in _CLAUSE_END.finditer(blanked)]

    def window(self, start: int, end: int) -> tuple[int, int]:
        """The window around `text[start:end]`: its clause, cut to `CUE_WINDOW` each side."""
        index = bisect.bisect_left(self._ends, start)
        clause_start = self._ends[index - 1] + 1 if index else 0
        after = bisect.bisect_left(self._ends, end)
        clause_end = self._ends[after] if after < len(self._ends) else len(self._text)
        return max(clause_start, start - CUE_WINDOW), min(clause_end, end + CUE_WINDOW)

    def negated(self, start: int, end: int) -> bool:
        """True when a cue in the citation's clause says the thing at `start:end` is gone or
        not to be used (see the module rules)."""
        low, high = self.window(start, end)
        before = self._text[low:start]
        if _NOT_BEFORE.search(before):
            return True
        cues = [cue.end() for cue in _PREFIX_CUE.finditer(before)]
        if cues and _TURN.search(before, cues[-1]) is None:
            return True
        return _POSTFIX_CUE.match(self._text, end, high) is not None
