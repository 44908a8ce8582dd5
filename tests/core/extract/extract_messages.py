"""Labelled messages for `memd.core.extract.pipeline`: what a developer types, and what should
be kept.

Written before the extractor's rules were tuned, and not edited to fit them. Each message is
labelled with the memories a careful human would store under the documented rewriting rules
(docs/extract.md): `(kind, category, content)`. An empty tuple means "store nothing": the
message is a look-alike (question, hypothetical, reported speech, filler, a one-off task
instruction, a deictic "it"/"that" that means nothing out of context, ...).

Some labels are known misses on purpose (typos in the trigger word, rules stated mid-sentence,
polite questions): they stay, so the recall figure is honest.

Batches (docs/extract.md has the figures of each):
- `POSITIVES`, `NEGATIVES`: round-1 tuning, written before the first rules.
- `HELD_OUT_POSITIVES`, `HELD_OUT_NEGATIVES` (`HELD_OUT_1`): written after the first rules,
  measured once before looking.
- `REVIEW_NEGATIVES`, `LOOKALIKES_2`, `POSITIVES_2`: round-2 tuning, the review's false
  positives verbatim plus new look-alikes and real rules with the same surface words, all
  labelled before the second round of rules.
- `HELD_OUT_2_POSITIVES`, `HELD_OUT_2_NEGATIVES` (`HELD_OUT_2`): written before the second
  round of rules, measured once, then used to check the fixes.
- `HELD_OUT_3`: written after the second round of rules, measured once.
"""

from __future__ import annotations

from typing import Final

from memd.core.extract.pipeline import Kind
from memd.core.format.categories import Category

Label = tuple[Kind, Category, str]
Case = tuple[str, tuple[Label, ...]]

INSTRUCTION: Final = Category.INSTRUCTION
SECURITY: Final = Category.SECURITY


def pref(content: str, category: Category = Category.PREFERENCE) -> Label:
    """A preference label (Preference unless it is about security)."""
    return ("preference", category, content)


def corr(content: str, category: Category = Category.DECISION) -> Label:
    """A correction label (Decision unless it is about security)."""
    return ("correction", category, content)


def cons(content: str, category: Category = INSTRUCTION) -> Label:
    """A constraint label (Instruction unless it is about security)."""
    return ("constraint", category, content)


