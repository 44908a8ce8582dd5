"""How a memory reads for a write decision: its words in order, each with a role and a polarity.

`analyse(text)` returns a `Wording`: the words a comparison looks at, in order, each with the
key it is compared by, its kind, whether it is negated, and which clause and phrase it is in;
plus the memory's tags and a normal form. `keywords(text)` is the cheaper set of content keys
the dedup index finds candidates by.

Rules:
- Every script is read: words are Unicode letter-and-digit runs; each Chinese or Japanese
  character is a word of its own (their text has no spaces), and `keywords` joins neighbouring
  ones into character pairs. Nothing is stripped for being non-Latin.
- Formatting is not wording: case, punctuation, Markdown emphasis and backticks, hyphens and
  underscores between words ("feature-flags" = "feature flags", `snake_case` = "snake case"),
  possessives and `#tags` (kept apart in `tags`). Words in code spans (Markdown's: a backtick
  run up to the next run of the same length; an unpaired backtick is punctuation) are keyed
  like any other, but literally: a "not" or "the" in code is a word of the code.
- Identifiers stay whole: a run joined by `.`, `/`, `:`, `@` or `+` (`moment.js`,
  `packages/types`, `0.0.0.0`), and command-line flags (`--no-verify`). An assignment
  (`LOG_LEVEL=debug`) is its name's words and then its value.
- Kinds: VALUE is anything holding a digit (`-1`, `$5`, `t3.medium`), an assigned value
  (`=debug`), or a spelled-out number (read as its digits: "two" is "2"); CHOICE is a choosing verb
  ("use", "prefer", "用"); RELATION a preposition or conjunction (`lexicon.RELATIONAL`); WORD
  everything else. Words in `lexicon.IGNORED` ("the", "is", "always", ...), negators, and
  Chinese and Japanese particles, modals and hiragana (verb endings: 使う / 使わない) are not
  words of the comparison.
- Keys: a WORD's key is its Snowball stem plus, for English, its derivational ending, so
  inflections share a key ("tests" = "test", "handled" = "handles") but look-alike words do not
  ("authorization" / "author", "operator" / "operation", "dependents" / "dependencies",
  "designated" / "design"). Other words are keyed as written, folded.
- Polarity: a negator ("not", "never", "don't", "avoid", "не", "不", a Japanese negative ending)
  negates its whole clause, unless it follows a comma (", not Y", ", never in Y"), where it
  negates only what follows it, as a contrast marker does ("instead of Y", "rather than Y", and
  "over Y" / "than Y" after a choosing verb). "Never X without Y" is not a negation ("always
  X with Y"). A clause ends at `.`, `;`, `:`, `!`, `?`, a spaced dash, their CJK forms and
  CJK commas, and before a clause word ("because", "when", "but", ...). A phrase also ends at
  a comma.

Size: one reader (a token at a time, with its clause state); its rules share that state.
"""

from __future__ import annotations

import enum
import functools
import itertools
import re
import unicodedata
from collections.abc import Callable, Mapping
from typing import Concatenate, NamedTuple, ParamSpec, TypeVar

from memd.core.format.tags import code_spans, strip_tags, tags_of
from memd.core.text.memo import memo, table_of
from memd.core.text.stemmer import language_of, stem
from memd.core.writes import lexicon


class Kind(enum.IntEnum):
    """What a word does in a memory."""

    WORD = 0
    """Content: what the memory is about (nouns, verbs, names)."""
    VALUE = 1
    """Content holding a number: a count, a limit, a version, a size, a port."""
    CHOICE = 2
    """A choosing verb: its object is the chosen alternative."""
    RELATION = 3
    """A preposition or conjunction: it shows the roles of the content around it."""


class Word(NamedTuple):
    """One word of a memory, as a comparison sees it."""

    key: str
    """What it is compared by (see the module rules)."""
    kind: Kind
    text: str
    """As written."""
    negative: bool
    """Inside a negation or a rejected alternative."""
    clause: int
    phrase: int
    determined: bool = False
    """Right after an article or determiner ("the", "an", "each"): a noun."""
    group: int = 0
    """Words joined into one identifier ("feature-flags", `snake_case`) share a group (> 0)."""
    predicate: bool = False
    """An auxiliary, modal or choosing verb came earlier in the clause: not its subject."""
    definite: bool = False
    """Right after a definite article or a possessive ("the", "our"): a noun naming one thing."""

    @property
    def content(self) -> bool:
        """True for the words a memory is about (WORD and VALUE)."""
        return self.kind <= Kind.VALUE


