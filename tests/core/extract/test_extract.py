"""Zero-LLM extraction: measured precision/recall, each pattern family, look-alikes, properties.

A candidate is correct when kind, category and content all match a label; contents compare
after casefolding and dropping trailing spaces, "." and "!" (`_norm`).
"""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import given, settings, strategies as st

from memd.core.extract.pipeline import MAX_CONTENT, Found, Kind, category_of, extract, sentences
from memd.core.format.categories import Category, parse_category
from memd.core.format.secrets import has_secret
from tests.budget import examples
from tests.core.extract.conversational_messages import CONVERSATIONAL, CONVERSATIONAL_NEGATIVES
from tests.core.extract.extract_messages import (
    HELD_OUT,
    HELD_OUT_1,
    HELD_OUT_2,
    HELD_OUT_2_NEGATIVES,
    HELD_OUT_2_POSITIVES,
    HELD_OUT_3,
    HELD_OUT_NEGATIVES,
    HELD_OUT_POSITIVES,
    LOOKALIKES_2,
    MESSAGES,
    NEGATIVES,
    POSITIVES,
    POSITIVES_2,
    REVIEW_NEGATIVES,
    TUNING,
    Case,
)

PRECISION_FLOOR = 0.95
RECALL_FLOOR = 0.75


def _norm(content: str) -> str:
    return content.casefold().rstrip(" .!")


def _score(cases: tuple[Case, ...]) -> tuple[int, int, int]:
    """Return (true positives, false positives, false negatives) over `cases`."""
    tp = fp = fn = 0
    for text, labels in cases:
        expected = {(kind, category, _norm(content)) for kind, category, content in labels}
        got = {(f.kind, f.category, _norm(f.content)) for f in extract(text)}
        tp += len(expected & got)
        fp += len(got - expected)
        fn += len(expected - got)
    return tp, fp, fn


def _one(text: str) -> tuple[Kind, Category, str]:
    found = extract(text)
    assert len(found) == 1, f"{text!r} -> {found}"
    return found[0].kind, found[0].category, found[0].content


# ---- the labelled set ------------------------------------------------------------------------


def test_labelled_set_is_large_and_balanced_enough() -> None:
    positives = [case for case in MESSAGES if case[1]]
    negatives = [case for case in MESSAGES if not case[1]]
    assert len(MESSAGES) >= 300
    assert len(negatives) >= 150
    assert len(positives) >= 120
    assert len(HELD_OUT_2) >= 30 and len(LOOKALIKES_2) >= 30 and len(POSITIVES_2) >= 10
    for labelled in (POSITIVES, POSITIVES_2, HELD_OUT_POSITIVES, HELD_OUT_2_POSITIVES):
        assert all(labels for _, labels in labelled)
    for unlabelled in (NEGATIVES, REVIEW_NEGATIVES, LOOKALIKES_2, HELD_OUT_NEGATIVES):
        assert not any(labels for _, labels in unlabelled)
    assert not any(labels for _, labels in HELD_OUT_2_NEGATIVES)
    texts = [text for text, _ in MESSAGES]
    assert len(texts) == len(set(texts))


def test_labels_are_storable_sentences() -> None:
    for _, labels in MESSAGES:
        for _, _, content in labels:
            assert content[0].isupper() or content[0] == "`", content
            assert content.endswith(".") and "\n" not in content and len(content) <= MAX_CONTENT


@pytest.mark.parametrize(
    ("name", "cases"),
    [
        ("tuning", TUNING),
        ("held-out 1", HELD_OUT_1),
        ("held-out 2", HELD_OUT_2),
        ("held-out 3", HELD_OUT_3),
    ],
)
def test_each_subset_is_measured(name: str, cases: tuple[Case, ...]) -> None:
    tp, fp, fn = _score(cases)
    print(f"{name}: {len(cases)} messages, TP={tp} FP={fp} FN={fn}")  # noqa: T201
    assert tp + fp > 0


def test_precision_and_recall_over_the_labelled_set() -> None:
    assert set(MESSAGES) == set(TUNING) | set(HELD_OUT)
    tp, fp, fn = _score(MESSAGES)
    precision, recall = tp / (tp + fp), tp / (tp + fn)
    report = f"TP={tp} FP={fp} FN={fn} precision={precision:.3f} recall={recall:.3f}"
    print(report)  # noqa: T201
    assert precision >= PRECISION_FLOOR, report
    assert recall >= RECALL_FLOOR, report