POSITIVES: Final[tuple[Case, ...]] = (
    ("I prefer tabs over spaces.", (pref("Prefer tabs over spaces."),)),
    (
        "Actually, we deploy with Helm, not raw manifests.",
        (corr("We deploy with Helm, not raw manifests."),),
    ),
    ("never commit .env files", (cons("Never commit .env files.", SECURITY),)),
    (
        "Always use `pnpm` for installs, never npm.",
        (pref("Always use `pnpm` for installs, never npm."),),
    ),
    (
        "no, the tests live in tests/unit, not tests/.",
        (corr("The tests live in tests/unit, not tests/."),),
    ),
    (
        "pls always run `make lint` before you push",
        (cons("Always run `make lint` before you push."),),
    ),
    (
        "I'd rather use pytest fixtures than setUp methods.",
        (pref("Prefer to use pytest fixtures rather than setUp methods."),),
    ),
    (
        "Use ruff instead of flake8 + black in this repo.",
        (pref("Use ruff instead of flake8 + black in this repo."),),
    ),
    (
        "ok so I like f-strings better than .format() calls",
        (pref("Prefer f-strings over .format() calls."),),
    ),
    (
        "You must not log request bodies, they can contain PII.",
        (cons("Do not log request bodies, they can contain PII.", SECURITY),),
    ),
    ("Don't ever force-push to main.", (cons("Never force-push to main."),)),
    ("Actually our API returns snake_case keys.", (corr("Our API returns snake_case keys."),)),
    (
        "that's wrong, the staging DB runs on port 5433",
        (corr("The staging DB runs on port 5433."),),
    ),
    (
        "Never ever hardcode API keys in the source.",
        (cons("Never hardcode API keys in the source.", SECURITY),),
    ),
    (
        "Make sure to always add type hints to public functions.",
        (cons("Always add type hints to public functions."),),
    ),
    (
        "Thanks, that looks good. From now on please use conventional commit messages "
        "(feat:, fix:, etc.) for every commit.",
        (pref("Use conventional commit messages (feat:, fix:, etc.) for every commit."),),
    ),
    ("We use pnpm, not npm. don't run npm install.", (corr("We use pnpm, not npm."),)),
    (
        "no, actually the config lives in pyproject.toml, not setup.cfg",
        (corr("The config lives in pyproject.toml, not setup.cfg."),),
    ),
    (
        "Please never use `print` for logging; use the logger.",
        (pref("Never use `print` for logging."),),
    ),
    ("All timestamps must be stored in UTC.", (cons("All timestamps must be stored in UTC."),)),
    (
        "you have to run `alembic upgrade head` before the tests every time, otherwise they fail",
        (cons("Run `alembic upgrade head` before the tests every time, otherwise they fail."),),
    ),
    (
        "I prefer small PRs, ideally under 300 lines.",
        (pref("Prefer small PRs, ideally under 300 lines."),),
    ),
    ("Actually, the frontend uses Vite now.", (corr("The frontend uses Vite now."),)),
    (
        "never store passwords in plain text",
        (cons("Never store passwords in plain text.", SECURITY),),
    ),
    ("Going forward, always squash merge PRs.", (cons("Always squash merge PRs."),)),
    ("i'd prefer double quotes for strings", (pref("Prefer double quotes for strings."),)),
    (
        "Use `httpx` rather than `requests` for new code.",
        (pref("Use `httpx` rather than `requests` for new code."),),
    ),
    ("Nope, we're on Python 3.12, not 3.11.", (corr("We're on Python 3.12, not 3.11."),)),
    (
        "Do not ever commit directly to the release branch.",
        (cons("Never commit directly to the release branch."),),
    ),
    (
        "Important: never run migrations against prod from your machine.",
        (cons("Never run migrations against prod from your machine."),),
    ),
    (
        "don't use relative imports anywhere in the package",
        (pref("Do not use relative imports anywhere in the package."),),
    ),
    (
        "API tokens must never be written to logs.",
        (cons("API tokens must never be written to logs.", SECURITY),),
    ),
    (
        "Actually, the service account only has read permissions on the bucket.",
        (corr("The service account only has read permissions on the bucket.", SECURITY),),
    ),
    ("we always rebase, never merge", (cons("We always rebase, never merge."),)),
    (
        "Looks good! One thing: I prefer early returns over nested ifs. "
        "Can you refactor `parse_config`?",
        (pref("Prefer early returns over nested ifs."),),
    ),
    ("Use `uv` not pip to install deps pls", (pref("Use `uv` not pip to install deps."),)),
    ("No, we don't support Windows.", (corr("We don't support Windows."),)),
    ("I like tabs better.", (pref("Prefer tabs."),)),
    (
        "make sure you never expose the admin endpoints without auth",
        (cons("Never expose the admin endpoints without auth.", SECURITY),),
    ),
    ("Always write tests for bug fixes.", (cons("Always write tests for bug fixes."),)),
    # Known miss: a typo in the trigger word itself.
    ("alwyas use black for formatting", (pref("Always use black for formatting."),)),
    (
        "never use `any` in TypeScript code, use `unknown` instead",
        (pref("Never use `any` in TypeScript code, use `unknown` instead."),),
    ),
    (
        "The API must stay backwards compatible with v1 clients.",
        (cons("The API must stay backwards compatible with v1 clients."),),
    ),
    (
        "Actually, we moved to GitHub Actions last year, so ignore the Jenkinsfile.",
        (corr("We moved to GitHub Actions last year, so ignore the Jenkinsfile."),),
    ),
    (
        "I prefer not to use ORMs; raw SQL with sqlc is fine.",
        (pref("Prefer not to use ORMs."),),
    ),
    (
        "you need to always bump the version in `pyproject.toml` when you release",
        (cons("Always bump the version in `pyproject.toml` when you release."),),
    ),
    (
        "Rule of thumb: prefer composition over inheritance.",
        (pref("Prefer composition over inheritance."),),
    ),
    (
        "do not use `datetime.now()` without a timezone in this codebase",
        (pref("Do not use `datetime.now()` without a timezone in this codebase."),),
    ),
    (
        "Never put secrets in the Dockerfile.",
        (cons("Never put secrets in the Dockerfile.", SECURITY),),
    ),
    ("no — the prod cluster is in eu-west-1", (corr("The prod cluster is in eu-west-1."),)),
    (
        "Always prefer composition to inheritance",
        (pref("Always prefer composition to inheritance."),),
    ),
    (
        "We use Postgres, not MySQL, for everything.",
        (corr("We use Postgres, not MySQL, for everything."),),
    ),
    (
        "Actually the docs are built with mkdocs, not sphinx",
        (corr("The docs are built with mkdocs, not sphinx."),),
    ),
    (
        "please make sure to always run `pre-commit run --all-files` before committing",
        (cons("Always run `pre-commit run --all-files` before committing."),),
    ),
    ("we never deploy on Fridays.", (cons("We never deploy on Fridays."),)),
    (
        "I'd rather not add new dependencies unless really needed.",
        (pref("Prefer not to add new dependencies unless really needed."),),
    ),
    (
        "don't ever print the JWT, even in debug logs",
        (cons("Never print the JWT, even in debug logs.", SECURITY),),
    ),
    ("Commit messages must be in English.", (cons("Commit messages must be in English."),)),
    (
        "Hey, quick thing - use 4 spaces instead of tabs in YAML files.",
        (pref("Use 4 spaces instead of tabs in YAML files."),),
    ),
    (
        "Actually, the `User` model is in `app/models/user.py`.",
        (corr("The `User` model is in `app/models/user.py`."),),
    ),
    (
        "ALWAYS use parameterized queries, never string formatting for SQL.",
        (pref("Always use parameterized queries, never string formatting for SQL."),),
    ),
    ("You must use the `Decimal` type for money.", (cons("Use the `Decimal` type for money."),)),
    (
        "Actually, we're standardising on Go for new services.",
        (corr("We're standardising on Go for new services."),),
    ),
    (
        "i prefer descriptive variable names, not single letters",
        (pref("Prefer descriptive variable names, not single letters."),),
    ),
    (
        "Make sure you never commit the `.terraform` directory.",
        (cons("Never commit the `.terraform` directory."),),
    ),
    (
        "Never run `rm -rf` on anything outside the build dir.",
        (cons("Never run `rm -rf` on anything outside the build dir."),),
    ),
    (
        "From now on, write docstrings in Google style.",
        (cons("Write docstrings in Google style."),),
    ),
    (
        "Customer emails are PII and must never be logged.",
        (cons("Customer emails are PII and must never be logged.", SECURITY),),
    ),
    (
        "I strongly prefer explicit `Optional[...]` hints over implicit None defaults.",
        (pref("Prefer explicit `Optional[...]` hints over implicit None defaults."),),
    ),
    ("No, the CI runs on self-hosted runners.", (corr("The CI runs on self-hosted runners."),)),
    (
        "never use `git push --force` on shared branches, use `--force-with-lease`",
        (pref("Never use `git push --force` on shared branches, use `--force-with-lease`."),),
    ),
    (
        "Please don't commit anything in `dist/` ever.",
        (cons("Do not commit anything in `dist/` ever."),),
    ),
    (
        "You should always run the formatter before committing.",
        (cons("Always run the formatter before committing."),),
    ),
    (
        "We're a Django shop, so stick with the Django ORM rather than SQLAlchemy.",
        (pref("Stick with the Django ORM rather than SQLAlchemy."),),
    ),
    (
        "The database password must be read from the environment, never hardcoded.",
        (
            cons(
                "The database password must be read from the environment, never hardcoded.",
                SECURITY,
            ),
        ),
    ),
    (
        "Actually, all the env vars are loaded through `settings.py`.",
        (corr("All the env vars are loaded through `settings.py`."),),
    ),
    ("pls use type hints everywhere", (pref("Use type hints everywhere."),)),
    (
        "Please use 2-space indentation for all YAML files",
        (pref("Use 2-space indentation for all YAML files."),),
    ),
    ("I'd rather you didn't use mocks", (pref("Prefer not to use mocks."),)),
    (
        "No, always use the staging bucket for tests.",
        (pref("Always use the staging bucket for tests."),),
    ),
    ("never push to main directly pls", (cons("Never push to main directly."),)),
    (
        "No, `src/app.py` is the entry point, not `main.py`.",
        (corr("`src/app.py` is the entry point, not `main.py`."),),
    ),
    (
        "actually tests/ is ignored by the packager",
        (corr("`tests/` is ignored by the packager."),),
    ),
    (
        "Actually, we name all DB columns in snake_case.",
        (corr("We name all DB columns in snake_case."),),
    ),
    # Known miss: the rule is stated as a polite question.
    (
        "Could you always run `npm test` before saying something is done?",
        (cons("Always run `npm test` before saying something is done."),),
    ),
    # Known miss: the rule sits after a subordinate clause with its own subject.
    (
        "The user table has PII, so you must never copy it to staging.",
        (cons("Never copy the user table to staging.", SECURITY),),
    ),
    (
        "dont ever use `eval` on user input",
        (pref("Never use `eval` on user input."),),
    ),
    (
        "When you add a dependency, always pin its version.",
        (cons("When you add a dependency, always pin its version."),),
    ),
    # Several memories in one message.
    (
        "Two things: always use `pathlib` instead of `os.path`, and never swallow exceptions "
        "silently.",
        (
            pref("Always use `pathlib` instead of `os.path`."),
            cons("Never swallow exceptions silently."),
        ),
    ),
    (
        "I prefer pytest over unittest. Also, never mock the database in integration tests.",
        (
            pref("Prefer pytest over unittest."),
            cons("Never mock the database in integration tests."),
        ),
    ),
    (
        "Actually we use Poetry, not pip-tools. And please don't ever commit `poetry.lock` "
        "changes without bumping the version.",
        (
            corr("We use Poetry, not pip-tools."),
            cons("Never commit `poetry.lock` changes without bumping the version."),
        ),
    ),
    (
        "Some ground rules for this repo:\n"
        "- always use absolute imports\n"
        "- never commit credentials\n"
        "- you must run `tox` before pushing",
        (
            pref("Always use absolute imports."),
            cons("Never commit credentials.", SECURITY),
            cons("Run `tox` before pushing."),
        ),
    ),
    (
        "Great, merged. btw the CI secrets are rotated monthly, so never copy them into "
        "scripts.\nAlso I'd prefer shorter commit subjects, under 50 chars.",
        # Known miss: "them" needs the clause before it to mean anything.
        (
            cons("Never copy the CI secrets into scripts.", SECURITY),
            pref("Prefer shorter commit subjects, under 50 chars."),
        ),
    ),
)