class Wording(NamedTuple):
    """A memory as a write decision reads it."""

    words: tuple[Word, ...]
    content: frozenset[str]
    """The keys of its content words."""
    tags: frozenset[str]
    normal: str
    """Equal for two memories exactly when their words, polarities and tags are equal."""
    cjk: bool = False
    """The text holds Chinese or Japanese characters."""


T = TypeVar("T")
P = ParamSpec("P")

CHOICE_KEY = "<choose>"
"""The key every choosing verb shares ("use", "prefer", "用")."""

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f"  # kana, ideographs
_CJK_CHAR = re.compile(f"[{_CJK}]")
_HIRAGANA = re.compile("[\u3040-\u309f]")
"""Japanese particles and verb endings (使う / 使わない): how, not what."""
_CJK_PARTICLES = frozenset("のはをにがでともへや的了是把被也都就还这那此个要须需应该")
"""Particles and auxiliaries: not what a memory is about (modals are read by `_CJK_MODALS`)."""
_CJK_MODALS = (
    ("<may>", re.compile("可以|能够|允许|てもいい|てもよい|ても良い")),
    ("<must>", re.compile("必须|务必|一定要|需要|应该|" + "|".join(lexicon.JAPANESE_OBLIGATIONS))),
)
"""Chinese and Japanese modal phrases, read as their force like English modals."""
_MODAL_MARKS = {"<may>": "\u2a30", "<must>": "\u2a31"}
_JAPANESE_NEGATION = re.compile("|".join(lexicon.JAPANESE_NEGATIONS))
_NEGATION_SIGNS = re.compile(f"[{lexicon.NEGATION_SIGNS}]")
_NEGATION_MARK = "\u2a2f"  # stands for a Japanese negative ending once it is found
_TOKEN = re.compile(  # no two alternatives match at one place: the commonest, words, go first
    r"(?P<word>(?:[$€£¥](?=\d)|(?<![\w-])-(?=\d))?\.?[^\W_]"
    r"(?:\w|[-.:/@+=](?=[^\W_])|'(?=\w))*(?:\+\+|#(?!\w))?)"
    r"|(?P<op>[<>]=?|[!=]==?|!(?=[\w.*/])|[\^~](?=\d))"
    r"|(?P<end>\.(?![^\W_])|[;:!?\u3002\u3001\u2014\u2013]|\s-\s)"
    r"|(?P<comma>,)"
    r"|(?P<tick>`+)"
    rf"|(?P<mark>{_NEGATION_MARK})"
    r"|(?P<modal>[\u2a30\u2a31])"
    r"|(?P<flag>(?<![\w.-])--?[^\W\d_][\w-]*)"
)
_VALUE = re.compile(r"[\d=]")
_NOT_ASCII_LETTER = re.compile("[^A-Za-z]+")
_NOT_UPPER = re.compile("[^A-Z]+")
_LATIN_WORD = re.compile(r"[a-zà-ÿ]+")
_JOINED = re.compile(r"[^\W\d_]+(?:[-_][^\W\d_]+)+")
_JOINS = re.compile(r"[-_]")
_EMPHASIS = re.compile(r"(?<![^\W_])_+|_+(?![^\W_])|(?<![./])\*+(?![./])")
"""Markdown emphasis marks; a `*` beside a dot or slash is a glob (`*.log`) and stays."""
_ELISIONS = frozenset({"n", "l", "d", "qu", "j", "s", "c", "m", "t"})
"""French elided words before an apostrophe: "n'" negates, the others are function words."""
_APOSTROPHE_ENDINGS = ("'s", "'re", "'ll", "'ve", "'d", "'m")
_DERIVATIONS = (
    ("ion", re.compile(r"ions?$")),
    ("or", re.compile(r"ors?$")),
    ("ive", re.compile(r"(?:ives?|ively)$")),
    ("ment", re.compile(r"ments?$")),
    ("ant", re.compile(r"(?:ants?|ance|ances|ancy|ancies)$")),
    ("ent", re.compile(r"ents?$")),
    ("ence", re.compile(r"(?:ence|ences|ency|encies)$")),
    ("able", re.compile(r"(?:able|ably|ible|ibly)$")),
    ("al", re.compile(r"(?:als?|ally)$")),
    ("ity", re.compile(r"(?:ity|ities)$")),
    ("ness", re.compile(r"ness(?:es)?$")),
    ("ful", re.compile(r"ful(?:ly)?$")),
    ("ous", re.compile(r"ous(?:ly)?$")),
    ("ic", re.compile(r"(?:ics?|ical|ically)$")),
    ("ist", re.compile(r"ists?$")),
    ("ism", re.compile(r"isms?$")),
    ("ate", re.compile(r"(?:ate|ates|ated|ating)$")),
    ("ize", re.compile(r"i[sz](?:e|es|ed|ing)$")),
    ("er", re.compile(r"ers?$")),
)
_DERIVATION_MIN_STEM = 4
_ANALYSIS_BUDGET = 4 << 20
"""Bytes of readings kept (of texts up to _CACHED_TEXT characters): the new content and its
candidates. A reading is charged 2,000 + 160 bytes a character (a 400-character text of
one-letter words reads as 200 words of about 150 bytes each)."""
_TOKEN_BUDGET = 4 << 20
"""Bytes each token memo keeps (tokens up to _CACHED_TOKEN characters): a workspace's
vocabulary. `_read_token` keeps twice as much and is charged 900 + 120 bytes a character (a
token of one-letter parts, "a-b-c-...", holds a part per two characters); the others 450 + 8."""
_PLAIN_BUDGET = 1 << 20
"""Bytes of plain forms kept: a store's content is put in plain form to find a repeat and again
to index it, and a candidate's each time it is judged. Charged 300 bytes and 8 a character (the
text and its plain form, each at most 4 bytes a character)."""
_CACHED_TEXT = 400
_CACHED_TOKEN = 64


