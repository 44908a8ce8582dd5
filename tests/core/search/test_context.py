"""The prompt's memory block: layer A always first, layer B ranked, never over the budget."""

from __future__ import annotations

from hypothesis import given, strategies as st

from memd.core.format.categories import Category
from memd.core.format.mdformat import Entry
from memd.core.search.prompt_block import (
    ALWAYS_HEADING,
    TITLE,
    build,
    entry_line,
    estimate_tokens,
    notice_lines,
    path_words,
)

SEC = Category.SECURITY
INS = Category.INSTRUCTION
DEC = Category.DECISION


def entry(line: int, content: str, slug: str | None = None) -> Entry:
    return Entry(line=line, slug=slug, content=content)


ALWAYS = [
    (SEC, entry(5, "Never commit .env files.", "no-env")),
    (INS, entry(5, "Run make test before every commit.", "make-test")),
]
RELEVANT = [
    (DEC, entry(5, "We deploy with Helm to staging.", "helm"), 1.0),
    (DEC, entry(6, "Staging runs in eu-west-1.", None), 0.5),
    (DEC, entry(7, "Barely related words.", None), 0.1),
]


def test_layers_in_order_with_category_and_slug() -> None:
    block = build(ALWAYS, RELEVANT, 800)
    assert block.markdown == (
        "## Project memory (memd)\n"
        "Always follow:\n"
        "- [Security] [no-env] Never commit .env files.\n"
        "- [Instruction] [make-test] Run make test before every commit.\n"
        "Relevant to this prompt:\n"
        "- [Decision] [helm] We deploy with Helm to staging.\n"
        "- [Decision] Staging runs in eu-west-1.\n"
    )
    assert [p.layer for p in block.entries] == ["always", "always", "relevant", "relevant"]
    assert block.tokens == estimate_tokens(block.markdown) <= 800
    assert block.omitted == 0


def test_weak_matches_are_left_out() -> None:
    contents = [p.entry.content for p in build([], RELEVANT, 800).entries]
    assert "Barely related words." not in contents


def test_a_tight_budget_keeps_security_first_and_says_what_was_left_out() -> None:
    security_and_notice = estimate_tokens(
        "\n".join([TITLE, ALWAYS_HEADING, entry_line(*ALWAYS[0]), *notice_lines([SEC, INS], ())])
        + "\n"
    )
    long_rule = (INS, entry(5, "Run make test before every commit; " * 8, "make-test"))
    block = build([ALWAYS[0], long_rule], RELEVANT, security_and_notice)
    assert [p.category for p in block.entries] == [SEC]
    assert block.omitted == 1
    assert block.markdown.endswith(
        "- Not shown for space: 1 more Security/Instruction entry; read .memory/instructions.md.\n"
    )
    assert block.tokens <= security_and_notice


def test_an_unreadable_rules_file_is_named() -> None:
    block = build(ALWAYS[1:], RELEVANT, 800, unreadable=[SEC])
    assert (
        "- .memory/security.md cannot be read, so its rules are missing here; see `memd stats`."
        in block.markdown
    )
    assert [p.category for p in block.entries] == [INS, DEC, DEC]


def test_nothing_fits_means_no_block() -> None:
    block = build(ALWAYS, RELEVANT, 5)
    assert (block.markdown, block.tokens, block.entries, block.omitted) == ("", 0, (), 2)


def test_an_entry_already_in_layer_a_is_not_repeated() -> None:
    same = ALWAYS[1][1]
    block = build(ALWAYS, [(INS, same, 1.0)], 800)
    assert len(block.entries) == 2


def test_estimate_is_pessimistic_and_path_words_split_paths() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("abc") == 1
    assert estimate_tokens("abcd") == 2
    assert estimate_tokens("é") == 1  # two UTF-8 bytes
    assert path_words("src/memd/server/actor.py") == "src memd server actor py"
    assert path_words("C:\\code\\my-app\\main_view.ts") == "C: code my app main view ts"
    assert path_words(None) == ""


contents = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=120
)


@given(
    always=st.lists(contents, max_size=8),
    relevant=st.lists(st.tuples(contents, st.floats(0.01, 1.0)), max_size=8),
    budget=st.integers(1, 400),
)
def test_the_block_never_exceeds_the_budget(
    always: list[str], relevant: list[tuple[str, float]], budget: int
) -> None:
    block = build(
        [(SEC, entry(n + 1, c)) for n, c in enumerate(always)],
        [(DEC, entry(n + 1, c), score) for n, (c, score) in enumerate(relevant)],
        budget,
    )
    assert estimate_tokens(block.markdown) == block.tokens <= budget
    assert len([p for p in block.entries if p.layer == "always"]) + block.omitted == len(always)
    if block.omitted:  # rules are never left out silently
        assert block.markdown == "" or "Not shown for space" in block.markdown


def test_user_wide_rules_follow_the_projects_and_their_gaps_are_named_as_theirs() -> None:
    user_wide = [(INS, entry(5, "Answer in British English.", "british"))]
    block = build(ALWAYS, [], 800, user_wide=user_wide, user_unreadable=[SEC])
    assert [(p.entry.content, p.source) for p in block.entries] == [
        ("Never commit .env files.", "memory"),
        ("Run make test before every commit.", "memory"),
        ("Answer in British English.", "global"),
    ]
    assert block.markdown.endswith(
        "- Your user-wide security.md cannot be read, so its rules are missing here; "
        "see `memd stats --global`.\n"
    )
    long_rules = [(INS, entry(5 + n, "Prefer small pull requests; " * 6)) for n in range(6)]
    tight = build(ALWAYS, [], 160, user_wide=long_rules)
    assert tight.tokens <= 160
    assert "more user-wide Security/Instruction entr" in tight.markdown
    assert "read .memory/" not in tight.markdown  # the project's rules all fit
