"""The write decision for one pair: a test per class of the labelled store pairs, each written
from the class's description (not from the data set's sentences), and properties that hold for
any text.

Classes and what they ask (`../shared/data/write-decisions-dev/README.md`): a repeat or a
reformatting says nothing new (skip); a less detailed version says nothing new (skip); more
detail, a reason, a "not Y" for an alternative never named (update); a changed number, version,
tool or choice, a reversed rule (update, conflict); another subject or object, swapped roles,
look-alike words, another thing with its own number, unrelated text (store). memd departs from
the labels in one way on purpose: a paraphrase in other words is kept (updated or stored), never
skipped, because a skip throws the new text away.
"""

from __future__ import annotations

import string

import pytest
from hypothesis import assume, given, strategies as st

from memd.core.format.mdformat import Entry
from memd.core.writes import dedup
from memd.core.writes.judge import Relation, Verdict, judge

SKIP, UPDATE, STORE = Verdict.SKIP, Verdict.UPDATE, Verdict.STORE


def decided(old: str, new: str) -> tuple[Verdict, bool]:
    judgement = judge(old, new)
    return judgement.verdict, judgement.conflict


# ---- skip: nothing new -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "Regenerate the OpenAPI client after editing spec.yaml.",
        "部署前运行测试。",
        "Immer die Tests vor dem Push ausführen.",
        "Логи храним 14 дней.",
        "#db Index every foreign key.",
    ],
)
def test_exact_repeat_is_skipped(text: str) -> None:
    assert judge(text, text).relation is Relation.SAME


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Run the linter before opening a PR.", "run the linter before opening a pr"),
        (
            "Keep secrets out of the Helm values file.",
            "Keep secrets out of the **Helm** values file!",
        ),
        ("Use the build cache in CI.", "Use the build-cache in CI."),
        ("Prefer `httpx` for outbound calls.", "Prefer httpx for outbound calls"),
        ("Tag images with the commit SHA.", "Tag images with commit SHA."),
        (
            "Pin the base image digest. #docker #security",
            "Pin the base image digest. #security #docker",
        ),
        ("Use `snake_case` for column names.", "Use snake case for column names."),
        ("Never pass `--no-verify` to git commit.", "_Never_ pass --no-verify to git commit!"),
    ],
)
def test_reformatting_is_skipped(old: str, new: str) -> None:
    assert decided(old, new) == (SKIP, False)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Don't log request bodies.", "Do not log request bodies."),
        ("Never hardcode API keys.", "Don't hardcode API keys."),
        ("Avoid global state in handlers.", "Never use global state in handlers."),
        ("Never deploy without a passing build.", "Never deploy without a passing build."),
    ],
)
def test_the_same_ban_in_other_negating_words_is_skipped(old: str, new: str) -> None:
    assert decided(old, new) == (SKIP, False)


def test_a_phrase_moved_whole_is_the_same_wording() -> None:
    assert decided("Rebase on main before merging.", "Before merging, rebase on main.") == (
        SKIP,
        False,
    )


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("The deploy job invalidates the cache.", "The cache is invalidated by the deploy job."),
        ("Never disable CSRF checks.", "CSRF checks must never be turned off."),
        ("Favour small pull requests.", "Pull requests should be small."),
    ],
)
def test_a_paraphrase_in_other_words_is_kept_not_skipped(old: str, new: str) -> None:
    assert judge(old, new).verdict is not SKIP


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Run unit tests and the linter before pushing.", "Run unit tests before pushing."),
        ("The search service needs Java 21 and 8 GB of heap.", "The search service needs Java 21."),
        ("Use Poetry for dependencies; lock files are committed.", "Use Poetry for dependencies."),
        ("Open PRs as drafts until CI passes.", "Open PRs as drafts."),
    ],
)
def test_a_less_detailed_version_is_skipped(old: str, new: str) -> None:
    assert judge(old, new).relation is Relation.SAYS_LESS


def test_saying_less_never_covers_a_new_choice_a_wider_ban_or_a_new_small_word() -> None:
    assert judge("Indent Python code with tabs.", "Always use tabs.").verdict is not SKIP
    wider = judge("Never run load tests against production.", "Never run load tests.")
    assert wider.relation is Relation.BROADENS and wider.verdict is UPDATE
    assert (
        judge("Thanks! Talk to you later!", "Thanks! What have you been up to?").verdict is not SKIP
    )


