"""Which words of an entry are citations: a table of what each rule finds and what it never
finds, and properties (never raises, offsets point at the text, work linear in the text)."""

from __future__ import annotations

import sys
from types import FrameType
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from memd.core.citations.anchors import MAX_ANCHORS, anchors_of
from tests.budget import examples


def found(content: str) -> list[tuple[str, str]]:
    """(kind, key) of each anchor of `content`."""
    return [(anchor.kind, anchor.key) for anchor in anchors_of(content)]


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        # paths: with or without ./ or /, extension, globs, directories, dotfiles
        ("The client lives in `src/api/client.ts`.", [("path", "src/api/client.ts")]),
        ("Run `./scripts/seed.sh` first", [("path", "scripts/seed.sh")]),
        ("Entry point is `/src/main.py`", [("path", "src/main.py")]),
        ("Helpers sit in `lib/helpers` now", [("path", "lib/helpers")]),
        ("Tests match `tests/**/*.spec.ts`", [("path", "tests/**/*.spec.ts")]),
        ("Generated code goes to `build/out/`", [("path", "build/out")]),
        ("Keep `package.json` sorted", [("path", "package.json")]),
        ("See `Makefile` and `.gitignore`", [("path", "Makefile"), ("path", ".gitignore")]),
        ("CI is `.github/workflows/ci.yml`", [("path", ".github/workflows/ci.yml")]),
        ("Route files like `app/[slug]/page.tsx`", [("path", "app/[slug]/page.tsx")]),
        ("bare: edit src/store/cart.ts for carts", [("path", "src/store/cart.ts")]),
        ("bare: the ./tools/gen script", [("path", "tools/gen")]),
        ("bare: output lands in dist/assets/ later", [("path", "dist/assets")]),
        ("bare: read pyproject.toml first", [("path", "pyproject.toml")]),
        ("a link: [guide](docs/setup.md)", [("path", "docs/setup.md")]),
        # symbols
        ("Call `withFileLock()` first", [("symbol", "withFileLock")]),
        ("Use `Cache.invalidate` after writes", [("symbol", "Cache.invalidate")]),
        ("`Parser::next_token` skips comments", [("symbol", "Parser::next_token")]),
        ("Lua style `obj:Draw()` here", [("symbol", "obj:Draw")]),
        ("`load_rules` reads the file", [("symbol", "load_rules")]),
        ("`retryCount` caps retries", [("symbol", "retryCount")]),
        ("`OrderRepository` owns queries", [("symbol", "OrderRepository")]),
        ("`HTTPSession` reuses sockets", [("symbol", "HTTPSession")]),
        ("`Widget()` builds one", [("symbol", "Widget")]),
        ("`await fetchOrders(user)` is slow", [("symbol", "fetchOrders")]),
        ("`self._queue` is bounded", [("symbol", "self._queue")]),
        ("bare: parse_header() strips", [("symbol", "parse_header")]),
        ("bare: the merge_rows helper", [("symbol", "merge_rows")]),
        ("bare: calls buildIndex on start", [("symbol", "buildIndex")]),
        ("bare: Store::flush runs last", [("symbol", "Store::flush")]),
        # commands
        ("Run `make lint` before pushing", [("command", "make lint")]),
        ("`make fmt check`", [("command", "make fmt"), ("command", "make check")]),
        ("Then `npm run build:prod`", [("command", "npm build:prod")]),
        ("`npm test` and `npm t`", [("command", "npm test"), ("command", "npm test")]),
        ("`pnpm e2e`", [("command", "npm e2e")]),
        ("`yarn storybook`", [("command", "npm storybook")]),
        ("`bun run dev`", [("command", "npm dev")]),
        ("`just release`", [("command", "just release")]),
        ("`cargo xtask`", [("command", "cargo xtask")]),
        ("`uv run python -m tools.seed`", [("path", "tools/seed")]),
        ("`python scripts/migrate.py --dry`", [("path", "scripts/migrate.py")]),
        ("`bash ci/check.sh`", [("path", "ci/check.sh")]),
        ("`acme sync --all`", [("command", "acme sync")]),
        ("bare: npm run e2e before merging", [("command", "npm e2e")]),
        # config keys
        ("Set `[tool.black] line-length`", [("config", "tool.black.line-length")]),
        ("`max_workers = 4` in the config", [("config", "max_workers")]),
        ("`server.port` in settings.yaml", [("config", "server.port"), ("path", "settings.yaml")]),
        # env vars
        ("`ACME_TOKEN_FILE` points at it", [("env", "ACME_TOKEN_FILE")]),
        ("bare: export $SHOP_DB_URL first", [("env", "SHOP_DB_URL")]),
        ("`${SHOP_HOME:-/srv}` default", [("env", "SHOP_HOME")]),
        ("bare: SHOP_REGION picks the zone", [("env", "SHOP_REGION")]),
        ("`SHOP_DEBUG=1 acme serve`", [("env", "SHOP_DEBUG"), ("command", "acme serve")]),
    ],
)
def test_citations_found(content: str, expected: list[tuple[str, str]]) -> None:
    assert found(content) == expected


