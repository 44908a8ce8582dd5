"""Secret values in a memory's text: memory files are meant to be committed, so a secret never
reaches one unless its owner said so (`allow_secrets`), and never reaches a slug at all.

Rules: `find_secret` finds a value, not a name ("the password is in the vault" is a rule about a
password; "the password is Sup3r!" carries one). It knows:
- the formats of common keys and tokens (AWS, GitHub, Slack, Stripe, OpenAI-style `sk-`, Google,
  GitLab, npm, Hugging Face, JWTs, private key blocks; a Stripe or `sk-` body needs a digit, so
  `sk_test_placeholder` is a word);
- passwords in URLs (also with an empty user, `redis://:S3cret@cache`), in a pgpass line
  (`db.example.com:5432:app:admin:S3cret!`) and on a command line (`mysql -pX`, `curl -u u:X`,
  `docker login -p X`, `--password X`);
- `NAME=value` where NAME names a secret, and `api_key: value` / `SECRET_KEY is value` with a
  value that looks like one;
- "<secret noun> is <value>" with a value that looks like one, except when a naming word comes
  between ("the secret name is ...", "the key prefix is ...": a name, not a value) or, after a
  key or token noun, when the value has an identifier's structure (`session:v2`,
  `user:123:cart`, `tenant_id2`, `page.title.v2`, `logs/2024/app1`, `user:{id}:profile:v2`);
- a password given mid-sentence ("log in with password swordfish on staging": a word that could
  be a password, not "with password auth"), a passphrase of three or more such words ("the wifi
  passphrase is correct horse battery staple"), "user / password" after credentials or a login,
  and a PIN stated as a number;
- long random tokens (not hex hashes of commits in words, not identifiers or paths; a bare run
  of hex digits is a hash unless the text calls it a secret, key or token).
Placeholders (`$TOKEN`, `<key>`, `your-key`, `xxx`, `...`) are not values. A text that names no
secret (no "pass", "key", "token", ...) skips the noun patterns, so most memories cost little.
Every write path (stores, extraction, cleanup's slugs) uses this one detector; `docs/secrets.md`
gives its false-refusal and miss rates on labelled sets.

Size: one detector, a table of patterns and the small judges of their values; kept in one
module so every write path asks the same question.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from memd.core.text.memo import memo

_SECRET_PREFIX = re.compile(
    r"(?<![\w-])(?:sk-(?=[\w-]{0,80}\d)[\w-]{8,}|[sr]k_(?:live|test)_(?=\w{0,80}\d)\w{8,}|"
    r"gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,}|xox[bpars]-[A-Za-z0-9-]{10,}|"
    r"(?:AKIA|ASIA)[A-Z0-9]{16}|AIza[\w-]{30,}|glpat-[\w-]{20,}|npm_[A-Za-z0-9]{30,}|"
    r"hf_[A-Za-z0-9]{30,}|eyJ[\w-]{8,}\.eyJ[\w-]{8,}|-----BEGIN[A-Z ]{0,40}PRIVATE\s+KEY-----)"
)


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Credentials in a URL: "postgres://admin:S3cret@db:5432/app", "redis://:S3cret@cache" (an empty
# user name), not "user:${PASS}@" placeholders.
_URL_PASSWORD = re.compile(r"\b[a-z][\w+.-]{0,20}://[^\s/:@]{0,100}:([^\s/@]{1,200})@", re.I)
# A pgpass line, host:port:database:user:password ("db.example.com:5432:app:admin:S3cret!"); the
# host has a dot or is localhost or `*`, so "user:123:cart:items:v2" is a key, not a pgpass line.
_PGPASS = re.compile(
    r"(?<![\w.:/-])(?:localhost|\*|[\w-]+(?:\.[\w-]+)+):(?:\d{2,5}|\*):[^\s:]+:[^\s:]+:(\S{4,})"
)
# A password given on a command line: `mysql -pS3cret`, `docker login -u bot -p S3cret`,
# `--password S3cret`, `curl -u admin:S3cret`, `sshpass -p S3cret`.
_CLI_PASSWORD = re.compile(
    r"(?:\bmysql(?:dump|admin)?\b[^.;|&]{0,80}?\s-p|\b(?:docker|podman|helm|oras)\s+(?:registry\s+)?"
    r"login\b[^.;|&]{0,80}?\s(?:-p|--password)\s+|\bsshpass\s+-p\s*|--password[= ]"
    r"|\bcurl\b[^.;|&]{0,80}?\s(?:-u|--user)\s+[^\s:]+:)([^\s\"'`]+)"
)
# Names whose value is always a secret, and names whose value is one only if it looks like one
# ("sort_key=name" is not a secret, "DB_PASSWORD=changeme" is).
_STRONG_NAME = re.compile(
    r"(?<![a-z])(?:passw(?:or)?d|pwd|passphrase|secret|token|credential|"
    r"(?:api|private|access|secret|signing)[_-]?key)s?(?![a-z])",
    re.IGNORECASE,
)
_WEAK_NAME = re.compile(r"(?<![a-z])(?:keys?|auth)(?![a-z])", re.IGNORECASE)
# `NAME=value`, `NAME = value` (not "api_key= only": a space after `=` only if one before it)
_ASSIGNMENT = re.compile(
    r"(?<![\w.-])([A-Za-z_][\w.-]{0,60})(?:\s{1,3}:?=\s{1,3}|:?=)[\"']?([^\s\"'`,;]+)"
)
# `api_key: value` (YAML), `SECRET_KEY is value`: a name written as code (snake case)
_CODE_NAME_STATED = re.compile(
    r"(?<![\w.-])([A-Za-z][A-Za-z0-9]*(?:[_-][A-Za-z0-9]+)+)(?::|\s+(?:is|was)\b)\s{1,3}"
    r"[\"'`]?([^\s\"'`]+)"
)
# "the staging DB password is X", "our JWT secret: X", "the password for the account is X",
# "the password was set to X"
_SECRET_STATED = re.compile(
    r"\b(?:(passwords?|passphrases?|passwd|pwd|passcodes?|secrets?)|"
    r"tokens?|keys?|(credentials?|creds))"
    r"((?:\s+[\w-]+){0,4}?)\s{0,3}(?:\b(?:is|was|are)\b(?:\s+(?:set|changed|reset)\s+to\b)?|=|:)"
    r"\s{0,3}([\"'`]?)([^\s\"'`]+)",
    re.IGNORECASE,
)
# Words that make "<secret noun> <word> is X" about a name, not a value: "the secret name is
# prod/db/creds", "the key prefix is logs/", "the SSH key type is ed25519".
_NAMING_WORDS = _words(
    "name names id ids path paths prefix prefixes suffix format formats pattern patterns type "
    "types field fields header headers column columns variable variables var vars alias arn "
    "length size scheme style algorithm algorithms file location version namespace label "
    "endpoint endpoints url uri policy scope scopes claim claims cookie setting audience "
    "issuer ttl expiry lifetime template structure convention"
)
# "the token abc123XYZ", "the password hunter2"
_SECRET_NAMED = re.compile(
    r"\b(?:passwords?|passphrases?|passwd|pwd|secrets?|(tokens?|keys?)|credentials?)\s+"
    r"[\"'`]?([^\s\"'`]{6,})",
    re.IGNORECASE,
)
# "log in with password swordfish on staging", "use the password kestrel for the wifi": a
# password noun after a verb or preposition that gives one, then a word and a clause's end or a
# preposition (see `_given_word`)
_PASSWORD_GIVEN = re.compile(
    r"\b(?:with|using|use|enter|type|and)\s+(?:the\s+)?(?:passwords?|passphrases?|passwd|pwd|"
    r"passcodes?)\s+([^\s\"'`]+)",
    re.IGNORECASE,
)
# "the wifi passphrase is correct horse battery staple": three to eight bare words to a clause's
# end right after a password noun (see `_passphrase_words`)
_PASSPHRASE_STATED = re.compile(
    r"\b(?:passwords?|passphrases?|passwd|pwd|passcodes?)\s+(?:is|was)\s+"
    r"([A-Za-z]+(?:\s+[A-Za-z]+){2,7})(?=\s*(?:[.,;!?]|$))",
    re.IGNORECASE,
)
# "the admin credentials are admin / Rabb1t!Admin", "the SFTP login is deploy / S3cret"
_USER_SLASH_PASSWORD = re.compile(
    r"\b(?:credentials?|creds|logins?)\b(?:\s+[\w-]+){0,3}?\s+(?:is|are|:)\s+[\w.@-]+\s*/\s*"
    r"([^\s\"'`]+)",
    re.IGNORECASE,
)
# "the PIN for the hardware key is 482913" (a number; other numbers are no secret)
_PIN_STATED = re.compile(r"\bPINs?\b(?:\s+[\w-]+){0,4}?\s+(?:is|:)\s+(\d{4,12})\b(?![.,]\d)")
_PLACEHOLDER = re.compile(
    r"[$<{%*]|\.{3}|x{3,}\b|your[_-]|(?:true|false|none|null|yes|no|on|off)\b", re.IGNORECASE
)
_NOT_A_VALUE = re.compile(r"\d+(?:\.\d+)?[a-z]{0,3}|[\W_]*", re.IGNORECASE)
_TRAILING = ".,;:!?)]"
MIN_RANDOM_TOKEN = 20
"""Characters a bare token needs before its randomness makes it a secret."""
MIN_NAMED_VALUE = 12
"""The same for the value of a `NAME=value` token (the name says a value follows)."""
MIN_KEY_VALUE = 8
"""Characters a quoted value after a key, token or credential noun needs to be a secret when it
does not mix letters with digits or symbols."""
_LONG_TOKEN = re.compile(r"[A-Za-z0-9+/=_-]{20,}")
_HEX = re.compile(r"[0-9a-fA-F]{32,}")
_SEGMENT = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_WORD_SEGMENT = re.compile(r"[A-Z]?[a-z]{2,}")


class Secret(NamedTuple):
    """A secret value found in a text: what it looks like, and where it is (`text[start:end]`)."""

    kind: str
    start: int
    end: int


_PREFIX_KINDS = (
    ("AKIA", "an AWS access key"),
    ("ASIA", "an AWS access key"),
    ("-----BEGIN", "a private key"),
    ("eyJ", "a JSON web token"),
    ("gh", "a GitHub token"),
    ("github_pat_", "a GitHub token"),
    ("xox", "a Slack token"),
    ("AIza", "a Google API key"),
    ("glpat-", "a GitLab token"),
    ("npm_", "an npm token"),
    ("hf_", "a Hugging Face token"),
)


def _prefix_kind(value: str) -> str:
    return next((kind for prefix, kind in _PREFIX_KINDS if value.startswith(prefix)), "an API key")


_FOUND_BUDGET = 1 << 20
"""Bytes of `find_secret` answers kept: a store looks at its content twice (refused if it
holds a secret; its slug derived without one). A call is charged 300 bytes and 4 a character:
the text (at most 4 bytes a character) and a small tuple."""


@memo(_FOUND_BUDGET, base=300, per_char=4)
def find_secret(text: str) -> Secret | None:
    """Return the first thing in `text` that looks like a secret value (not just its name):
    a known key or token format, a password in a URL, a pgpass line or on a command line,
    `NAME=value` where NAME names a secret, "the password is X", or a long random token. None if
    there is none. Answers are memoised, bounded in bytes."""
    for finder in (_known_format, _assigned, _stated_value, _random_token):
        found = finder(text)
        if found is not None:
            return found
    return None


def _known_format(text: str) -> Secret | None:
    """A key or token by its prefix, or a password in a URL, a pgpass line or a command line."""
    if m := _SECRET_PREFIX.search(text):
        return Secret(_prefix_kind(m.group()), m.start(), m.end())
    for pattern, kind, hint in (
        (_URL_PASSWORD, "a password in a URL", "://" in text),
        (_PGPASS, "a password in a pgpass line", text.count(":") >= 4),
        (_CLI_PASSWORD, "a password on a command line", _CLI_HINT.search(text) is not None),
    ):
        for m in pattern.finditer(text) if hint else ():
            value = m.group(1).rstrip(_TRAILING)
            if _is_value(value) and (not value.isalpha() or _plain_word(value)):
                return Secret(kind, m.start(1), m.start(1) + len(value))
    return None


def _assigned(text: str) -> Secret | None:
    """`NAME=value` where NAME names a secret (or a key, with a value that looks like one);
    `api_key: value` and `SECRET_KEY is value` when the value looks like one."""
    if not _names_a_secret(text):
        return None
    for m in _ASSIGNMENT.finditer(text):
        name, value = m.group(1), m.group(2).rstrip(_TRAILING)
        if (_STRONG_NAME.search(name) and _is_value(value)) or (
            _WEAK_NAME.search(name) and _mixed(value)
        ):
            return Secret(f"a {name} value", m.start(2), m.start(2) + len(value))
    for m in _CODE_NAME_STATED.finditer(text):
        name, value = m.group(1), m.group(2).rstrip(_TRAILING)
        named = _identifier(value) or _VERSIONED_NAME.fullmatch(value)
        if _STRONG_NAME.search(name) and _mixed(value) and not named:
            return Secret(f"a {name} value", m.start(2), m.start(2) + len(value))
    return None


def _stated_value(text: str) -> Secret | None:
    """ "the password is X", "the token abc123XYZ", "with password swordfish on staging",
    "the passphrase is correct horse battery staple", "the credentials are admin / S3cret!"."""
    if not _names_a_secret(text):
        return None
    for m in _SECRET_STATED.finditer(text):
        if _stated(m):
            value = m.group(5).rstrip(_TRAILING)
            noun = (m.group(1) or "secret").rstrip("s").lower()
            return Secret(f"a {noun}", m.start(5), m.start(5) + len(value))
    for m in _SECRET_NAMED.finditer(text):
        value = m.group(2).rstrip(_TRAILING)
        if _mixed(value) and not (m.group(1) and _identifier(value)):
            return Secret("a secret value", m.start(2), m.start(2) + len(value))
    password = "pass" in text.lower() or "pwd" in text.lower()
    for m in _PASSWORD_GIVEN.finditer(text) if password else ():
        if _given_word(m):
            value = m.group(1).rstrip(_TRAILING)
            return Secret("a password", m.start(1), m.start(1) + len(value))
    for pattern, judge, hint in (
        (_PASSPHRASE_STATED, _passphrase_words, password),
        (_USER_SLASH_PASSWORD, _mixed, "/" in text),
        (_PIN_STATED, _always, "PIN" in text),
    ):
        for m in pattern.finditer(text) if hint else ():
            value = m.group(1).rstrip(_TRAILING)
            if judge(value):
                return Secret("a password", m.start(1), m.start(1) + len(value))
    return None


def _random_token(text: str) -> Secret | None:
    """A long token that looks random (a bare hex run only if the text calls it a secret)."""
    for m in _LONG_TOKEN.finditer(text):
        token, shortest = m.group().strip("-_/=+"), MIN_RANDOM_TOKEN
        named = _NAMED_VALUE.fullmatch(token)
        if (
            named
        ):  # `NAME=value`: judge the value alone, so `NODE_OPTIONS=--max-old-space-size=4096`
            # is flags, and a shorter random value (`WEBHOOK_SIG=Zx8aB3kLm9Qp2Rt5`) still counts
            token, shortest = named.group(1).strip("-_/=+"), MIN_NAMED_VALUE
        if _HEX.fullmatch(token) and not _SECRET_NOUN.search(text):
            continue  # a bare hex run is a hash (a commit, a checksum) unless called a secret
        if _random(token, shortest):
            return Secret("a long random token", m.start(), m.end())
    return None


_VERSIONED_NAME = re.compile(r"[A-Za-z]{2,}[-_]?v?\d{1,4}|v\d{1,4}(?:\.\d{1,4}){0,2}")
"""A name with a version or a size (`UUIDv7`, `HS256`, `ES2022`), or a version (`v2`): a kind of
key, not one."""
_NAMED_VALUE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=(.+)")
_SECRET_NOUN = re.compile(
    r"\b(?:secrets?|passwords?|passphrases?|tokens?|keys?|credentials?|signing|hmac)\b", re.I
)


def has_secret(text: str) -> bool:
    """Whether `text` carries something that looks like a secret value (not just its name)."""
    return find_secret(text) is not None


def without_secrets(text: str) -> str:
    """`text` with every secret value found in it removed (for deriving a slug from it)."""
    while (found := find_secret(text)) is not None:
        text = text[: found.start] + " " + text[found.end :]
    return text


_SECRET_NOUN_STEMS = ("pass", "pwd", "secret", "token", "key", "cred", "auth", "login", "pin")
_CLI_HINT = re.compile(r" -[pu]|--pass|--user")


def _names_a_secret(text: str) -> bool:
    """Whether `text` holds a stem of a word that names a secret (a cheap test before the
    patterns that need one: most memories name none)."""
    lowered = text.lower()
    return any(stem in lowered for stem in _SECRET_NOUN_STEMS)


def _stated(m: re.Match[str]) -> bool:
    """`<secret noun> [up to 4 words] is|=|: <value>`: is <value> a secret?"""
    raw = m.group(5)
    value = raw.rstrip(_TRAILING)
    between = m.group(3).lower().split()
    if not _is_value(value) or _NAMING_WORDS.intersection(between):
        return False  # "the secret name is prod/db/creds-v3", "the key prefix is logs/2024"
    if not m.group(1):  # a key, token or credential noun
        if _VERSIONED_NAME.fullmatch(value):
            return False  # "Primary keys are UUIDv7", "tokens are signed with HS256"
        if not m.group(2) and _identifier(value):
            return False  # "the cache key is session:v2" (credentials are "user:pass")
        if m.group(4):  # quoted: a secret unless short and plain (a key prefix, `sess:`)
            return _mixed(value) or len(value) >= MIN_KEY_VALUE
        return _mixed(value)
    if m.group(4) or _mixed(value):  # a password quoted, or "hunter2"
        return True
    # "The staging password is swordfish." (a password noun, right before, a clause's last word)
    at_end = m.end() == len(m.string) or value != raw
    return not m.group(3) and at_end


_ID_PART = re.compile(
    r"\{\w*\}|\*|\d+|v\d+|(?:[a-z]+|[A-Z]+|[A-Z]?[a-z]+(?:[A-Z][a-z]+)+|[A-Z][a-z]+)\d{0,4}"
)
_ID_SEPARATOR = re.compile(r"[:./#_-]+")


def _identifier(value: str) -> bool:
    """Whether `value` has an identifier's structure rather than a secret's: two or more parts
    joined by `:`, `.`, `/`, `#`, `_` or `-`, each a word (lower, upper, Capitalised or camelCase)
    with at most a few digits at its end, a number, a version (`v2`) or a `{placeholder}`:
    `session:v2`, `user:123:cart`, `tenant_id2`, `page.title.v2`, `logs/2024/app1`,
    `user:{id}:profile:v2`. "hunter2" (one part), "k9Xq2Lm7" and "Adm1n:Pa$$" are not."""
    parts = [part for part in _ID_SEPARATOR.split(value.strip("/~?")) if part]
    return len(parts) >= 2 and all(_ID_PART.fullmatch(part) for part in parts)


_FUNCTION_WORDS = _words(
    "a an the this that these those it its their our your my his her and or but nor not no "
    "never always only also just still now then than too very so as if when while where once "
    "to of in on at by for from with without into onto via per over under after before about "
    "against between through during each every all any some both either neither is are was were "
    "be been being has have had do does did can could should would must may might will shall "
    "again here there first last one two three four five six seven eight nine ten twelve "
    "sixteen twenty"
)
# Words a password noun is often followed by ("password manager", "with password auth")
_PASSWORD_COMPOUNDS = _words(
    "auth authentication login logins signin manager managers reset resets policy policies rule "
    "rules hash hashes hashing hasher field fields prompt prompts protection encryption rotation "
    "change changes length complexity strength requirement requirements expiry expiration "
    "history recovery form forms input file files store storage vault grant flow flows hint "
    "hints salt check checks validation validator update updates entry entries fallback access "
    "less based protected encrypted characters chars words letters digits random long short "
    "strong weak unique secret private shared optional required empty blank valid invalid same "
    "different sensitive case lowercase uppercase numeric alphanumeric flag flags option options "
    "argument arguments parameter parameters"
)
_CLAUSE_GOES_ON = _words("on for in at to when from against via as and or but then if before after")


def _plain_word(word: str) -> bool:
    """A word that could be a password: not a function word, a word that names a password's
    kind or rules, or a participle or adverb ("stored", "rotating", "daily")."""
    word = word.lower()
    return (
        word not in _FUNCTION_WORDS
        and word not in _PASSWORD_COMPOUNDS
        and not word.endswith(("ed", "ing", "ly"))
    )


def _given_word(m: re.Match[str]) -> bool:
    """ "with password swordfish on staging": the word after the noun is a password when it
    could be one and the clause ends after it, or goes on with a preposition or a conjunction
    ("with password auth only" is a kind of login)."""
    raw = m.group(1)
    value = raw.rstrip(_TRAILING)
    if not _is_value(value) or not (_mixed(value) or (value.isalpha() and _plain_word(value))):
        return False
    rest = m.string[m.end() :].split(maxsplit=1)
    return value != raw or not rest or rest[0].lower() in _CLAUSE_GOES_ON


def _passphrase_words(value: str) -> bool:
    """ "correct horse battery staple": three or more words that could each be a password's."""
    return all(_plain_word(word) for word in value.split())


def _always(value: str) -> bool:
    return bool(value)


def _is_value(value: str) -> bool:
    return (
        any(c.isalnum() for c in value)
        and _PLACEHOLDER.match(value) is None
        and _NOT_A_VALUE.fullmatch(value) is None
    )


def _mixed(value: str) -> bool:
    """Letters with digits or symbols, as in "hunter2" or "Tr0ub4dor&3"."""
    letters = any(c.isalpha() for c in value)
    other = any(c.isdigit() or c in "!@#$%^&*+=~" for c in value)
    return letters and other and _is_value(value)


def _random(token: str, shortest: int = 20) -> bool:
    """A token of at least `shortest` characters that looks random rather than like an
    identifier or a path."""
    if len(token) < shortest:
        return False
    digit = any(c.isdigit() for c in token)
    if _HEX.fullmatch(token) and digit and any(c.isalpha() for c in token):
        return True
    upper = any(c.isupper() for c in token)
    lower = any(c.islower() for c in token)
    if not (upper and lower and (digit or len(token) >= 32)):
        return False
    letters = sum(c.isalpha() for c in token)
    in_words = sum(len(s) for s in _SEGMENT.findall(token) if _WORD_SEGMENT.fullmatch(s))
    return in_words < 0.6 * letters