@pytest.mark.parametrize(
    ("old", "new", "limit"),
    [
        ("Use tabs for indentation in Go files.", "Use tabs for indentation.", "in Go files"),
        ("Use pnpm for the web app.", "Use pnpm.", "for web app"),
        ("Write docstrings only in public modules.", "Write docstrings.", "only in public modules"),
    ],
)
def test_a_rule_without_the_entrys_limit_is_a_wider_rule_kept_beside_it(
    old: str, new: str, limit: str
) -> None:
    judgement = judge(old, new)
    assert (judgement.relation, judgement.verdict) == (Relation.OTHER_SUBJECT, STORE)
    assert (judgement.old_value, judgement.new_value) == (limit, None)


@pytest.mark.parametrize(
    ("old", "new", "limit"),
    [
        ("Use tabs for indentation.", "Use tabs for indentation in Go files.", "in Go files"),
        ("Use pnpm.", "Use pnpm for the web app.", "for web app"),
    ],
)
def test_a_rule_given_a_limit_is_a_narrower_rule_kept_beside_the_wider_one(
    old: str, new: str, limit: str
) -> None:
    judgement = judge(old, new)
    assert (judgement.relation, judgement.verdict) == (Relation.OTHER_SUBJECT, STORE)
    assert (judgement.old_value, judgement.new_value) == (None, limit)


def test_a_detail_or_a_ban_beside_the_rule_is_still_more_detail() -> None:
    for old, new in [
        ("Format with Prettier.", "Format with Prettier on save."),
        ("Keep secrets in Vault.", "Keep secrets in Vault, never in committed .env files."),
        ("Write a changelog entry.", "Write a changelog entry under the Unreleased heading."),
    ]:
        assert judge(old, new).relation is Relation.ADDS_DETAIL, (old, new)


def test_dropping_a_list_item_a_reason_or_a_value_is_still_saying_less() -> None:
    for old, new in [
        ("Lint in CI and in pre-commit hooks.", "Lint in CI."),
        ("Run pytest with -x because it stops at the first failure.", "Run pytest with -x."),
        ("The API rate-limits at 100 requests per minute.", "The API rate-limits."),
    ]:
        assert judge(old, new).relation is Relation.SAYS_LESS, (old, new)


# ---- update: more, or changed ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Cache API responses.", "Cache API responses for 5 minutes in Redis."),
        (
            "Write integration tests for payment flows.",
            "Write integration tests for payment flows, including refunds.",
        ),
        ("The import job is slow.", "The import job is slow because it parses XML twice."),
        ("Flaky on Windows.", "Flaky on Windows and macOS."),
        ("Run `cargo test --release` in CI.", "Run `cargo test --release --locked` in CI."),
        ("Support Node 20.", "Support Node 20 and Node 22."),
    ],
)
def test_added_detail_updates_without_conflict(old: str, new: str) -> None:
    assert judge(old, new).relation is Relation.ADDS_DETAIL
    assert decided(old, new) == (UPDATE, False)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Deploy from the release branch.", "Deploy from the release branch, never from a laptop."),
        ("Store sessions in Redis.", "Store sessions in Redis, not in the database."),
        ("Usa pnpm para instalar.", "Usa pnpm para instalar, no npm."),
    ],
)
def test_a_not_for_an_alternative_never_named_is_detail(old: str, new: str) -> None:
    assert decided(old, new) == (UPDATE, False)


def test_a_not_that_excludes_the_old_value_is_a_reversal() -> None:
    assert decided("Store sessions in Redis.", "Store sessions in Postgres, not in Redis.") == (
        UPDATE,
        True,
    )


def test_a_vague_amount_made_exact_is_no_conflict() -> None:
    judgement = judge("Tokens expire after about a day.", "Tokens expire after 24 hours.")
    assert (judgement.relation, judgement.conflict) == (Relation.VALUE_MADE_EXACT, False)