# Held out: written after the rules, run once, never tuned on (reported separately).
HELD_OUT_POSITIVES: Final[tuple[Case, ...]] = (
    ("Actually, we host everything on Fly.io.", (corr("We host everything on Fly.io."),)),
    (
        "I would prefer smaller functions with clear names.",
        (pref("Prefer smaller functions with clear names."),),
    ),
    (
        "never log the full Authorization header",
        (cons("Never log the full Authorization header.", SECURITY),),
    ),
    (
        "Use snake_case for Python and camelCase for TypeScript, always.",
        (pref("Use snake_case for Python and camelCase for TypeScript, always."),),
    ),
    ("no, our staging env is on k8s, not ECS", (corr("Our staging env is on k8s, not ECS."),)),
    (
        "You must always write migrations as reversible.",
        (cons("Always write migrations as reversible."),),
    ),
    ("pls don't ever touch the `legacy/` folder", (cons("Never touch the `legacy/` folder."),)),
    (
        "I'd rather keep the CLI thin and put logic in the core.",
        (pref("Prefer to keep the CLI thin and put logic in the core."),),
    ),
    ("Every endpoint must validate its input.", (cons("Every endpoint must validate its input."),)),
    (
        "Actually the cache TTL is 5 minutes, not 1 hour.",
        (corr("The cache TTL is 5 minutes, not 1 hour."),),
    ),
    (
        "Make sure to never return stack traces to clients.",
        (cons("Never return stack traces to clients."),),
    ),
    (
        "we never squash commits on release branches",
        (cons("We never squash commits on release branches."),),
    ),
    (
        "Always pin dependency versions in requirements.txt.",
        (cons("Always pin dependency versions in requirements.txt."),),
    ),
    (
        "Wrong — the worker reads from the `jobs` queue.",
        (corr("The worker reads from the `jobs` queue."),),
    ),
    (
        "I like explicit imports more than star imports.",
        (pref("Prefer explicit imports over star imports."),),
    ),
    ("never use mutable default arguments", (pref("Never use mutable default arguments."),)),
    (
        "Going forward, tag every release with a signed tag.",
        (cons("Tag every release with a signed tag."),),
    ),
    (
        "Secrets must be loaded from Vault, never from files in the repo.",
        (cons("Secrets must be loaded from Vault, never from files in the repo.", SECURITY),),
    ),
    ("Do not ever disable SSL verification.", (cons("Never disable SSL verification.", SECURITY),)),
    ("No, the monorepo uses Nx for builds.", (corr("The monorepo uses Nx for builds."),)),
)