@pytest.mark.parametrize(
    "content",
    [
        # generic words, third-party names, prose capitals and brands
        "We ship on GitHub with JavaScript, PostgreSQL and macOS; iPhone and jQuery too.",
        "`lodash` `true` `main` `Config` `GitHub` `PostgreSQL` `TypeScript` `macOS` `SQLite`",
        "`print()` `console.log()` `JSON.parse()` `os.path.join()` `len()`",
        "Node.js and next.js are not files; `*.md` is a kind of file.",
        # places outside the workspace
        "`/Users/ann/notes.md` `/home/bob/x.py` `/etc/hosts` `~/.config/app.toml`",
        "`C:\\Users\\x\\a.py` `../sibling/x.ts` `$HOME/bin/tool.sh` and /var/log/app.log",
        "`/api/users/:id` and `/v1/orders` are routes",
        "`path/to/file.ts` and `src/{name}.ts` and `<dir>/x.py` are placeholders",
        "`application/json` and `text/plain`; CI/CD and I/O; 2024/05/01",
        # URLs, domains, emails, versions, packages
        "https://example.com/src/a.ts and www.example.org/x.py and api.github.com",
        "`example.com` `docs.acme.io` mail ann@example.com",
        "`v1.2.3` `3.11` `node@18` `@scope/pkg` `lodash@4.17.21`",
        # well-known env vars and common commands
        "`PATH` `$HOME` `NODE_ENV=production` `CI` `${XDG_CONFIG_HOME}`",
        "`npm install` `npm ci` `cargo build` `cargo nextest run` `make` `git status` `pnpm add x`",
        "`yarn workspace web build` `npm --prefix web run dev` `make -C sub all`",
        # prose that looks like commands or identifiers
        "Make sure to just do it; make all of it work. The API returns JSON.",
        "Use _emphasis_ and __bold__ here; #tags_like_this and @user_name too.",
        "e.g. at 9 a.m. in the U.S. office.",
        # code that is not a citation
        "`x == y` `a => b` `const total = 1` `if count > 0`",
        # a path with a space: its last word alone is another file
        "Edit `src/my file.ts` by hand; the notes are in `docs/Read Me.md`.",
    ],
)
def test_never_citations(content: str) -> None:
    assert found(content) == []


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("Removed the old `init()`.", []),
        ("We deleted `src/legacy.ts` last week", []),
        ("The app no longer uses `make_session`", []),
        ("Use `load_all()` instead of `load_each()`", [("symbol", "load_all")]),
        ("Prefer `fast_path` rather than `slow_path`", [("symbol", "fast_path")]),
        ("Replaced `old_api` with `new_api`", [("symbol", "new_api")]),
        ("`old_api` was replaced by `new_api`", [("symbol", "new_api")]),
        ("Migrated from `src/v1/` to `src/v2/`", [("path", "src/v2")]),
        ("`fetch_all` was renamed from `get_all`", [("symbol", "fetch_all")]),
        ("`get_all` was renamed to `fetch_all`", [("symbol", "fetch_all")]),
        ("`parse_v1` is deprecated; use `parse_v2`", [("symbol", "parse_v2")]),
        ("Don't use `raw_query()`, use `safe_query()`", [("symbol", "safe_query")]),
        ("Never import `internal_x`. Call `public_x` instead.", [("symbol", "public_x")]),
        ("Avoid `globalState` in tests", []),
        ("Use `good_one`, not `bad_one`", [("symbol", "good_one")]),
        ("The `a_helper` and `b_helper` functions were removed", []),
        ("`cache_dir` (deprecated) still parses", []),
        ("Config used to live in `conf/app.ini`", []),
        # imperatives are not negations: the thing exists now
        ("Remove `debug_flag` before release", [("symbol", "debug_flag")]),
        ("Do not edit `src/generated.ts` by hand", [("path", "src/generated.ts")]),
        # a clause ends the scope
        ("Removed the shim. `start_app()` boots it.", [("symbol", "start_app")]),
    ],
)
def test_negated_mentions(content: str, expected: list[tuple[str, str]]) -> None:
    assert found(content) == expected