# ---- preferences -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "content"),
    [
        ("I prefer tabs over spaces.", "Prefer tabs over spaces."),
        ("I'd prefer named arguments", "Prefer named arguments."),
        ("i would really prefer fewer abstractions", "Prefer fewer abstractions."),
        ("I'd rather use Make than just.", "Prefer to use Make rather than just."),
        ("I’d rather not vendor dependencies", "Prefer not to vendor dependencies."),
        ("I'd rather you didn't rename public APIs", "Prefer not to rename public APIs."),
        ("I like pytest better than nose", "Prefer pytest over nose."),
        ("I like small commits more.", "Prefer small commits."),
        ("Use rye instead of pyenv.", "Use rye instead of pyenv."),
        (
            "use `orjson` rather than `json` for hot paths",
            "Use `orjson` rather than `json` for hot paths.",
        ),
        ("Prefer dataclasses over dicts", "Prefer dataclasses over dicts."),
        ("Always use UTC", "Always use UTC."),
        ("never use `sleep` in tests", "Never use `sleep` in tests."),
        (
            "Don't use `assert` for validation anywhere",
            "Do not use `assert` for validation anywhere.",
        ),
        ("use structured logging everywhere", "Use structured logging everywhere."),
        ("From now on, use uv for everything.", "Use uv for everything."),
        ("stick with SQLite in all the unit tests", "Stick with SQLite in all the unit tests."),
    ],
)
def test_preferences(text: str, content: str) -> None:
    assert _one(text) == ("preference", Category.PREFERENCE, content)


# ---- corrections -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "content"),
    [
        ("Actually, we use pnpm", "We use pnpm."),
        ("Actually we deploy with Helm.", "We deploy with Helm."),
        ("No, the API is versioned in the URL.", "The API is versioned in the URL."),
        ("nope, our tests run on Python 3.12", "Our tests run on Python 3.12."),
        ("That's wrong, the queue is durable.", "The queue is durable."),
        ("Correction: the cron job runs hourly", "The cron job runs hourly."),
        ("Wrong — we're on Postgres 15", "We're on Postgres 15."),
        ("We use Jest, not Mocha.", "We use Jest, not Mocha."),
        (
            "No, the assets are not in static/ but in public/.",
            "The assets are not in static/ but in public/.",
        ),
        ("Our services talk over gRPC, not REST.", "Our services talk over gRPC, not REST."),
        ("we actually vendor our protobufs", "We vendor our protobufs."),
        ("No, we switched to Renovate last year.", "We switched to Renovate last year."),
        ("Actually, Redis is only used for caching.", "Redis is only used for caching."),
    ],
)
def test_corrections(text: str, content: str) -> None:
    assert _one(text) == ("correction", Category.DECISION, content)


def test_a_bare_correction_sentence_carries_to_the_next_one() -> None:
    assert [f.content for f in extract("No. The tests are in `spec/`.")] == [
        "The tests are in `spec/`."
    ]
    assert extract("Nope! The build is broken.") == []


def test_a_correction_trigger_before_a_rule_yields_the_rule() -> None:
    assert _one("No, always use the EU bucket") == (
        "preference",
        Category.PREFERENCE,
        "Always use the EU bucket.",
    )


# ---- constraints -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "content"),
    [
        ("Always run the linter before pushing.", "Always run the linter before pushing."),
        ("never push to main", "Never push to main."),
        ("never ever rewrite published history", "Never rewrite published history."),
        ("Don't ever squash release commits", "Never squash release commits."),
        ("do not ever edit generated files", "Never edit generated files."),
        ("Make sure to always add a changelog entry", "Always add a changelog entry."),
        ("make sure you never skip CI", "Never skip CI."),
        ("You must run `make check` before merging.", "Run `make check` before merging."),
        ("You must not edit `vendor/`.", "Do not edit `vendor/`."),
        ("you must never bypass the review", "Never bypass the review."),
        ("You have to rebuild the image every time", "Rebuild the image every time."),
        ("you should always write a failing test first", "Always write a failing test first."),
        ("you gotta always rebase before merging", "Always rebase before merging."),
        ("All migrations must be reversible.", "All migrations must be reversible."),
        ("Public functions must have docstrings", "Public functions must have docstrings."),
        ("we always tag releases", "We always tag releases."),
        (
            "Please don't commit generated code ever again",
            "Do not commit generated code ever again.",
        ),
        ("As a rule, keep functions under 40 lines.", "Keep functions under 40 lines."),
        ("remember to always close file handles", "Always close file handles."),
        (
            "Before you merge, always bump the version.",
            "Before you merge, always bump the version.",
        ),
    ],
)
def test_constraints(text: str, content: str) -> None:
    assert _one(text) == ("constraint", Category.INSTRUCTION, content)