@pytest.mark.parametrize(
    ("old", "new", "was", "now"),
    [
        (
            "Keep the request timeout at 30 seconds.",
            "Keep the request timeout at 10 seconds.",
            "30",
            "10",
        ),
        ("The worker pool has 4 threads.", "The worker pool has 16 threads.", "4", "16"),
        ("Indent YAML with two spaces.", "Indent YAML with four spaces.", "two", "four"),
        ("Set `LOG_LEVEL=debug` locally.", "Set `LOG_LEVEL=info` locally.", "debug", "info"),
        ("Logs are kept for 14 days. #ops", "Logs are kept for 30 days. #ops", "14", "30"),
        ("日志保留 30 天。", "日志保留 7 天。", "30", "7"),
        ("Логи храним 14 дней.", "Логи храним 30 дней.", "14", "30"),
    ],
)
def test_a_changed_value_is_a_conflict_naming_the_old_value(
    old: str, new: str, was: str, now: str
) -> None:
    judgement = judge(old, new)
    assert (judgement.relation, judgement.verdict, judgement.conflict) == (
        Relation.CHANGED_VALUE,
        UPDATE,
        True,
    )
    assert (judgement.old_value, judgement.new_value) == (was, now)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Build the app with Python 3.11.", "Build the app with Python 3.12."),
        ("The cluster runs Kubernetes 1.29.", "The cluster runs Kubernetes 1.31."),
        (
            "The schema is at version 12; bump it per migration.",
            "The schema is at version 13; bump it per migration.",
        ),
    ],
)
def test_a_changed_version_is_a_conflict(old: str, new: str) -> None:
    assert decided(old, new) == (UPDATE, True)


@pytest.mark.parametrize(
    ("old", "new", "was", "now"),
    [
        ("Bundle the frontend with Webpack.", "Bundle the frontend with Vite.", "Webpack", "Vite"),
        ("Use Flake8 for linting.", "Use Ruff for linting.", "Flake8", "Ruff"),
        (
            "Logs are shipped to Datadog.",
            "Logs are shipped to Grafana Loki.",
            "Datadog",
            "Grafana Loki",
        ),
        ("Use Yarn.", "Use npm.", "Yarn", "npm"),
        ("缓存使用 Redis。", "缓存使用 Memcached。", "Redis", "Memcached"),
        ("Используем Poetry для зависимостей.", "Используем uv для зависимостей.", "Poetry", "uv"),
        (
            "Utilisez Postgres pour les sessions.",
            "Utilisez Redis pour les sessions.",
            "Postgres",
            "Redis",
        ),
    ],
)
def test_a_swapped_tool_or_choice_is_a_conflict_naming_the_old_one(
    old: str, new: str, was: str, now: str
) -> None:
    judgement = judge(old, new)
    assert (judgement.relation, judgement.conflict) == (Relation.CHANGED_CHOICE, True)
    assert (judgement.old_value, judgement.new_value) == (was, now)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Squash commits when merging.", "Don't squash commits when merging."),
        ("Run migrations after deploying.", "Run migrations before deploying."),
        ("Prefer tabs over spaces.", "Prefer spaces over tabs."),
        ("Enable source maps in production.", "Disable source maps in production."),
        ("Start the queue before the API.", "Start the API before the queue."),
        ("Pass `--frozen-lockfile` in CI.", "Pass `--no-frozen-lockfile` in CI."),
        ("Коммитить секреты в репозиторий.", "Не коммитить секреты в репозиторий."),
        ("本番では `debug` モードを使う。", "本番では `debug` モードを使わない。"),
    ],
)
def test_a_reversed_rule_is_a_conflict(old: str, new: str) -> None:
    assert judge(old, new).relation is Relation.REVERSED
    assert decided(old, new) == (UPDATE, True)


def test_a_reversal_needs_the_negated_clause_on_both_sides() -> None:
    # "log" is not in the new text: an unrelated fact about tokens, not "log access tokens".
    assert (
        judge("Never log access tokens.", "Access tokens expire after 15 minutes.").verdict is STORE
    )
    assert judge("Never push to main.", "Main is protected and needs two reviews.").verdict is STORE


def test_never_without_is_not_a_negation() -> None:
    # "Never X without Y" says "always X with Y": no reversal of the rule it restates.
    old, new = (
        "Always commit lockfiles with their manifest.",
        "Never commit a manifest without its lockfile.",
    )
    assert not judge(old, new).conflict


def test_new_tags_update_without_conflict() -> None:
    judgement = judge("Cache builds in CI. #ci", "Cache builds in CI. #ci #perf")
    assert (judgement.relation, judgement.verdict, judgement.conflict) == (
        Relation.TAGS,
        UPDATE,
        False,
    )


