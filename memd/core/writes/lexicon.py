"""The closed word classes the write decision reads a sentence with.

A write decision (`memd.core.writes.judge`) compares two memories word by word. Open-class words
(nouns, verbs, names, numbers) carry what a memory is about; the few hundred closed-class words
below carry how: negation, which alternative is chosen, what a phrase is for. Every list is general
English (with the commonest German, Spanish, French, Portuguese, Russian, Chinese and Japanese
equivalents where a memory in that language needs them); none is tuned to particular memories.

Classes:
- IGNORED: articles, auxiliaries, modals, pronouns, quantifiers and intensifiers; dropped before
  comparing ("in the imperative mood" = "in imperative mood"; "Use UTC" = "Always use UTC").
- NEGATORS: words that negate the rest of their clause ("never", "don't", "avoid", "не", "不").
- CONTRAST: words after which the clause names a rejected alternative ("instead of Y",
  "rather than Y"; "over Y" after a choosing verb).
- CHOOSING: verbs whose object is a choice among alternatives ("use X", "prefer X", "选用 X"):
  replacing that object changes the choice.
- INSTRUMENT: prepositions whose object is a tool, place or target ("with X", "in X", "to X",
  "via X"): a phrase-final object of one is a value that holds one choice.
- SCOPE: prepositions and conjunctions whose object says which case a rule is about ("for X",
  "from X", "against X", "when X"): a different object there is a different rule.
- SCOPE_NOUNS: environments and platforms; a rule for one does not replace the rule for another.
- CLAUSE_WORDS: conjunctions that start a new clause (negation stops at them).
- RELATIONAL: every preposition and conjunction kept in a comparison (they show roles), as
  opposed to content words.
- OPPOSITES: pairs whose swap reverses a rule ("before"/"after", "enable"/"disable").
- ORDERED: relations that cannot hold both ways ("A before B", "A over B").
- NUMBER_WORDS: spelled-out numbers, read as their digits.
- VAGUE: words a vague amount is made of ("about an hour", "regularly"), so a number replacing
  them makes the value exact rather than different.
- UNITS: units that may change with a number ("15 minutes" -> "2 hours" is one value).

Size: word lists, data rather than code.
"""

from __future__ import annotations


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


IGNORED = _words(
    """
    a an the is are was were be been being am do does did doing have has had having will
    would it its it's they them their theirs we our ours us you your yours i me my he she his
    her him this these those there here who whom whose what also just really always
    please simply actually even anymore
    der die das den dem des ein eine einen einem einer ist sind wird werden wir immer
    el la los las un una unos unas es son se lo al del siempre
    le les une des est sont nous toujours
    o os um uma é são sempre
    это мы всегда
    """
)

NEGATORS = _words(
    """
    not no never none nor cannot can't don't doesn't didn't won't wouldn't shouldn't mustn't
    isn't aren't wasn't weren't haven't hasn't hadn't couldn't needn't dont doesnt didnt wont
    cant shouldnt mustnt isnt arent avoid avoids avoided avoiding deprecated discouraged banned
    forbidden prohibited disallowed verboten prohibido prohibida запрещено interdit interdite
    nicht kein keine keinen keinem keiner nie niemals vermeide vermeiden
    nunca jamás jamas evita evitar evitamos
    ne pas jamais éviter évitez evite
    não nao
    не нет никогда нельзя избегай избегать
    """
)
"""Negate the rest of their clause. Spanish and Portuguese "no" is the English one."""

NEGATING_VERBS = _words("stop stops stopped stopping quit quits ceased cease")
"""Before a choosing verb these negate the clause: "stop using X" is "don't use X"."""

NEGATION_SIGNS = "❌🚫⛔✗✘"
"""Marks that negate their clause, as "never" does: "❌ use git rebase on main"."""

AUXILIARIES = _words(
    "is are was were be been being am has have had do does did will would ist sind es son est"
)
"""Verbs that say a clause has reached its predicate: the words before one are its subject."""

MODALS = {
    **dict.fromkeys(_words("may can could might allowed"), "<may>"),
    **dict.fromkeys(_words("must shall should need needs required"), "<must>"),
}
"""Modal verbs, read as their force: permission ("<may>") or obligation ("<must>"). Adding or
dropping an obligation is wording (an instruction already obliges); adding or dropping a
permission, or swapping one force for the other, changes the rule ("Run tests" / "You may run
tests")."""

