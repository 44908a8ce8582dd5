"""One secret detector for every write path: a store carrying a secret value is refused (unless
`allow_secrets`), and a slug never carries one."""

from __future__ import annotations

import pytest

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