# ---- store: another rule -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Review the generated report weekly.", "Review the generator report weekly."),
        ("Notify the operator on failure.", "Notify the operations team on failure."),
        ("Pin the dependents of the SDK.", "Pin the dependencies of the SDK."),
        ("Run smoke tests on staging.", "Run smoke tests on each pipeline stage."),
        ("Cache user profiles.", "Profile user caches."),
    ],
)
def test_look_alike_words_are_different_rules(old: str, new: str) -> None:
    assert decided(old, new) == (STORE, False)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("The API service calls the auth service.", "The auth service calls the API service."),
        ("Mobile clients may read web sessions.", "Web clients may read mobile sessions."),
        (
            "The worker rounds prices before sending them to the API.",
            "The API rounds prices before sending them to the worker.",
        ),
        ("Review migrations before merging.", "Migrate reviews before merging."),  # verb / noun
    ],
)
def test_swapped_roles_are_two_rules(old: str, new: str) -> None:
    assert judge(old, new).relation is Relation.OTHER_ROLES


@pytest.mark.parametrize(
    ("old", "new", "was", "now"),
    [
        (
            "Encrypt the orders table at rest.",
            "Encrypt the invoices table at rest.",
            "orders",
            "invoices",
        ),
        (
            "Add retries to the payment client.",
            "Add retries to the email client.",
            "payment",
            "email",
        ),
        (
            "Scan Docker images for CVEs.",
            "Scan npm packages for CVEs.",
            "Docker images",
            "npm packages",
        ),
        ("No PII in logs.", "No PII in traces.", "logs", "traces"),
        ("`make dev` starts the stack.", "`make test` starts the stack.", "dev", "test"),
        (
            "Add an index on `users.email`.",
            "Add an index on `users.created_at`.",
            "users.email",
            "users.created_at",
        ),
        ("Set `RUST_BACKTRACE=1` in CI.", "Set `RUST_LOG=debug` in CI.", None, None),
        ("订单表按年分区。", "发票表按年分区。", None, None),
    ],
)
def test_another_object_or_subject_is_stored_apart(
    old: str, new: str, was: str | None, now: str | None
) -> None:
    judgement = judge(old, new)
    assert (judgement.relation, judgement.verdict) == (Relation.OTHER_SUBJECT, STORE)
    if was is not None:
        assert (judgement.old_value, judgement.new_value) == (was, now)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("The upload limit is 10 MB.", "The avatar limit is 2 MB."),
        ("Run 2 web replicas in staging.", "Run 1 cron replica in staging."),
        ("Access keys expire after 90 days.", "Session keys expire after 8 hours."),
    ],
)
def test_another_thing_with_its_own_number_is_stored(old: str, new: str) -> None:
    assert decided(old, new) == (STORE, False)


def test_unrelated_text_is_stored() -> None:
    assert judge("Use British spelling in docs.", "The cron job runs at midnight.").relation is (
        Relation.UNRELATED
    )


# ---- properties -------------------------------------------------------------------------------

_WORDS = "deploy cache worker queue token replica schema branch lint build table index"
WORDS = st.sampled_from(_WORDS.split())
SENTENCES = st.lists(WORDS, min_size=2, max_size=7).map(lambda words: " ".join(words).capitalize())


@given(st.text(max_size=80), st.text(max_size=80))
def test_any_text_gets_a_judgement(old: str, new: str) -> None:
    judgement = judge(old, new)
    assert 0.0 <= judgement.similarity <= 1.0
    assert judgement.conflict <= (judgement.verdict is UPDATE)


@given(st.text(max_size=80))
def test_a_text_repeats_itself(text: str) -> None:
    assert judge(text, text).verdict is SKIP


@given(SENTENCES)
def test_case_punctuation_and_emphasis_never_make_a_new_rule(text: str) -> None:
    for variant in (
        text.upper() + "!",
        f"**{text}**.",
        f"  {text.lower()}  ",
        text.replace(" ", "  "),
    ):
        assert judge(text, variant).verdict is SKIP


@given(SENTENCES, st.lists(st.sampled_from(string.ascii_lowercase), min_size=4, max_size=8))
def test_adding_a_clause_is_never_a_skip(text: str, letters: list[str]) -> None:
    new_word = "q" + "".join(letters) + "z"  # a word no sentence holds
    assert judge(text, f"{text}; it needs {new_word}.").verdict is UPDATE


