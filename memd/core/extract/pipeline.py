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
                + a statement; "we use X, not Y" (a project subject)
    constraint  always|never|never ever|don't ever + other verbs       Instruction
                you must|have to|need to|should always ...
                make sure to always|never ...; <subject> must ...
                we always|never ...; don't X + a standing marker
    any kind    whose content names secrets, credentials, passwords,   Security
                tokens, API/private/SSH keys, .env, permissions, auth,
                JWT, PII ...

The pipeline: `memd.core.extract.sentences` (the lexer: lines, sentences, code-span masks) ->
sentence checks -> clauses -> `memd.core.extract.rules` (the matchers) -> candidate checks ->
rewriting. This module holds the pipeline, the checks and the rewriting.

Rules:
- Secrets are never stored: a candidate is dropped when its sentence or content carries a
  secret value (`memd.core.format.secrets`, the detector every write path uses: NAME=value,
  "the password is X", token prefixes such as sk-/ghp_/AKIA/xoxb-/eyJ..., PEM keys, long random
  tokens). A rule that only names a
  secret ("Never commit .env files", "Never log API keys") is kept, under Security.
- A sentence yields nothing when it is a question (ends with "?", or a tag: ", right",
  ", correct", "isn't it"), quotes someone ("... is what the book says", "according to",
  "as the docs say"), or ties itself to the work at hand ("that's the bug we're fixing",
  "that's what this PR fixes").