def test_several_rules_in_one_message_each_become_a_memory() -> None:
    text = (
        "Ground rules:\n- always use absolute imports\n- never commit `.env`\n"
        "Two more: prefer composition over inheritance; and don't ever use `eval` in this repo."
    )
    assert [(f.kind, f.category, f.content) for f in extract(text)] == [
        ("preference", Category.PREFERENCE, "Always use absolute imports."),
        ("constraint", Category.SECURITY, "Never commit `.env`."),
        ("preference", Category.PREFERENCE, "Prefer composition over inheritance."),
        ("preference", Category.PREFERENCE, "Never use `eval` in this repo."),
    ]


def test_a_rule_after_a_conjunction_is_its_own_clause() -> None:
    found = extract("Use ruff instead of flake8, and never disable a rule inline.")
    assert [f.content for f in found] == [
        "Use ruff instead of flake8.",
        "Never disable a rule inline.",
    ]


# ---- look-alikes -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("family", "text"),
    [
        ("question", "Should we always use X?"),
        ("question", "do you prefer tabs"),
        ("question", "can you always run the tests"),
        ("question", "Why must it always be YAML?"),
        ("hypothetical", "If you must, use a global."),
        ("hypothetical", "In case it never returns, add a timeout."),
        ("hypothetical", "if we ever switch to Go we must rewrite this"),
        ("hypothetical", "Maybe we should always use Docker."),
        ("reported", "The function never returns null."),
        ("reported", "The linter says you must add a docstring."),
        ("reported", "He said we must always use tabs."),
        ("reported", "John prefers tabs."),
        ("reported", "John uses tabs, not spaces."),
        ("reported", "It actually worked."),
        ("epistemic", "The test must have failed."),
        ("epistemic", "It must be a caching issue."),
        ("epistemic", "You must be joking."),
        ("epistemic", "The cache must be returning stale data."),
        ("past", "I actually tried that."),
        ("past", "We tried pnpm but it never worked."),
        ("past", "The old code always used tabs."),
        ("filler", "No, thanks."),
        ("filler", "Actually, never mind."),
        ("filler", "no problem"),
        ("filler", "No worries!"),
        ("filler", "Always a pleasure!"),
        ("task", "Don't run that now."),
        ("task", "no, not yet"),
        ("task", "Don't change the API in this PR."),
        ("task", "Use `foo` instead of `bar` in this function."),
        ("task", "You need to fix the import."),
        ("task", "The function must return a list."),
        ("task", "Don't forget to update the changelog."),
        ("task", "No, the deploy is broken again."),
        ("task", "The bug is in the parser, not the lexer."),
        ("short", "always."),
        ("short", "never mind"),
        ("short", "Never!"),
        ("deictic", "Never do that again."),
        ("deictic", "Always use this."),
        ("deictic", "Actually it's `make test-all`, not `make test`."),
        ("deictic", "never run it on prod"),
        ("not the user's words", "> Always run `make bootstrap` first."),
        ("not the user's words", "```\nyou must never call this twice\n```"),
        ("not the user's words", "Error: you must specify a region"),
        ("not the user's words", "warning: always use --locked"),
        ("not the user's words", "`never use print` is a rule in the docs"),
        ("the literal word no", "No tests should touch the network."),
    ],
)
def test_look_alikes_yield_nothing(family: str, text: str) -> None:
    assert extract(text) == [], family