NEGATIVES: Final[tuple[Case, ...]] = (
    ("Should we always use pnpm?", ()),
    ("do you prefer tabs or spaces for this file", ()),
    ("If you must use a global, at least document it.", ()),
    ("In case it never returns, add a timeout.", ()),
    ("The function never returns null, so the check is redundant.", ()),
    ("The test must have failed because of the fixture.", ()),
    ("It actually worked after the restart!", ()),
    ("I actually tried that yesterday and it broke the build.", ()),
    ("No, thanks.", ()),
    ("Actually, never mind.", ()),
    ("no problem, take your time", ()),
    ("Don't run that now, we're in a code freeze.", ()),
    ("no, not yet", ()),
    ("always.", ()),
    ("never mind, I figured it out", ()),
    ("The linter says you must add a docstring here.", ()),
    ("John prefers tabs but I don't care.", ()),
    ("Actually, can you also add a test for the empty case?", ()),
    ("Don't worry about the failing e2e test for now.", ()),
    ("That's wrong, but close — try again.", ()),
    ("No worries!", ()),
    ("Hmm, it must be a caching issue.", ()),
    ("Why does it always fail on CI?", ()),
    ("I never know which venv is active lol", ()),
    ("Actually that's a good point.", ()),
    ("No, that's fine, leave it.", ()),
    ("Use the first option.", ()),
    ("we tried using pnpm once but it never worked with our monorepo", ()),
    ("You must be joking, that's 500 lines.", ()),
    ("Never say never, right?", ()),
    ("Make sure the server is running before you test it.", ()),
    ("It should always be under 100ms, but it isn't.", ()),
    ("The docs say never to call `close()` twice.", ()),
    ("Do you always need to run migrations first?", ()),
    ("If we ever switch to Postgres we'd have to rewrite this.", ()),
    ("Not sure, maybe try the other branch?", ()),
    ("No, I meant the other file.", ()),
    ("Actually I think the old version was better.", ()),
    ("Nope, still failing with the same error.", ()),
    ("Please don't change the public API in this PR.", ()),
    ("Always a pleasure working with you, thanks!", ()),
    ("never again am I using webpack lol", ()),
    ("ok actually the fix worked, the tests are green now", ()),
    ("no, use the other one", ()),
    ("Actually, let's rename it to `load_config` instead.", ()),
    ("Use `foo` instead of `bar` in this function.", ()),
    ("the build must pass before I can merge, right?", ()),
    ("You don't have to add tests for this one.", ()),
    ("Should've used a dict there, never mind.", ()),
    ("it's not the parser but the lexer that's broken", ()),
    ("The bug is in the cache layer, not the DB.", ()),
    ("Did you always use that pattern, or just here?", ()),
    ("The README says:\n> Always run `make bootstrap` first.\nis that still true?", ()),
    ("Here's the error:\n```\nError: you must never call this twice\n```\nany idea?", ()),
    ("No, the deploy is broken again.", ()),
    # Deictic subject: "it" means nothing once stored.
    ("actually its `make test-all` not `make test` for the full suite", ()),
    ("Never do that again.", ()),
    ("You need to fix the import in `utils.py`.", ()),
    ("Use the staging config for this run.", ()),
    ("I'd rather not, it's late.", ()),
    ("no no no, that's not what I asked", ()),
    ("My manager always says we must ship on Fridays.", ()),
    ("Maybe we should always use Docker for this? Not sure.", ()),
)