def is_cjk(text: str) -> bool:
    """True if `text` starts with a Chinese or Japanese character."""
    return bool(text) and _CJK_CHAR.match(text) is not None


def _short_cache(
    budget: int = _TOKEN_BUDGET, *, base: int = 450, per_char: int = 8
) -> Callable[[Callable[Concatenate[str, P], T]], Callable[Concatenate[str, P], T]]:
    """Memoise a function of a word up to _CACHED_TOKEN characters, keeping at most `budget`
    bytes (`memo.memo`): a long token is computed again rather than kept."""

    def decorate(function: Callable[Concatenate[str, P], T]) -> Callable[Concatenate[str, P], T]:
        cached = memo(budget, base=base, per_char=per_char)(function)

        @functools.wraps(function)
        def short_cached(word: str, /, *args: P.args, **kwargs: P.kwargs) -> T:
            if len(word) > _CACHED_TOKEN:
                return function(word, *args, **kwargs)
            return cached(word, *args, **kwargs)

        short_cached.table = table_of(cached)  # type: ignore[attr-defined]  # for `table_of`
        return short_cached

    return decorate


@_short_cache()
def lexeme(word: str) -> str:
    """Return the comparison key of a folded letters-only word (see the module rules)."""
    stemmed = stem(word)
    if len(stemmed) < _DERIVATION_MIN_STEM or language_of(word) != "english":
        return stemmed  # the stem, not the word: "error" and "errors" share one key
    for name, pattern in _DERIVATIONS:
        if pattern.search(word):
            return f"{stemmed}~{name}"
    return stemmed