@pytest.mark.parametrize(
    ("family", "text"),
    [
        ("label", "nit: prefer f-strings here"),
        ("label", "Nit - always sort imports"),
        ("label", "[nit] always sort imports"),
        ("label", "TODO: always validate input in the new endpoint"),
        ("label", "Tests: always green locally."),
        ("label", "CI output: never retrying failed job after 3 attempts"),
        ("commit", "fix: never retry on 4xx responses"),
        ("commit", "feat(api): always return ISO timestamps"),
        ("commit", "docs: prefer the async client in examples"),
        ("report", "pip says: you must give at least one requirement to install"),
        ("report", "It keeps failing with: never received a response from upstream"),
        ("report", "The installer printed: always run as administrator"),
        ("observation", "The daemon uses the old socket, not the new one."),
        ("observation", "The logs show the job runs twice, not once."),
        ("observation", "`foo()` returns a dict, not a list, in the old version."),
        ("observation", "No, the function depends on the global config."),
        ("observation", "Actually the function returns a tuple."),
        ("observation", "Nope. The script reads the wrong env var."),
        ("observation", "Actually the endpoint returns 204, not 200."),
        ("epistemic", "The migration must have run twice."),
        ("epistemic", "You must have forgotten to run the migrations."),
        ("expectation", "You should always get a 200 from the health endpoint."),
        ("expectation", "You should never have to restart the server."),
        ("tag question", "The scheduler must run jobs in order, right"),
        ("tag question", "The config must be reloaded on SIGHUP, correct"),
        ("tag question", "We always squash, don't we"),
        ("current work", "Sessions must be invalidated on logout -- that's the bug we're fixing."),
        ("current work", "Uploads must be capped at 10 MB; that's what this PR fixes."),
        ("product", "The user must not be able to delete their own admin role."),
        ("product", "Admins must be able to export all invoices."),
        ("choice", "I prefer the second option you gave."),
        ("choice", "I like the first approach better."),
        ("choice", "Use the approach you proposed, but keep the old name."),
        ("choice", "I'd rather go with what you proposed earlier."),
        ("choice", "Always use pnpm here."),
        ("choice", "Actually, we use the same token for staging."),
        ("quoting", "Prefer composition over inheritance is what the book says."),
        ("quoting", "According to the README, never run the migrations by hand."),
        ("concession", "I like pytest better than unittest, but the team uses unittest."),
        ("agent's steps", "I prefer to review the diff before you commit."),
        ("the unit at hand", "No, the function is in utils.py."),
    ],
)
def test_second_round_look_alikes_yield_nothing(family: str, text: str) -> None:
    assert extract(text) == [], family


@pytest.mark.parametrize(
    ("text", "content"),
    [
        ("From now on, prefer f-strings.", "Prefer f-strings."),
        ("We decided: use dataclasses for models.", "Use dataclasses for models."),
        ("Note for the future: never push to main.", "Never push to main."),
        ("Style: prefer f-strings.", "Prefer f-strings."),
        ("CI: never skip the lint job.", "Never skip the lint job."),
        ("Heads up - we never deploy on Fridays.", "We never deploy on Fridays."),
        ("Never delete the logs - they are needed for audits.", "Never delete the logs."),
        ("Use the same logger for all modules.", "Use the same logger for all modules."),
        ("This repo uses tabs, not spaces.", "This repo uses tabs, not spaces."),
        ("No, the config lives in pyproject.toml.", "The config lives in pyproject.toml."),
        (
            "Actually, the handlers live in `app/handlers/`.",
            "The handlers live in `app/handlers/`.",
        ),
        ("Always test your fixes before pushing.", "Always test your fixes before pushing."),
        (
            "Never force-push; that's the problem with rebasing shared branches.",
            "Never force-push.",
        ),
    ],
)
def test_the_same_surface_words_in_real_rules(text: str, content: str) -> None:
    assert [f.content for f in extract(text)] == [content]


# ---- secrets ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "Always use the API key sk-live-4f9a8b7c6d5e for staging.",
        "Actually, the staging DB password is Tr0ub4dor&3.",
        "Use AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY from now on.",
        "Always set DATABASE_PASSWORD=changeme in the local env file.",
        "The staging password is swordfish.",
        "Never share the password 'hunter2' with anyone.",
        "Always export GITHUB_TOKEN=ghp_a1B2c3D4e5F6g7H8i9J0kLmNoPqRsTuVwXyZ first.",
        "Never use the prod key AKIAJ7Q2XK4M5N6P7R8S in local scripts.",
        "Always send the token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.sig for staging.",
        "Always use glpat-abcdefghij1234567890 for the GitLab API.",
        "Never paste -----BEGIN RSA PRIVATE KEY----- into chat logs.",
        "Always use `xoxb-123456789012-abcdefABCDEF` for the bot.",
        "We always sign with 9f8e7d6c5b4a39281706f5e4d3c2b1a0ffee as the secret.",
        "Always pass Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0F to the client.",
        "Always connect with mysql://root:hunter2@localhost/app in dev.",
    ],
)
def test_a_secret_value_is_never_stored(text: str) -> None:
    assert extract(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "Never commit .env files.",
        "Never log API keys.",
        "Never put the `AWS_SECRET_ACCESS_KEY` in the repo.",
        "Always use `secrets.token_urlsafe()` for reset tokens.",
        "Passwords must be hashed with argon2.",
        "Always read API_KEY=$API_KEY from the environment.",
    ],
)
def test_a_rule_that_only_names_a_secret_is_kept_under_security(text: str) -> None:
    assert _one(text)[1] is Category.SECURITY


