"""Zero-LLM memory extraction: preferences, corrections and constraints in a user's message.

`extract(text)` reads what a user typed to a coding agent and returns the standing rules and
facts in it, each rewritten as one storable sentence. Precision over recall: a false memory is
worse than a missed one, so every rule below rejects more than it accepts. docs/extract.md has
the full account (examples, the rejected look-alikes, measured precision and recall).

Kinds and categories:

    kind        trigger (at the start of a clause)                  category
    preference  I prefer / I'd rather / I like X better / prefer X   Preference
                use X instead of|rather than|over|not Y
                always|never|don't ever + use|prefer|pick|choose ...
                don't use ... + a standing marker; use X everywhere
    correction  actually / no, / nope, / that's wrong, / correction:   Decision
                + a statement; "we use X, not Y"; "the X is not Y but Z"
    constraint  always|never|never ever|don't ever + other verbs       Instruction
                you must|have to|need to|should always ...
                make sure to always|never ...; <subject> must ...
                we always|never ...; don't X + a standing marker
    any kind    whose content names secrets, credentials, passwords,   Security
                tokens, API/private/SSH keys, .env, permissions, auth,
                JWT, PII ...

Rules:
- Text is split into lines (every line break `str.splitlines` knows), then sentences at
  `.`, `!`, `?` followed by white space; never inside a `code span`, after "e.g."/"i.e."/"vs.",
  or inside `setup.py` or `3.11`. Fenced code blocks, `>` quoted lines and pasted tool output
  ("Error: ...", "[WARN] ...", "file.py:12: ...", time stamps) are skipped: they are not the
  user's own words. Sentences are cut into clauses at `;`, `: `, ` - ` and
  `, and|but|so|also <trigger>`; a trigger counts only at the start of a clause.
- Rejected: questions (a `?`, or a clause starting with should/do/can/why/let's ...), hedges
  (maybe, probably, I think), clauses starting with if/when/unless/in case and no comma,
  reported speech ("the docs say", "John prefers", "John uses X, not Y"), epistemic must
  ("must have failed", "it must be", "must be running"), past narrative ("I actually tried"),
  filler ("no, thanks", "never mind"), one-off task scope (now, yet, for now, this time, in this
  PR/function, "the function must ...", "don't X" / "you need to X" with no standing marker such
  as ever, again, anywhere, every time, in this repo, for all ...), deictic content
  (it, this, that, them: meaningless once stored), payloads with no content word, contents
  over 300 characters, clauses over 400 and sentences over 1000 characters.
- Rewriting: a trigger that carries no meaning is dropped ("Actually, we use pnpm" -> "We use
  pnpm."); one that does is kept in canonical form ("don't ever X" / "never ever X" -> "Never
  X."; "make sure to always X" -> "Always X."; "you must not X" -> "Do not X."; "you must X" ->
  "X."; "don't X" -> "Do not X."). First-person preferences become "Prefer X." ("I'd rather X
  than Y" -> "Prefer to X rather than Y."; "I like X better than Y" -> "Prefer X over Y.").
  Fillers (please, pls, btw, from now on, thanks ...) are dropped at both ends; code spans,
  paths and identifiers are kept byte for byte. The first letter is capitalised, or a leading
  identifier is wrapped in backticks ("tests/ is ..." -> "`tests/` is ..."); a final "." is
  added. Time is linear in the input: every regex runs on a clause of bounded length, and the
  line and sentence scanners are single passes.
- One module on purpose: the rules are one pipeline (sentences -> clauses -> matchers ->
  checks -> rewriting); most of its length is vocabulary tables.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterator
from typing import Final, Literal

import msgspec

from memd.core.categories import Category

Kind = Literal["preference", "correction", "constraint"]

MAX_CONTENT: Final = 300
MAX_CLAUSE: Final = 400
MAX_SENTENCE: Final = 1000

_KIND_CATEGORY: Final[dict[Kind, Category]] = {
    "preference": Category.PREFERENCE,
    "correction": Category.DECISION,
    "constraint": Category.INSTRUCTION,
}


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


class Found(msgspec.Struct, frozen=True, kw_only=True):
    """One memory found in a message."""

    kind: Kind
    category: Category
    content: str  # one sentence ready to store: capitalised, ends with ".", <= 300 chars
    sentence: str  # the sentence of the message it came from, as written (trimmed)


def extract(text: str) -> list[Found]:
    """Return the memories stated in `text`, in order, without duplicates (by content)."""
    found: list[Found] = []
    seen: set[str] = set()
    corrected = False
    for sentence in sentences(text):
        candidates, corrected = _sentence(sentence, corrected=corrected)
        for kind, content in candidates:
            if content.casefold() not in seen:
                seen.add(content.casefold())
                found.append(
                    Found(
                        kind=kind,
                        category=category_of(kind, content),
                        content=content,
                        sentence=sentence,
                    )
                )
    return found


def category_of(kind: Kind, content: str) -> Category:
    """Security when `content` is about secrets, credentials, keys, auth or PII, else by kind."""
    return Category.SECURITY if _SECURITY.search(content) else _KIND_CATEGORY[kind]


_SECURITY = re.compile(
    r"\b(?:secrets?|credentials?|passwords?|passwd|passphrases?|tokens?|"
    r"(?:api|private|ssh|access|signing|encryption|secret)[ _-]?keys?|"
    r"env\s+files?|dotenv|permissions?|auth|authn|authz|authenticat\w*|authori[sz]\w*|oauth|"
    r"jwts?|pii|personal\s+data|personally\s+identifiable|sudo|chmod|csrf|xss|injection|"
    r"vulnerabilit\w*|2fa|mfa|ssl|tls|certificates?|encrypt\w*)\b|(?<![\w.])\.env\b",
    re.IGNORECASE,
)


# ---- sentences -------------------------------------------------------------------------------

_FENCE = re.compile(r"\s*(?:```|~~~)")
_QUOTE = re.compile(r"\s*>")
# Pasted tool output: "Error: ...", "[WARN] ...", "npm ERR! ...", "12:03:44 ...", "2024-05-01 ...".
_TOOL_OUTPUT = re.compile(
    r"(?:\[?[\w.-]{0,30}?(?:error|warning|warn|fatal|exception|err|critical|info|debug|panic|"
    r"hint|trace(?:back)?)\]?\s*(?::|!)|\[\w+\]|\d{1,2}:\d{2}|\d{4}-\d{2}-\d{2}|"
    r"(?:[\w./-]+:\d+:)|(?:npm|yarn|pnpm|pip|cargo|go)\s+(?:err|warn)\w*)",
    re.IGNORECASE,
)
_LIST_MARKER = re.compile(r"(?:[-*+•]|\d{1,3}[.)])\s+")
_TOKEN = re.compile(r"`[^`]*`|[.!?]+|[^`.!?]+|`")
_ABBREVIATION = re.compile(
    r"(?:^|[\s(])(e\.g|i\.e|eg|ie|vs|cf|approx|incl|esp|etc|viz|resp|wrt)$", re.IGNORECASE
)


def sentences(text: str) -> Iterator[str]:
    """Yield the trimmed sentences of `text`, outside fenced code and `>` quotes, in order."""
    in_fence = False
    for line in text.splitlines():
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence or _QUOTE.match(line) or _TOOL_OUTPUT.match(line.lstrip()):
            continue
        for start, end in _sentence_spans(line):
            piece = line[start:end].strip()
            marker = _LIST_MARKER.match(piece)
            if marker and start == 0:
                piece = piece[marker.end() :].strip()
            if piece:
                yield piece


def _sentence_spans(line: str) -> Iterator[tuple[int, int]]:
    start = 0
    for m in _TOKEN.finditer(line):
        if m.group()[0] not in ".!?":
            continue
        if m.end() < len(line) and not line[m.end()].isspace():
            continue  # setup.py, 3.11, e.g.
        if m.group() == "." and _is_abbreviation(line, start, m.start(), m.end()):
            continue
        yield start, m.end()
        start = m.end()
    yield start, len(line)


def _is_abbreviation(line: str, start: int, dot: int, after: int) -> bool:
    word = _ABBREVIATION.search(line[max(start, dot - 8) : dot])
    if word is None:
        return False
    if word.group(1).lower() != "etc":
        return True
    rest = line[after : after + 3].lstrip()
    return bool(rest) and rest[0].islower()


# ---- text with a mask ------------------------------------------------------------------------

_CODE = re.compile(r"`[^`]*`")


@dataclasses.dataclass(frozen=True, slots=True)
class _Text:
    """A piece of the message and its mask: same length, code spans blanked to `xxx`."""

    orig: str
    mask: str

    @classmethod
    def of(cls, text: str) -> _Text:
        masked = _CODE.sub(lambda m: "`" + "x" * (len(m.group()) - 2) + "`", text)
        return cls(text, masked.replace("’", "'").replace("‘", "'"))

    @classmethod
    def lit(cls, text: str) -> _Text:
        return cls(text, text)

    def __getitem__(self, key: slice) -> _Text:
        return _Text(self.orig[key], self.mask[key])

    def __add__(self, other: _Text) -> _Text:
        return _Text(self.orig + other.orig, self.mask + other.mask)

    def strip(self) -> _Text:
        left = len(self.mask) - len(self.mask.lstrip())
        return self[left : len(self.mask.rstrip())]

    def after(self, m: re.Match[str] | None) -> _Text:
        return self if m is None else self[m.end() :]


@dataclasses.dataclass(frozen=True, slots=True)
class _Candidate:
    kind: Kind
    content: _Text
    payload: _Text  # what follows the trigger: must hold a content word


# ---- sentence and clause pipeline ------------------------------------------------------------

_FILLER = re.compile(
    r"(?:please|pls|plz|also|and|but|oh|ok|okay|so|btw|fyi|just|hey|hi|hmm+|well|"
    r"remember(?:\s+to|\s+that)?|i\s+(?:want|need)\s+you\s+to|i(?:'d|\s+would)\s+like\s+you\s+to)"
    r"\b[\s,!]*",
    re.IGNORECASE,
)
_STANDING_LEAD = re.compile(
    r"(?:from\s+now\s+on|going\s+forward|in\s+(?:the\s+)?future|for\s+future\s+reference|"
    r"as\s+a\s+rule|in\s+general|by\s+default)\b[\s,!:]*",
    re.IGNORECASE,
)
_CORRECTION = re.compile(
    r"(?:no|nope|nah|wrong|incorrect|not\s+quite)(?:\s*[,.!:;]|\s+[-–—]|\s*[–—])[\s,.!:;–—-]*"
    r"|actually\b[\s,:]*"
    r"|that's\s+(?:wrong|not\s+right|not\s+correct|incorrect|not\s+true)\b[\s,.!:;–—-]*"
    r"|correction\s*:\s*",
    re.IGNORECASE,
)
_HARD_BREAK = re.compile(r";|:(?=\s)|\s[-–—]{1,3}\s|—")
_SOFT_BREAK = re.compile(
    r",\s*(?:and|but|so|also|plus|then)\s+(?=(?:(?:please|pls|also|then)\s+)?(?:always|never|"
    r"don't|dont|do\s+not|make\s+sure|you\s+(?:must|have\s+to|need\s+to|should)|"
    r"i(?:'d|\s+would)?\s+(?:prefer|rather|like)|use|prefer|stick|pick|choose|go\s+with|"
    r"switch\s+to)\b)",
    re.IGNORECASE,
)


def _sentence(sentence: str, *, corrected: bool) -> tuple[list[tuple[Kind, str]], bool]:
    """Return the memories in one sentence, and whether it was only a correction ("No.")."""
    if len(sentence) > MAX_SENTENCE or sentence.rstrip("\"')]*_ ").endswith("?"):
        return [], False
    text, standing, stripped_correction = _strip_lead(_Text.of(sentence))
    corrected = corrected or stripped_correction
    if not text.mask.strip(" ,.!:;-–—"):
        return [], stripped_correction
    results: list[tuple[Kind, str]] = []
    for number, clause in enumerate(_clauses(text)):
        found = _clause(clause, corrected=corrected and number == 0, standing=standing)
        if found is not None:
            results.append(found)
    return results, False


def _strip_lead(text: _Text) -> tuple[_Text, bool, bool]:
    """Drop leading fillers and correction triggers; return (rest, standing, corrected)."""
    standing = corrected = False
    for _ in range(6):
        m = _FILLER.match(text.mask) or _STANDING_LEAD.match(text.mask)
        if m is not None and m.end() > 0:
            standing = standing or m.re is _STANDING_LEAD
        else:
            m = _CORRECTION.match(text.mask)
            if m is None or m.end() == 0:
                break
            corrected = True
        text = text.after(m).strip()
    return text, standing, corrected


def _clauses(text: _Text) -> Iterator[_Text]:
    start = 0
    for m in _HARD_BREAK.finditer(text.mask):
        yield from _soft_clauses(text[start : m.start()])
        start = m.end()
    yield from _soft_clauses(text[start:])


def _soft_clauses(text: _Text) -> Iterator[_Text]:
    start = 0
    for m in _SOFT_BREAK.finditer(text.mask):
        yield text[start : m.start()].strip()
        start = m.end()
    yield text[start:].strip()


_QUESTION_START = re.compile(
    r"(?:should|shall|do(?!\s+not\b|n't\b)|does|did|can|could|would|will|is|are|was|were|am|"
    r"have|has|why|how|what|where|which|who|whose|isn't|aren't|doesn't|didn't|won't|wouldn't|"
    r"shouldn't|can't|couldn't|let's|lets|not\s+sure)\b",
    re.IGNORECASE,
)
_HEDGE = re.compile(
    r"\b(?:maybe|perhaps|probably|i\s+think|i\s+guess|i\s+suppose|not\s+sure|might)\b",
    re.IGNORECASE,
)
_CONDITION = re.compile(
    r"(?:when|whenever|before|after|once|if|unless|in\s+case|every\s+time|each\s+time|while|"
    r"suppose|assuming|even\s+if|what\s+if)\b",
    re.IGNORECASE,
)
_CONDITION_CLAUSE = re.compile(r"[^,]{1,120},\s*")


def _clause(text: _Text, *, corrected: bool, standing: bool) -> tuple[Kind, str] | None:
    text, more_standing, more_corrected = _strip_lead(text)
    standing, corrected = standing or more_standing, corrected or more_corrected
    if not text.mask or len(text.mask) > MAX_CLAUSE:
        return None
    if "?" in text.mask or _HEDGE.search(text.mask) or _QUESTION_START.match(text.mask):
        return None
    condition: _Text | None = None
    if _CONDITION.match(text.mask):
        m = _CONDITION_CLAUSE.match(text.mask)
        if m is None:
            return None
        condition, text = text[: m.end()], text.after(m)
    candidate = _imperative(text, standing=standing)
    if candidate is None and condition is None:
        candidate = _correction(text, corrected=corrected)
    if candidate is None or not _acceptable(candidate, conditional=condition is not None):
        return None
    content = candidate.content
    if condition is not None:
        content = condition + _lower_first(_finish_text(content))
    final = _finish(content)
    return None if final is None else (candidate.kind, final)


# ---- imperatives: preferences and constraints ------------------------------------------------

_USE_VERB = re.compile(
    r"(?:use|using|prefer|pick|choose|go\s+with|stick\s+(?:with|to)|switch\s+to|opt\s+for|"
    r"default\s+to)\b",
    re.IGNORECASE,
)
_NOT_A_VERB = _words(
    "a an the my your our his her their its this that these those it i you we they he she there "
    "here so too very more less mind again ever been sure true false fine good great nice happy "
    "glad fun same know knew say said when if and or but worry bother care gonna going works "
    "worked fails failed returns returned happens happened seems seemed is was were are did "
    "does had has thought think gets got wanted liked not no anything nothing something "
    "everything what"
)
_STANDING = re.compile(
    r"\b(?:always|never|ever|again|anymore|any\s+more|anywhere|everywhere|every\s+time|"
    r"each\s+time|whenever|from\s+now\s+on|going\s+forward|in\s+(?:the\s+)?future|"
    r"in\s+general|by\s+default|as\s+a\s+rule|for\s+everything|"
    r"(?:in|for|across|on)\s+(?:all|every|each|any)|"
    r"in\s+(?:this|the|our)\s+(?:repo|repository|project|codebase|code\s+base|package|monorepo|"
    r"workspace))\b",
    re.IGNORECASE,
)

_PREFER_I = re.compile(
    r"i(?:'d|\s+would)?\s+(?:(?:really|much|strongly|generally|usually|definitely|personally|"
    r"always)\s+)?prefer\s+(?!it\b|if\b|that\b|you\b|we\b|when\b)(?=\w|`)",
    re.IGNORECASE,
)
_RATHER = re.compile(r"i(?:'d|\s+would)\s+(?:much\s+)?rather\s+", re.IGNORECASE)
_RATHER_YOU_NOT = re.compile(r"(?:you|we)\s+(?:didn't|didnt|did\s+not)\s+(?=\w)", re.IGNORECASE)
_RATHER_NOT = re.compile(r"not\s+(?=\w)", re.IGNORECASE)
_PRONOUN = re.compile(r"(?:you|we|they|it|he|she|i|that|this|those|these)\b", re.IGNORECASE)
_THAN = re.compile(r"\bthan\b", re.IGNORECASE)
_LIKE = re.compile(r"i\s+(?:really\s+|much\s+)?like\s+(?=\w|`)", re.IGNORECASE)
_BETTER = re.compile(r"\s+(?:better|more)\b(?:\s+than\s+)?", re.IGNORECASE)
_BETTER_TAIL = re.compile(r"(?:$|[,;(.!]|(?:for|in|when|with|because|as|since)\b)", re.IGNORECASE)
_ALWAYS_NEVER = re.compile(
    r"(always|never\s+ever|never|(?:don't|dont|do\s+not)\s+(?:you\s+)?ever)\s+(?=\w|`)",
    re.IGNORECASE,
)
_MAKE_SURE = re.compile(
    r"make\s+sure\s+(?:to\s+|(?:that\s+)?you\s+)?(always|never)\s+(?=\w|`)", re.IGNORECASE
)
_YOU_MODAL = re.compile(
    r"you\s+(?:(always|never)\s+)?(must\s+not|mustn't|must|have\s+to|need\s+to|should\s+not|"
    r"shouldn't|should|'ve\s+got\s+to|gotta)\s+(?:(always|never|ever)\s+)?(?=\w|`)",
    re.IGNORECASE,
)
_EPISTEMIC = re.compile(
    r"(?:'ve|have\s+(?:been|\w+ed|gone|done|seen|made|had|got|forgotten|broken)|"
    r"be\s+(?:a|an|the|some|something|because|why|joking|kidding|wrong|broken|outdated|stale|"
    r"cached|missing|fine|right|correct|off|down|failing|it|that|mistaken|confused|tired|due|"
    r"related|somewhere|here|there|\w+ing))\b",
    re.IGNORECASE,
)
_DONT = re.compile(
    r"(?:don't|dont|do\s+not)\s+(?!you\b|worry\b|bother\b|mind\b|care\b|know\b|think\b|"
    r"forget\b)(?=\w|`)",
    re.IGNORECASE,
)
_WE_ALWAYS = re.compile(r"we\s+(?:always|never)\s+(?=\w)", re.IGNORECASE)
_PREFER = re.compile(r"prefer\s+(?=\w|`)", re.IGNORECASE)
_USE = re.compile(
    r"(?:use|pick|choose|go\s+with|stick\s+(?:with|to)|switch\s+to|opt\s+for|default\s+to)\s+"
    r"(?=\w|`)",
    re.IGNORECASE,
)
_INSTEAD = re.compile(r"\b(?:instead\s+of|rather\s+than|over|not)\b", re.IGNORECASE)
_SUBJECT_START = re.compile(
    r"(?:the|a|an|our|my|your|this|that|these|those|it|its|it's|we|we're|i|you|they|there|all|"
    r"every|each|some|no)\b",
    re.IGNORECASE,
)
_PAST = re.compile(
    r"\w+ed|did|was|were|had|tried|got|went|made|thought|knew|said|could|would|might|may",
    re.IGNORECASE,
)


def _verb_first(payload: _Text) -> bool:
    word = re.match(r"[\w']+", payload.mask)
    return word is not None and word.group().lower() not in _NOT_A_VERB


def _by_verb(payload: _Text) -> Kind:
    return "preference" if _USE_VERB.match(payload.mask) else "constraint"


def _prefer_i(text: _Text, standing: bool) -> _Candidate | None:
    m = _PREFER_I.match(text.mask)
    if m is None:
        return None
    payload = text.after(m)
    return _Candidate("preference", _Text.lit("Prefer ") + payload, payload)


def _rather(text: _Text, standing: bool) -> _Candidate | None:
    m = _RATHER.match(text.mask)
    if m is None:
        return None
    rest = text.after(m)
    negated = _RATHER_YOU_NOT.match(rest.mask) or _RATHER_NOT.match(rest.mask)
    if negated is None and _PRONOUN.match(rest.mask):
        return None
    payload = rest.after(negated)
    than = _THAN.search(payload.mask)
    if than is not None:
        payload = payload[: than.start()] + _Text.lit("rather than") + payload[than.end() :]
    lead = "Prefer not to " if negated else "Prefer to "
    return _Candidate("preference", _Text.lit(lead) + payload, payload)


def _like_better(text: _Text, standing: bool) -> _Candidate | None:
    m = _LIKE.match(text.mask)
    better = None if m is None else _BETTER.search(text.mask, m.end())
    if m is None or better is None:
        return None
    liked, rest = text[m.end() : better.start()], text[better.end() :].strip()
    if better.group().rstrip().lower().endswith("than"):
        over = _Text.lit(" over ")
    elif _BETTER_TAIL.match(rest.mask):  # "I like X better, for Y" but not "I like having more Z"
        over = _Text.lit(" " if rest.mask[:1].isalnum() else "")
    else:
        return None
    return _Candidate("preference", _Text.lit("Prefer ") + liked + over + rest, liked)


def _always_never(text: _Text, standing: bool) -> _Candidate | None:
    m = _ALWAYS_NEVER.match(text.mask)
    if m is None or not _verb_first(text.after(m)):
        return None
    lead = "Always " if m.group(1).lower() == "always" else "Never "
    payload = text.after(m)
    return _Candidate(_by_verb(payload), _Text.lit(lead) + payload, payload)


def _make_sure(text: _Text, standing: bool) -> _Candidate | None:
    m = _MAKE_SURE.match(text.mask)
    if m is None or not _verb_first(text.after(m)):
        return None
    payload = text.after(m)
    return _Candidate("constraint", _Text.lit(m.group(1).capitalize() + " ") + payload, payload)


def _you_modal(text: _Text, standing: bool) -> _Candidate | None:
    m = _YOU_MODAL.match(text.mask)
    if m is None:
        return None
    payload = text.after(m)
    adverb = (m.group(1) or m.group(3) or "").lower()
    modal = m.group(2).lower()
    negated = "not" in modal or "n't" in modal
    if _EPISTEMIC.match(payload.mask) or not _verb_first(payload):
        return None
    unforced = not modal.startswith("must") and adverb not in ("always", "never")
    if unforced and not (standing or _STANDING.search(payload.mask)):
        return None
    if adverb == "never" or (negated and adverb == "ever"):
        lead = "Never "
    elif negated:
        lead = "Do not "
    else:
        lead = "Always " if adverb == "always" else ""
    return _Candidate("constraint", _Text.lit(lead) + payload, payload)


def _dont(text: _Text, standing: bool) -> _Candidate | None:
    m = _DONT.match(text.mask)
    if m is None or not _verb_first(text.after(m)):
        return None
    payload = text.after(m)
    if not (standing or _STANDING.search(payload.mask)):
        return None
    return _Candidate(_by_verb(payload), _Text.lit("Do not ") + payload, payload)


def _we_always(text: _Text, standing: bool) -> _Candidate | None:
    m = _WE_ALWAYS.match(text.mask)
    if m is None or not _verb_first(text.after(m)) or _PAST.fullmatch(_first_word(text.after(m))):
        return None
    return _Candidate("constraint", text, text.after(m))


def _use(text: _Text, standing: bool) -> _Candidate | None:
    m = _PREFER.match(text.mask)
    if m is not None:
        return _Candidate("preference", text, text.after(m))
    m = _USE.match(text.mask)
    if m is None:
        return None
    payload = text.after(m)
    if _INSTEAD.search(payload.mask) or standing or _STANDING.search(payload.mask):
        return _Candidate("preference", text, payload)
    return None


def _standing_imperative(text: _Text, standing: bool) -> _Candidate | None:
    if not standing or _SUBJECT_START.match(text.mask) or not _verb_first(text):
        return None
    return _Candidate(_by_verb(text), text, text)


_IMPERATIVES: Final[tuple[Callable[[_Text, bool], _Candidate | None], ...]] = (
    _prefer_i,
    _rather,
    _like_better,
    _make_sure,
    _always_never,
    _you_modal,
    _dont,
    _we_always,
    _use,
    _standing_imperative,
)


def _imperative(text: _Text, *, standing: bool) -> _Candidate | None:
    for matcher in _IMPERATIVES:
        candidate = matcher(text, standing)
        if candidate is not None:
            return candidate
    return _subject_must(text)


_NP_MUST = re.compile(
    r"((?:[\w`./'-]+\s+){1,5}?)(?:must|shall)\s+(?:(?:not|never|always)\s+)?", re.IGNORECASE
)
_BAD_SUBJECT = re.compile(
    r"(?:i|you|it|that|this|there|he|she|they|something|someone|somebody|which|what|who|my|his|"
    r"her|their|one|if|when|unless)\b",
    re.IGNORECASE,
)
_REPORTED = re.compile(
    r"\b(?:says?|said|thinks?|thought|told|tells|claims?|believes?|mentioned|wrote|writes|"
    r"reckons?|insists?|suggests?|suggested)\b",
    re.IGNORECASE,
)
# "The function must return a list": a definite code unit is the one being worked on.
_TASK_SUBJECT = re.compile(
    r"(?:the|this|that)\s+(?:\w+\s+)?(?:function|method|class|test|file|variable|loop|script|"
    r"query|component|helper|handler|param\w*|argument|value|field|form|button|page|regex|"
    r"snippet|line|call|output)\s",
    re.IGNORECASE,
)
_TASK_NOUN = re.compile(
    r"\b(?:bugs?|fix|errors?|issues?|problems?|failures?|crash|exceptions?|traceback|typo|diff|"
    r"patch|output|results?|answer|suggestion)\b",
    re.IGNORECASE,
)


def _subject_must(text: _Text) -> _Candidate | None:
    """`<subject> must ...`: a rule stated about something ("All timestamps must be in UTC")."""
    m = _NP_MUST.match(text.mask)
    if m is None:
        return None
    subject, payload = m.group(1), text.after(m)
    if _BAD_SUBJECT.match(subject) or _TASK_SUBJECT.match(subject):
        return None
    if _REPORTED.search(subject) or _TASK_NOUN.search(subject):
        return None
    if _EPISTEMIC.match(payload.mask):
        return None
    return _Candidate("constraint", text, payload)


# ---- corrections -----------------------------------------------------------------------------

_PRESENT = _words(
    "is are isn't aren't has have lives live runs run uses use needs need requires require goes "
    "go gets get belongs belong comes come points point expects expect returns return reads "
    "read writes write loads load stores store deploys deploy builds build calls call contains "
    "contain depends depend sits sit stays stay starts start handles handle means mean defaults "
    "default targets target supports support"
)
_ADVERB = r"(?:(?:only|always|never|still|now|no\s+longer|currently|also|just)\s+)?"
_NEGATION = r"(?:(?:don't|doesn't|do\s+not|does\s+not|aren't|isn't)\s+)?"
_WE_STATEMENT = re.compile(
    rf"(we(?:'re|'ve|'ll)?)\s+(actually\s+)?{_ADVERB}{_NEGATION}([\w']+)", re.IGNORECASE
)
_STATEMENT = re.compile(
    r"((?:(?:all|both|only)\s+)?(?:the|our|this|these|every|each|all|any)\s+[\w`./'-]+"
    r"(?:\s+[\w`./'-]+){0,4}?|`x*`|[\w-]*[/_.][\w./-]*|(?-i:[A-Z])[\w.-]*)"
    rf"\s+(actually\s+)?{_ADVERB}{_NEGATION}"
    rf"({'|'.join(sorted(_PRESENT, key=len, reverse=True))})\b",
    re.IGNORECASE,
)
_DECISION_PAST = _words(
    "moved switched migrated decided dropped chose standardised standardized replaced removed "
    "deprecated agreed went settled adopted"
)
_BAD_WE_VERB = _words(
    "tried did was were had could would might may should can meant thought think need want "
    "wanted used got"
)
_CONTRAST = re.compile(r",\s*not\b|\bnot\s[^,]{1,80}?\sbut\b", re.IGNORECASE)
_NAME = re.compile(r"[A-Z][a-z]*")
_TRANSIENT = re.compile(
    r"\b(?:is|are|was|were|'s|'re)\s+(?:still\s+|now\s+|currently\s+|all\s+|also\s+)?"
    r"(?:broken|failing|down|green|red|fixed|done|ready|fine|working|flaky|passing|good|ok|"
    r"okay|wrong|correct|right|better|worse)\b",
    re.IGNORECASE,
)


def _correction(text: _Text, *, corrected: bool) -> _Candidate | None:
    """A statement after a correction trigger, or one that contrasts ("X, not Y")."""
    m = _WE_STATEMENT.match(text.mask) or _STATEMENT.match(text.mask)
    if m is None or _TASK_NOUN.search(m.group(1)) or _TRANSIENT.search(text.mask):
        return None
    subject, verb = m.group(1).lower(), m.group(3).lower()
    if subject == "we" and (
        verb in _BAD_WE_VERB or (_PAST.fullmatch(verb) is not None and verb not in _DECISION_PAST)
    ):
        return None
    if not (corrected or m.group(2) or _CONTRAST.search(text.mask)):
        return None
    if not (corrected or m.re is _WE_STATEMENT) and _NAME.fullmatch(m.group(1)):
        # "John uses tabs, not spaces": about someone else unless it corrects the agent
        return None
    if m.group(2):  # "we actually use X" -> "we use X"
        text = text[: m.start(2)] + text[m.end(2) :]
    return _Candidate("correction", text, text)


# ---- checks and rewriting --------------------------------------------------------------------

_TASK = re.compile(
    r"\b(?:right\s+now|for\s+now|just\s+now|(?<!from\s)now|yet|this\s+time|today|tonight|at\s+the\s+moment|"
    r"for\s+the\s+moment|(?:for|in)\s+this\s+(?!repo\b|repository\b|project\b|codebase\b|"
    r"code\s+base\b|team\b|company\b|org\b|monorepo\b|package\b|app\b|service\b|workspace\b)\w+)"
    r"\b",
    re.IGNORECASE,
)
_DEICTIC = re.compile(
    r"\b(?:it|them|these|those|this(?!\s+(?:repo|repository|project|codebase|code\s+base|team|"
    r"company|org|monorepo|package|app|service|workspace)\b)|that(?!\s+(?:the|a|an|all|every|"
    r"each|any|no|we|you|they|our|your|there|nothing|everything)\b))\b",
    re.IGNORECASE,
)
_CONDITIONAL_DEICTIC = re.compile(r"\b(?:these|those|this|that)\b", re.IGNORECASE)
_WORD = re.compile(r"`x*`|[\w'-]+")
_EMPTY_WORDS = _words(
    "do does it this that these those them again mind so ever anything everything one there "
    "here please pls thanks me us the a an to of and or now then use using just that's it's "
    "thing things stuff not"
)


def _acceptable(candidate: _Candidate, *, conditional: bool) -> bool:
    mask = _without_code(candidate.content.mask)
    deictic = _CONDITIONAL_DEICTIC if conditional else _DEICTIC
    if deictic.search(mask):
        return False
    if candidate.kind != "correction" and _TASK.search(mask):
        return False
    words = (w.lower() for w in _WORD.findall(candidate.payload.mask))
    return any(w not in _EMPTY_WORDS for w in words)


_TAIL_WORD = re.compile(
    r"(?:please|pls|plz|thanks|thank\s+you|thx|ty|lol|from\s+now\s+on|going\s+forward|"
    r"in\s+(?:the\s+)?future)$",
    re.IGNORECASE,
)
_TAIL_PUNCT = " \t,;:.!-–—"
_IDENTIFIER = re.compile(r"[\w./\\-]+")
_CODE_LIKE = re.compile(r"[_/\\.()\[\]{}<>=#$@0-9]|[a-z][A-Z]")


def _finish_text(text: _Text) -> _Text:
    """Drop trailing fillers and punctuation."""
    for _ in range(4):
        text = text[: len(text.mask.rstrip(_TAIL_PUNCT))]
        tail = _TAIL_WORD.search(text.mask[-20:])
        if tail is None or (tail.start() > 0 and text.mask[-20:][tail.start() - 1].isalnum()):
            break
        text = text[: len(text.mask) - len(tail.group())]
    return text


def _finish(text: _Text) -> str | None:
    """Return `text` as a storable sentence, or None when it cannot be one."""
    text = _finish_text(text.strip())
    content = text.orig
    if not content or "?" in text.mask:
        return None
    if content[0] != "`":
        first = content.split(maxsplit=1)[0].rstrip(",;:")
        if _IDENTIFIER.fullmatch(first) and _CODE_LIKE.search(first):
            content = f"`{first}`{content[len(first) :]}"
        else:
            content = content[0].upper() + content[1:]
            if not content[0].isupper():
                return None
    content += "."
    if len(content) > MAX_CONTENT or len(content.split()) < 2:
        return None
    return content


def _lower_first(text: _Text) -> _Text:
    """Lower the first letter, so "Always pin it" can follow "When you add a dependency, "."""
    first = text.orig[:1]
    if len(text.orig) > 1 and first.isupper() and not text.orig[1].isupper():
        return _Text.lit(first.lower()) + text[1:]
    return text


def _without_code(mask: str) -> str:
    return _CODE.sub("`x`", mask)


def _first_word(text: _Text) -> str:
    word = re.match(r"[\w']+", text.mask)
    return "" if word is None else word.group()