class _Reader:
    """Reads one memory's tokens into words (see the module rules)."""

    def __init__(self, shouting: bool, *, foreign: bool) -> None:
        self.words: list[Word] = []
        self.shouting = shouting
        self.foreign = foreign
        self.clause = 0
        self.phrase = 0
        self.clause_start = 0
        self.clause_negated = False
        self.contrast = False
        self.chose = False
        self.predicate = False
        self.after_comma = False
        self.in_code = False
        self.code_start = 0
        self.determiner = False
        self.determiner_used = False
        self.definite = False
        self.last_slot = 0
        self.spans = 0
        self.without = False
        self.tokens_in_clause = 0
        self.previous = ""
        self.groups = 0
        self.pending: tuple[str, str] | None = None
        """A quantifier waiting to see whether a noun follows: (its kind, as written)."""

    def tick(self, code: str) -> None:
        """A backtick run opens or closes a code span (`code`: what the closed span held); a
        span holding no word (`==`) is one word."""
        if self.in_code and len(self.words) == self.code_start and code.strip():
            self.add(code.strip().casefold(), Kind.WORD, code.strip())
        self.in_code = not self.in_code
        self.spans += self.in_code
        self.code_start = len(self.words)

    def end_clause(self) -> None:
        self.flush(noun_follows=False)
        if self.clause_negated and not self.without:
            for index in range(self.clause_start, len(self.words)):
                self.words[index] = self.words[index]._replace(negative=True)
        elif self.clause_negated:  # "never X without Y" is "X with Y"
            for index in range(self.clause_start, len(self.words)):
                word = self.words[index]
                if word.key in lexicon.DOUBLE_NEGATIVE:
                    self.words[index] = word._replace(key=lexicon.DOUBLE_NEGATIVE[word.key])
        self.clause += 1
        self.phrase += 1
        self.clause_start = len(self.words)
        self.clause_negated = self.contrast = self.chose = self.after_comma = False
        self.without = self.predicate = False
        self.tokens_in_clause = 0

    def negate(self) -> None:
        """A negator: after a comma or a conjunction it negates what follows ("X, not Y", "X
        and never Y"), else its whole clause."""
        joined = (
            bool(self.words)
            and self.words[-1].clause == self.clause
            and (self.words[-1].key in lexicon.CONJUNCTIONS)
        )
        if self.after_comma or joined:
            self.contrast = True
        else:
            self.clause_negated = True

    def flush(self, *, noun_follows: bool) -> None:
        """Place a waiting quantifier: before a noun it is a quantifier ("any request"), else a
        word of its own ("any" the TypeScript type)."""
        if self.pending is None:
            return
        kind, text = self.pending
        self.pending = None
        if noun_follows:
            self.append(kind, Kind.RELATION, text)
        else:
            self.append(text.casefold(), Kind.WORD, text)

    def add(self, key: str, kind: Kind, text: str, group: int = 0) -> None:
        if self.pending is not None:
            self.flush(noun_follows=kind <= Kind.VALUE)
        self.append(key, kind, text, group)

    def append(self, key: str, kind: Kind, text: str, group: int = 0) -> None:
        if kind is Kind.CHOICE:
            if self.words and self.words[-1].key in _STOP_KEYS and not self.words[-1].negative:
                self.words.pop()  # "stop using X" is "don't use X"
                self.negate()
            self.chose = True
        word = Word(
            key,
            kind,
            text,
            self.contrast,
            self.clause,
            self.phrase,
            self.determiner,
            group,
            self.predicate,
            self.determiner and self.definite,
        )
        self.words.append(word)
        if kind is Kind.CHOICE or key in _MODAL_KEYS:
            self.predicate = True
        self.after_comma = self.after_comma and key in lexicon.CONJUNCTIONS  # ", and not Y"
        # "the unique constraint", "the `no-console` rule": the article covers an adjective or
        # an identifier and its noun, no further ("the dev server listens" is a verb)
        slot = group or (-self.spans if self.in_code else 0)  # one identifier, one code span
        if self.determiner and (slot == 0 or slot != self.last_slot):
            self.determiner = kind is Kind.WORD and not self.determiner_used
            self.determiner_used = True
        self.last_slot = slot

    def token(self, text: str, following: str = "") -> None:
        """Read one word-like token: a word, an identifier or a CJK character (`following`:
        the next token when it is a word). In code, and in a joined identifier, words are
        literal: nothing is ignored or read as a negation, a choice or a relation."""
        first = self.tokens_in_clause == 0
        self.tokens_in_clause += 1
        found = _READ_TOKENS.get(text)  # the memo's table probed here: a hot loop
        token = _read_token(text) if found is None else found[0]
        folded, parts = token.folded, token.parts
        previous, self.previous = self.previous, folded
        if self.in_code:
            group = self.group(len(parts))
            for folded, written in parts:
                self.add(*_literal(folded), written, group)
            return
        if len(parts) > 1:  # joined: "react-is", "opt-in", "if-blocks"
            group = self.group(len(parts))
            for folded, written in parts:
                self.add(*_joined_part(folded, self.foreign), written, group)
            return
        if self.is_name(text, first, following) or (not self.foreign and folded in lexicon.FOREIGN):
            self.add(_name_key(folded), Kind.WORD, text)  # a name, or a foreign function word
            return
        if text == "别" and (previous in lexicon.NOT_NEGATING_BIE or following[:1] in "名人的处"):
            self.add(text, Kind.WORD, text)  # 级别, 别名: part of a word, not "don't"
            return
        if token.negator:
            self.negate()
            return
        for reading, written in token.readings:
            self.word(reading, written, 0, previous)

    def group(self, parts: int) -> int:
        """A new group number for a token of several joined words, else 0."""
        if parts < 2:
            return 0
        self.groups += 1
        return self.groups

    def is_name(self, text: str, first: bool, following: str) -> bool:
        """True for a function word written as a name: in capitals ("US", "IT", "an A record",
        "host it on DO", but not "Do NOT" or "ALWAYS use"), or capitalised inside its clause
        ("set it to Always", "returns None")."""
        if self.shouting or not text[:1].isupper():
            return False
        folded = text.casefold()
        if folded not in _FUNCTION_WORDS:
            return False
        if text.isupper():
            if folded in ("do", "does"):  # "DO NOT", but "host it on DO"
                return not following or following.casefold() not in lexicon.NEGATORS
            return folded not in lexicon.EMPHASIS and folded != "i" and (len(text) > 1 or not first)
        return not first and text[1:].islower()

    def word(self, reading: _Reading, text: str, group: int = 0, previous: str = "") -> None:
        """Read one word, read as `reading` (see `_reading`)."""
        role = reading.role
        if role is _Role.SKIP or role is _Role.ARTICLE:
            if reading.key in lexicon.AUXILIARIES:
                self.predicate = True
            self.determiner = role is _Role.ARTICLE
            self.definite = reading.key in lexicon.DEFINITE
            self.determiner_used = False
            return
        if role is _Role.NEGATE:
            self.clause_negated = True
            return
        if role is _Role.QUANTIFIER:
            self.flush(noun_follows=False)
            self.pending = (reading.key, text)
            return
        if previous in _NO and text.casefold() in _AFTER_NO:
            return  # "no longer", "no more": part of the negation
        if role is _Role.CLAUSE:
            self.end_clause()
        elif role is _Role.RELATION:
            if reading.contrast or (self.chose and reading.contrast_after_choice):
                self.contrast = True
            self.without = self.without or reading.double_negative
        self.add(reading.key, reading.kind, text, group)