@pytest.mark.parametrize(
    "text",
    [
        "JSON keys are camelCase.",
        "The key is to keep functions small.",
        "Token TTL is 3600 seconds.",
        "Set TOKEN_TTL=3600 in prod.",
        "Use sort_key=name in list calls.",
        "Always pin numpy==1.26 in requirements.",
        "Edit src/components/UserProfileCard/index.tsx.",
        "Never call getUserByIdAndTenantV2 from handlers.",
        "Deploy to our-service-prod-eu-west-1-cluster.",
        "The API key is in 1Password.",
        "Use `${{ secrets.GITHUB_TOKEN }}` in workflows.",
        "Connect with postgres://app:${DB_PASSWORD}@db/app everywhere.",
        "Docs live at https://example.com/docs/setup.",
    ],
)
def test_names_identifiers_and_settings_are_not_secret_values(text: str) -> None:
    assert not has_secret(text)


# ---- categories ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "category"),
    [
        ("preference", Category.PREFERENCE),
        ("correction", Category.DECISION),
        ("constraint", Category.INSTRUCTION),
    ],
)
def test_each_kind_has_its_category(kind: Kind, category: Category) -> None:
    assert category_of(kind, "Use tabs for indentation.") is category


@pytest.mark.parametrize(
    "content",
    [
        "Never commit secrets.",
        "Rotate credentials monthly.",
        "Never log passwords.",
        "Tokens expire after an hour.",
        "Keep API keys in Vault.",
        "Never share the private key.",
        "Never commit .env files.",
        "The bot has read permissions only.",
        "All endpoints require auth.",
        "Authentication goes through Keycloak.",
        "Never log the JWT.",
        "Mask PII in logs.",
        "Never disable TLS verification.",
    ],
)
def test_security_topics_override_the_kind(content: str) -> None:
    for kind in ("preference", "correction", "constraint"):
        assert category_of(kind, content) is Category.SECURITY


def test_security_override_applies_to_every_kind_end_to_end() -> None:
    assert _one("I prefer SSH keys over passwords")[1] is Category.SECURITY
    assert _one("Actually, the tokens live in Vault.")[1] is Category.SECURITY
    assert _one("never paste credentials into the chat")[1] is Category.SECURITY


def test_security_words_need_word_boundaries() -> None:
    assert category_of("constraint", "The author field is required.") is Category.INSTRUCTION
    assert category_of("constraint", "Run the tokenizer first.") is Category.INSTRUCTION
    assert category_of("constraint", "Load settings from config.environment.") is not (
        Category.SECURITY
    )
    assert category_of("constraint", "Never print `AWS_SECRET_ACCESS_KEY`.") is Category.SECURITY


# ---- rewriting -------------------------------------------------------------------------------


def test_a_meaningless_trigger_is_dropped_and_a_meaningful_one_kept() -> None:
    assert _one("Actually, we use pnpm")[2] == "We use pnpm."
    assert _one("never commit .env files")[2] == "Never commit .env files."
    assert _one("Don't ever force-push")[2] == "Never force-push."


def test_fillers_are_dropped_at_both_ends() -> None:
    assert _one("ok so btw please always run black pls")[2] == "Always run black."
    assert _one("never push on Fridays, thanks!")[2] == "Never push on Fridays."
    assert _one("use pnpm from now on")[2] == "Use pnpm."


def test_code_spans_paths_and_identifiers_are_kept_intact() -> None:
    assert _one("Always run `make test -k 'not slow'` before pushing")[2] == (
        "Always run `make test -k 'not slow'` before pushing."
    )
    assert _one("never edit src/gen/models_pb2.py by hand")[2] == (
        "Never edit src/gen/models_pb2.py by hand."
    )
    assert _one("Always name fixtures in snake_case")[2] == "Always name fixtures in snake_case."


