"""Stems: Snowball's English (Porter2) against a fixed table, and the language by script."""

from __future__ import annotations

import string
from concurrent.futures import ThreadPoolExecutor

import pytest
from hypothesis import given, strategies as st

from memd.core.text.stemmer import language_of, stem

STEMS: tuple[tuple[str, str], ...] = (
    # special cases and exceptions
    ("generously", "generous"),
    ("generate", "generat"),
    ("generations", "generat"),
    ("communism", "communism"),
    ("communication", "communic"),
    ("arsenal", "arsenal"),
    ("arsenals", "arsenal"),
    ("university", "universiti"),
    ("universal", "universal"),
    ("organization", "organiz"),
    ("emergency", "emergenc"),
    ("dying", "die"),
    ("lying", "lie"),
    ("tying", "tie"),
    ("skies", "sky"),
    ("skis", "ski"),
    ("sky", "sky"),
    ("news", "news"),
    ("howe", "howe"),
    ("atlas", "atlas"),
    ("cosmos", "cosmos"),
    ("bias", "bias"),
    ("andes", "andes"),
    ("succeeded", "succeed"),
    ("succeeding", "succeed"),
    ("exceed", "exceed"),
    ("exceeding", "exceed"),
    ("proceed", "proceed"),
    ("inning", "inning"),
    ("innings", "inning"),
    ("outing", "outing"),
    ("canning", "canning"),
    ("herring", "herring"),
    ("earring", "earring"),
    ("evening", "evening"),
    # step 0 and 1a
    ("dog's", "dog"),
    ("dogs'", "dog"),
    ("'tis", "tis"),
    ("caresses", "caress"),
    ("ponies", "poni"),
    ("ties", "tie"),
    ("cries", "cri"),
    ("gas", "gas"),
    ("gaps", "gap"),
    ("kiwis", "kiwi"),
    ("this", "this"),
    ("cats", "cat"),
    # step 1b
    ("hopping", "hop"),
    ("hoped", "hope"),
    ("hoping", "hope"),
    ("luxuriated", "luxuri"),
    ("filed", "file"),
    ("agreed", "agre"),
    ("feed", "feed"),
    ("bled", "bled"),
    ("singing", "sing"),
    ("added", "add"),
    ("vying", "vie"),
    ("controlling", "control"),
    # step 1c
    ("cry", "cri"),
    ("by", "by"),
    ("say", "say"),
    ("says", "say"),
    ("played", "play"),
    ("enjoying", "enjoy"),
    # steps 2 to 5
    ("national", "nation"),
    ("relational", "relat"),
    ("conditional", "condit"),
    ("valenci", "valenc"),
    ("hesitanci", "hesit"),
    ("digitizer", "digit"),
    ("sensational", "sensat"),
    ("operator", "oper"),
    ("feudalism", "feudal"),
    ("hopefulness", "hope"),
    ("callousness", "callous"),
    ("decisiveness", "decis"),
    ("sensibility", "sensibl"),
    ("fruitfulli", "fruit"),
    ("formalize", "formal"),
    ("electricity", "electr"),
    ("electrical", "electr"),
    ("hopeful", "hope"),
    ("goodness", "good"),
    ("demonstrative", "demonstr"),
    ("allowance", "allow"),
    ("inference", "infer"),
    ("airliner", "airlin"),
    ("gyroscopic", "gyroscop"),
    ("adjustable", "adjust"),
    ("defensible", "defens"),
    ("irritant", "irrit"),
    ("replacement", "replac"),
    ("adjustment", "adjust"),
    ("dependent", "depend"),
    ("adoption", "adopt"),
    ("homologous", "homolog"),
    ("effective", "effect"),
    ("bowdlerize", "bowdler"),
    ("probate", "probat"),
    ("rate", "rate"),
    ("roll", "roll"),
    ("biologist", "biolog"),
    ("international", "internat"),
    ("internal", "internal"),
    # developer vocabulary
    ("writes", "write"),
    ("writing", "write"),
    ("written", "written"),
    ("locks", "lock"),
    ("locking", "lock"),
    ("locked", "lock"),
    ("files", "file"),
    ("filing", "file"),
    ("tests", "test"),
    ("testing", "test"),
    ("configured", "configur"),
    ("configuration", "configur"),
    ("dependencies", "depend"),
    ("deployment", "deploy"),
    ("paste", "paste"),
    ("pasted", "paste"),
    # short words, digits
    ("a", "a"),
    ("ab", "ab"),
    ("abc", "abc"),
    ("utf8", "utf8"),
    ("2023", "2023"),
    ("1990s", "1990s"),
)


@pytest.mark.parametrize(("word", "expected"), STEMS)
def test_stem_matches_the_reference(word: str, expected: str) -> None:
    assert stem(word) == expected


def test_inflections_share_a_stem() -> None:
    assert stem("write") == stem("writes") == stem("writing") == "write"
    assert stem("lock") == stem("locks") == stem("locked") == stem("locking")


@pytest.mark.parametrize("word", ["", "a", "go", "42", "v2"])
def test_short_words_are_returned_unchanged(word: str) -> None:
    assert stem(word) == word


def test_the_language_goes_by_script() -> None:
    assert language_of("deploy") == language_of("ausführen") == "english"
    assert language_of("очищается") == "russian"
    assert stem("очищается") == stem("очищаются") == "очища"
    assert language_of("δοκιμές") == "greek"


def test_each_thread_stems_with_its_own_stemmer() -> None:
    words = [f"writing{n}s" for n in range(200)] + ["writing", "locked"] * 100
    expected = [stem(word) for word in words]
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda _: [stem(word) for word in words], range(8)))
    assert all(result == expected for result in results)


@given(st.text(alphabet=string.ascii_lowercase + string.digits + "'", max_size=20))
def test_stems_are_lowercase_and_never_longer(word: str) -> None:
    result = stem(word)
    assert len(result) <= len(word)
    assert set(result) <= set(string.ascii_lowercase + string.digits + "'")