class _Role(enum.Enum):
    """What reading a word does (see `_reading`)."""

    SKIP = enum.auto()
    ARTICLE = enum.auto()
    NEGATE = enum.auto()
    QUANTIFIER = enum.auto()
    CLAUSE = enum.auto()
    RELATION = enum.auto()
    CONTENT = enum.auto()


class _Reading(NamedTuple):
    role: _Role
    key: str = ""
    kind: Kind = Kind.WORD
    contrast: bool = False
    contrast_after_choice: bool = False
    double_negative: bool = False


_STOP_KEYS = frozenset(stem(word) for word in lexicon.NEGATING_VERBS)
_MODAL_KEYS = frozenset(lexicon.MODALS.values())
_AFTER_NO = frozenset({"longer", "more"})
_NO = frozenset({"no", "not", "any"})
_FUNCTION_WORDS = (
    lexicon.IGNORED
    | lexicon.NEGATORS
    | lexicon.RELATIONAL
    | lexicon.CHOOSING
    | frozenset(lexicon.MODALS)
    | frozenset(lexicon.QUANTIFIERS)
    | frozenset(lexicon.NUMBER_WORDS)
)
"""Words read as something other than content; written as names they are content."""


def _name_key(folded: str) -> str:
    return lexeme(folded) if folded.isalpha() else folded


class _Token(NamedTuple):
    """One word-like token, read apart from its neighbours."""

    folded: str
    negator: bool
    """A negator: "don't", "never", "n'utilisez"."""
    parts: tuple[tuple[str, str], ...]
    """Its words, folded and as written (`_token_parts`)."""
    readings: tuple[tuple[_Reading, str], ...]
    """Each word read (`_reading`), as written."""