QUANTIFIERS = {
    **dict.fromkeys(_words("all every each both whole entire"), "<all>"),
    "any": "<any>",
    "some": "<some>",
}
"""Quantifiers before a noun, read as their kind. Before anything else they are words
themselves ("never use any in TypeScript")."""

EMPHASIS = _words("always never not no dont don't must should all any every only none")
"""Function words written in capitals for emphasis ("NOT", "ALWAYS"): still function words. Any
other function word in capitals is a name ("the US region", "IT", "AM", "ES modules"), and "DO"
is one unless a negator follows ("DO NOT")."""

CJK_NEGATORS = frozenset("不没沒别別勿莫禁")
"""Chinese characters that negate the rest of their clause (不要, 没有, 别, 勿, 禁止)."""

JAPANESE_NEGATIONS = ("しない", "ません", "ない", "禁止", "だめ", "ダメ")
"""Japanese negation is a verb ending: a clause holding one of these is negative."""

JAPANESE_OBLIGATIONS = (
    "なければならない",
    "なければいけない",
    "なくてはならない",
    "ないといけない",
)
"""Japanese "must" forms, which hold a negative ending but are not negations."""

NOT_NEGATING_BIE = frozenset("级类区分个特识辨告派性差鉴")
"""Characters before 别 that make it part of a word (级别 level, 类别 kind), not "don't"."""

DOUBLE_NEGATIVE = {
    "without": "with",
    "ohne": "mit",
    "sin": "con",
    "sans": "avec",
    "sem": "com",
    "без": "с",
}
"""In a negated clause these cancel the negation and read as their positive: "never deploy
without tests" is "deploy with tests"."""

CONTRAST = _words("instead rather versus vs unlike statt anstatt lugar vez plutôt вместо")
"""After one of these the clause names a rejected alternative ("instead of Y")."""

CONTRAST_AFTER_CHOICE = _words("over than")
"""Contrast only after a choosing verb in the same clause: "prefer X over Y". ("to" is left out:
"use X to run Y" states a purpose far more often than "prefer X to Y" a contrast.)"""

CHOOSING = _words(
    """
    use uses used using prefer prefers preferred favour favours favoured favor favors favored
    choose chooses chose chosen pick picks picked adopt adopts adopted standardise standardize
    standardised standardized named called
    verwende verwenden verwendet nutze nutzen nutzt benutze benutzen bevorzuge bevorzugen
    usa usar usamos usan usad utiliza utilizar utilizamos prefiere preferimos
    utilise utiliser utilisons utilisez préfère préférez
    usamos utilizamos
    используй используйте используем используем использовать используется используют
    предпочитаем предпочитай выбираем
    使用 用 采用 選用 选用 使う 使い 採用 利用
    """
)
"""The object of these is a choice: "Use X" -> "Use Y" changes it."""

CJK_CHOOSING = frozenset("用使")
"""Chinese/Japanese characters that choose (用 ends 使用, 采用, 选用, 利用; 使う is "use")."""

INSTRUMENT = _words(
    """
    with via through by in on to as into onto inside within at under
    mit auf über con en mediante por avec par sur dans com em через в на с
    """
)
"""Their phrase-final object is a tool, place or target: one value of a setting."""

PLACES = _words("in on at to into onto inside within under в на auf en dans em")
"""Instrument prepositions that also name a place or scope: after a choice or a scope already
named in the clause, their object says where a rule applies, not what it chose."""

ATTRIBUTIVE = _words("on to")
"""After a noun with an article, their object says which thing ("an index on X", "a unique
constraint to X"), not a tool or a place."""

ARTICLES = _words("a an the this these those its their our your")
"""Words that mark the next word as a noun."""

DEFINITE = ARTICLES - _words("a an")
"""Of `ARTICLES`, those that name one known thing: "X is the minimum" says which X holds."""

GENITIVE = _words("of de des du del von")
"""Words that join a noun to the noun it belongs to ("messages de commit"): not a scope."""