def test_a_leading_identifier_is_wrapped_not_capitalised() -> None:
    assert _one("actually tests/ is ignored by the packager")[2] == (
        "`tests/` is ignored by the packager."
    )
    assert _one("No, `src/app.py` is the entry point.")[2] == "`src/app.py` is the entry point."


def test_a_condition_keeps_its_clause_and_the_rule_follows_in_lower_case() -> None:
    assert _one("When you add a dependency, always pin its version")[2] == (
        "When you add a dependency, always pin its version."
    )


def test_overlong_contents_are_dropped_not_truncated() -> None:
    assert extract("Always run " + "the linter and " * 30 + "the tests.") == []


def test_duplicates_in_one_message_are_reported_once() -> None:
    found = extract("Never push to main. NEVER push to main!")
    assert [f.content for f in found] == ["Never push to main."]


# ---- sentences -------------------------------------------------------------------------------


def test_sentences_respect_code_spans_file_names_versions_and_abbreviations() -> None:
    text = "Run `a. b` first. Edit setup.py on 3.11, e.g. the extras. Then stop! Done?"
    assert list(sentences(text)) == [
        "Run `a. b` first.",
        "Edit setup.py on 3.11, e.g. the extras.",
        "Then stop!",
        "Done?",
    ]


def test_sentences_skip_fences_quotes_and_list_markers() -> None:
    text = "- first\n> quoted\n```\ncode. here\n```\n2) second\n* third"
    assert list(sentences(text)) == ["first", "second", "third"]


def test_found_is_a_frozen_keyword_only_struct_that_encodes() -> None:
    # A category is data, not a msgspec type: it goes over the wire by its name.
    found = extract("Actually, we use pnpm.")[0]
    encoded = msgspec.json.encode(found, enc_hook=lambda category: category.name)
    decoded = msgspec.json.decode(
        encoded, type=Found, dec_hook=lambda _, name: parse_category(name)
    )
    assert decoded == found
    with pytest.raises(AttributeError):
        found.content = "x"  # type: ignore[misc]


# ---- properties ------------------------------------------------------------------------------

_FRAGMENTS = st.sampled_from(
    [
        "always ",
        "never ",
        "Never ever ",
        "don't ",
        "do not ",
        "you must ",
        "must ",
        "I prefer ",
        "I'd rather ",
        "I like ",
        " better than ",
        "use ",
        " instead of ",
        "actually, ",
        "No, ",
        "we ",
        "the ",
        "tests ",
        "`code span` ",
        "setup.py ",
        "3.11 ",
        "e.g. ",
        ". ",
        "? ",
        "! ",
        ", and ",
        "; ",
        ": ",
        " - ",
        "\n",
        "\r\n",
        "\u2028",
        "```",
        "> ",
        "- ",
        "it ",
        "pnpm ",
        "secrets ",
        "from now on ",
        "please ",
        "`",
        "ß",
        "ǅ",
        "ª",
        "é",
        "\x85",
        "\t",
        "nit: ",
        "TODO: ",
        "feat(api): ",
        "pip says: ",
        "[nit] ",
        ", right",
        " isn't it",
        "password is ",
        "hunter2 ",
        "API_KEY=",
        "sk-live-4f9a8b7c6d5e ",
        "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2 ",
        "the same ",
        "the second option ",
        "you gave ",
        "here ",
        "is what the book says ",
        "that's the bug we're fixing ",
        "We decided: ",
        "must have run ",
        "must be able to ",
        "you should always get ",
        ", not ",
        "the function returns ",
    ]
)
_MESSAGES = st.one_of(
    st.text(max_size=300),
    st.lists(st.one_of(_FRAGMENTS, st.text(max_size=6)), max_size=40).map("".join),
)


@settings(max_examples=examples(400))
@given(_MESSAGES)
def test_extract_never_raises_and_every_found_is_storable(text: str) -> None:
    for found in extract(text):
        content = found.content
        assert len(content.splitlines()) == 1 and content == content.strip()
        assert content[0].isupper() or content[0] == "`"
        assert content.endswith(".") and len(content) <= MAX_CONTENT
        assert found.sentence and found.sentence in text
        assert found.category is category_of(found.kind, content)


@given(_MESSAGES)
def test_extract_is_deterministic(text: str) -> None:
    assert extract(text) == extract(text)