@_short_cache(2 * _TOKEN_BUDGET, base=900, per_char=120)
def _read_token(text: str) -> _Token:
    negator, parts = _token_parts(text)
    readings = tuple((_reading(folded), written) for folded, written in parts)
    return _Token(text.casefold(), negator, parts, readings)


_READ_TOKENS: Mapping[object, tuple[_Token, int]] = table_of(_read_token)


def _token_parts(text: str) -> tuple[bool, tuple[tuple[str, str], ...]]:
    """Whether a token is a negator ("don't", "never"), and its words, folded and as written:
    possessives and contractions dropped, hyphen and underscore joins split."""
    folded = text.casefold().replace("\u2019", "'")
    elided, apostrophe, rest = folded.partition("'")
    if apostrophe and elided in _ELISIONS and rest:  # French "n'utilisez", "l'API"
        negator, parts = _token_parts(text[len(elided) + 1 :])
        return negator or elided == "n", parts
    negator = folded.endswith("n't") or folded in lexicon.NEGATORS
    for ending in _APOSTROPHE_ENDINGS:
        if folded.endswith(ending):
            folded = folded[: -len(ending)]
            text = text[: -len(ending)]
            break
    if "=" in folded:  # an assignment: the name's words, then "=value" (always a value)
        value = folded.partition("=")[2]
        written_name, _, written_value = text.partition("=")
        return negator, (*_token_parts(written_name)[1], ("=" + value, written_value))
    if _JOINED.fullmatch(folded):  # "feature-flags", "snake_case": words joined
        joined = zip(_JOINS.split(folded), _JOINS.split(text), strict=False)
        return negator, tuple((part, written) for part, written in joined if part)
    return negator, ((folded, text),)


@_short_cache()
def _joined_part(folded: str, foreign: bool) -> tuple[str, Kind]:
    """The key and kind of a word joined into an identifier: words that are otherwise ignored
    count ("react-is", "lodash-es"); small words stay small words, but never end a clause; a
    foreign function word counts only in text of that language."""
    reading = _reading(folded)
    if foreign or folded not in lexicon.FOREIGN:
        if reading.role in (_Role.RELATION, _Role.CLAUSE):
            return reading.key, Kind.RELATION
        if reading.role is _Role.CONTENT:
            return reading.key, reading.kind
    return _literal(folded)


@_short_cache()
def _literal(folded: str) -> tuple[str, Kind]:
    """The key and kind of a word in code."""
    kind = Kind.VALUE if _has_digit(folded) else Kind.WORD
    return (lexeme(folded) if folded.isalpha() else folded.lstrip(".")), kind


@_short_cache()
def _reading(folded: str) -> _Reading:
    """What a folded word outside code is (see the module rules)."""
    if folded in lexicon.IGNORED or folded in _CJK_PARTICLES or _HIRAGANA.fullmatch(folded):
        return _Reading(_Role.ARTICLE if folded in lexicon.ARTICLES else _Role.SKIP, folded)
    if folded in lexicon.QUANTIFIERS:
        return _Reading(_Role.QUANTIFIER, lexicon.QUANTIFIERS[folded])
    if folded in lexicon.MODALS:
        return _Reading(_Role.RELATION, lexicon.MODALS[folded], Kind.RELATION)
    if folded in lexicon.CJK_NEGATORS:
        return _Reading(_Role.NEGATE)
    if folded in lexicon.NUMBER_WORDS:
        return _Reading(_Role.CONTENT, lexicon.NUMBER_WORDS[folded], Kind.VALUE)
    if _has_digit(folded):
        return _Reading(_Role.CONTENT, folded.lstrip("."), Kind.VALUE)
    if folded in lexicon.CHOOSING or folded in lexicon.CJK_CHOOSING:
        return _Reading(_Role.CONTENT, CHOICE_KEY, Kind.CHOICE)
    if folded in lexicon.CLAUSE_WORDS:
        return _Reading(_Role.CLAUSE, folded, Kind.RELATION)
    if folded in lexicon.RELATIONAL:
        return _Reading(
            _Role.RELATION,
            folded,
            Kind.RELATION,
            contrast=folded in lexicon.CONTRAST,
            contrast_after_choice=folded in lexicon.CONTRAST_AFTER_CHOICE,
            double_negative=folded in lexicon.DOUBLE_NEGATIVE,
        )
    if folded in lexicon.SCOPE_NOUNS:
        return _Reading(_Role.CONTENT, folded, Kind.WORD)  # "staging" is not "stage"
    if folded.isalpha():
        return _Reading(_Role.CONTENT, lexeme(folded), Kind.WORD)
    return _Reading(_Role.CONTENT, folded.lstrip("."), Kind.WORD)