SCOPE = _words(
    """
    for from of against about per between across except behind during outside before after
    until till unless when if while because since without
    für von gegen bei para de desde contra pour de contre для от из против
    """
)
"""Their object says which case a rule covers: another object there is another rule."""

LIMITING = _words("in on into onto inside within under for during across outside only")
"""Words that lead a phrase limiting where a rule holds ("in Go files", "for the web app"): a
rule without such a phrase is a wider rule, not a shorter form of the one with it. (Not "at",
"per": they lead values; not "when", "unless": a fact's condition is a detail of it.)"""

NARROWING = _words("in for only inside within")
"""Of `LIMITING`, the words whose phrase, added to a rule, makes it a narrower rule ("Use tabs
for indentation" / "... in Go files"), not a detail of it ("Format with Prettier on save")."""

SCOPE_NOUNS = _words(
    """
    production prod staging dev development testing qa local locally ci preview sandbox
    linux macos mac osx windows ios android arm arm64 aarch64 x86 x64 amd64 mobile web desktop
    browser browsers frontend backend client server weekends weekdays
    """
)
"""Environments and platforms: "flaky on ARM" and "flaky on x86" are two facts."""

CLAUSE_WORDS = _words(
    """
    because since so but although though whereas when whenever if unless until while which
    where otherwise
    weil wenn aber porque pero cuando si parce mais quand потому но когда если
    """
)
"""These start a new clause: a negation before one does not reach past it."""

RELATIONAL = (
    INSTRUMENT
    | SCOPE
    | CLAUSE_WORDS
    | CONTRAST
    | _words("and or over under above below than only like up down off out upon toward towards")
    | _words("und oder y et ou e и или а 和 或 与 及")
)
"""Kept in a comparison to show roles, but not content: a memory is not about "with"."""

LIGHT = _words("to of for at on in into onto with and as <must> instead rather than over vs")
"""Small words whose addition or omission alone does not change a rule ("force-push to shared
branches" / "force-push shared branches"; a contrast word's effect is already in the words'
polarity); any other one does ("only", "by", "unless", "not any"), and so does swapping any
small word for another outside EQUIVALENT."""

_EQUIVALENT_GROUPS = (
    "with via through",
    "instead rather over than",
    "under below",
    "because since",
    "when whenever if",
    "until till",
    "in inside within",
    "toward towards to",
)
EQUIVALENT: dict[str, int] = {
    word: number for number, group in enumerate(_EQUIVALENT_GROUPS) for word in group.split()
}
"""Small words that may replace each other without changing a rule: word -> its group."""

CONJUNCTIONS = _words("and or nor und oder y et ou и или а 和 或 与 及")
"""Words that join list items: dropping an item from a ban narrows it."""

EXCEPTIONS = _words(
    "unless except exception exceptions exempt only when if but außer salvo sauf кроме"
)
"""Words that limit a rule: dropping such a part from a ban widens it."""

NEGATING_PARTS = _words("non no un anti dis")
"""A joined identifier that differs only by one of these parts is its opposite ("non-root")."""

FOREIGN = _words(
    """
    der die das den dem des ein eine einen einem einer ist sind wird werden wir immer mit auf
    über für von gegen bei und oder weil wenn aber nicht kein keine keinen keinem keiner nie
    niemals vermeide vermeiden verwende verwenden verwendet nutze nutzen nutzt benutze benutzen
    bevorzuge bevorzugen statt anstatt vor nach ohne außer zwei drei vier fünf sechs sieben acht
    neun zehn eins erlaubt
    el la los las un una unos unas es son se lo al del siempre con en mediante por para de
    desde contra y porque pero cuando si nunca jamás jamas evita evitar evitamos usa usar usamos
    usan usad utiliza utilizar utilizamos prefiere preferimos lugar vez antes después sin cero
    uno dos tres cuatro cinco seis siete ocho nueve diez salvo permitido
    le les une est sont nous toujours avec par sur dans pour et ou parce mais quand ne pas
    jamais éviter évitez evite utilise utiliser utilisons utilisez préfère préférez plutôt sans
    sauf zéro deux trois quatre cinq sept huit neuf dix
    o os um uma é são sempre com em não nao sem dois três quatro sete oito nove dez
    """
)
"""Function words of German, Spanish, French and Portuguese: in a text that does not read as one
of those languages they are words ("die", "es modules", "DOS", "par"). A text reads as one when
it holds two of them, one of FOREIGN_ONLY, or a Latin letter with an accent."""

