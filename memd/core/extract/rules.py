"""The matchers of memory extraction: trigger patterns, word lists and the secret detector.

Every matcher reads one clause (a `Text`, already stripped of leading fillers) and returns a
`Candidate` (kind, content, payload) or None. The pipeline (`memd.core.extract.pipeline`)
runs them in order and then applies the checks that hold for every kind.

Rules:
- Imperatives (`IMPERATIVES`, tried in order, then `subject_must`):
  "I prefer X" / "I'd rather X [than Y]" / "I like X better [than Y]" -> preference, rewritten
  "Prefer ..."; dropped when the payload names "you"/"your" (it is about the agent's steps or
  an option the agent offered, and "Prefer ..." would lose who does what) or concedes ("but",
  "though", "except": "I like pytest better, but the team uses unittest").
  "make sure to always|never X", "always|never|don't ever X" -> the kind by the verb: a
  use-verb (use, prefer, pick, choose, go with, stick with/to, switch to, opt for, default
  to) is a preference, any other verb a constraint.
  "you must|have to|need to|should|gotta X" -> constraint; have to/need to/should need
  always/never or a standing marker; "you should always get|see|receive|return ..." is an
  expectation about behaviour, not a rule; epistemic must ("must have run", "must be a ...",
  "must be able to") is not a rule.
  "don't X" needs a standing marker (ever, again, anywhere, in this repo, for all ...).
  "we always|never X" (present tense) -> constraint. "prefer X" and "use X instead of|rather
  than|over|not Y" or "use X" + a standing marker -> preference. After a standing lead ("from
  now on", "going forward", a "We decided:" header), any bare imperative counts.
- `subject_must`: "<subject> must X" -> constraint, unless the subject is a pronoun, a
  reporter ("the linter says"), a code unit being worked on ("the function"), a bug/result,
  or the payload is epistemic ("must have failed", "must be joking", "must not be able to").
- `correction`: a statement (a subject and a present-tense verb; for "we" a past decision
  verb too) after a correction trigger, or one that contrasts ("X, not Y", "not X but Y").
  A bare contrast (no trigger) needs a project subject: we, our ..., the team/project/repo.
  A statement about anything else must not read as an observation of code: no code-unit
  subject (the function, script, parser, daemon, handler, loop, fixture, logs ...) unless the
  verb only places it ("the handlers live in app/"), no unnamed unit at hand ("the function
  is in utils.py"), no behaviour verb (returns, calls, depends, expects, gets), no diagnosis
  word (wrong, old, stale, twice). "X, not Y" about how code behaves is a bug report.
- Secret values are found by `memd.core.format.secrets` (one detector for every write path);
  a candidate carrying one is dropped.
- Every regex is anchored or bounded and has no nested quantifiers: time is linear.

Size: a table of matchers, one small function each; the table is the point, and its order decides.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from typing import Final, Literal

from memd.core.extract.sentences import Text, first_word

Kind = Literal["preference", "correction", "constraint"]


@dataclasses.dataclass(frozen=True, slots=True)
class Candidate:
    """A rule found in a clause: its kind, the content to store and what follows the trigger."""

    kind: Kind
    content: Text
    payload: Text  # must hold a content word


def words(text: str) -> frozenset[str]:
    """A word list from a space-separated string."""
    return frozenset(text.split())


Matcher = Callable[[Text, bool], Candidate | None]

# ---- vocabulary ------------------------------------------------------------------------------

_USE_VERB = re.compile(
    r"(?:use|using|prefer|pick|choose|go\s+with|stick\s+(?:with|to)|switch\s+to|opt\s+for|"
    r"default\s+to)\b",
    re.IGNORECASE,
)
_NOT_A_VERB = words(
    "a an the my your our his her their its this that these those it i you we they he she there "
    "here so too very more less mind again ever been sure true false fine good great nice happy "
    "glad fun same know knew say said when if and or but worry bother care gonna going works "
    "worked fails failed returns returned happens happened seems seemed is was were are did "
    "does had has thought think gets got wanted liked not no anything nothing something "
    "everything what"
)
STANDING = re.compile(
    r"\b(?:always|never|ever|again|anymore|any\s+more|anywhere|everywhere|every\s+time|"
    r"each\s+time|whenever|from\s+now\s+on|going\s+forward|in\s+(?:the\s+)?future|"
    r"for\s+(?:the\s+)?future|in\s+general|by\s+default|as\s+a\s+rule|for\s+everything|"
    r"(?:in|for|across|on)\s+(?:all|every|each|any)|"
    r"in\s+(?:this|the|our)\s+(?:repo|repository|project|codebase|code\s+base|package|monorepo|"
    r"workspace))\b",
    re.IGNORECASE,
)
_YOU = re.compile(r"\byou(?:r|rs|rself|'re|'ll|'d|'ve)?\b", re.IGNORECASE)
_CONCESSION = re.compile(r"\b(?:but|though|although|however|except|whereas)\b", re.IGNORECASE)

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
    r"(you|we)\s+(?:(always|never)\s+)?(must\s+not|mustn't|must|have\s+to|need\s+to|should\s+not|"
    r"shouldn't|should|'ve\s+got\s+to|gotta)\s+(?:(always|never|ever)\s+)?(?=\w|`)",
    re.IGNORECASE,
)
# "you should always get a 200": what the user expects to observe, not what the agent must do.
_EXPECTATION = re.compile(
    r"(?:get|see|receive|find|notice|hear|observe|end\s+up|have\s+to|need\s+to|return|"
    r"be\s+(?:getting|seeing|receiving|returning|able))\b",
    re.IGNORECASE,
)
_PARTICIPLE = (
    r"\w+ed|been|gone|done|seen|made|had|got|gotten|forgotten|broken|run|written|taken|given|"
    r"known|shown|thrown|drawn|grown|begun|become|come|sent|spent|built|left|lost|put|set|read|"
    r"hit|cut|said|told|found|thought|brought|bought|caught|taught|held|kept|meant|paid|stood|"
    r"understood|won|hung|stuck|struck|shut|split|spread|quit|let|fallen|frozen|chosen|spoken|"
    r"stolen|woken|driven|ridden|risen|eaten|hidden|mistaken|overwritten|rewritten|shaken|torn|"
    r"worn|blown|flown|fed|led|dealt|felt|slid|bound|wound|sunk|shrunk|sprung|dug|spun|swum|"
    r"upset|cast|shed|sped|lit|fit|hurt|crept|swept|burnt|learnt|slept|rebuilt|reset|rerun|"
    r"redone|undone|gotten|overridden|misread|mistook|forgot|broke|took|ran|went|wrote|did|saw"
)
_EPISTEMIC = re.compile(
    rf"(?:'ve|have\s+(?:{_PARTICIPLE})|"
    r"be\s+(?:a|an|the|some|something|because|why|joking|kidding|wrong|broken|outdated|stale|"
    r"cached|missing|fine|right|correct|off|down|failing|it|that|mistaken|confused|tired|due|"
    r"related|somewhere|here|there|able|\w+ing))\b",
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
PAST = re.compile(
    r"\w+ed|did|was|were|had|tried|got|went|made|thought|knew|said|could|would|might|may",
    re.IGNORECASE,
)


def _verb_first(payload: Text) -> bool:
    word = first_word(payload)
    return word != "" and word.lower() not in _NOT_A_VERB


def _by_verb(payload: Text) -> Kind:
    return "preference" if _USE_VERB.match(payload.mask) else "constraint"


def _first_person(payload: Text, clause: Text) -> bool:
    """A first-person preference stands alone: no "you"/"your" in it, no concession."""
    return _YOU.search(payload.mask) is None and _CONCESSION.search(clause.mask) is None


# ---- imperatives: preferences and constraints ------------------------------------------------


def _prefer_i(text: Text, standing: bool) -> Candidate | None:
    m = _PREFER_I.match(text.mask)
    if m is None or not _first_person(text.after(m), text):
        return None
    payload = text.after(m)
    return Candidate("preference", Text.lit("Prefer ") + payload, payload)


def _rather(text: Text, standing: bool) -> Candidate | None:
    m = _RATHER.match(text.mask)
    if m is None:
        return None
    rest = text.after(m)
    negated = _RATHER_YOU_NOT.match(rest.mask) or _RATHER_NOT.match(rest.mask)
    if negated is None and _PRONOUN.match(rest.mask):
        return None
    payload = rest.after(negated)
    if not _first_person(payload, text):
        return None
    than = _THAN.search(payload.mask)
    if than is not None:
        payload = payload[: than.start()] + Text.lit("rather than") + payload[than.end() :]
    lead = "Prefer not to " if negated else "Prefer to "
    return Candidate("preference", Text.lit(lead) + payload, payload)


def _like_better(text: Text, standing: bool) -> Candidate | None:
    m = _LIKE.match(text.mask)
    better = None if m is None else _BETTER.search(text.mask, m.end())
    if m is None or better is None or not _first_person(text.after(m), text):
        return None
    liked, rest = text[m.end() : better.start()], text[better.end() :].strip()
    if better.group().rstrip().lower().endswith("than"):
        over = Text.lit(" over ")
    elif _BETTER_TAIL.match(rest.mask):  # "I like X better, for Y" but not "I like having more Z"
        over = Text.lit(" " if rest.mask[:1].isalnum() else "")
    else:
        return None
    return Candidate("preference", Text.lit("Prefer ") + liked + over + rest, liked)


def _always_never(text: Text, standing: bool) -> Candidate | None:
    m = _ALWAYS_NEVER.match(text.mask)
    if m is None or not _verb_first(text.after(m)):
        return None
    lead = "Always " if m.group(1).lower() == "always" else "Never "
    payload = text.after(m)
    return Candidate(_by_verb(payload), Text.lit(lead) + payload, payload)


def _make_sure(text: Text, standing: bool) -> Candidate | None:
    m = _MAKE_SURE.match(text.mask)
    if m is None or not _verb_first(text.after(m)):
        return None
    payload = text.after(m)
    return Candidate("constraint", Text.lit(m.group(1).capitalize() + " ") + payload, payload)


def _you_modal(text: Text, standing: bool) -> Candidate | None:
    m = _YOU_MODAL.match(text.mask)
    if m is None:
        return None
    payload = text.after(m)
    adverb = (m.group(2) or m.group(4) or "").lower()
    modal = m.group(3).lower()
    negated = "not" in modal or "n't" in modal
    if _EPISTEMIC.match(payload.mask) or not _verb_first(payload):
        return None
    if modal.startswith("should") and _EXPECTATION.match(payload.mask):
        return None
    unforced = not modal.startswith("must") and adverb not in ("always", "never")
    if unforced and not (standing or STANDING.search(payload.mask)):
        return None
    if adverb == "never" or (negated and adverb == "ever"):
        lead = "Never "
    elif negated:
        lead = "Do not "
    else:
        lead = "Always " if adverb == "always" else ""
    if m.group(1).lower() == "we":  # "we should never expose ids": kept as written
        return Candidate("constraint", text, payload)
    return Candidate("constraint", Text.lit(lead) + payload, payload)


def _dont(text: Text, standing: bool) -> Candidate | None:
    m = _DONT.match(text.mask)
    if m is None or not _verb_first(text.after(m)):
        return None
    payload = text.after(m)
    if standing or STANDING.search(payload.mask):
        return Candidate(_by_verb(payload), Text.lit("Do not ") + payload, payload)
    instead = _COMMA_USE.search(payload.mask)  # "don't mock the DB in tests, use the container"
    if instead is not None:
        return Candidate("preference", Text.lit("Do not ") + payload, payload)
    return _same_verb_contrast(payload)


_COMMA_USE = re.compile(
    r",\s*(?:use|pick|choose|go\s+with|stick\s+(?:with|to)|switch\s+to|opt\s+for|default\s+to)"
    r"\s+(?=\w|`)",
    re.IGNORECASE,
)
_PREPOSITION = (
    r"(?:by|with|in|into|on|for|from|via|through|under|inside|as|at|using|per|against|within)"
)
_PREP_PHRASE = re.compile(rf"\b{_PREPOSITION}\s", re.IGNORECASE)


def _same_verb_contrast(payload: Text) -> Candidate | None:
    """ "don't key it by IP, key the rate limit by event type" -> "Key the rate limit by event
    type, not by IP.": the same verb, contrasted in how or where (a prepositional phrase both
    halves have), not in what is acted on ("don't rename the variable, rename the function"
    is a one-off edit)."""
    verb = first_word(payload)
    comma = payload.mask.find(",")
    if comma < 0:
        return None
    again = re.match(rf",\s*{re.escape(verb)}\s+(?=\w|`)", payload.mask[comma:], re.IGNORECASE)
    if again is None:
        return None
    refused, wanted = payload[len(verb) : comma], payload[comma + again.end() :]
    phrase = _PREP_PHRASE.search(refused.mask)
    if phrase is None or "," in wanted.mask:
        return None
    shared = re.search(rf"\b{phrase.group().strip()}\s", wanted.mask, re.IGNORECASE)
    if shared is None or shared.start() == 0:
        return None
    rule = payload[comma + again.start() + 1 :].strip()
    rule = rule[: len(rule.mask.rstrip(" .!;:"))]
    content = rule + Text.lit(", not ") + refused[phrase.start() :].strip()
    return Candidate(_by_verb(rule), content, wanted)


_CONTRAST_IMPERATIVE = re.compile(rf",\s*not\s+({_PREPOSITION})\s+(?=\w|`)", re.IGNORECASE)


def _contrast_imperative(text: Text, standing: bool) -> Candidate | None:
    """ "Keep all feature flags in flags.yaml, not in env vars": a bare imperative contrasted in
    a prepositional phrase the rule itself has, a standing convention about where or how."""
    if _SUBJECT_START.match(text.mask) or not _verb_first(text):
        return None
    m = _CONTRAST_IMPERATIVE.search(text.mask)
    if m is None or "," in text.mask[: m.start()]:
        return None
    if re.search(rf"\b{m.group(1)}\s", text.mask[: m.start()], re.IGNORECASE) is None:
        return None
    return Candidate(_by_verb(text), text, text)


def _we_always(text: Text, standing: bool) -> Candidate | None:
    m = _WE_ALWAYS.match(text.mask)
    if m is None or not _verb_first(text.after(m)) or PAST.fullmatch(first_word(text.after(m))):
        return None
    return Candidate("constraint", text, text.after(m))


def _use(text: Text, standing: bool) -> Candidate | None:
    m = _PREFER.match(text.mask)
    if m is not None:
        return Candidate("preference", text, text.after(m))
    m = _USE.match(text.mask)
    if m is None:
        return None
    payload = text.after(m)
    if _INSTEAD.search(payload.mask) or standing or STANDING.search(payload.mask):
        return Candidate("preference", text, payload)
    return None


def _standing_imperative(text: Text, standing: bool) -> Candidate | None:
    if not standing or _SUBJECT_START.match(text.mask) or not _verb_first(text):
        return None
    return Candidate(_by_verb(text), text, text)


IMPERATIVES: Final[tuple[Matcher, ...]] = (
    _prefer_i,
    _rather,
    _like_better,
    _make_sure,
    _always_never,
    _you_modal,
    _dont,
    _we_always,
    _use,
    _contrast_imperative,
    _standing_imperative,
)


# ---- "<subject> must ..." --------------------------------------------------------------------

_NP_MUST = re.compile(
    r"((?:[\w`./'-]+\s+){1,5}?)(?:must|shall)\s+(?:(?:not|never|always)\s+)?", re.IGNORECASE
)
_BAD_SUBJECT = re.compile(
    r"(?:i|you|it|that|this|there|he|she|they|something|someone|somebody|which|what|who|my|his|"
    r"her|their|one|if|when|unless)\b",
    re.IGNORECASE,
)
REPORTED = re.compile(
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
TASK_NOUN = re.compile(
    r"\b(?:bugs?|fix|errors?|issues?|problems?|failures?|crash|exceptions?|traceback|typo|diff|"
    r"patch|output|results?|answer|suggestion)\b",
    re.IGNORECASE,
)


def subject_must(text: Text) -> Candidate | None:
    """`<subject> must ...`: a rule stated about something ("All timestamps must be in UTC")."""
    m = _NP_MUST.match(text.mask)
    if m is None:
        return None
    subject, payload = m.group(1), text.after(m)
    if _BAD_SUBJECT.match(subject) or _TASK_SUBJECT.match(subject):
        return None
    if REPORTED.search(subject) or TASK_NOUN.search(subject):
        return None
    if _EPISTEMIC.match(payload.mask):
        return None
    return Candidate("constraint", text, payload)


# ---- corrections -----------------------------------------------------------------------------

_PRESENT = words(
    "is are isn't aren't has have lives live runs run uses use needs need requires require goes "
    "go gets get belongs belong comes come points point expects expect returns return reads "
    "read writes write loads load stores store deploys deploy builds build calls call contains "
    "contain depends depend sits sit stays stay starts start handles handle means mean defaults "
    "default targets target supports support talks talk hosts host ships ship publishes publish "
    "serves serve follows follow keeps keep relies rely"
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
# Whose facts are decisions: we, our ..., the team/project/repo, this codebase.
_PROJECT_SUBJECT = re.compile(
    r"(?:our\b|(?:the|this|our)\s+(?:team|project|repo|repository|codebase|code\s+base|company|"
    r"org|organi[sz]ation|monorepo)\b)",
    re.IGNORECASE,
)
_DECISION_PAST = words(
    "moved switched migrated decided dropped chose standardised standardized replaced removed "
    "deprecated agreed went settled adopted"
)
_BAD_WE_VERB = words(
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
# Observations of code: a code unit as the subject, a behaviour verb, a diagnosis word.
_CODE_UNIT = re.compile(
    r"\b(?:functions?|methods?|class|classes|test|scripts?|daemon|parser|lexer|handlers?|loop|"
    r"fixtures?|endpoints?|query|queries|regex|variables?|helpers?|callbacks?|hooks?|"
    r"decorators?|constructor|snippet|line|calls?|program|process|"
    r"binary|logs?|output|response|request|stack\s+trace|compose\s+file|makefile|dockerfile)\b",
    re.IGNORECASE,
)
_BEHAVIOUR = words(
    "returns return calls call depends depend expects expect gets get throws raises crashes "
    "fails hangs prints emits swallows ignores skips creates sends breaks spawns"
)
_WHERE_VERB = words("is are isn't aren't lives live sits sit belongs belong stays stay")
_DIAGNOSIS = re.compile(
    r"\b(?:wrong|old|older|stale|outdated|twice|thrice|duplicated?|empty|null|undefined)\b",
    re.IGNORECASE,
)


def correction(text: Text, *, corrected: bool) -> Candidate | None:
    """A statement after a correction trigger, or a project statement that contrasts."""
    m = _WE_STATEMENT.match(text.mask) or _STATEMENT.match(text.mask)
    if m is None or TASK_NOUN.search(m.group(1)) or _TRANSIENT.search(text.mask):
        return None
    subject, verb = m.group(1), m.group(3).lower()
    if _TASK_SUBJECT.match(subject + " "):  # "the function is in utils.py": which function?
        return None
    if m.re is _WE_STATEMENT and (
        verb in _BAD_WE_VERB or (PAST.fullmatch(verb) is not None and verb not in _DECISION_PAST)
    ):
        return None
    project = m.re is _WE_STATEMENT or _PROJECT_SUBJECT.match(subject) is not None
    triggered = corrected or m.group(2) is not None
    if not triggered and not (project and _CONTRAST.search(text.mask)):
        return None
    if not project and _observed(subject, verb, text, corrected=corrected):
        return None
    if m.group(2):  # "we actually use X" -> "we use X"
        text = text[: m.start(2)] + text[m.end(2) :]
    return Candidate("correction", text, text)


def _observed(subject: str, verb: str, text: Text, *, corrected: bool) -> bool:
    """Whether a statement reports what code does or someone says, rather than a decision."""
    if not corrected and _NAME.fullmatch(subject):
        return True  # "John actually uses tabs": about someone else
    if _CODE_UNIT.search(subject) and verb not in _WHERE_VERB:
        return True  # "the parser reads ...", but "the handlers live in app/" is a fact
    return verb in _BEHAVIOUR or _DIAGNOSIS.search(text.mask) is not None