HELD_OUT_NEGATIVES: Final[tuple[Case, ...]] = (
    ("Actually, that makes sense.", ()),
    ("No, wait, let me check something first.", ()),
    ("always the same flaky test, ugh", ()),
    ("Could you never mind the last message?", ()),
    ("I think you must have misread the stack trace.", ()),
    ("The CI must be running an old image.", ()),
    ("Never had this problem before.", ()),
    ("you need to restart the dev server after that change", ()),
    ("Don't forget to update the changelog.", ()),
    ("Nope, that didn't help either.", ()),
    ("Prefer whichever is faster for now.", ()),
    ("Use `--verbose` so I can see the output.", ()),
    ("We should always use feature flags, right?", ()),
    ("The spec says the client must retry on 503.", ()),
    ("Actually, I was wrong about the port.", ()),
    ("No, don't merge yet.", ()),
    ("If it always returns 200, the health check is useless.", ()),
    ("It never fails locally, only on CI.", ()),
    ("Actually this is really nice, thanks!", ()),
    ("no. just no.", ()),
    ("The old code always used tabs.", ()),
    ("You have to be kidding me.", ()),
    ("Never seen this error before, any ideas?", ()),
    ("Always fun debugging CSS, huh.", ()),
)


# ---- second round (review of the first version) ---------------------------------------------
# Written and labelled before the second round of rules, then used to tune them.

