"""A frozen copy of memd/core/format/secrets.py as it was at commit cc2b6b8, before the
false-refusal round (adversary 2026-11, finding 5). Used only by `bench/secrets.py`, which measures
it beside the current detector in the same run; never imported by memd. Do not edit it.

Original docstring:

Secret values in a memory's text: memory files are meant to be committed, so a secret never
reaches one unless its owner said so (`allow_secrets`), and never reaches a slug at all.

Rules: `find_secret` finds a value, not a name ("the password is in the vault" is a rule about a
password; "the password is Sup3r!" carries one). It knows the formats of common keys and tokens
(AWS, GitHub, Slack, Stripe, OpenAI-style `sk-`, Google, GitLab, npm, Hugging Face, JWTs, private
key blocks), passwords in URLs, `NAME=value` where NAME names a secret, "<secret noun> is
<value>" with a value that looks like one, and long random tokens (not hex hashes of commits in
words, not identifiers or paths; a bare run of hex digits is a hash unless the text calls it a
secret, key or token). Placeholders (`$TOKEN`, `<key>`, `your-key`, `xxx`, `...`)
are not values. Every write path (stores, extraction, cleanup's slugs) uses this one detector;
`docs/secrets.md` gives its precision and recall on a labelled set.
"""

from __future__ import annotations

import re
from typing import NamedTuple

_SECRET_PREFIX = re.compile(
    r"(?<![\w-])(?:sk-(?=[\w-]{0,80}\d)[\w-]{8,}|[sr]k_(?:live|test)_\w{8,}|"
    r"gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,}|xox[bpars]-[A-Za-z0-9-]{10,}|"
    r"(?:AKIA|ASIA)[A-Z0-9]{16}|AIza[\w-]{30,}|glpat-[\w-]{20,}|npm_[A-Za-z0-9]{30,}|"
    r"hf_[A-Za-z0-9]{30,}|eyJ[\w-]{8,}\.eyJ[\w-]{8,}|-----BEGIN[A-Z ]{0,40}PRIVATE\s+KEY-----)"
)
# Credentials in a URL: "postgres://admin:S3cret@db:5432/app" (not "user:${PASS}@" placeholders).
_URL_PASSWORD = re.compile(r"\b[a-z][\w+.-]{0,20}://[^\s/:@]{1,100}:([^\s/@]{1,200})@", re.I)
# Names whose value is always a secret, and names whose value is one only if it looks like one
# ("sort_key=name" is not a secret, "DB_PASSWORD=changeme" is).
_STRONG_NAME = re.compile(
    r"(?<![a-z])(?:passw(?:or)?d|pwd|passphrase|secret|token|credential|"
    r"(?:api|private|access|secret|signing)[_-]?key)s?(?![a-z])",
    re.IGNORECASE,
)
_WEAK_NAME = re.compile(r"(?<![a-z])(?:keys?|auth)(?![a-z])", re.IGNORECASE)
_ASSIGNMENT = re.compile(r"(?<![\w.-])([A-Za-z_][\w.-]{0,60})\s{0,3}:?=\s{0,3}[\"']?([^\s\"'`,;]+)")
# "the staging DB password is X", "our JWT secret: X", "the password for the account is X"
_SECRET_STATED = re.compile(
    r"\b(?:(passwords?|passphrases?|passwd|pwd|passcodes?|secrets?)|"
    r"tokens?|keys?|credentials?|creds)"
    r"((?:\s+[\w-]+){0,4}?)\s{0,3}(?:\b(?:is|was|are)\b|=|:)\s{0,3}([\"'`]?)([^\s\"'`]+)",
    re.IGNORECASE,
)
# "the token abc123XYZ", "the password hunter2"
_SECRET_NAMED = re.compile(
    r"\b(?:passwords?|passphrases?|passwd|pwd|secrets?|tokens?|keys?|credentials?)\s+"
    r"[\"'`]?([^\s\"'`]{6,})",
    re.IGNORECASE,
)
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


def find_secret(text: str) -> Secret | None:
    """Return the first thing in `text` that looks like a secret value (not just its name):
    a known key or token format, a password in a URL, `NAME=value` where NAME names a secret,
    "the password is X", or a long random token. None if there is none."""
    for finder in (_known_format, _assigned, _stated_value, _random_token):
        found = finder(text)
        if found is not None:
            return found
    return None


def _known_format(text: str) -> Secret | None:
    """A key or token by its prefix, or a password in a URL."""
    if m := _SECRET_PREFIX.search(text):
        return Secret(_prefix_kind(m.group()), m.start(), m.end())
    for m in _URL_PASSWORD.finditer(text):
        if _is_value(m.group(1)):
            return Secret("a password in a URL", m.start(1), m.end(1))
    return None


def _assigned(text: str) -> Secret | None:
    """`NAME=value` where NAME names a secret (or a key, with a value that looks like one)."""
    for m in _ASSIGNMENT.finditer(text):
        name, value = m.group(1), m.group(2).rstrip(_TRAILING)
        if (_STRONG_NAME.search(name) and _is_value(value)) or (
            _WEAK_NAME.search(name) and _mixed(value)
        ):
            return Secret(f"a {name} value", m.start(2), m.start(2) + len(value))
    return None


def _stated_value(text: str) -> Secret | None:
    """ "the password is X", "the token abc123XYZ"."""
    for m in _SECRET_STATED.finditer(text):
        if _stated(m):
            value = m.group(4).rstrip(_TRAILING)
            noun = (m.group(1) or "secret").rstrip("s").lower()
            return Secret(f"a {noun}", m.start(4), m.start(4) + len(value))
    for m in _SECRET_NAMED.finditer(text):
        value = m.group(1).rstrip(_TRAILING)
        if _mixed(value):
            return Secret("a secret value", m.start(1), m.start(1) + len(value))
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


_VERSIONED_NAME = re.compile(r"[A-Za-z]{2,}[-_]?v?\d{1,4}")
"""A name with a version or a size (`UUIDv7`, `HS256`, `ES2022`): a kind of key, not one."""
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


def _stated(m: re.Match[str]) -> bool:
    """`<secret noun> [up to 4 words] is|=|: <value>`: is <value> a secret?"""
    raw = m.group(4)
    value = raw.rstrip(_TRAILING)
    if not _is_value(value):
        return False
    if not m.group(1):  # a key, token or credential noun
        if _VERSIONED_NAME.fullmatch(value):
            return False  # "Primary keys are UUIDv7", "tokens are signed with HS256"
        if m.group(3):  # quoted: a secret unless short and plain (a key prefix, `sess:`)
            return _mixed(value) or len(value) >= MIN_KEY_VALUE
        return _mixed(value)
    if m.group(3) or _mixed(value):  # a password quoted, or "hunter2"
        return True
    # "The staging password is swordfish." (a password noun, right before, a clause's last word)
    at_end = m.end() == len(m.string) or value != raw
    return not m.group(2) and at_end


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
