"""Path scopes: what counts as a `(paths: ...)` marker, what a malformed one does, and which
files a scope matches."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from memd.core.format.path_scopes import (
    MAX_GLOBS,
    PathScope,
    in_scope,
    relative_file,
    scope_of,
    without_scopes,
)
from tests.budget import examples


@pytest.mark.parametrize(
    ("content", "globs"),
    [
        ("Run migrations with --dry-run first. (paths: src/db/**)", ("src/db/**",)),
        ("(paths: src/db/**, *.sql) Keep SQL upper-case.", ("src/db/**", "*.sql")),
        ("One file: (path: Makefile)", ("Makefile",)),
        ("No spaces needed (paths:a/b.py,c/*.ts)", ("a/b.py", "c/*.ts")),
        ("A directory's tree (paths: src/db/)", ("src/db/**",)),
        ("Normalised (paths: ./src//db/**/**/x.py)", ("src/db/**/x.py",)),
        ("Dotted (paths: .github/workflows/*.yml)", (".github/workflows/*.yml",)),
        ("Sets (paths: src/[a-c]*.py)", ("src/[a-c]*.py",)),
        ("Two markers add up (paths: a/**) and (path: b.py)", ("a/**", "b.py")),
        ("Repeats count once (paths: a/**, a/**)", ("a/**",)),
        ("Code spans elsewhere do not hide it: `x` (paths: a/**)", ("a/**",)),
    ],
)
def test_markers_found(content: str, globs: tuple[str, ...]) -> None:
    scope = scope_of(content)
    assert scope == PathScope(globs)
    assert scope.scoped


@pytest.mark.parametrize(
    "content",
    [
        "No marker here.",
        "",
        "Paths are relative to src/db/ and *.sql files live in migrations/.",
        "The config has paths: src/**, tests/** in it.",
        "A call f(paths: x) or os.path.join(path: y) is code, not a marker.",
        "An escaped \\(paths: src/**) is no marker.",
        "A URL https://example.com/(paths:src/**) holds none.",
        "Code spans hide it: `(paths: src/**)` and ``see (path: a.py) here``",
        "Upper case is prose: (Paths: src/**) (PATH: /usr/bin)",
        "A space before the colon: (paths : src/**)",
        "Other words: (pathsx: a) (filepaths: b) (pathname: c)",
    ],
)
def test_not_markers(content: str) -> None:
    assert scope_of(content) == PathScope()


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ("Prose in brackets (paths: see the docs) is no glob.", "holds ' '"),
        ("(paths: ) nothing", "empty glob"),
        ("(paths: a/**,) a trailing comma", "empty glob"),
        ("(paths: /etc/passwd)", "starts with '/'"),
        ("(paths: ~/notes/*.md)", "starts with '~'"),
        ("(paths: !src/**)", "starts with '!'"),
        ("(paths: ../other/**)", "uses '..'"),
        ("(paths: src/../x.py)", "uses '..'"),
        ("(paths: https://x.io/a)", "URL"),
        ("(paths: **/**/a/**/b/**)", "too many wildcards"),
        ("(paths: a***b***c)", "too many wildcards"),
        ("(paths: src/[z-a].py)", "not valid"),
        ("(paths: src/db/** and nothing closes it", "never closed"),
        ("(paths: a\tb)", "holds '\\t'"),
        ("Never log tokens. (paths: src\\db\\*.py)", "write '/' between names"),
        ("(paths: C:\\src\\**)", "write '/' between names"),
        ("Run the formatter. (paths: {src,tests}/**/*.py)", "{...} list"),
        ("(paths: src/*.{ts,tsx})", "{...} list"),
        ("The arg (path: str) is optional.", "reads as a word, not a path"),
        ("(paths: justfile)", "write a glob with '/', '.' or a wildcard (e.g. **/justfile)"),
        ("(paths: " + ", ".join(f"d{n}/**" for n in range(MAX_GLOBS + 1)) + ")", "more than"),
    ],
)
def test_malformed_marker_applies_everywhere_and_says_why(content: str, says: str) -> None:
    scope = scope_of(content)
    assert scope.globs == ()
    assert not scope.scoped
    assert says in scope.problem
    assert in_scope(scope, "any/file.py")


def test_one_malformed_marker_unscopes_the_whole_entry() -> None:
    """Fail open: a typo in one marker never hides the entry from files the author meant."""
    scope = scope_of("(paths: src/**) and (paths: bad glob)")
    assert scope.globs == ()
    assert "bad glob" in scope.problem


@pytest.mark.parametrize(
    ("globs", "path", "expected"),
    [
        (("src/db/**",), "src/db/migrate.py", True),
        (("src/db/**",), "src/db/deep/er/x.py", True),
        (("src/db/**",), "src/dbx/migrate.py", False),
        (("src/db/**",), "src/api/db/x.py", False),
        (("*.sql",), "schema.sql", True),
        (("*.sql",), "migrations/0042/up.sql", True),
        (("*.sql",), "migrations/up.sql.bak", False),
        (("Makefile",), "tools/Makefile", True),
        (("src/*.py",), "src/a.py", True),
        (("src/*.py",), "src/sub/a.py", False),
        (("src/*.py",), "lib/src/a.py", False),
        (("**",), "anything/at/all.txt", True),
        (("*.yml",), ".github/ci.yml", False),  # a wildcard never enters a dot directory
        ((".github/**",), ".github/workflows/ci.yml", True),
        (("src/[a-c]*.py",), "src/b.py", True),
        (("src/[a-c]*.py",), "src/d.py", False),
        (("a/**", "b.py"), "x/b.py", True),
        (("Src/**",), "src/a.py", False),  # case-sensitive
    ],
)
def test_in_scope(globs: tuple[str, ...], path: str, expected: bool) -> None:
    assert in_scope(PathScope(globs), path) is expected


def test_an_entry_without_a_scope_applies_everywhere() -> None:
    assert in_scope(scope_of("Always use UTC."), "any/where.py")


@pytest.mark.parametrize(
    ("file", "expected"),
    [
        ("src/db/x.py", "src/db/x.py"),
        ("./src//db/x.py", "src/db/x.py"),
        ("/repo/src/db/x.py", "src/db/x.py"),
        ("/repo/src/../lib/y.py", "lib/y.py"),
        ("/elsewhere/x.py", None),
        ("/repository/x.py", None),
        ("../x.py", None),
        ("/repo", None),
        ("", None),
    ],
)
def test_relative_file(file: str, expected: str | None) -> None:
    assert relative_file(file, "/repo") == expected


_INTERESTING = st.sampled_from(
    ["(paths:", "(path:", " ", ",", ")", "(", "`", "*", "**", "/", ".", "..", "a", "é", "\\"]
)
_CONTENT = st.lists(st.one_of(_INTERESTING, st.characters()), max_size=40).map("".join)


@settings(max_examples=examples(500))
@given(_CONTENT, st.lists(st.sampled_from(["a", "b.py", ".x", "é", "[", "*"]), max_size=5))
def test_scope_of_never_raises_and_is_either_globs_or_a_problem(
    content: str, names: list[str]
) -> None:
    scope = scope_of(content)
    assert not (scope.globs and scope.problem)
    assert len(scope.globs) <= MAX_GLOBS
    for glob in scope.globs:
        assert glob and not glob.startswith(("/", "~", "!"))
        assert ".." not in glob.split("/")
        assert " " not in glob
    # Every glob found reads back the same, and matching never raises.
    if scope.globs:
        assert scope_of(f"(paths: {', '.join(scope.globs)})") == scope
    assert isinstance(in_scope(scope, "/".join(names) or "x"), bool)


@settings(max_examples=examples(200))
@given(st.text(alphabet=st.characters(blacklist_characters="()`"), max_size=60))
def test_text_without_the_opening_holds_no_marker(text: str) -> None:
    assert scope_of(text) == PathScope()


@pytest.mark.parametrize(
    ("content", "left"),
    [
        ("Keep imports sorted (paths: src/**, *.py).", "Keep imports sorted ."),
        ("No marker here.", "No marker here."),
        ("Quote it: `(paths: src/**)` stays.", "Quote it: `(paths: src/**)` stays."),
        ("Unclosed (paths: src/** here", "Unclosed (paths: src/** here"),
        ("(path: Makefile) Run make first.", " Run make first."),
    ],
)
def test_without_scopes_drops_the_markers_a_slug_must_not_read(content: str, left: str) -> None:
    assert without_scopes(content) == left