@given(SENTENCES)
def test_negating_a_rule_is_never_a_skip(text: str) -> None:
    judgement = judge(text, f"Never {text.lower()}.")
    assert judgement.verdict is UPDATE and judgement.conflict


@given(SENTENCES, st.integers(1, 999), st.integers(1, 999))
def test_a_new_number_is_never_a_skip(text: str, old: int, new: int) -> None:
    assume(old != new)
    judgement = judge(f"{text} at {old}.", f"{text} at {new}.")
    assert judgement.relation is Relation.CHANGED_VALUE
    assert (judgement.old_value, judgement.new_value) == (str(old), str(new))


# ---- words that look small but carry the rule ---------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Keep user data in the EU region.", "Keep user data in the US region."),  # a name
        ("Ship the hotfix at 9 AM.", "Ship the hotfix at 9 PM."),
        ("Set the pull policy to IfNotPresent.", "Set the pull policy to Always."),
        ("Workers should restart when they crash.", "Workers should die when they crash."),
        ("Load it as CommonJS modules.", "Load it as ES modules."),
        ("Reviews may be skipped for docs changes.", "Reviews must be skipped for docs changes."),
        ("Don't log all request headers.", "Don't log any request headers."),
        ("Admins can rotate the keys.", "Only admins can rotate the keys."),
        (
            "The web app must not be imported by the worker.",
            "The web app must not import the worker.",
        ),
        ("Pin urllib3 < 2.", "Pin urllib3 >= 2."),
        ("Compare with `==` in Kotlin.", "Compare with `===` in Kotlin."),
        ("Set `PUBLIC_URL` in the dashboard.", "Set `URL` in the dashboard."),
        ("Install `vite-plugin-pwa`.", "Install `vite-plugin`."),
        ("Never print raw card numbers.", "Never print card numbers."),
        ("Interns must not deploy to prod.", "Do not deploy to prod."),
        ("Never squash release branches unless CI is red.", "Never squash release branches."),
        ("调试时可以关闭缓存。", "调试时必须关闭缓存。"),
        ("先跑测试和 lint。", "先跑测试或 lint。"),
    ],
)
def test_a_changed_small_word_name_or_limit_is_never_a_skip(old: str, new: str) -> None:
    assert judge(old, new).verdict is not SKIP


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Use jQuery for the admin pages.", "Stop using jQuery for the admin pages."),
        ("✅ Rebase feature branches.", "❌ Rebase feature branches."),
        ("Run the app as non-root.", "Run the app as root."),
        ("Alert when p95 > 300 ms.", "Alert when p95 < 300 ms."),
        ("给接口设置别名。", "不给接口设置别名。"),
    ],
)
def test_negating_verbs_signs_prefixes_and_operators_reverse(old: str, new: str) -> None:
    assert decided(old, new) == (UPDATE, True)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Migration 0031 cannot be rolled back.", "Migration 0047 cannot be rolled back."),
        ("Never open port 6379 to the internet.", "Never open port 9200 to the internet."),
        ("Query the `events` table for audits.", "Query the `events_raw` table for audits."),
        ("Never run `git push --force` on main.", "Never run `git push --no-verify` on main."),
        ("Retry failed jobs.", "Don't retry failed jobs for billing."),
        ("Prefer pnpm over yarn.", "Prefer yarn over npm."),
        (
            "Add a `NOT NULL` constraint to `users.email`.",
            "Add a `NOT NULL` constraint to `users.phone`.",
        ),
    ],
)
def test_ids_identifiers_exceptions_and_chains_are_other_rules(old: str, new: str) -> None:
    assert judge(old, new).verdict is STORE


def test_emphasis_in_capitals_is_still_emphasis() -> None:
    assert judge("Do not commit secrets.", "DO NOT commit secrets.").verdict is SKIP
    assert judge("Always pin versions.", "ALWAYS pin versions.").verdict is SKIP
    assert judge("We deploy on Fridays only.", "we deploy on fridays ONLY").verdict is SKIP
    assert judge("Host the DB on AWS.", "Host the DB on DO.").verdict is not SKIP  # "DO", a name


# ---- reviewer cases: each once lost or misread a memory ------------------------------------------