def _reads_foreign(text: str) -> bool:
    """True if `text` reads as German, Spanish, French or Portuguese (see `lexicon.FOREIGN`)."""
    if not text.isascii() and any(
        not char.isascii() and unicodedata.name(char, "").startswith("LATIN") for char in text
    ):
        return True
    words = set(_LATIN_WORD.findall(text.casefold()))
    return bool(words & lexicon.FOREIGN_ONLY) or len(words & lexicon.FOREIGN) >= 2


def _has_digit(text: str) -> bool:
    """True for a word holding a digit or an assignment (`LOG_LEVEL=debug`): a value."""
    return _VALUE.search(text) is not None


def _tokens(text: str) -> str:
    # a CJK comma ends a clause (lists use "、"); NFKC would fold it into ","; tags are found
    # after NFKC, as `tags_of` finds them ("＃ｄｂ" is "#db")
    text = strip_tags(unicodedata.normalize("NFKC", text.replace("\uff0c", "\u3002")))
    if not text.isascii():
        text = _NEGATION_SIGNS.sub(f" {_NEGATION_MARK} ", text)
    if _CJK_CHAR.search(text):
        for force, pattern in _CJK_MODALS:
            text = pattern.sub(f" {_MODAL_MARKS[force]} ", text)
        text = _JAPANESE_NEGATION.sub(f" {_NEGATION_MARK} ", text)
        text = _CJK_CHAR.sub(r" \g<0> ", text)
    return _EMPHASIS.sub(" ", text)


def analyse(text: str) -> Wording:
    """Return how `text` reads for a write decision (see the module rules). Readings of short
    texts are cached; a long one is read again each time, so memory stays bounded."""
    return _read(text) if len(text) > _CACHED_TEXT else _cached_reading(text)


@memo(_ANALYSIS_BUDGET, base=2000, per_char=160)
def _cached_reading(text: str) -> Wording:
    return _read(text)


def _token_matches(prepared: str) -> list[re.Match[str]]:
    """The tokens of a prepared text; of its backtick runs, only those that open or close a
    code span (an unpaired backtick is punctuation)."""
    matches = list(_TOKEN.finditer(prepared))
    if "`" not in prepared:
        return matches
    bounds = {edge for span in code_spans(prepared) for edge in span}
    return [
        match
        for match in matches
        if match.lastgroup != "tick" or match.start() in bounds or match.end() in bounds
    ]


def _read(text: str) -> Wording:
    letters = _NOT_ASCII_LETTER.sub("", text)
    shouting = len(letters) >= 8 and len(_NOT_UPPER.sub("", letters)) > 0.7 * len(letters)
    reader = _Reader(shouting, foreign=_reads_foreign(text))
    prepared = _tokens(text)
    code_from = 0
    matches = _token_matches(prepared)
    for number, match in enumerate(matches):
        group = match.lastgroup
        if group == "word":
            following = matches[number + 1] if number + 1 < len(matches) else None
            word = following.group() if following and following.lastgroup == "word" else ""
            reader.token(match.group(), word)
        elif group == "op":  # a comparison or version operator: "< 2", ">= 3", "^1.2"
            kind = Kind.WORD if reader.in_code else Kind.RELATION  # code is literal
            reader.add(match.group(), kind, match.group())
        elif group == "tick":
            reader.tick(prepared[code_from : match.start()])
            code_from = match.end()
        elif reader.in_code and group in ("end", "comma", "mark"):
            continue  # punctuation inside code is code
        elif group == "end":
            reader.end_clause()
        elif group == "comma":
            reader.phrase += 1
            reader.after_comma = True
        elif group == "mark":
            reader.clause_negated = True
        elif group == "modal":  # a Chinese or Japanese modal phrase
            force = "<may>" if match.group() == _MODAL_MARKS["<may>"] else "<must>"
            reader.add(force, Kind.RELATION, force)
        else:  # a command-line flag: a word of the command, a value if it holds a digit
            flag = match.group()
            reader.add(flag.casefold(), Kind.VALUE if _has_digit(flag) else Kind.WORD, flag)
    reader.end_clause()
    words = tuple(reader.words)
    tags = tags_of(text)
    if words:
        normal = " ".join(("!" if w.negative else "") + w.key for w in words)
    else:
        normal = "\x00" + " ".join(text.casefold().split())
    if tags:
        normal += " #" + " #".join(sorted(tags))
    content = frozenset(word.key for word in words if word.content)
    cjk = not text.isascii() and _CJK_CHAR.search(text) is not None
    return Wording(words, content, tags, normal, cjk)


