"""Held-out conversational messages for `memd.core.extract.pipeline` (issue 36, capture).

What people type to a coding agent mid-session: lower-case starts, no final punctuation,
discourse markers ("ok so", "btw", "fwiw", "actually"), a rule followed by a comma clause that
gives a reason or a one-off request, purpose clauses ("... to catch drift"), "don't X, Y"
corrections. Half hold a lasting preference, correction or constraint; half do not (one-off
requests, questions, chit-chat, hypotheticals, reported speech).

Written and labelled before the conversational rules were changed, and not edited to fit them
(docs/extract.md has the figures of the base and of the new rules). Labels follow the
documented rewriting rules: `(kind, category, content)`; an empty tuple means "store nothing".
A trailing reason or request after a comma is not part of a memory (as "Never delete the logs -
they are needed for audits." keeps `Never delete the logs.`); a "don't X, use Y" correction is
kept whole.
"""

from __future__ import annotations

from typing import Final

from tests.core.extract.extract_messages import SECURITY, Case, cons, corr, pref

CONVERSATIONAL_POSITIVES: Final[tuple[Case, ...]] = (
    (
        "i prefer named tuples over plain dicts for return values, makes the call sites "
        "easier to read",
        (pref("Prefer named tuples over plain dicts for return values."),),
    ),
    (
        "ok so we always squash merge into main, keeps the history clean",
        (cons("We always squash merge into main."),),
    ),
    (
        "btw never touch the generated protobuf files, they get overwritten on every build",
        (cons("Never touch the generated protobuf files."),),
    ),
    (
        "Always use UTC for timestamps in the API, the mobile clients convert them",
        (pref("Always use UTC for timestamps in the API."),),
    ),
    ("actually we use poetry, not pip-tools", (corr("We use poetry, not pip-tools."),)),
    (
        "don't use print statements anywhere in the library, use the logger",
        (pref("Do not use print statements anywhere in the library, use the logger."),),
    ),
    (
        "Always run alembic check before you push a migration, to catch drift",
        (cons("Always run alembic check before you push a migration."),),
    ),
    (
        "never log full request bodies to keep PII out of the logs",
        (cons("Never log full request bodies to keep PII out of the logs.", SECURITY),),
    ),
    (
        "we never run migrations from the app container, always from the CI job",
        (cons("We never run migrations from the app container, always from the CI job."),),
    ),
    (
        "Use httpx instead of requests for new code, it supports async",
        (pref("Use httpx instead of requests for new code."),),
    ),
    (
        "I'd rather keep the SQL in .sql files than inline strings",
        (pref("Prefer to keep the SQL in .sql files rather than inline strings."),),
    ),
    (
        "please always add a changelog entry when you touch the public API",
        (cons("Always add a changelog entry when you touch the public API."),),
    ),
    (
        "no, we deploy the worker with systemd, not docker",
        (corr("We deploy the worker with systemd, not docker."),),
    ),
    (
        "Don't mock the database in integration tests, use the test container",
        (pref("Do not mock the database in integration tests, use the test container."),),
    ),
    (
        "going forward pls put new scripts under tools/ not scripts/",
        (cons("Put new scripts under tools/ not scripts/."),),
    ),
    (
        "Never commit the .env.local file, the deploy keys are in it",
        (cons("Never commit the .env.local file.", SECURITY),),
    ),
    (
        "fwiw I prefer small focused commits over one big one",
        (pref("Prefer small focused commits over one big one."),),
    ),
    (
        "always pin docker base images to a digest so builds are reproducible",
        (cons("Always pin docker base images to a digest so builds are reproducible."),),
    ),
    (
        "Make sure you never call the payments API from tests, use the sandbox client",
        (cons("Never call the payments API from tests, use the sandbox client."),),
    ),
    (
        "for the record, our staging DB is on port 5433, not 5432",
        (corr("Our staging DB is on port 5433, not 5432."),),
    ),
    (
        "We use ruff for linting, not flake8, so don't add a .flake8 file",
        (corr("We use ruff for linting, not flake8."),),
    ),
    (
        "the API must always return ISO 8601 dates",
        (cons("The API must always return ISO 8601 dates."),),
    ),
    (
        "you should always run make lint before committing",
        (cons("Always run make lint before committing."),),
    ),
    (
        "Prefer composition to mixins in the service layer, mixins made the old code hard to "
        "follow",
        (pref("Prefer composition to mixins in the service layer."),),
    ),
    (
        "actually, let's always use `uv run` for scripts",
        (pref("Always use `uv run` for scripts."),),
    ),
    (
        "Don't ever hardcode the tenant id, read it from the request context",
        (cons("Never hardcode the tenant id."),),
    ),
    (
        "btw the frontend lives in web/, not client/",
        (corr("The frontend lives in web/, not client/."),),
    ),
    (
        "From now on write commit messages in the imperative mood",
        (cons("Write commit messages in the imperative mood."),),
    ),
    (
        "I like black's defaults better than our old yapf config",
        (pref("Prefer black's defaults over our old yapf config."),),
    ),
    (
        "no no, we switched to GitHub Actions last year, don't look at the Jenkinsfile",
        (corr("We switched to GitHub Actions last year."),),
    ),
    ("Never use float for money, use Decimal", (pref("Never use float for money, use Decimal."),)),
    (
        "we should never expose internal ids in URLs, use the public slug",
        (cons("We should never expose internal ids in URLs, use the public slug."),),
    ),
    (
        "ok so always write the migration and the model change in the same commit",
        (cons("Always write the migration and the model change in the same commit."),),
    ),
    (
        "Keep all feature flags in flags.yaml, not in env vars",
        (cons("Keep all feature flags in flags.yaml, not in env vars."),),
    ),
)