@pytest.mark.parametrize(
    "text",
    [
        "a" * 100_000,
        " " * 100_000,
        "`" * 100_000,
        "." * 100_000,
        "no, " * 25_000,
        "always " * 15_000,
        "the " * 25_000 + "must go",
        "x, and always " * 7_000,
        "I like " + "x " * 50_000 + "better",
        "I'd rather " + "than " * 20_000,
        "Always use pnpm. " * 6_000,
        "never commit secrets\n" * 5_000,
        ("a" + " " * 990 + ".\n") * 100,
        "nit: " * 20_000,
        ("never: " * 140 + "\n") * 100,
        ("the password is " * 60 + "\n") * 100,
        ("API_KEY" + "=" * 900 + "\n") * 100,
        "Ab1" * 33_000,
        ("Ab1" * 300 + ". ") * 110,
        ("A" * 990 + "b.\n") * 100,
        ("always use the same " + "x " * 480 + ".\n") * 100,
        ("prefer x is what " + "y " * 480 + ".\n") * 100,
        ("Always do x, that's the " + "y " * 480 + ".\n") * 100,
        (", " + " " * 996 + "isn't it\n") * 100,
        ("token " * 160 + ".\n") * 100,
    ],
)
def test_a_100_kb_message_is_handled(text: str) -> None:
    # Linear time by construction (bounded clauses, single-pass scanners); no timing assert.
    found = extract(text)
    assert len(found) <= 1


# ---- conversational messages (issue 36 capture) ----------------------------------------------

CONVERSATIONAL_PRECISION_FLOOR = 0.84
CONVERSATIONAL_RECALL_FLOOR = 0.80


def test_conversational_held_out_set_meets_its_floors() -> None:
    """Measured on `conversational_messages.py`, labelled before the rules changed. The base
    (6212778) scored TP=16 FP=5 FN=18; the 5 FPs of both are rules kept with their reason
    ("..., keeps the history clean") where the labels cut it (docs/extract.md)."""
    positives = [case for case in CONVERSATIONAL if case[1]]
    assert len(CONVERSATIONAL) >= 60 and 25 <= len(positives) <= 45
    assert not any(labels for _, labels in CONVERSATIONAL_NEGATIVES)
    tp, fp, fn = _score(CONVERSATIONAL)
    precision, recall = tp / (tp + fp), tp / (tp + fn)
    report = f"TP={tp} FP={fp} FN={fn} precision={precision:.3f} recall={recall:.3f}"
    print(report)  # noqa: T201
    assert precision >= CONVERSATIONAL_PRECISION_FLOOR, report
    assert recall >= CONVERSATIONAL_RECALL_FLOOR, report
    assert not any(extract(text) for text, _ in CONVERSATIONAL_NEGATIVES)


@pytest.mark.parametrize(
    ("text", "label"),
    [
        (
            "I prefer pytest fixtures over unittest setUp methods, please write the regression "
            "test that way.",
            (
                "preference",
                Category.PREFERENCE,
                "Prefer pytest fixtures over unittest setUp methods.",
            ),
        ),
        (
            "actually, we should use Decimal for money everywhere, not float",
            (
                "constraint",
                Category.INSTRUCTION,
                "We should use Decimal for money everywhere, not float.",
            ),
        ),
        (
            "Never commit the .env file, it has the Stripe keys.",
            ("constraint", Category.SECURITY, "Never commit the .env file."),
        ),
        (
            "Always run alembic migrations with --sql first to review them.",
            (
                "constraint",
                Category.INSTRUCTION,
                "Always run alembic migrations with --sql first to review them.",
            ),
        ),
        (
            "Don't key it by IP, key the rate limit by event type.",
            ("constraint", Category.INSTRUCTION, "Key the rate limit by event type, not by IP."),
        ),
    ],
)
def test_the_new_users_session_sentences_are_found(
    text: str, label: tuple[Kind, Category, str]
) -> None:
    assert _one(text) == label


@pytest.mark.parametrize(
    "text",
    [
        "Don't rename the variable, rename the function.",
        "Run only the unit tests, not the e2e ones.",
        "Use the legacy client, it is fine for now.",
        "Always use it, to be safe.",
        "let's look at the importer first",
        "he said we should use Decimal everywhere",
        "we need to fix the import in api.py",
        "Never mind, the same thing happened again.",
    ],
)
def test_conversational_look_alikes_yield_nothing(text: str) -> None:
    assert extract(text) == []