FOREIGN_ONLY = FOREIGN - _words(
    """
    die den des vor nach es son se lo al del con en por de y un una usa usar lugar vez antes
    salvo le les est par sur et ou ne pas evite o os um com em e dos sept six
    """
)
"""The FOREIGN words that are no English word: one of them marks a foreign text."""
"""A joined identifier that differs only by one of these parts is its opposite ("non-root")."""

_OPPOSITE_PAIRS = (
    "before after",
    "vor nach",
    "antes después",
    "avant après",
    "до после",
    "перед после",
    "前 后",
    "前 後",
    "with without",
    "over under",
    "above below",
    "inside outside",
    "in out",
    "and or",
    "und oder",
    "и или",
    "和 或",
    "< >",
    "<= >=",
    "== !=",
    "mit ohne",
    "con sin",
    "avec sans",
    "on off",
    "up down",
    "to from",
    "into from",
    "enable disable",
    "enabled disabled",
    "enables disables",
    "allow disallow",
    "allow deny",
    "allow forbid",
    "allowed forbidden",
    "permit forbid",
    "permitted forbidden",
    "permitted prohibited",
    "разрешено запрещено",
    "разрешено нельзя",
    "erlaubt verboten",
    "permitido prohibido",
    "allowed disallowed",
    "allowed denied",
    "allows disallows",
    "allowlist denylist",
    "whitelist blacklist",
    "include exclude",
    "included excluded",
    "accept reject",
    "accepted rejected",
    "lock unlock",
    "show hide",
    "encrypt decrypt",
    "compress decompress",
    "sync async",
    "synchronous asynchronous",
    "synchronously asynchronously",
    "blocking nonblocking",
    "eager lazy",
    "eagerly lazily",
    "true false",
    "required optional",
    "mandatory optional",
    "ascending descending",
    "increase decrease",
    "first last",
    "soft hard",
    "single double",
    "add remove",
    "keep remove",
    "keep drop",
    "start stop",
    "open close",
    "uppercase lowercase",
    "strict lenient",
    "mutable immutable",
    "public private",
)
OPPOSITES: frozenset[frozenset[str]] = frozenset(
    frozenset(pair.split()) for pair in _OPPOSITE_PAIRS
)
"""Pairs of words whose swap, with everything else the same, reverses a rule."""

ORDERED = _words("before after over than instead rather vor nach antes después после перед")
"""Relations that cannot hold both ways: swapping what one orders reverses the rule. ("до"
is left out: it is also Ukrainian and Russian "to", "until".)"""

_NUMBERS = {
    "0": "zero cero zéro ноль",
    "1": "one once uno eins один одна одно",
    "2": "two twice zwei dos deux dois два две",
    "3": "three thrice drei tres trois três три",
    "4": "four vier cuatro quatre quatro четыре",
    "5": "five fünf cinco cinq пять",
    "6": "six sechs seis шесть",
    "7": "seven sieben siete sept sete семь",
    "8": "eight acht ocho huit oito восемь",
    "9": "nine neun nueve neuf nove девять",
    "10": "ten zehn diez dix dez десять",
    "11": "eleven",
    "12": "twelve dozen",
    "15": "fifteen",
    "20": "twenty",
    "30": "thirty",
    "50": "fifty",
    "100": "hundred",
    "1000": "thousand",
}
NUMBER_WORDS: dict[str, str] = {
    word: digits for digits, words in _NUMBERS.items() for word in words.split()
}
"""Spelled-out numbers, read as their digits ("two spaces" = "2 spaces")."""

VAGUE = _words(
    """
    about around roughly approximately approx nearly almost some several few many regularly
    periodically often sometimes occasionally frequently soon later while couple
    """
)

UNITS = _words(
    """
    ms millisecond milliseconds s sec secs second seconds min mins minute minutes h hr hrs hour
    hours day days d week weeks month months year years b byte bytes kb kib mb mib gb gib tb
    tib k percent px pt em rem char chars character characters line lines column columns col
    cols time times x row rows
    """
)