# Found by the review: every one of these was extracted by the first version.
REVIEW_NEGATIVES: Final[tuple[Case, ...]] = (
    # A secret value would land in security.md, which is injected into every prompt.
    ("Always use the API key sk-live-4f9a8b7c6d5e for staging.", ()),
    ("Actually, the staging DB password is Tr0ub4dor&3.", ()),
    (
        "Use AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY instead of the old "
        "one.",
        (),
    ),
    # A label or a report before a colon.
    ("It keeps failing with: never received a response from upstream", ()),
    ("pip says: you must give at least one requirement to install", ()),
    ("Tests: always green locally.", ()),
    ("TODO: always validate input in the new endpoint", ()),
    ("nit: prefer f-strings here", ()),
    ("Nit: use a context manager here instead of try/finally.", ()),
    ("Refactor: use dataclasses instead of namedtuples in models.py", ()),
    # Contrasts and corrections that report what code does.
    ("The daemon uses the old socket, not the new one.", ()),
    ("The logs show the job runs twice, not once.", ()),
    ("So the frontend calls the v1 endpoint, not v2 — that explains the 404.", ()),
    ("`foo()` returns a dict, not a list, in the old version.", ()),
    ("Hmm, the compose file uses postgres:13, not 15.", ()),
    ("Nope. The script reads the wrong env var.", ()),
    ("No, the parser returns an empty list there.", ()),
    ("No, the function depends on the global config.", ()),
    ("Actually the function returns a tuple.", ()),
    ("Actually, we use the same token for staging.", ()),
    # Modals that are not rules for the agent.
    ("The migration must have run twice.", ()),
    ("You should always get a 200 from the health endpoint.", ()),
    ("The scheduler must run jobs in order, right", ()),
    ("Sessions must be invalidated on logout -- that's the bug we're fixing.", ()),
    ("The user must not be able to delete their own admin role.", ()),
    # Choices within the conversation, quotes, contradicted preferences.
    ("I prefer the second option you gave.", ()),
    ("I like the first approach better.", ()),
    ("Prefer composition over inheritance is what the book says.", ()),
    ("I like pytest better than unittest, but the team uses unittest.", ()),
    # About the agent's steps: "Prefer to review the diff before you commit" would lose who
    # reviews, so first-person preferences that mention "you" are dropped (docs/extract.md).
    ("I prefer to review the diff before you commit.", ()),
)

# More look-alikes in the same families, written for the second round.
LOOKALIKES_2: Final[tuple[Case, ...]] = (
    # code review comments
    ("nit: always sort imports alphabetically", ()),
    ("Suggestion: use `enumerate` instead of a manual counter here.", ()),
    ("Review: never mutate the input list in place", ()),
    # commit messages
    ("fix: never retry on 4xx responses", ()),
    ("chore: use ruff instead of flake8", ()),
    ("feat(api): always return ISO timestamps", ()),
    ("docs: prefer the async client in examples", ()),
    # log excerpts and tool output quoted inline
    ("Output: you must restart the shell for changes to take effect", ()),
    ("The installer printed: always run as administrator", ()),
    ("Traceback says: never awaited coroutine", ()),
    ("log: never retrying, giving up after 5 attempts", ()),
    # bug reports and observations about code
    ("The worker uses Redis 6, not 7, on the old cluster.", ()),
    ("No, the test fixture creates two users, not one.", ()),
    ("Actually the loop reads the file twice.", ()),
    ("Nope, the handler swallows the exception.", ()),
    ("The logs say the worker never acks the message.", ()),
    ("Looks like the nightly job always times out at 2am.", ()),
    # epistemic and expectation modals
    ("The build must have used the cached layer.", ()),
    ("You must've pushed to the wrong branch.", ()),
    ("The import must have broken when we moved the package.", ()),
    ("You should never see this warning in production.", ()),
    ("You should always receive an email after signing up.", ()),
    ("The endpoint must return JSON in that case, right", ()),
    ("The config must be reloaded on SIGHUP, correct", ()),
    # product requirements
    ("Admins must be able to export all invoices.", ()),
    ("Customers must not be able to cancel after shipping.", ()),
    ("Guests must be redirected to the login page -- that's the ticket I'm on.", ()),
    # choices among what the agent offered
    ("I prefer the second one.", ()),
    ("I'd prefer the last version you sent.", ()),
    ("I like that solution more.", ()),
    ("Go with the third option.", ()),
    ("Use the approach you proposed, but keep the old name.", ()),
    ("I prefer your first suggestion.", ()),
    # quoting docs and books
    ('"Never use a mutable default" is what the Python docs say.', ()),
    ("The style guide says: prefer composition over inheritance.", ()),
    ("The docs recommend: always set a timeout on requests.", ()),
    # contradicted in the same sentence
    ("I like Django better than Flask, but we're stuck with Flask.", ()),
    # secret values
    ("Secrets: the staging API token is ghp_Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa", ()),
    ("Never use the prod key AKIAJ7Q2XK4M5N6P7R8S in local scripts.", ()),
    ("Always set DATABASE_PASSWORD=s3cr3t-pa55 in your local .env.", ()),
    ("The Slack bot token is xoxb-123456789012-abcdefABCDEF, never share it.", ()),
    ("Our JWT secret: 9f8e7d6c5b4a39281706f5e4d3c2b1a0ffee", ()),
    ("Use this key for staging: -----BEGIN OPENSSH PRIVATE KEY-----", ()),
)

