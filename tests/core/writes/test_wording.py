"""How a memory reads for a write decision (`memd.core.writes.wording`), and slugs in every
script."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from memd.core.format import secrets
from memd.core.text import memo
from memd.core.writes import wording
from memd.core.writes.slugs import derive_slug, validate_slug
from memd.core.writes.wording import Kind, analyse, keywords, lexeme
from memd_client.errors import InvalidEntry


def read(text: str) -> list[tuple[str, str, bool]]:
    """(key, kind initial, negated) for each word."""
    return [(w.key, w.kind.name[0], w.negative) for w in analyse(text).words]


def test_formatting_is_not_wording() -> None:
    plain = analyse("Never commit .env files to main.").normal
    for variant in (
        "never commit `.env` files to `main`",
        "**Never** commit .env files to main!",
        "_Never_ commit .env files to main.",
        "NEVER   COMMIT .ENV FILES TO MAIN",
    ):
        assert analyse(variant).normal == plain
    assert analyse("Use snake_case keys.").normal == analyse("Use snake case keys.").normal


def test_every_script_is_read() -> None:
    assert [key for key, _, _ in read("提交前运行测试")] == list("提交前运行测试")
    assert keywords("提交前运行测试") >= {"提交", "运行", "测试"}
    assert read("Перед коммитом запускай линтер.")[1][0] == "коммит"
    assert analyse("Ключи хранятся в Vault.").normal != analyse("Пароли хранятся в Vault.").normal
    assert analyse("用户表").normal != analyse("订单表").normal  # no longer "all equal"


def test_identifiers_flags_and_numbers_are_values_kept_whole() -> None:
    words = analyse("Pin `numpy==1.26` with --frozen-lockfile on t3.medium, Node 20 and two cores.")
    values = [w.key for w in words.words if w.kind is Kind.VALUE]
    assert values == ["1.26", "t3.medium", "20", "2"]
    assert "--frozen-lockfile" in words.content  # a flag is a word of its command
    assert {"<", "2"} <= {w.key for w in analyse("Pin urllib3 < 2").words}
    assert {"c++", "-1", "$5"} <= analyse("C++ returns -1 for $5").content
    assert analyse("Import `moment.js` from packages/types/").content >= {
        "moment.js",
        "packages/types",
    }


def test_look_alike_words_get_different_keys_and_inflections_the_same() -> None:
    for a, b in [
        ("authorization", "author"),
        ("operator", "operation"),
        ("dependents", "dependencies"),
        ("designated", "design"),
        ("executive", "execution"),
        ("generated", "generator"),
        ("important", "import"),
        ("profiler", "profile"),
    ]:
        assert lexeme(a) != lexeme(b), (a, b)
    for a, b in [
        ("tests", "test"),
        ("handled", "handles"),
        ("retries", "retry"),
        ("nested", "nest"),
        ("errors", "error"),  # a stem ending like a derivation ("-or") is not one
        ("mirrors", "mirror"),
    ]:
        assert lexeme(a) == lexeme(b), (a, b)
    assert analyse("the staging env").content != analyse("the stage env").content


def test_a_negator_negates_its_clause_and_after_a_comma_only_what_follows() -> None:
    assert read("Session cookies are not HttpOnly; the SPA reads them.") == [
        ("session~ion", "W", True),
        ("cooki", "W", True),
        ("httpon", "W", True),
        ("spa", "W", False),
        ("read", "W", False),
    ]
    assert [negated for _, _, negated in read("Use UTC timestamps, not local time.")] == [
        False,  # use
        False,
        False,
        True,
        True,
    ]
    assert all(negated for key, _, negated in read("Avoid eval") if key == "eval")
    assert not any(negated for _, _, negated in read("Never deploy without a green build."))
    assert not any(negated for _, _, negated in read("Use `pytest -m 'not slow'`."))


def test_a_rejected_alternative_is_negated() -> None:
    negated = {key for key, _, neg in read("Prefer Postgres over MySQL for reporting.") if neg}
    assert "mysql" in negated and "postgr" not in negated
    assert {key for key, _, neg in read("Run npm ci instead of npm install.") if neg} >= {"instal"}


def test_cjk_and_japanese_negation() -> None:
    assert all(neg for _, _, neg in read("不要在代码里写密码"))
    assert all(neg for _, _, neg in read("パスワードを保存しないこと"))
    assert read("提交前运行测试。不要跳过。")[0][2] is False  # the first clause stands


def test_assignments_are_a_name_then_a_value() -> None:
    assert read("Set LOG_LEVEL=debug") == [
        ("set", "W", False),
        ("log", "W", False),
        ("level", "W", False),
        ("=debug", "V", False),
    ]


@given(st.text(max_size=120))
def test_any_text_reads(text: str) -> None:
    wording = analyse(text)
    assert wording.content <= {w.key for w in wording.words}
    assert keywords(text) <= wording.content | {"<choose>"} | {
        f"#{t}" for t in wording.tags
    } or any(
        "\u3040" <= char <= "\u9fff" for char in text
    )  # CJK texts are keyed by character pairs


# ---- slugs ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "slug"),
    [
        ("Take the lock before writing any memory file.", "take-lock-writing-memory"),
        ("Use tabs for indentation", "tabs-indentation"),
        ("提交前先运行 `make lint`。", "提交前先运行-make-lint"),
        ("Перед коммитом запускай линтер.", "перед-коммитом-запускай-линтер"),
        ("Vor dem Push immer die Tests ausführen.", "vor-push-tests-ausfuhren"),
        ("Настройка линтера для всей команды.", "настройка-линтера-всей-команды"),
        ("!!!", "memory"),
    ],
)
def test_slugs_are_derived_in_every_script(content: str, slug: str) -> None:
    assert derive_slug(content, set()) == slug
    assert validate_slug(slug) == slug


def test_different_non_latin_texts_get_different_slugs() -> None:
    slugs = {
        derive_slug(text, set())
        for text in ("所有数据放在 Postgres", "缓存放在 Redis", "日志保留 7 天")
    }
    assert len(slugs) == 3 and "memory" not in slugs


@pytest.mark.parametrize("slug", ["Use-Tabs", "two words", "a--b", "-a", "a_b", "x" * 65, ""])
def test_bad_slugs_are_refused(slug: str) -> None:
    with pytest.raises(InvalidEntry, match="kebab-case"):
        validate_slug(slug)


def test_function_words_written_as_names_are_words() -> None:
    def words(text: str) -> list[str]:
        return [w.text for w in analyse(text).words if w.content]

    assert "US" in words("Keep data in the US region.")
    assert "IT" in words("Ask IT for a laptop.")
    assert "Always" in words("Set the restart policy to Always.")
    assert "A" in words("Use an A record for the apex.")
    assert "DO" not in words("DO NOT commit secrets.")  # emphasis, then a negation
    assert analyse("ALWAYS pin versions.").normal == analyse("Always pin versions.").normal


def test_foreign_function_words_count_only_in_that_language() -> None:
    def words(text: str) -> list[str]:
        return [w.text for w in analyse(text).words if w.content]

    assert "die" in words("Workers should die on fatal errors.")
    assert "die" not in words("Vor dem Push immer die Tests ausführen.")
    assert "mit" not in words("Formatiere Python-Code mit black.")  # one is enough


def test_modals_and_quantifiers_are_read_by_their_force_and_kind() -> None:
    assert [w.key for w in analyse("Tests may use mocks.").words][1] == "<may>"
    assert [w.key for w in analyse("Tests must use mocks.").words][1] == "<must>"
    assert [w.key for w in analyse("Don't log any headers.").words][1] == "<any>"
    assert "any" in analyse("Never use any in TypeScript.").content  # no noun follows: a word
    assert [w.key for w in analyse("测试可以使用 mock").words][2] == "<may>"


def test_stop_using_and_negation_signs_negate() -> None:
    assert all(w.negative for w in analyse("Stop using jQuery.").words if w.content)
    assert all(w.negative for w in analyse("❌ rebase on main").words if w.content)
    assert not any(w.negative for w in analyse("设置别名").words)  # 别名 is "alias"


def test_code_spans_pair_backtick_runs_like_markdown() -> None:
    # an unpaired backtick is punctuation: the negation still reaches the clause
    assert read("Don't run `make clean.") == read("Don't run make clean.")
    # a double-backtick span may hold a single backtick, and keeps its words literal
    assert [key for key, _, _ in read("Run `` not`here ``.")][1:] == ["not", "here"]


# A differential check of the memoised reading: a text read with every cache warm (its tokens,
# its plain form, its secret scan) reads exactly as it does with every cache empty.
_WORDS = st.sampled_from(
    [
        "Use",
        "use",
        "never",
        "not",
        "the",
        "a",
        "pnpm",
        "npm",
        "tests",
        "Tests",
        "don't",
        "instead",
        "of",
        "over",
        "port",
        "5432",
        "`x`",
        "no",
        "longer",
        "API_KEY=abc123",
        "feature-flags",
        "Always",
        "None",
        "DO",
        "不要",
        "使う",
        "#db",
        ",",
        ".",
        ";",
        "--",
        "v2",
    ]
)


@given(st.lists(_WORDS | st.text(max_size=12), max_size=24).map(" ".join))
def test_a_reading_with_warm_caches_equals_one_with_cold_caches(text: str) -> None:
    warm = (wording._read(text), wording.plain_form(text), secrets.find_secret(text))
    again = (wording._read(text), wording.plain_form(text), secrets.find_secret(text))
    for cache in memo._caches:
        cache.clear()
    cold = (wording._read(text), wording.plain_form(text), secrets.find_secret(text))
    assert warm == again == cold