def test_anchor_fields() -> None:
    content = "Call `withFileLock()` in ./src/lock.ts; run `npm run e2e`."
    symbol, path, command = anchors_of(content)
    assert (symbol.text, symbol.words, symbol.quoted) == ("withFileLock()", ("withFileLock",), True)
    assert (path.text, path.key, path.quoted) == ("./src/lock.ts", "src/lock.ts", False)
    assert (command.text, command.key, command.words) == ("npm run e2e", "npm e2e", ("npm", "e2e"))
    for anchor in (symbol, path, command):
        assert content[anchor.start : anchor.end] == anchor.text


def test_many_citations_are_capped() -> None:
    content = " ".join(f"`mod_{n}.py`" for n in range(MAX_ANCHORS * 2))
    anchors = anchors_of(content)
    assert len(anchors) == MAX_ANCHORS
    assert anchors[0].key == "mod_0.py"


PIECES = [*"ab_AZ./:`$-(){}[]#@~ \n=,;", "src/", "npm run ", "x()", "make ", "removed ", "`a.py`"]
TEXTS = st.lists(st.sampled_from(PIECES), max_size=120).map("".join)


@settings(max_examples=examples(300))
@given(TEXTS | st.text(max_size=200))
def test_never_raises_and_offsets_point_at_the_text(content: str) -> None:
    anchors = anchors_of(content)
    assert len(anchors) <= MAX_ANCHORS
    assert [a.start for a in anchors] == sorted(a.start for a in anchors)
    for anchor in anchors:
        assert content[anchor.start : anchor.end] == anchor.text
        assert anchor.key and anchor.kind in ("path", "symbol", "command", "config", "env")


def _steps(content: str) -> int:
    """Lines of the citation modules executed for `content` (a measure of work, not time)."""
    count = 0

    def tracer(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal count
        if (
            "memd/core/citations" in frame.f_code.co_filename
            or "tags.py" in frame.f_code.co_filename
        ):
            if event == "line":
                count += 1
            return tracer
        return None

    sys.settrace(tracer)
    try:
        anchors_of(content)
    finally:
        sys.settrace(None)
    return count


@pytest.mark.parametrize(
    "unit",
    [
        "Call `withFileLock()` in src/a/b.ts; removed `old_x`. ",
        "`" * 3 + "a" + "`" * 2 + " ",
        "a_b_c_d_e_f_g_h ",
        "src/" * 20 + " ",
        "no longer instead of removed " * 3,
        "x" * 50,
    ],
)
def test_work_is_linear_in_the_text(unit: str) -> None:
    small, large = _steps(unit * 40), _steps(unit * 160)
    assert large <= 4.5 * max(small, 1) + 200