# The same surface words used for real rules.
POSITIVES_2: Final[tuple[Case, ...]] = (
    ("From now on, prefer f-strings.", (pref("Prefer f-strings."),)),
    ("We decided: use dataclasses for models.", (pref("Use dataclasses for models."),)),
    ("Note for the future: never push to main.", (cons("Never push to main."),)),
    (
        "Going forward, use a context manager instead of try/finally for locks.",
        (pref("Use a context manager instead of try/finally for locks."),),
    ),
    (
        "Actually, we use dataclasses instead of namedtuples in all models.",
        (corr("We use dataclasses instead of namedtuples in all models."),),
    ),
    (
        "No, our backend calls the v2 endpoints everywhere.",
        (corr("Our backend calls the v2 endpoints everywhere."),),
    ),
    (
        "Convention: always validate input at the API boundary.",
        (cons("Always validate input at the API boundary."),),
    ),
    (
        "We always run the tests locally before pushing, not just on CI.",
        (cons("We always run the tests locally before pushing, not just on CI."),),
    ),
    (
        "You must never log the raw password; hash it first.",
        (cons("Never log the raw password.", SECURITY),),
    ),
    (
        "Never commit API keys: use the secrets manager instead.",
        (cons("Never commit API keys.", SECURITY),),
    ),
    (
        "We moved to uv, not pip-tools, for all Python projects.",
        (corr("We moved to uv, not pip-tools, for all Python projects."),),
    ),
    (
        "Always use `secrets.token_urlsafe()` for reset tokens.",
        (pref("Always use `secrets.token_urlsafe()` for reset tokens.", SECURITY),),
    ),
    (
        "Never put the `AWS_SECRET_ACCESS_KEY` in the repo; read it from the environment.",
        (cons("Never put the `AWS_SECRET_ACCESS_KEY` in the repo.", SECURITY),),
    ),
    (
        "Tip: we never mock the database in integration tests.",
        (cons("We never mock the database in integration tests."),),
    ),
)

# Second held-out batch: written before the second round of rules, run once, then kept.
HELD_OUT_2_POSITIVES: Final[tuple[Case, ...]] = (
    (
        "From now on, never paste tokens into commit messages.",
        (cons("Never paste tokens into commit messages.", SECURITY),),
    ),
    (
        "We decided to keep all config in TOML, not YAML.",
        (corr("We decided to keep all config in TOML, not YAML."),),
    ),
    (
        "Note: we always run the e2e suite before tagging a release.",
        (cons("We always run the e2e suite before tagging a release."),),
    ),
    (
        "Please always use `logging.getLogger(__name__)`, not the root logger.",
        (pref("Always use `logging.getLogger(__name__)`, not the root logger."),),
    ),
    (
        "Our services talk to each other over gRPC, not REST.",
        (corr("Our services talk to each other over gRPC, not REST."),),
    ),
    (
        "No, we keep migrations in `db/migrations`, not in the app folder.",
        (corr("We keep migrations in `db/migrations`, not in the app folder."),),
    ),
    (
        "Never store the Stripe secret key in the frontend bundle.",
        (cons("Never store the Stripe secret key in the frontend bundle.", SECURITY),),
    ),
    (
        "I prefer explicit `return None` over falling off the end of a function.",
        (pref("Prefer explicit `return None` over falling off the end of a function."),),
    ),
    (
        "Going forward, keep PR descriptions short and link the ticket.",
        (cons("Keep PR descriptions short and link the ticket."),),
    ),
    (
        "Use `structlog` instead of the stdlib logger in new services.",
        (pref("Use `structlog` instead of the stdlib logger in new services."),),
    ),
    (
        "Do not ever echo environment variables in CI logs.",
        (cons("Never echo environment variables in CI logs."),),
    ),
    (
        "Heads up: we never use ORMs in the reporting service.",
        (cons("We never use ORMs in the reporting service."),),
    ),
    (
        "Actually, the team uses Conventional Commits for every repo.",
        (corr("The team uses Conventional Commits for every repo."),),
    ),
    (
        "Passwords must be hashed with argon2.",
        (cons("Passwords must be hashed with argon2.", SECURITY),),
    ),
    (
        "Two rules: never commit to main directly; always open a PR.",
        (cons("Never commit to main directly."), cons("Always open a PR.")),
    ),
    (
        "Note for everyone: always rebase on main before opening a PR.",
        (cons("Always rebase on main before opening a PR."),),
    ),
    (
        "Tip: prefer `pathlib` over `os.path` in new code.",
        (pref("Prefer `pathlib` over `os.path` in new code."),),
    ),
)