_OPENING_MARKS = "\"'`*([{\u201c\u2018\u00ab\u300c\u300e"
_CLOSING_MARKS = (
    "\"'`*)]}\u201d\u2019\u00bb\u300d\u300f,.;:!?\u2026\u3002\u3001\uff0c\uff1b\uff1a\uff01\uff1f"
)
_DASHES = frozenset("-\u2013\u2014")


@memo(_PLAIN_BUDGET, base=300, per_char=8)
def plain_form(text: str) -> str:
    """Return `text` as its words alone: split at whitespace, case folded, each word stripped of
    the formatting marks around it (quotes, backticks, brackets, `*` emphasis before it; those
    and commas, full stops, semicolons, colons, "!", "?" after it), and a word of only such marks
    or dashes dropped. Two texts with one plain form differ only in case and punctuation: the
    same rule ("Use UTC, not local time." / "use utc not local time"), whatever their
    punctuation does to the reading (a comma scopes a "not"). Marks that carry meaning stay: an
    operator (`>=`), a sign, a flag's dashes, a `#`, a `_`, and any mark inside a word
    (`console.log`, `3.11`, `don't`)."""
    words = []
    for word in text.casefold().split():
        stripped = word.lstrip(_OPENING_MARKS).rstrip(_CLOSING_MARKS).lstrip(_OPENING_MARKS)
        if stripped and not set(stripped) <= _DASHES:
            words.append(stripped)
    return " ".join(words)


def plain_key(text: str) -> str:
    """`plain_form(text)` kept apart from normal forms by its first character: what the dedup
    index finds a repeat but for case and punctuation by, when the two read differently ("never
    Never": a capitalised function word is a name) and no keyword would find it."""
    return "\x01" + plain_form(text)


def keywords(text: str) -> frozenset[str]:
    """Return what the dedup index finds candidates by: the content keys of `text` (Chinese and
    Japanese as character pairs), CHOICE_KEY if it chooses, and its tags as "#tag" (so "Use
    pnpm." finds "Use Bun.", and "#frontend Use CSS modules." finds "#frontend Use Tailwind.")."""
    return index_terms(text)[1]


def normal_form(text: str) -> str:
    """Return `analyse(text).normal`: equal for two memories exactly when their words,
    polarities and tags are (see the module rules)."""
    return index_terms(text)[0]


def index_terms(text: str) -> tuple[str, frozenset[str]]:
    """The normal form and the keywords of `text` (a store's new content: read through
    `analyse`, since the store goes on to judge it)."""
    return terms(analyse(text))


def bulk_index_terms(text: str) -> tuple[str, frozenset[str]]:
    """`index_terms` for building a whole index: nothing is cached (a category's every entry is
    read once; the index keeps what it needs)."""
    return terms(_read(text))


def terms(wording: Wording) -> tuple[str, frozenset[str]]:
    """The normal form and the keywords (see `keywords`) of a reading."""
    words = wording.words
    found: set[str] = {f"#{tag}" for tag in wording.tags}
    if not wording.cjk:
        found.update(word.key for word in words if word.kind <= Kind.CHOICE)
        return wording.normal, frozenset(found)
    run: list[str] = []
    for word in words:
        if word.content and is_cjk(word.key):
            run.append(word.key)
            continue
        found.update(_pairs(run))
        run = []
        if word.content or word.kind is Kind.CHOICE:
            found.add(word.key)
    found.update(_pairs(run))
    return wording.normal, frozenset(found)


def _pairs(run: list[str]) -> list[str]:
    """Neighbouring pairs of a run of CJK characters (a lone character stands for itself)."""
    if len(run) == 1:
        return run
    return [first + second for first, second in itertools.pairwise(run)]