def test_a_ban_made_of_a_with_rule_is_a_reversal() -> None:
    # "without" under a negation reads as "with": "never X without Y" is "always X with Y"
    assert decided("Deploy without tests.", "Never deploy without tests.") == (UPDATE, True)


def test_a_narrowed_ban_is_kept_beside_the_wider_one() -> None:
    for old, new in [
        ("Never rebase shared branches.", "Never rebase shared branches during a release."),
        ("Don't call the billing API.", "Don't call the billing API from cron jobs."),
        ("Never cache auth responses.", "Never cache auth responses unless they are public."),
    ]:
        judgement = judge(old, new)
        assert judgement.relation is Relation.NARROWS and judgement.verdict is STORE, new
    # a listed addition, or a "not Y" outside the ban, is still detail on the same rule
    more = judge("Never commit key files.", "Never commit key files or certificates.")
    assert more.relation is Relation.ADDS_DETAIL


def test_a_new_permission_is_a_change_not_a_repeat() -> None:
    assert judge("Squash fixup commits.", "You may squash fixup commits.").verdict is UPDATE
    assert judge("Squash fixup commits.", "You must squash fixup commits.").verdict is SKIP


def test_a_text_too_long_to_align_is_kept_unless_it_repeats() -> None:
    long_text = " ".join(f"step{n} runs after the linter" for n in range(60))
    assert judge(long_text, long_text + " and then the formatter").verdict is STORE
    assert judge(long_text, long_text.upper()).verdict is SKIP


def test_an_unpaired_backtick_is_punctuation() -> None:
    assert decided("Don't run `make clean before tests.", "Run `make clean before tests.") == (
        UPDATE,
        True,
    )
    assert judge("Run `make test before pushing.", "Run make test before pushing.").verdict is SKIP


def test_a_choice_for_one_purpose_is_not_swapped_for_a_bare_other_choice() -> None:
    # Found in review: "Use pnpm." replaced "Use tabs for indentation." as a changed choice.
    assert judge("Use tabs for indentation.", "Use pnpm.").verdict is STORE
    assert judge("Use pnpm.", "Use Bun.").relation is Relation.CHANGED_CHOICE
    assert judge("Use CSS modules.", "Use Tailwind.").relation is Relation.CHANGED_CHOICE


# ---- one slot in one frame (hacklm-interop-2026-11.md, section D) ------------------------------


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (
            "Log errors with the structured logger, not console.log.",
            "log errors with the structured logger not console.log",
        ),
        (
            "Run the linter in pre-commit hooks, not only in CI.",
            "run the linter in pre-commit hooks not only in ci",
        ),
        ('Name the branch "release", not `main`.', "name the branch release not main"),
        ("Never commit; push; merge.", "never commit push merge"),
    ],
)
def test_case_and_punctuation_alone_are_the_same_rule_not_a_reversal(old: str, new: str) -> None:
    judgement = judge(old, new)
    assert (judgement.relation, judgement.verdict, judgement.conflict) == (
        Relation.SAME,
        SKIP,
        False,
    )