HELD_OUT_2_NEGATIVES: Final[tuple[Case, ...]] = (
    ("The password for the test account is hunter2, use that.", ()),
    (
        "Always export GITHUB_TOKEN=ghp_a1B2c3D4e5F6g7H8i9J0kLmNoPqRsTuVwXyZ before running the "
        "release script.",
        (),
    ),
    ("Never commit this: AKIAIOSFODNN7EXAMPLE", ()),
    (
        "From now on use the token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.abc123 for the "
        "staging API.",
        (),
    ),
    ("CI output: never retrying failed job after 3 attempts", ()),
    ("fixme: always returns an empty dict when the cache is cold", ()),
    ("feat: use the new billing API instead of the legacy one", ()),
    ("The handler retries three times, not five, so the timeout math is off.", ()),
    ("No, the cache returns stale entries after a deploy.", ()),
    ("Actually the endpoint returns 204, not 200.", ()),
    ("You must have forgotten to run the migrations.", ()),
    ("The worker must've crashed overnight.", ()),
    ("You should always see a log line when the job starts.", ()),
    ("The retry logic must handle timeouts too, right", ()),
    ("Users must not be able to see other tenants' invoices.", ()),
    ("I prefer the third option, the one with the cache.", ()),
    ("I like your second version better.", ()),
    ("Use the other approach, the one without the lock.", ()),
    ("The book says to never use inheritance for code reuse.", ()),
    ("Must be a race condition in the scheduler.", ()),
    ("Hmm, the Makefile uses python3.9, not 3.12.", ()),
    ("Nope. The job reads the old config file.", ()),
    ("TODO: never call `flush()` inside the loop", ()),
    ("Review comment: always check the return value here.", ()),
    ("The doc comment says: you must call `init()` first.", ()),
    ("I'd rather go with what you proposed earlier.", ()),
    ("Uploads must be capped at 10 MB; that's what this PR fixes.", ()),
)

# Third held-out batch: written after the second round of rules, run once, then kept.
HELD_OUT_3: Final[tuple[Case, ...]] = (
    (
        "From now on, run `ruff check --fix` before every commit.",
        (cons("Run `ruff check --fix` before every commit."),),
    ),
    (
        "Actually, we publish wheels to our internal index, not PyPI.",
        (corr("We publish wheels to our internal index, not PyPI."),),
    ),
    (
        "Never hardcode the staging URL; read it from settings.",
        (cons("Never hardcode the staging URL."),),
    ),
    (
        "I'd rather keep migrations small and reversible.",
        (pref("Prefer to keep migrations small and reversible."),),
    ),
    (
        "Please always use `Decimal` for currency amounts.",
        (pref("Always use `Decimal` for currency amounts."),),
    ),
    (
        "Security rule: never disable CSRF protection on forms.",
        (cons("Never disable CSRF protection on forms.", SECURITY),),
    ),
    (
        "No, the frontend lives in `web/`, not `client/`.",
        (corr("The frontend lives in `web/`, not `client/`."),),
    ),
    (
        "Don't ever store session tokens in localStorage.",
        (cons("Never store session tokens in localStorage.", SECURITY),),
    ),
    (
        "We never ship on Fridays, no exceptions.",
        (cons("We never ship on Fridays, no exceptions."),),
    ),
    (
        "All API responses must use camelCase keys.",
        (cons("All API responses must use camelCase keys."),),
    ),
    ("review: never call the DB inside the render loop", ()),
    ("The linter output: always use const", ()),
    ("Nope, the worker returns early when the queue is empty.", ()),
    ("You should always see the banner on startup.", ()),
    ("The cron job must have skipped a run last night.", ()),
    ("Customers must be able to reset their password by email.", ()),
    ("I prefer the version you posted first.", ()),
    ("Let's use the third approach then.", ()),
    ("Use DEPLOY_TOKEN=dt_9aF3kL2mQ8xZ7pR4 for the deploy step.", ()),
    ("Always connect with postgres://admin:S3cretPass!@db.internal:5432/app in staging.", ()),
    ("The docs say you must never call `flush()` twice.", ()),
    ("So the API returns 500, not 404 — that's the bug.", ()),
    ("fix(auth): always hash passwords with bcrypt", ()),
    ("I like the old layout better, but whatever works.", ()),
    ("Hmm, it must be the proxy stripping headers.", ()),
    ("The payment handler must have retried three times.", ()),
)

TUNING: Final[tuple[Case, ...]] = (
    POSITIVES + NEGATIVES + REVIEW_NEGATIVES + LOOKALIKES_2 + POSITIVES_2
)
HELD_OUT_1: Final[tuple[Case, ...]] = HELD_OUT_POSITIVES + HELD_OUT_NEGATIVES
HELD_OUT_2: Final[tuple[Case, ...]] = HELD_OUT_2_POSITIVES + HELD_OUT_2_NEGATIVES
HELD_OUT: Final[tuple[Case, ...]] = HELD_OUT_1 + HELD_OUT_2 + HELD_OUT_3
MESSAGES: Final[tuple[Case, ...]] = TUNING + HELD_OUT