- Sentences are cut into clauses at `;`, ` - ` and `: `, and at `, and|but|so|also <trigger>`;
  a trigger counts only at the start of a clause. Before a colon, a label (nit, todo, fixme,
  note, refactor, fix, chore, feat, docs, tests, error, warning, log, output, review,
  suggestion ..., optionally "feat(api)" or "fix!") or a report ("pip says", "it keeps
  failing with", "the installer printed") makes everything after it in the sentence someone
  else's words or a one-off comment: nothing is extracted from it. A rule header ("We
  decided:", "Convention:", "Note for the future:") makes the next clause standing.
- Rejected clauses: questions (a `?`, or starting with should/do/can/why/let's ...), hedges
  (maybe, probably, I think), an if/when/unless/in-case clause with no comma, reported
  speech, epistemic or expectation modals, past narrative, filler ("no, thanks", "never
  mind"), one-off task scope (now, yet, for now, this time, in this PR/function, "the
  function must ..."), contents that point back into the conversation (it, this, that, them,
  here, there, "the same X", "the second option", "the one you suggested", "what you ..."),
  payloads with no content word, contents over 300 characters, clauses over 400 and sentences
  over 1000 characters.
- Rewriting: a trigger that carries no meaning is dropped ("Actually, we use pnpm" -> "We use
  pnpm."); one that does is kept in canonical form ("don't ever X" / "never ever X" -> "Never
  X."; "make sure to always X" -> "Always X."; "you must not X" -> "Do not X."; "you must X" ->
  "X."; "don't X" -> "Do not X."). First-person preferences become "Prefer X." ("I'd rather X
  than Y" -> "Prefer to X rather than Y."; "I like X better than Y" -> "Prefer X over Y.").
  Fillers (please, pls, btw, from now on, thanks ...) are dropped at both ends; code spans,
  paths and identifiers are kept byte for byte. The first letter is capitalised, or a leading
  identifier is wrapped in backticks ("tests/ is ..." -> "`tests/` is ..."); a final "." is
  added. Time is linear in the input: every regex runs on a clause or sentence of bounded
  length, and the line and sentence scanners are single passes.

Size: one pipeline read top to bottom (split, classify, check, category), kept whole so its order is
visible.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Final

import msgspec

from memd.core.extract.rules import (
    IMPERATIVES,
    Candidate,
    Kind,
    correction,
    subject_must,
    words,
)
from memd.core.extract.sentences import Text, sentences, without_code
from memd.core.format.categories import Category
from memd.core.format.secrets import has_secret

__all__ = [
    "MAX_CLAUSE",
    "MAX_CONTENT",
    "MAX_SENTENCE",
    "Found",
    "Kind",
    "category_of",
    "extract",
    "sentences",
]

MAX_CONTENT: Final = 300
MAX_CLAUSE: Final = 400
MAX_SENTENCE: Final = 1000

_KIND_CATEGORY: Final[dict[Kind, Category]] = {
    "preference": Category.PREFERENCE,
    "correction": Category.DECISION,
    "constraint": Category.INSTRUCTION,
}


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
            if content.casefold() not in seen and not has_secret(content):
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


# Letter boundaries, not word boundaries: `AWS_SECRET_ACCESS_KEY` names a secret, "tokenizer"
# and "author" do not.
_SECURITY = re.compile(
    r"(?<![^\W\d_])(?:secrets?|credentials?|passwords?|passwd|passphrases?|tokens?|"
    r"(?:api|private|ssh|access|signing|encryption|secret)[ _-]?keys?|"
    r"env\s+files?|dotenv|permissions?|auth|authn|authz|authenticat\w*|authori[sz]\w*|oauth|"
    r"jwts?|pii|personal\s+data|personally\s+identifiable|sudo|chmod|csrf|xss|injection|"
    r"vulnerabilit\w*|2fa|mfa|ssl|tls|certificates?|encrypt\w*)(?![^\W\d_])|(?<![\w.])\.env\b",
    re.IGNORECASE,
)


# ---- sentences -------------------------------------------------------------------------------

_FILLER = re.compile(
    r"(?:please|pls|plz|also|and|but|oh|ok|okay|so|btw|fyi|fwiw|imo|just|hey|hi|hmm+|well|"
    r"by\s+the\s+way|for\s+the\s+record|to\s+be\s+clear|just\s+so\s+you\s+know|"
    r"one\s+more\s+thing|(?:quick|side)\s+note|let'?s(?=\s+(?:always|never)\b)|"
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
    r"(?:no(?:\s+no)*|nope|nah|wrong|incorrect|not\s+quite)(?:\s*[,.!:;]|\s+[-–—]|\s*[–—])[\s,.!:;–—-]*"
    r"|actually\b[\s,:]*"
    r"|that's\s+(?:wrong|not\s+right|not\s+correct|incorrect|not\s+true)\b[\s,.!:;–—-]*"
    r"|correction\s*:\s*",
    re.IGNORECASE,
)
# A question without "?": "..., right", "..., correct", "... isn't it".
_TAG_QUESTION = re.compile(
    r"(?:,\s*(?:right|correct|yeah|yes|eh|huh|innit|no|yep|true)|"
    r",\s*(?:is|are|does|do|did|will|would|should|can|has|have)\s+(?:it|they|we|you|he|she|"
    r"there|that|i)|"
    r"(?:,\s*|\s)(?:isn't|aren't|doesn't|don't|didn't|won't|wouldn't|shouldn't|can't|hasn't|"
    r"haven't|mustn't)\s+(?:it|they|we|you|he|she|there|that|i))[\s\"')\]*_.!]*$",
    re.IGNORECASE,
)
# Someone else's words: "... is what the book says", "as the docs put it", "according to".
_QUOTING = re.compile(
    r"\b(?:is|was)\s+what\s+[^,;.]{0,40}?\b(?:says?|said|recommends?|recommended|suggests?|"
    r"suggested|teaches|taught|claims?|claimed|writes|wrote|advises|advised|preaches|"
    r"puts\s+it)\b"
    r"|\b(?:as|like)\s+(?:the|my|our|his|her|their|a|an)\s+[\w-]+(?:\s+[\w-]+){0,2}\s+"
    r"(?:says?|said|puts\s+it|recommends?|suggests?)\b"
    r"|\baccording\s+to\b"
    r"|\b(?:book|docs?|documentation|article|blog|guide|post|tutorial|manual|readme|spec|rfc|"
    r"pep|author|talk|course|video|paper)\s+(?:says?|said|recommends?|suggests?|claims?|"
    r"states?|tells?|told|wrote|argues?)\b",
    re.IGNORECASE,
)
# The work at hand: "the bug we're fixing", "the ticket I'm on", "what this PR fixes".
_WORK = r"(?:bug|issue|ticket|task|story|problem|pr|mr|pull\s+request|fix|change|feature)s?"
_CURRENT_WORK = re.compile(
    rf"\b{_WORK}\s+(?:(?:that|which)\s+)?(?:we're|we\s+are|i'm|i\s+am|you're|you\s+are)\s+"
    r"(?:fixing|working\s+on|on|doing|solving|addressing|handling|implementing|writing|"
    r"reviewing|debugging|chasing)\b"
    rf"|\bthis\s+{_WORK}\s+(?:fixes|addresses|is\s+about|implements|adds|needs)\b",
    re.IGNORECASE,
)


def _sentence(sentence: str, *, corrected: bool) -> tuple[list[tuple[Kind, str]], bool]:
    """Return the memories in one sentence, and whether it was only a correction ("No.")."""
    if len(sentence) > MAX_SENTENCE or sentence.rstrip("\"')]*_ ").endswith("?"):
        return [], False
    text, standing, stripped_correction = _strip_lead(Text.of(sentence))
    corrected = corrected or stripped_correction
    if not text.mask.strip(" ,.!:;-–—"):
        return [], stripped_correction
    mask = without_code(text.mask)
    if _TAG_QUESTION.search(mask[-40:]) or _QUOTING.search(mask) or _CURRENT_WORK.search(mask):
        return [], False
    if has_secret(sentence):
        return [], False
    results: list[tuple[Kind, str]] = []
    for number, (clause, header) in enumerate(_clauses(text)):
        found = _clause(clause, corrected=corrected and number == 0, standing=standing or header)
        if found is not None:
            results.append(found)
    return results, False


def _strip_lead(text: Text) -> tuple[Text, bool, bool]:
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


# ---- clauses ---------------------------------------------------------------------------------

_HARD_BREAK = re.compile(r";|:(?=\s)|\s[-–—]{1,3}\s|—")
_SOFT_BREAK = re.compile(
    r",\s*(?:and|but|so|also|plus|then)\s+(?=(?:(?:please|pls|also|then)\s+)?(?:always|never|"
    r"don't|dont|do\s+not|make\s+sure|you\s+(?:must|have\s+to|need\s+to|should)|"
    r"i(?:'d|\s+would)?\s+(?:prefer|rather|like)|use|prefer|stick|pick|choose|go\s+with|"
    r"switch\s+to)\b)",
    re.IGNORECASE,
)
# Labels that never head a rule: code annotations, review comments, commit types, log words.
_LABELS = (
    r"nits?|nitpicks?|todos?|fixmes?|xxx|hack|notes?|nb|refactor(?:ing)?|fix(?:es|ed)?|bugfix|"
    r"hotfix|chore|feat|feature|tests|testing|revert|wip|errors?|warnings?|warn|info|debug|"
    r"logs?|output|stdout|stderr|console|terminal|results?|traceback|exception|trace|response|"
    r"status|review|comments?|suggestions?|questions?|q|examples?|typo|cleanup"
)
# Commit types that are also topic headers ("Style: prefer f-strings"): labels only in the
# commit convention, lower case or with a scope or "!" ("docs:", "ci(deps):", "Build!:").
_COMMIT_TYPES = r"docs?|style|perf|test|ci|build|deps"
_LABEL = re.compile(
    rf"(?:^|[\s,(\[])(?:(?i:{_LABELS})(?:\([^)]{{0,40}}\))?!?|(?:{_COMMIT_TYPES})!?|"
    rf"(?i:{_COMMIT_TYPES})(?:\([^)]{{0,40}}\)!?|!))\s*$"
)
_LABEL_WORDS: Final = 4  # "nit", "CI output", "Here's my only nit"
_BRACKET_LABEL = re.compile(rf"[\[(](?i:{_LABELS}|{_COMMIT_TYPES})[\])]")
_REPORT = re.compile(
    r"\b(?:says?|said|saying|prints?|printed|printing|shows?|showed|shown|showing|outputs?|"
    r"outputted|returns?|returned|returning|reports?|reported|complains?|complained|tells?|"
    r"told|recommends?|recommended|suggests?|suggested|claims?|claimed|states?|stated|"
    r"mentions?|mentioned|reads|responds?|responded|repl(?:y|ies|ied)|answers?|answered|"
    r"asks?|asked|errors?|errored|warns?|warned|fails?|failed|failing|crash\w*|dies|died|"
    r"exits?|exited|exiting|throws?|threw|thrown|raises?|raised|logs?|logged|gives?|gave|"
    r"getting|got|gets|see|saw|seeing|seen|goes|went|puts\s+it|quotes?|quoted|quoting|"
    r"according\s+to|wrote|writes|written|spits?|spat|yells?|yelled|dumps?|dumped|emits?|"
    r"emitted)\b",
    re.IGNORECASE,
)
# A rule header makes the clause after it standing: "We decided: use dataclasses for models."
_HEADER = re.compile(
    r"(?:^|(?<=[\s,]))(?:(?:[\w-]+\s+){0,3}(?:rules?|conventions?|polic(?:y|ies)|guidelines?|"
    r"decisions?|standards?)(?:\s+of\s+thumb)?|(?:we|the\s+team)\s+(?:have\s+)?(?:decided|agreed|"
    r"settled\s+on|standardi[sz]ed\s+on)|(?:[\w-]+\s+){0,3}?(?:(?:for|in)\s+(?:the\s+)?future|"
    r"from\s+now\s+on|going\s+forward|for\s+future\s+reference))\s*$",
    re.IGNORECASE,
)


def _clauses(text: Text) -> Iterator[tuple[Text, bool]]:
    """Yield (clause, after a rule header); stop after a label ("nit:", "[todo]", "fix -") or
    at a colon after a report ("pip says:")."""
    if _BRACKET_LABEL.match(text.mask):
        return
    start = 0
    header = False
    for m in _HARD_BREAK.finditer(text.mask):
        piece = text[start : m.start()]
        yield from _soft_clauses(piece, header=header)
        header = False
        if m.group() != ";":  # a colon or a dash
            prefix = piece.mask.strip()
            if len(prefix.split()) <= _LABEL_WORDS and _LABEL.search(prefix):
                return
            if m.group() == ":" and _REPORT.search(prefix):
                return
            header = m.group() == ":" and _HEADER.search(prefix) is not None
        start = m.end()
    yield from _soft_clauses(text[start:], header=header)


def _soft_clauses(text: Text, *, header: bool) -> Iterator[tuple[Text, bool]]:
    start = 0
    for m in _SOFT_BREAK.finditer(text.mask):
        yield text[start : m.start()].strip(), header
        start, header = m.end(), False
    yield text[start:].strip(), header


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


def _clause(text: Text, *, corrected: bool, standing: bool) -> tuple[Kind, str] | None:
    text, more_standing, more_corrected = _strip_lead(text)
    standing, corrected = standing or more_standing, corrected or more_corrected
    if not text.mask or len(text.mask) > MAX_CLAUSE:
        return None
    if "?" in text.mask or _HEDGE.search(text.mask) or _QUESTION_START.match(text.mask):
        return None
    condition: Text | None = None
    if _CONDITION.match(text.mask):
        m = _CONDITION_CLAUSE.match(text.mask)
        if m is None:
            return None
        condition, text = text[: m.end()], text.after(m)
    aside = _ASIDE.search(text.mask)
    if aside is not None:  # "Never commit .env, it has the keys": the rule ends at the comma
        if _TASK.search(without_code(text.mask[aside.end() :])):
            return None  # "Use X, it is fine for now": the whole clause is scoped to the task
        text = text[: aside.start()]
    conditional = condition is not None
    candidate = _candidate(text, corrected=corrected, standing=standing, conditional=conditional)
    head = None if candidate is not None else _before_pointing_aside(text)
    if head is not None:  # "Never hardcode the tenant id, read it from the context"
        candidate = _candidate(
            head, corrected=corrected, standing=standing, conditional=conditional
        )
    if candidate is None:
        return None
    content = candidate.content
    if condition is not None:
        content = condition + _lower_first(_finish_text(content))
    final = _finish(content)
    return None if final is None else (candidate.kind, final)


def _candidate(
    text: Text, *, corrected: bool, standing: bool, conditional: bool
) -> Candidate | None:
    candidate = _imperative(text, standing=standing)
    if candidate is None and not conditional:
        candidate = correction(text, corrected=corrected)
    if candidate is None or not _acceptable(candidate, conditional=conditional):
        return None
    return candidate


# A comma clause after a rule that asks for something now: "..., please write the test that
# way", "..., can you fix it", "..., just add a default". A reason ("..., they can contain PII")
# stays part of the rule unless it points back with it/this/that (`_before_pointing_aside`).
_ASIDE = re.compile(
    r",\s*(?:please|pls|plz|thanks|thank\s+you|thx|can\s+you|could\s+you|would\s+you|"
    r"just|then|and\s+then|don't|dont|do\s+not)\b",
    re.IGNORECASE,
)
_CONTRAST_START = re.compile(
    r"\s*(?:not|never|always|only|except|but|or|nor|instead|rather|unless|if|when|even)\b",
    re.IGNORECASE,
)


def _before_pointing_aside(text: Text) -> Text | None:
    """The clause up to the comma before its first it/them/this/that, when what follows is an
    aside that points back ("..., read it from the request context"), not a contrast or a
    limit ("..., not in it", "..., only for now")."""
    mask = text.mask  # code spans are blanked to `xxx`: no word inside one counts
    pointer = _DEICTIC.search(mask)
    comma = -1 if pointer is None else mask.rfind(",", 0, pointer.start())
    if comma <= 0 or _CONTRAST_START.match(mask, comma + 1) or _TASK.search(mask, comma):
        return None
    return text[:comma]


def _imperative(text: Text, *, standing: bool) -> Candidate | None:
    for matcher in IMPERATIVES:
        candidate = matcher(text, standing)
        if candidate is not None:
            return candidate
    return subject_must(text)


# ---- checks and rewriting --------------------------------------------------------------------

_TASK = re.compile(
    r"\b(?:right\s+now|for\s+now|just\s+now|(?<!from\s)now|yet|this\s+time|today|tonight|"
    r"at\s+the\s+moment|for\s+the\s+moment|(?:for|in)\s+this\s+(?!repo\b|repository\b|"
    r"project\b|codebase\b|code\s+base\b|team\b|company\b|org\b|monorepo\b|package\b|app\b|"
    r"service\b|workspace\b)\w+)\b",
    re.IGNORECASE,
)
_DEICTIC = re.compile(
    r"\b(?:it|them|these|those|this(?!\s+(?:repo|repository|project|codebase|code\s+base|team|"
    r"company|org|monorepo|package|app|service|workspace)\b)|that(?!\s+(?:the|a|an|all|every|"
    r"each|any|no|we|you|they|our|your|there|nothing|everything)\b))\b",
    re.IGNORECASE,
)
_CONDITIONAL_DEICTIC = re.compile(r"\b(?:these|those|this|that)\b", re.IGNORECASE)
# Pointing back into the conversation: "the second option", "the one you suggested", "here".
_ORDINAL = r"(?:first|second|third|fourth|fifth|last|latter|former|other|previous|earlier|original)"
_CHOICE = (
    r"options?|approach(?:es)?|versions?|solutions?|suggestions?|proposals?|variants?|"
    r"alternatives?|ideas?|drafts?|attempts?|implementations?|plans?|designs?|choices?"
)
_POINTER = re.compile(
    rf"\b(?:(?:{_ORDINAL}|new|old|same|the|your|my)\s+ones?\b(?!-)"
    rf"|{_ORDINAL}\s+(?:[\w-]+\s+)?(?:{_CHOICE}|snippets?|answers?|examples?|fix(?:es)?|"
    r"patch(?:es)?|diffs?)\b"
    rf"|your\s+(?:[\w-]+\s+)?(?:{_CHOICE})\b"
    r"|you\s+(?:just\s+|originally\s+)?(?:gave|suggested|proposed|showed|shown|sent|wrote|"
    r"offered|mentioned|recommended|listed|posted|shared|described|had|did|made|pasted|picked|"
    r"chose|came\s+up\s+with)\b"
    r"|what\s+you\b|here\b|there\b(?!\s+(?:is|are|was|were|will|would|should|must|may|might|"
    r"can|could|has|have|be)\b|')"
    r"|same\b(?![^,;.]{0,60}?\b(?:as|for\s+(?:all|every|each|both)|across|everywhere|"
    r"throughout)\b))",
    re.IGNORECASE,
)
_WORD = re.compile(r"`x*`|[\w'-]+")
_EMPTY_WORDS = words(
    "do does it this that these those them again mind so ever anything everything one there "
    "here please pls thanks me us the a an to of and or now then use using just that's it's "
    "thing things stuff not"
)


def _acceptable(candidate: Candidate, *, conditional: bool) -> bool:
    mask = without_code(candidate.content.mask)
    deictic = _CONDITIONAL_DEICTIC if conditional else _DEICTIC
    if not _points_inside(mask, deictic) or not _same_inside(mask):
        return False
    if candidate.kind != "correction" and _TASK.search(mask):
        return False
    payload = (w.lower() for w in _WORD.findall(candidate.payload.mask))
    return any(w not in _EMPTY_WORDS for w in payload)


# A purpose or reason inside the rule: "Always run migrations with --sql first to review them".
_PURPOSE = re.compile(
    r"\s(?:to|so\s+that|so|because|since|until|before|after)\s+"
    r"(?!(?:it|them|this|that|these|those)\b)(?=\w)",
    re.IGNORECASE,
)
_BACK_REFERENCE = words("it them they")
_PURPOSE_HEAD_WORDS: Final = 3


def _points_inside(mask: str, deictic: re.Pattern[str]) -> bool:
    """No it/them/this/that, unless only it/them/they inside a purpose or reason clause that
    follows a rule with its own object ("... with --sql first to review them")."""
    first = deictic.search(mask)
    if first is None:
        return True
    purpose = _PURPOSE.search(mask)
    if purpose is None or purpose.start() > first.start():
        return False
    if len(mask[: purpose.start()].split()) < _PURPOSE_HEAD_WORDS:
        return False
    return all(m.group().lower() in _BACK_REFERENCE for m in deictic.finditer(mask))


def _same_inside(mask: str) -> bool:
    """No pointer into the conversation ("the second option", "here"); "the same X" only when
    the rule names both things that share it ("the migration and the model in the same commit")."""
    pointer = _POINTER.search(mask)
    if pointer is None:
        return True
    if pointer.group().lower() != "same" or _POINTER.search(mask, pointer.end()) is not None:
        return False
    return re.search(r"\b(?:and|both)\b", mask[: pointer.start()], re.IGNORECASE) is not None


_TAIL_WORD = re.compile(
    r"(?:please|pls|plz|thanks|thank\s+you|thx|ty|lol|from\s+now\s+on|going\s+forward|"
    r"in\s+(?:the\s+)?future)$",
    re.IGNORECASE,
)
_TAIL_PUNCT = " \t,;:.!-–—"
_IDENTIFIER = re.compile(r"[\w./\\-]+")
_CODE_LIKE = re.compile(r"[_/\\.()\[\]{}<>=#$@0-9]|[a-z][A-Z]")


def _finish_text(text: Text) -> Text:
    """Drop trailing fillers and punctuation."""
    for _ in range(4):
        text = text[: len(text.mask.rstrip(_TAIL_PUNCT))]
        tail = _TAIL_WORD.search(text.mask[-20:])
        if tail is None or (tail.start() > 0 and text.mask[-20:][tail.start() - 1].isalnum()):
            break
        text = text[: len(text.mask) - len(tail.group())]
    return text


def _finish(text: Text) -> str | None:
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


def _lower_first(text: Text) -> Text:
    """Lower the first letter, so "Always pin it" can follow "When you add a dependency, "."""
    first = text.orig[:1]
    if len(text.orig) > 1 and first.isupper() and not text.orig[1].isupper():
        return Text.lit(first.lower()) + text[1:]
    return text