@pytest.mark.parametrize(
    ("old", "new", "old_value", "new_value"),
    [
        (
            "Integration tests run against a Postgres container.",
            "Integration tests run against a MySQL container.",
            "Postgres",
            "MySQL",
        ),
        (
            "Run the integration suite nightly.",
            "Run the integration suite hourly.",
            "nightly",
            "hourly",
        ),
        (
            "Keep feature flag definitions in YAML files.",
            "Keep feature flag definitions in JSON files.",
            "YAML",
            "JSON",
        ),
        (
            "Deploy to production from the main branch.",
            "Deploy to production from the release branch.",
            "main",
            "release",
        ),
        (
            "Python 3.11 is the minimum supported version.",
            "Python 3.12 is the minimum supported version.",
            "3.11",
            "3.12",
        ),
        (
            "The staging database is wiped every Sunday.",
            "The staging database is wiped every Friday.",
            "Sunday",
            "Friday",
        ),
        (
            "Write commit messages as conventional commits.",
            "Write commit messages as gitmoji commits.",
            "conventional",
            "gitmoji",
        ),
        (
            "Sort imports with the linter plugin.",
            "Sort imports with the formatter plugin.",
            "linter",
            "formatter",
        ),
        (
            "Les messages de commit sont rédigés en français.",
            "Les messages de commit sont rédigés en anglais.",
            "français",
            "anglais",
        ),
    ],
)
def test_one_word_swapped_where_the_rule_says_what_holds_is_a_changed_choice(
    old: str, new: str, old_value: str, new_value: str
) -> None:
    judgement = judge(old, new)
    assert judgement.relation in (Relation.CHANGED_CHOICE, Relation.CHANGED_VALUE)
    assert (judgement.verdict, judgement.conflict) == (UPDATE, True)
    assert (judgement.old_value, judgement.new_value) == (old_value, new_value)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # what the rule is about: its object, or a word that qualifies it, before what it says
        ("Cache user sessions in Redis.", "Cache product pages in Redis."),
        ("Run unit tests on every push.", "Run e2e tests on every push."),
        ("The VPN covers the SF office.", "The VPN covers the LA office."),
        ("Write integration tests for every new GraphQL mutation.", "... GraphQL subscription."),
        # the subject of a fact that names no single holder
        (
            "Migration 0042 is irreversible on Postgres.",
            "Migration 0043 is irreversible on Postgres.",
        ),
        # a look-alike: the same stem, another derivation
        (
            "Scale workers through the Kubernetes operator.",
            "Scale workers through a Kubernetes operation.",
        ),
        # a place after the clause already chose, and another identifier
        ("Use React Query in the admin app.", "Use React Query in the billing app."),
        ("Set `RUST_BACKTRACE=1` in CI builds.", "Set `RUST_LOG=debug` in CI builds."),
    ],
)
def test_one_word_swapped_in_what_the_rule_is_about_is_another_rule(old: str, new: str) -> None:
    new = new.replace("...", old.rsplit(" ", 2)[0]) if new.startswith("...") else new
    judgement = judge(old, new)
    assert (judgement.verdict, judgement.conflict) == (STORE, False), judgement


def test_a_frame_needs_three_shared_words_around_the_slot() -> None:
    # two shared words are too little context to read the slot by its place
    assert judge("Log failed logins.", "Log failed logouts.").verdict is STORE
    assert judge("Max 3 retries.", "Max 3 replicas.").verdict is STORE
    # nor is a slot read by its place when anything else changed too
    changed = judge("Run the integration suite nightly.", "Run the smoke suite hourly.")
    assert changed.conflict is False


_FRAME_WORDS = [
    "never",
    "not",
    "don't",
    "do",
    "use",
    "with",
    "the",
    "to",
    "in",
    "over",
    "instead",
    "of",
    "only",
    "no",
    "deploy",
    "cache",
    "tests",
    "main",
    "ci",
    "redis",
    "console.log",
    "run",
    "lint",
    "before",
    "after",
    "enable",
    "disable",
    "is",
    "must",
    "may",
]
_MARKS_BEFORE = ("", "", "`", '"', "'", "(", "*")
_MARKS_AFTER = ("", "", "", ",", ".", ";", ":", "!", "?")
_CLOSING = {"`": "`", '"': '"', "'": "'", "(": ")", "*": "*"}


@st.composite
def _punctuated(draw: st.DrawFn, words: list[str]) -> str:
    """`words` with ASCII case and punctuation drawn for each: a wrapping quote, backtick,
    bracket or emphasis, and a mark after it."""
    out = []
    for word in words:
        case = draw(st.sampled_from((str.lower, str.upper, str.title, str.capitalize)))
        opening = draw(st.sampled_from(_MARKS_BEFORE))
        closing = _CLOSING.get(opening, "")
        out.append(opening + case(word) + closing + draw(st.sampled_from(_MARKS_AFTER)))
    return " ".join(out)


@given(st.data(), st.lists(st.sampled_from(_FRAME_WORDS), min_size=1, max_size=8))
def test_case_and_punctuation_never_reverse_or_add_a_rule(
    data: st.DataObject, words: list[str]
) -> None:
    entry, new = data.draw(_punctuated(words)), data.draw(_punctuated(words))
    judgement = judge(entry, new)
    assert judgement.relation is not Relation.REVERSED and not judgement.conflict
    assert judgement.verdict is not STORE
    match = dedup.find_match(new, [Entry(line=1, slug="e0", content=entry)])
    assert match.verdict is not STORE and not match.conflict