CONVERSATIONAL_NEGATIVES: Final[tuple[Case, ...]] = (
    ("please run the tests again", ()),
    ("can you fix the failing import in api/routes.py", ()),
    ("let's look at the importer first", ()),
    ("ok so what does the retry decorator do", ()),
    ("he said we should use Decimal everywhere but I'm not convinced", ()),
    ("if we ever move to Postgres we'd need to rewrite the migrations", ()),
    ("thanks, that looks good", ()),
    ("actually, never mind, the tests pass now", ()),
    ("Don't change the signature, just add a default argument", ()),
    ("Run only the unit tests, not the e2e ones", ()),
    ("no, revert that last change", ()),
    ("use the second approach you suggested", ()),
    ("Sarah thinks we should always use tabs", ()),
    ("why do we never run the migrations in CI?", ()),
    ("I tried pytest-xdist yesterday and it was flaky", ()),
    ("can we always default to UTC or does that break the reports", ()),
    ("btw the build is green again", ()),
    ("don't worry about the lint warnings for now", ()),
    ("Please write the regression test for the date parsing bug.", ()),
    ("Never mind, I found the problem, it was a stale cache", ()),
    ("lol that's a funny error message", ()),
    ("maybe we should use Redis for this, not sure", ()),
    ("Add a docstring to the new function, it's missing one", ()),
    ("the function returns None, not an empty list", ()),
    ("use a for loop here instead of the comprehension", ()),
    ("actually, can you also update the README", ()),
    ("I'd prefer if you showed me the diff first", ()),
    ("Don't push yet, I want to review it", ()),
    ("The tests should pass after this change, right", ()),
    ("So the linter says we must not use bare excepts, is that true?", ()),
    ("If you have to touch the auth code, ping me first", ()),
    ("ok so first rename the module, then fix the imports", ()),
    ("We used to deploy with Fabric, not Ansible", ()),
    ("Don't rename the variable, rename the function", ()),
    ("can you add type hints to the new module, please", ()),
    ("Use the logger from utils in this function, not print", ()),
)

CONVERSATIONAL: Final[tuple[Case, ...]] = CONVERSATIONAL_POSITIVES + CONVERSATIONAL_NEGATIVES
