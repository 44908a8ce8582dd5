"""One secret detector for every write path: a store carrying a secret value is refused (unless
`allow_secrets`), and a slug never carries one."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from memd.core.format.categories import Category
from memd.core.format.secrets import find_secret, without_secrets
from memd.core.writes import transitions
from memd.core.writes.slugs import derive_slug, validate_slug
from memd_client.errors import InvalidEntry

PASSWORD = "The prod DB password is Sup3rS3cret!2024 for the admin account."


def _store(content: str, **options: object) -> transitions.StoreOutcome:
    command = transitions.Store(content=content, **options)  # type: ignore[arg-type]
    result = transitions.apply(Category.SECURITY, None, command).outcome
    assert isinstance(result, transitions.StoreOutcome)
    return result


def test_a_store_with_a_password_is_refused_saying_what_and_how() -> None:
    with pytest.raises(InvalidEntry) as refused:
        _store(PASSWORD)
    message = refused.value.message
    assert "a password" in message and "'Sup3...'" in message
    assert "Sup3rS3cret!2024" not in message  # the error does not repeat the secret
    assert "without the value" in message and "allow_secrets" in message


def test_allow_secrets_stores_it_but_the_slug_never_carries_it() -> None:
    outcome = _store(PASSWORD, allow_secrets=True)
    assert outcome.action == "stored"
    assert "sup3r" not in (outcome.slug or "")


def test_a_slug_holding_a_key_is_refused() -> None:
    with pytest.raises(InvalidEntry, match="secret"):
        validate_slug("ci-akiaiosfodnn7example")
    assert "akia" not in derive_slug("Use AKIAIOSFODNN7EXAMPLE for the CI user.", set())


@pytest.mark.parametrize(
    "text",
    [
        "Commit 9fb94b9a0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f fixed the race.",
        "Request 123e4567-e89b-12d3-a456-426614174000 timed out.",
        "Pin requests to 2.31.0 and urllib3 below 2.",
        "Put your key in API_KEY=your-api-key before running.",
        "Never commit .env files or log API keys.",
        "The password is in the team vault.",
        "Primary keys are UUIDv7, not auto-increment integers.",  # a type, not a key's value
        "Session tokens are JWTv2.",
        "The Redis key prefix for sessions is `sess:`.",
        "Set `NODE_OPTIONS=--max-old-space-size=4096` for the webpack build.",
        "Tokens are signed with the key type HS256.",
    ],
)
def test_look_alikes_pass(text: str) -> None:
    assert find_secret(text) is None
    assert _store(text).action == "stored"


def test_without_secrets_removes_every_value() -> None:
    text = "Use AKIAIOSFODNN7EXAMPLE and postgres://app:hunter22@db/app."
    cleaned = without_secrets(text)
    assert "AKIA" not in cleaned and "hunter22" not in cleaned
    assert find_secret(cleaned) is None


@pytest.mark.parametrize(
    "text",
    [
        "The deploy key is k9Xq2Lm7Pw.",  # long enough after a key noun
        "The staging password is hunter2.",  # a password noun needs no length
        "The DB password is 'sunshine'.",  # a password, quoted
        "Set WEBHOOK_SIG=Zx8aB3kLm9Qp2Rt5Vw in CI.",  # a NAME=value token's random value
        'The API token is "k9Xq2z".',  # quoted and mixed, however short
        "The deploy token is Ab3dEf9.",
        'The encryption key is "correcthorsebatterystaple".',  # quoted and long
    ],
)
def test_stated_values_after_a_secret_noun_are_found(text: str) -> None:
    assert find_secret(text) is not None


# The adversarial round of 2026-11 (finding 5): rules about keys whose value is an identifier
# were refused, and some secrets written in prose were stored.


@pytest.mark.parametrize(
    "text",
    [
        "The cache key is session:v2.",
        "Redis key is user:123:cart.",
        "The primary key is tenant_id2.",
        "Translation keys are page.title.v2 style.",
        "The S3 key prefix is logs/2024/app1.",
        "The secret name is prod/db/creds-v3 in AWS Secrets Manager.",
        "Cache key format is user:{id}:profile:v2.",
    ],
)
def test_a_key_whose_value_is_an_identifier_is_stored(text: str) -> None:
    assert find_secret(text) is None
    assert _store(text).action == "stored"


@pytest.mark.parametrize(
    "text",
    [
        "Log in as admin with password swordfish on staging.",
        "The wifi passphrase is correct horse battery staple.",
        "db.example.com:5432:app:admin:Sup3rS3cret!",
        "redis://:S3cretPass@cache:6379/0",
    ],
)
def test_a_secret_in_prose_is_refused(text: str) -> None:
    assert find_secret(text) is not None
    with pytest.raises(InvalidEntry, match="Not stored"):
        _store(text)


def test_a_given_slug_with_a_password_in_its_words_is_refused() -> None:
    with pytest.raises(InvalidEntry, match="secret"):
        validate_slug("admin-password-hunter2")
    with pytest.raises(InvalidEntry, match="secret"):
        _store("The admin account is for break-glass access only.", slug="admin-password-hunter2")
    for ordinary in ("prod-db-password-location", "login-with-password-auth", "cache-key-v2"):
        assert validate_slug(ordinary) == ordinary


@pytest.mark.parametrize(
    "text",
    [
        "Use the password manager for shared logins.",
        "Users log in with password or SSO.",
        "Use password auth only on localhost.",
        "The passphrase is four random words.",
        "The wifi passphrase is on the sticker under the router.",
        "The password is stored encrypted at rest.",
        "The pgpass file lives at ~/.pgpass with mode 0600.",
        "The config key is server.http.port2 for the second listener.",
        "Store thumbnails under the key images/thumb/w320.",
    ],
)
def test_rules_beside_the_new_findings_pass(text: str) -> None:
    assert find_secret(text) is None


_GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


@pytest.mark.parametrize(
    "text",
    [
        f"Use {_GITHUB[:10]}\u200b{_GITHUB[10:]} for CI.",  # a zero-width space inside
        f"Use {_GITHUB[:10]}\u2060{_GITHUB[10:]} for CI.",  # a word joiner inside
        f"Use {_GITHUB[:10]} {_GITHUB[10:]} for CI.",  # a space inside
        "The deploy token is czNjcjN0LWRlcGxveS10b2tlbi12YWx1ZS0xMjM0.",  # base64
        "The signing key is 4f3c2a1b9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b.",  # hex
        f"The token reversed is {_GITHUB[::-1]}.",
        "The AWS key is ＡＫＩＡ２ＱＷＥＲＴＹＵＩＯＰＡＳＤＦＧ.",  # fullwidth
        "The AWS key is \u0410KIA2QWERTYUIOPASDFG.",  # a Cyrillic A
        "The AWS key is akia2qwertyuiopasdfg.",  # lower case
        "Connect to postgres://admin:S3cr3t%21pw@db:5432/app.",  # URL-encoded
        "Auth: eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9",
        "Run export OPENAI_API_KEY=sk-proj-a1B2c3D4e5F6g7H8i9J0 before tests.",
        "The bot uses xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx.",
        "Use `sk_live_51HxYzAbCdEfGhIjKlMn` for payments.",
        "machine api.example.com login deploy password S3cr3tPass9",  # netrc
    ],
)
def test_evasions_stay_refused(text: str) -> None:
    assert find_secret(text) is not None


_ID_WORDS = st.sampled_from(["user", "session", "cart", "tenant", "profile", "logs", "app", "page"])
_ID_PARTS = st.one_of(
    _ID_WORDS,
    st.builds(lambda word, n: f"{word}{n}", _ID_WORDS, st.integers(0, 999)),
    st.integers(0, 99999).map(str),
    st.integers(1, 20).map(lambda n: f"v{n}"),
    st.just("{id}"),
)


@given(
    parts=st.lists(_ID_PARTS, min_size=2, max_size=5),
    separator=st.sampled_from([":", ".", "/", "_", "-"]),
    noun=st.sampled_from(["The cache key", "Redis key", "The S3 key", "The token audience"]),
)
def test_a_key_noun_before_an_identifier_never_refuses(
    parts: list[str], separator: str, noun: str
) -> None:
    assert find_secret(f"{noun} is {separator.join(parts)}.") is None
