"""Which of an entry's words cite this workspace's artifacts: the rule table.

Precision comes first: a citation is something that can go stale, so when a word could as well
be prose, a third-party name or a place outside the workspace, it is not one.

Where (the signal):
- A code span (backticks, `tags.code_spans`) is the strongest signal: its text is judged whole
  (a path, a symbol, a command, a config key, an env var), `quoted=True`. A span of several
  lines (a fenced block) is read line by line as commands.
- Outside code spans only unambiguous shapes count (`quoted=False`): a path with a `/` and a
  known extension (`src/api/client.ts`), one that starts with `./` or ends with `/` (`src/`),
  a file name with a known extension of two or more letters (`package.json`, `setup.py`); a
  call (`withFileLock()`); a snake_case name with an inner `_` (`with_file_lock`); a camelCase
  name with a hump after two lowercase letters (`withFileLock`, not `iPhone`, `macOS`,
  `jQuery`); a `::`-qualified name; an env var (`$X`, `${X}`, `MEMD_SOCKET`); and
  `npm / pnpm / yarn / bun run <script>`. Never a bare PascalCase word, single word, or dotted
  name without a call.

Kinds (the `Anchor.key` and `words` each gets are described in `model.Anchor`):
- path: with or without `./` or `/`, relative to the root or a subfolder, with or without an
  extension, globs with a directory part (`src/**/*.ts`), directories with a trailing `/`,
  dotfiles (`.gitignore`, `.github/workflows/ci.yml`) and well-known extension-less files
  (`Makefile`, `Dockerfile`, `LICENSE`). `package.json`, `pyproject.toml` and their kind ARE
  paths: they are files of this workspace that can be renamed or deleted. Also a script run
  by a command (`./scripts/x.sh`, `bash scripts/x.sh`, `python tools/gen.py`) and the module
  of `python -m pkg.mod` (key `pkg/mod`; the gatherer adds the extension).
- symbol: `withFileLock()`, `Foo.bar`, `Foo::bar`, `Foo#bar`, `obj:Method()`, `snake_case`,
  `camelCase`, and in a code span a PascalCase name of code shape: two or more humps
  (`UserService`) or a leading acronym and a hump (`HTTPClient`), and not a brand (`GitHub`,
  `JavaScript`, `PostgreSQL`, `macOS`: see `_BRANDS`); a single hump (`Config`) only with
  `()` or a qualifier. Words are the name's parts, without `self` / `this` / `cls`.
- command: `make x` (each target; not with `-C` / `-f`), `npm run x`, `npm test|start|stop|
  restart`, `pnpm x`, `yarn x` (not their own verbs: `install`, `add`, ...), `bun run x` (all
  four read package.json: key `npm x`), `just x`, `cargo x` (not cargo's own verbs nor common
  plugins: `build`, `test`, `nextest`, ...), and `<cli> <subcommand>` for any other tool not
  in `_TOOLS` (judged against the repo's own CLIs, unverifiable elsewhere). A leading
  `VAR=value` is read as an env var, then skipped; paths among a command's arguments count.
  A span whose first word has a `/` but is no script (`src/my file.ts`, a name with a space)
  is not a command: it cites nothing (its last word alone, `file.ts`, is another file).
- config: `[tool.x] key`, `[section]`, `key = value`, and a lowercase dotted name (`a.b.c`)
  in a clause that names a config file or settings; words are the key's parts.
- env: `$DATABASE_URL`, `${X}`, `${X:-default}`, `X=value`, and an ALL_CAPS name with an `_`
  (`MEMD_SOCKET`; a constant of that shape reads as env too, and is judged the same way).

Never a citation:
- generic words and single lowercase words, even in backticks (`lodash`, `true`, `main`);
  builtins and standard globals (`print()`, `console.log()`, `JSON.parse()`, `os.path`:
  `_BUILTINS`); capitalised prose words and brands (see above);
- paths outside the workspace (`/Users/...`, `/home/...`, `/etc/...`, `~/...`, `C:\\...`,
  `$HOME/...`, any `..` segment, any backslash), a leading-`/` path without a known extension
  (a URL route reads the same: `/api/users`), routes with `:id`, MIME types
  (`application/json`), placeholders (`path/to/x`, `<name>.ts`, `src/{name}.ts`, `...`),
  all-caps or all-digit pairs (`CI/CD`, `I/O`, `2024/01`), and a glob without a directory
  (`*.md`: a kind of file, not a place);
- URLs, domain names (`example.com`, `api.github.com`), email addresses, `@mentions` and
  `#tags`, versions (`v1.2.3`, `3.11`, `node@18`), package specs (`@scope/pkg`,
  `lodash@4`); brand file names (`Node.js`, `next.js`);
- negated mentions ("removed the old `init()`": the scope rules are in `negation`);
- well-known env vars (`PATH`, `HOME`, `CI`, `NODE_ENV`, ...: `_COMMON_ENV`) and common
  commands (`npm install`, `cargo build`, `make` alone, `git ...`);
- `python -m` of a standard or well-known tool module (`pytest`, `http.server`: `_TOOL_MODULES`).

Bounds: the work is linear in the text (one pass for code spans, one for words, one for clause
ends; each citation's negation looks at most `negation.CUE_WINDOW` characters either side); a
word longer than `MAX_WORD` is skipped, and an entry yields at most `MAX_ANCHORS` citations
(the first ones in text order).

Size: one rule table (the word lists are the bulk), kept in one module like `tags` and
`secrets` so every caller asks the same question.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from memd.core.citations.model import Anchor, AnchorKind
from memd.core.citations.negation import Clauses
from memd.core.format.tags import code_spans

__all__ = ["MAX_ANCHORS", "MAX_WORD", "anchors_of"]

MAX_ANCHORS = 64
"""Citations one entry yields at most (the first in text order)."""
MAX_WORD = 200
"""Characters a citation has at most; a longer word is skipped."""


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Extensions of files in a code base (case-insensitive). Not TLDs like com/org/io/dev/ai.
_EXTENSIONS = _words(
    "py pyi pyx ipynb jsonl ndjson parquet ts tsx mts cts js jsx mjs cjs vue svelte astro json "
    "jsonc json5 yaml yml "
    "toml ini cfg conf env md mdx rst txt adoc html htm css scss sass less styl go mod sum rs rb "
    "erb php java kt kts scala groovy gradle swift m mm h hpp hh c cc cpp cxx cs fs fsx dart lua "
    "ex exs erl hrl clj cljs edn elm hs ml mli nim zig sol sh bash zsh fish ps1 psm1 bat cmd sql "
    "prisma graphql gql proto tf tfvars hcl nix lock xml xsd svg csv tsv tex r jl pl pm mk cmake "
    "bzl bazel plist properties lockb wasm tmpl tpl j2 jinja jinja2 hbs ejs pug njk liquid "
    "dockerfile editorconfig gitignore dockerignore npmrc nvmrc example sample template"
)
# Domain endings: a dotted word ending so (and not in _EXTENSIONS) is a host name.
_TLDS = _words(
    "com org net io dev ai app co uk de fr edu gov info biz me tv cloud site xyz tech online us "
    "eu ca au jp cn ru in br nl se ch es it pl ly gg fm to page run so sh"
)
# Extension-less files a repository keeps at a well-known name.
_PLAIN_FILES = _words(
    "Makefile makefile GNUmakefile Dockerfile Containerfile Justfile justfile Procfile Gemfile "
    "Rakefile Vagrantfile Brewfile Pipfile Taskfile LICENSE LICENCE COPYING NOTICE CODEOWNERS "
    "CHANGELOG README CONTRIBUTING AUTHORS Jenkinsfile Tiltfile Earthfile BUILD WORKSPACE"
)
# First segments of an absolute path on a machine: outside the workspace.
_SYSTEM_ROOTS = _words(
    "Users home etc usr var opt tmp private Library System Applications Volumes bin sbin dev "
    "proc sys mnt root nix snap srv run lib lib64 boot media Program"
)
_MIME_TOPS = _words("application text image audio video multipart font model message")
# Brand and product names of code shape: prose, not symbols (unless with `()` or a qualifier).
_BRANDS = _words(
    "GitHub GitLab BitBucket Bitbucket JavaScript TypeScript CoffeeScript ActionScript PyTorch "
    "NumPy SciPy PyPI PyCharm WebStorm GoLand IntelliJ JetBrains TensorFlow YouTube LinkedIn "
    "WordPress PowerShell PowerPoint DevOps CloudFlare CloudFront CloudWatch BigQuery DataDog "
    "PostHog SendGrid SharePoint OneDrive DropBox MacBook PayPal DigitalOcean HuggingFace "
    "LangChain LlamaIndex DeepSeek OpenRouter AutoGen ClickHouse ElasticSearch OpenSearch "
    "EventBridge AppSync LocalStack GitKraken DevTools ReactNative NextAuth SvelteKit SQLite "
    "VSCode UIKit AppKit SwiftUI CoreData StackOverflow FreeBSD OpenBSD NetBSD LibreOffice "
    "OpenOffice WebSocket WebSockets WebAssembly WebGL WebGPU WebRTC GraphQL MySQL PostgreSQL "
    "NoSQL MongoDB DynamoDB CockroachDB TimescaleDB RabbitMQ OpenAI ChatGPT FastAPI HackLM "
    "CodeQL macOS watchOS tvOS visionOS iPadOS iOS MinIO TailwindCSS NodeJS NextJS VueJS "
    "CircleCI TravisCI AppVeyor HomeBrew Homebrew PlayStation XCode Xcode OAuth GoogleTest "
    "MkDocs ReadTheDocs DocuSign QuickBooks ServiceNow SalesForce HubSpot MailChimp YugabyteDB "
    "SurrealDB PlanetScale CosmosDB FireBase OpenTelemetry OpenAPI AsyncAPI JupyterLab "
    "RedHat CentOS OpenSUSE TrueNAS OpenWrt KeePass LastPass OnePassword BitWarden"
)
# Builtins and standard globals: a symbol whose first part is one of these is not the repo's.
_BUILTINS = _words(
    "print len range open isinstance issubclass str int float bool dict list set tuple super "
    "type getattr setattr hasattr delattr sorted reversed enumerate zip map filter input format "
    "repr id hash iter next min max sum abs any all vars dir callable exit quit eval exec "
    "console JSON Object Array Promise Math Date String Number Boolean Symbol Map Set WeakMap "
    "Error TypeError RegExp Reflect Proxy Intl window document globalThis navigator location "
    "localStorage sessionStorage process module exports require fetch setTimeout setInterval "
    "clearTimeout clearInterval queueMicrotask structuredClone parseInt parseFloat isNaN "
    "encodeURIComponent decodeURIComponent alert os sys re json time datetime math path fs "
    "asyncio subprocess logging typing pathlib collections itertools functools np pd torch std "
    "fmt http util crypto Buffer URL URLSearchParams"
)
_SELF = _words("self this cls")
# Environment variables every machine or CI has: not this workspace's.
_COMMON_ENV = _words(
    "PATH HOME USER USERNAME LOGNAME SHELL PWD OLDPWD TERM LANG LANGUAGE LC_ALL LC_CTYPE TMPDIR "
    "TMP TEMP CI NODE_ENV NODE_OPTIONS NODE_PATH PYTHONPATH PYTHONHOME PYTHONUNBUFFERED "
    "PYTHONDONTWRITEBYTECODE VIRTUAL_ENV CONDA_PREFIX EDITOR VISUAL PAGER DISPLAY HOSTNAME "
    "XDG_CONFIG_HOME XDG_DATA_HOME XDG_CACHE_HOME XDG_STATE_HOME XDG_RUNTIME_DIR JAVA_HOME "
    "GOPATH GOROOT GOBIN CARGO_HOME RUSTUP_HOME RUST_LOG RUST_BACKTRACE LD_LIBRARY_PATH "
    "DYLD_LIBRARY_PATH SSH_AUTH_SOCK HTTP_PROXY HTTPS_PROXY NO_PROXY GITHUB_ACTIONS "
    "GITHUB_TOKEN GITHUB_WORKSPACE GITHUB_REF GITHUB_SHA RUNNER_OS DEBUG PORT TZ COLUMNS LINES "
    "APPDATA LOCALAPPDATA USERPROFILE PROGRAMFILES SYSTEMROOT COMSPEC PATHEXT"
)
# Tools whose subcommands are theirs, not this workspace's (`git status`, `docker compose`).
_TOOLS = _words(
    "git gh docker docker-compose podman kubectl helm terraform aws gcloud az pip pip3 pipx uv "
    "poetry pipenv pdm hatch conda mamba brew apt apt-get dnf yum pacman snap curl wget ssh scp "
    "rsync ls cd cat grep rg find sed awk echo printf export source sudo npx node deno go rustup "
    "rustc python python3 py pytest ruff mypy black isort flake8 pylint eslint prettier tsc jest "
    "vitest mocha playwright cypress code open chmod chown mkdir rm mv cp ln touch systemctl "
    "journalctl launchctl psql mysql redis-cli sqlite3 openssl tar zip unzip gzip pre-commit "
    "tox nox gem bundle bundler rails rake composer php mvn gradle dotnet swift xcodebuild "
    "flutter dart ng vite webpack turbo nx lerna firebase vercel netlify heroku fly flyctl "
    "wrangler supabase prisma alembic uvicorn gunicorn flask celery jupyter ollama claude "
    "codex expo eas pod adb xcrun tmux vim nvim nano less head tail wc sort uniq xargs tee env "
    "which kill ps top ping nc jq yq http bash sh zsh fish pwsh ts-node tsx java javac mix "
    "iex cmake ninja bazel meson nix direnv asdf mise nvm volta corepack sam cdk pulumi "
    "ansible vagrant minikube kind k9s stripe "
    # and words that start a line of code, not a command
    "const let var if else elif for while return def class import from export function async "
    "await new yield raise throw try catch with assert type interface enum pub fn use mut "
    "select update delete insert create drop alter"
)
_MAKE_OTHER_FILE = _words("-C -f --directory --file --makefile")
# Package-manager verbs that are not package.json scripts.
_NPM_SCRIPTS = {"test": "test", "t": "test", "start": "start", "stop": "stop", "restart": "restart"}
_PM_VERBS = _words(
    "install i ci add remove rm uninstall update upgrade up outdated audit init create dlx exec "
    "x link unlink publish pack version why info list ls config cache store prune rebuild fetch "
    "patch env setup deploy root bin licenses import dedupe explain workspace workspaces global "
    "set plugin constraints npm login logout node help run run-script"
)
_CARGO_VERBS = _words(
    "build b run r test t check c clippy fmt doc d new init add remove rm install uninstall "
    "publish update bench clean search tree vendor fix metadata package login logout owner "
    "yank help version pkgid generate-lockfile locate-project report rustc rustdoc "
    "verify-project nextest audit deny watch llvm-cov tarpaulin expand udeps outdated edit make "
    "insta criterion flamegraph release dist binstall hack semver-checks sort bloat machete "
    "leptos tauri shuttle lambda component miri fuzz mutants about sweep upgrade"
)
_PYTHONS = _words("python python3 py pypy pypy3")
_SCRIPT_RUNNERS = _words("bash sh zsh fish node deno bun ts-node tsx ruby perl php pwsh source")
_LAUNCHERS = _words("uv poetry pipenv pdm hatch rye")  # `<launcher> run <command>`
# Modules `python -m` runs that are not this workspace's (first dotted part).
_TOOL_MODULES = _words(
    "pytest pip venv virtualenv http json unittest mypy build black ruff isort flake8 pylint "
    "coverage pdb cProfile profile timeit doctest ensurepip zipapp uvicorn gunicorn streamlit "
    "jupyter notebook ipykernel twine pre_commit spacy nltk site sysconfig compileall "
    "py_compile trace webbrowser calendar tokenize ast dis pydoc tkinter asyncio sqlite3 "
    "zipfile tarfile gzip base64 uuid hatch poetry pipx pip_audit bandit nox tox sphinx mkdocs "
    "grpc_tools django flask celery alembic playwright nuitka PyInstaller pyinstaller"
)
_CONFIG_CONTEXT = re.compile(
    r"\b(?:config|configs|configuration|settings?|options?|keys?|toml|ya?ml|json|ini|"
    r"pyproject|tsconfig|package\.json|\.env)\b",
    re.IGNORECASE,
)

# Libraries named like a JavaScript file: `Node.js` and `next.js` are prose, not files.
_BRAND_JS = _words(
    "node vue next nuxt react three chart d3 express ember backbone angular alpine solid p5 "
    "anime moment day video socket pdf highlight marked lit"
)

_IDENT = r"[A-Za-z_$][\w$]*"
_SEPARATOR = re.compile(r"::|->|[.#:]")
# A symbol: a qualified name, then maybe a call's parentheses (arguments ignored, no nesting).
_SYMBOL = re.compile(rf"({_IDENT}(?:(?:::|->|[.#:]){_IDENT})*)(\([^()]*\))?")
_SNAKE = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+")  # an inner `_`
_CAMEL = re.compile(r"[a-z][a-z0-9]+(?:[A-Z]+[a-z0-9]*)+")  # two lowercase letters, then caps
_CAMEL_HUMP = re.compile(r"[A-Z][a-z0-9]")
_PASCAL = re.compile(r"[A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*")
_PASCAL_HUMP = re.compile(r"[A-Z][a-z]")
_LEADING_ACRONYM = re.compile(r"[A-Z]{2,}[a-z]")
_ENV = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)(?::?[-=?+][^}]*)?\}?")
_CAPS_ENV = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
_ASSIGN = re.compile(r"([A-Za-z_][\w.-]*)(?:\s+=(?![=>~])\s*|=(?![=>~])\s+)\S.*")
_ENV_ASSIGN = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=\S*")
_TABLE = re.compile(r"\[{1,2}([A-Za-z0-9_.\"-]+)\]{1,2}(?:\s+([A-Za-z_][\w.-]*))?")
_DOTTED = re.compile(r"[a-z][\w-]*(?:\.[a-z][\w-]*)+")
_MODULE = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
_NAME = re.compile(r"[A-Za-z0-9][\w:.-]*")
_PATH_CHARS = re.compile(r"/?[\w.*?@+=$%!,{}()\[\]~-]+(?:/[\w.*?@+=$%!,{}()\[\]~-]*)*")
_TEMPLATE = re.compile(r"<|>|\{\w*\}|\.\.\.|(?:^|/)path/to(?:/|$)|(?:^|/):\w")
_VERSION = re.compile(r"[v=<>~^]*\d+(?:\.\d+)*(?:[-+.]?\w+)*")
_DOTFILE = re.compile(r"\.[a-z][a-z0-9_-]*(?:\.[a-z0-9_-]+)*")
_BARE_WORD = re.compile(r"[^\s()\[\]<>\"'`]+(?:\(\))?")
_BARE_RUN = re.compile(r"\b(?:npm|pnpm|yarn|bun)\s+run\s+([A-Za-z0-9][\w:.-]*[A-Za-z0-9]|\w)")
_SCRIPT_PREFIXES = ("./", "bin/", "scripts/", "script/", "tools/")
_TRAILING = ".,;:!?*\u201d\u2019"
_LEADING = "*\u201c\u2018"


def anchors_of(content: str) -> tuple[Anchor, ...]:
    """Return the citations in `content`, in text order (see the module rules); never raises.

    Args:
        content: An entry's content (any text).

    Returns:
        At most `MAX_ANCHORS` anchors, each at `content[anchor.start:anchor.end]`.
    """
    spans = code_spans(content)
    blanked = _blank(content, spans)
    found = [*_spanned(content, spans), *_bare(blanked)]
    if not found:
        return ()
    clauses = Clauses(blanked)
    kept = sorted(
        (a for a in found if not clauses.negated(*_extent(a, content))), key=lambda a: a.start
    )
    return tuple(_as_config(a, blanked, clauses) for a in kept[:MAX_ANCHORS])


def _blank(content: str, spans: list[tuple[int, int]]) -> str:
    """`content` with each code span replaced by as many `"` (offsets kept; a `"` ends a bare
    word, so a word next to a span is read without it)."""
    pieces, position = [], 0
    for start, end in spans:
        pieces.append(content[position:start])
        pieces.append('"' * (end - start))
        position = end
    pieces.append(content[position:])
    return "".join(pieces)


def _extent(anchor: Anchor, content: str) -> tuple[int, int]:
    """Where a citation stands in the text: a quoted one with its backticks and padding."""
    start, end = anchor.start, anchor.end
    if anchor.quoted:
        while start > 0 and content[start - 1] in "` " and anchor.start - start < 8:
            start -= 1
        while end < len(content) and content[end] in "` " and end - anchor.end < 8:
            end += 1
    return start, end


def _as_config(anchor: Anchor, blanked: str, clauses: Clauses) -> Anchor:
    """A lowercase dotted symbol in a clause that names a config file or settings is a config
    key (`editor.format_on_save`, `server.port`); any other anchor stays as it is."""
    if anchor.kind != "symbol" or not _DOTTED.fullmatch(anchor.key):
        return anchor
    low, high = clauses.window(anchor.start, anchor.end)
    if _CONFIG_CONTEXT.search(blanked, low, high) is None:
        return anchor
    a = anchor
    return Anchor(a.text, "config", a.key, a.start, a.end, a.quoted, a.words)


def _anchor(text: str, kind: AnchorKind, key: str, at: int, words: tuple[str, ...] = ()) -> Anchor:
    """A quoted anchor for `text` written at `at`."""
    return Anchor(text, kind, key, at, at + len(text), True, words)


# --- code spans -------------------------------------------------------------------------------


def _spanned(content: str, spans: list[tuple[int, int]]) -> Iterator[Anchor]:
    """The citations inside code spans: each span's text judged whole; a span of several lines
    (a fenced block) read line by line as commands."""
    for span_start, span_end in spans:
        ticks = span_end - span_start - len(content[span_start:span_end].lstrip("`"))
        inner_start, inner_end = span_start + ticks, span_end - ticks
        if inner_end - inner_start > 4 * MAX_WORD:
            continue
        inner = content[inner_start:inner_end]
        if "\n" in inner:
            offset = inner_start
            for line in inner.split("\n"):
                yield from _command(line, offset)
                offset += len(line) + 1
            continue
        stripped = inner.strip()
        if stripped:
            yield from _span_text(stripped, inner_start + inner.index(stripped))


def _span_text(text: str, at: int) -> Iterator[Anchor]:
    """One code span's text: a single word, a call with arguments, a config line, or a
    command (see the module rules)."""
    table = _TABLE.fullmatch(text)
    if table:
        key = table.group(1).replace('"', "")
        key = f"{key}.{table.group(2)}" if table.group(2) else key
        yield _anchor(text, "config", key, at, _parts(key))
        return
    if not any(ch.isspace() for ch in text):
        assign = _ENV_ASSIGN.fullmatch(text)
        if assign and "=" in text and not text.startswith("$"):
            anchor = _config_key(assign.group(1), at)
            if anchor is not None:
                yield anchor
            return
        anchor = _word(text, at, quoted=True)
        if anchor is not None:
            yield anchor
        return
    for prefix in ("new ", "await "):
        if text.startswith(prefix):
            text, at = (
                text[len(prefix) :].lstrip(),
                at + len(text) - len(text[len(prefix) :].lstrip()),
            )
    call = _SYMBOL.fullmatch(text)
    if call and call.group(2):
        anchor = _word(text, at, quoted=True)
        if anchor is not None:
            yield anchor
        return
    assign = _ASSIGN.fullmatch(text)
    if assign:
        anchor = _config_key(assign.group(1), at)
        if anchor is not None:
            yield anchor
        return
    yield from _command(text, at)


def _config_key(name: str, at: int) -> Anchor | None:
    """The key of `key = value` / `KEY=value`: an ALL_CAPS one is an env var."""
    if name.isupper() or _CAPS_ENV.fullmatch(name):
        return None if name in _COMMON_ENV else _anchor(name, "env", name, at, (name,))
    if not any(ch.isalpha() for ch in name):
        return None
    return _anchor(name, "config", name, at, _parts(name))


def _parts(key: str) -> tuple[str, ...]:
    """The words of a dotted key (`tool.ruff.line-length` -> tool, ruff, line-length)."""
    return tuple(part for part in key.split(".") if part)


# --- commands ---------------------------------------------------------------------------------


def _command(text: str, offset: int) -> Iterator[Anchor]:
    """A command line's citations: the target or script it runs, a script file or module it
    runs, paths among its arguments, env vars it sets first (see the module rules)."""
    tokens = [(m.group(), offset + m.start()) for m in re.finditer(r"\S+", text)]
    if tokens and tokens[0][0] in ("$", ">", "%", "#"):  # a shell prompt
        tokens = tokens[1:]
    while tokens and _ENV_ASSIGN.fullmatch(tokens[0][0]):
        name = tokens[0][0].split("=", 1)[0]
        if _CAPS_ENV.fullmatch(name) and name not in _COMMON_ENV:
            yield _anchor(name, "env", name, tokens[0][1], (name,))
        tokens = tokens[1:]
    if len(tokens) >= 3 and tokens[0][0] in _LAUNCHERS and tokens[1][0] == "run":
        tokens = tokens[2:]
    if tokens:
        yield from _run(tokens[0][0], tokens[0][1], tokens[1:], text, offset)


def _run(
    runner: str, at: int, rest: list[tuple[str, int]], text: str, offset: int
) -> Iterator[Anchor]:
    """The citations of `runner` (written at `at`) run with the words `rest`."""
    if runner == "make":
        yield from _make(rest, at, text, offset)
    elif runner in ("npm", "pnpm", "yarn", "bun"):
        yield from _package_script(runner, rest, at, text, offset)
    elif runner in ("just", "cargo"):
        yield from _just_or_cargo(runner, rest, at, text, offset)
    elif runner in _PYTHONS:
        yield from _python(rest)
    elif runner in _SCRIPT_RUNNERS:
        yield from _paths([(w, a) for w, a in rest if not w.startswith("-")][:1])
    elif runner.startswith(_SCRIPT_PREFIXES) or _extension(runner) in _EXTENSIONS:
        yield from _paths([(runner, at)])
    elif "/" in runner:
        return  # a path with a space (`src/my file.ts`), not a command: its words cite nothing
    else:
        yield from _paths(rest)
        cli = re.compile(r"[a-z][\w-]*")
        if rest and runner not in _TOOLS and cli.fullmatch(runner) and cli.fullmatch(rest[0][0]):
            name, name_at = rest[0]
            written = text[at - offset : name_at - offset + len(name)]
            yield _anchor(written, "command", f"{runner} {name}", at, (runner, name))


def _make(rest: list[tuple[str, int]], at: int, text: str, offset: int) -> Iterator[Anchor]:
    """`make x y`: each target, the first written with `make` (`make` alone, or with another
    Makefile: nothing)."""
    if any(w in _MAKE_OTHER_FILE or w.startswith(("--directory=", "--file=")) for w, _ in rest):
        return
    first = True
    for word, word_at in rest:
        if not word.startswith("-") and "=" not in word and re.fullmatch(r"[\w./%-]+", word):
            start = at if first else word_at
            written = text[start - offset : word_at - offset + len(word)]
            yield _anchor(written, "command", f"make {word}", start, ("make", word))
            first = False


_WORKSPACE_FLAGS = (
    "-w",
    "--workspace",
    "--filter",
    "-F",
    "--prefix",
    "-r",
    "--recursive",
    "-C",
    "--cwd",
    "--dir",
)


def _package_script(
    runner: str, rest: list[tuple[str, int]], at: int, text: str, offset: int
) -> Iterator[Anchor]:
    """The package.json script an npm / pnpm / yarn / bun command runs (key `npm <name>`);
    nothing for the tool's own verbs or another package's script."""
    if any(w.startswith(_WORKSPACE_FLAGS) for w, _ in rest):
        return
    operands = [(w, a) for w, a in rest if not w.startswith("-")]
    if not operands:
        return
    first = operands[0][0]
    if first in ("run", "run-script"):
        target = operands[1] if len(operands) > 1 else None
    elif runner == "npm":
        target = operands[0] if first in _NPM_SCRIPTS else None
    elif runner == "bun" or first in _PM_VERBS:
        target = None
    else:
        target = operands[0]
    if target is None or not _NAME.fullmatch(target[0]):
        return
    name = _NPM_SCRIPTS.get(target[0], target[0]) if runner == "npm" else target[0]
    written = text[at - offset : target[1] - offset + len(target[0])]
    yield _anchor(written, "command", f"npm {name}", at, ("npm", name))


def _just_or_cargo(
    runner: str, rest: list[tuple[str, int]], at: int, text: str, offset: int
) -> Iterator[Anchor]:
    """`just x` (a recipe) and `cargo x` (an alias; not cargo's own verbs or common plugins)."""
    operands = [(w, a) for w, a in rest if not w.startswith(("-", "+"))]
    if not operands or not re.fullmatch(r"[A-Za-z0-9][\w-]*", operands[0][0]):
        return
    name, name_at = operands[0]
    if runner == "cargo" and name in _CARGO_VERBS:
        return
    written = text[at - offset : name_at - offset + len(name)]
    yield _anchor(written, "command", f"{runner} {name}", at, (runner, name))


def _python(rest: list[tuple[str, int]]) -> Iterator[Anchor]:
    """`python -m pkg.mod` (a path anchor for the module) or `python path/to/script.py`."""
    for index, (word, at) in enumerate(rest):
        if word == "-m":
            if index + 1 < len(rest):
                module, module_at = rest[index + 1]
                first = module.split(".", 1)[0]
                if _MODULE.fullmatch(module) and first not in _TOOL_MODULES:
                    key = module.replace(".", "/")
                    yield _anchor(module, "path", key, module_at)
            return
        if not word.startswith("-"):
            yield from _paths([(word, at)])
            return


def _paths(words: list[tuple[str, int]]) -> Iterator[Anchor]:
    """The path-shaped words among a command's arguments (by the bare rules: a `/` and an
    extension, a leading `./`, a trailing `/`, a file name with an extension)."""
    for word, at in words:
        if word.startswith("-") or "=" in word:
            continue
        anchor = _path(word, at, quoted=False)
        if anchor is not None:
            yield Anchor(anchor.text, "path", anchor.key, at, anchor.end, True)


# --- single words -----------------------------------------------------------------------------


def _word(word: str, at: int, *, quoted: bool) -> Anchor | None:
    """One word's citation (env var, path or symbol, in that order), or None."""
    if len(word) > MAX_WORD or _never(word):
        return None
    env = _env(word, at, quoted=quoted)
    if env is not None or word.startswith("$") or _CAPS_ENV.fullmatch(word):
        return env
    return _path(word, at, quoted=quoted) or _symbol(word, at, quoted=quoted)


def _never(word: str) -> bool:
    """URLs, host names with a path, emails, mentions, tags, versions, package specs."""
    return (
        "://" in word
        or word.startswith(("www.", "@", "#", "mailto:", "-"))
        or "@" in word
        or _VERSION.fullmatch(word) is not None
    )


def _env(word: str, at: int, *, quoted: bool) -> Anchor | None:
    """`$X`, `${X}`, `${X:-default}`, `MEMD_SOCKET` (not the well-known ones)."""
    match = _ENV.fullmatch(word)
    name = match.group(1) if match else word if _CAPS_ENV.fullmatch(word) else ""
    if not name or name in _COMMON_ENV or not any(ch.isalpha() for ch in name):
        return None
    return Anchor(word, "env", name, at, at + len(word), quoted, (name,))


def _extension(word: str) -> str:
    last = word.rstrip("/").rsplit("/", 1)[-1]
    return last.rsplit(".", 1)[1].lower() if "." in last[1:] else ""


def _path(word: str, at: int, *, quoted: bool) -> Anchor | None:
    """A path of this workspace (see the module rules), or None."""
    if (
        "\\" in word
        or word.startswith(("~", "$", "%"))
        or re.match(r"[A-Za-z]:", word)
        or _TEMPLATE.search(word)
        or not _PATH_CHARS.fullmatch(word)
    ):
        return None
    body = word
    while body.startswith("./"):
        body = body[2:]
    dot_slash, rooted, directory = word.startswith("./"), body.startswith("/"), word.endswith("/")
    segments = [s for s in body.strip("/").split("/") if s]
    if not segments or any(s in (".", "..") for s in segments):
        return None
    extension = _extension(body)
    known_extension = extension in _EXTENSIONS
    if rooted and (segments[0] in _SYSTEM_ROOTS or not known_extension):
        return None  # outside the workspace, or a URL route (`/api/users`)
    if len(segments) > 1 or directory:
        bare_ok = known_extension or dot_slash or directory
        place = _looks_like_place(segments, known_extension) and (quoted or bare_ok)
    else:
        place = _single_file(segments[0], extension, known_extension, quoted=quoted) or (
            dot_slash and re.fullmatch(r"[\w.-]+", segments[0]) is not None
        )
    if not place:
        return None
    key = "/".join(segments)
    return Anchor(word, "path", key, at, at + len(word), quoted)


def _looks_like_place(segments: list[str], known_extension: bool) -> bool:
    """Not a MIME type (`application/json`), an all-caps or numeric pair (`CI/CD`, `2024/01`),
    a host name with a path (`github.com/x`), or a glob-only word."""
    first = segments[0]
    if len(segments) == 2 and first in _MIME_TOPS and not known_extension:
        return False
    if "." in first and first.rsplit(".", 1)[1].lower() in _TLDS - _EXTENSIONS:
        return False
    if not known_extension and not any(ch.islower() for s in segments for ch in s):
        return False
    return any(ch.isalpha() for ch in "".join(segments))


def _single_file(name: str, extension: str, known_extension: bool, *, quoted: bool) -> bool:
    """A file name without a directory: `package.json`, `.gitignore`, `Makefile` (a glob
    without a directory, `*.md`, and brand names, `Node.js`, are not)."""
    if "*" in name or "?" in name:
        return False
    if name in _PLAIN_FILES:
        return quoted or not name.isupper()
    if _DOTFILE.fullmatch(name) and "." not in name[1:]:
        return quoted or len(name) >= 3
    if not known_extension:
        return False
    stem = name[: -len(extension) - 1]
    if extension == "js" and (stem.lower() in _BRAND_JS or stem[:1].isupper()):
        return False
    if quoted:
        return bool(stem)
    return len(extension) >= 2 and len(stem) >= 2 and any(ch.isalpha() for ch in stem)


def _symbol(word: str, at: int, *, quoted: bool) -> Anchor | None:
    """A function, class, method or identifier of code shape (see the module rules)."""
    match = _SYMBOL.fullmatch(word)
    if match is None:
        return None
    name, call = match.group(1), match.group(2)
    if not quoted and call not in (None, "()"):
        return None
    parts = [part for part in _SEPARATOR.split(name) if part]
    separators = set(_SEPARATOR.findall(name))
    if (":" in separators and not call) or (not quoted and separators & {"#", "->"}):
        return None
    if parts[0] in _BUILTINS or "$" in name:
        return None
    words = tuple(part for part in parts if part not in _SELF)
    if not words or not _code_shaped(parts, separators, call is not None, quoted=quoted):
        return None
    return Anchor(word, "symbol", name, at, at + len(word), quoted, words)


def _code_shaped(parts: list[str], separators: set[str], call: bool, *, quoted: bool) -> bool:
    """Whether a name reads as code, not prose (see the module rules)."""
    if call:
        return True
    if len(parts) > 1:
        if separators == {"."} and all(p.islower() for p in parts) and parts[-1] in _TLDS:
            return False  # a host name: `api.example.com`
        if quoted:
            return True
        return "::" in separators or any(_single_shaped(p, quoted=False) for p in parts)
    return _single_shaped(parts[0], quoted=quoted)


def _single_shaped(name: str, *, quoted: bool) -> bool:
    """snake_case, camelCase, and (quoted) PascalCase of code shape; never a brand."""
    if name in _BRANDS:
        return False
    if _SNAKE.fullmatch(name) or (quoted and "_" in name.strip("_")[1:-1] + name[:1]):
        return any(ch.islower() for ch in name) or quoted
    if _CAMEL.fullmatch(name):
        return quoted or _CAMEL_HUMP.search(name) is not None
    if quoted and _PASCAL.fullmatch(name):
        return len(_PASCAL_HUMP.findall(name)) >= 2 or _LEADING_ACRONYM.match(name) is not None
    return False


# --- outside code spans -----------------------------------------------------------------------


def _bare(blanked: str) -> Iterator[Anchor]:
    """The unambiguous citations outside code spans (see the module rules)."""
    for match in _BARE_RUN.finditer(blanked):
        name = match.group(1)
        yield Anchor(
            match.group(),
            "command",
            f"npm {_NPM_SCRIPTS.get(name, name)}",
            match.start(),
            match.end(),
            False,
            ("npm", _NPM_SCRIPTS.get(name, name)),
        )
    for match in _BARE_WORD.finditer(blanked):
        word, at = match.group(), match.start()
        if len(word) > MAX_WORD or not word.strip("_"):
            continue
        lead = len(word) - len(word.lstrip(_LEADING))
        word, at = word[lead:], at + lead
        if not word.endswith("()"):
            word = word.rstrip(_TRAILING)
        if not word or word.startswith("_") or word.endswith("_"):
            continue  # emphasis (`_word_`, `__bold__`) or next to a code span
        anchor = _word(word, at, quoted=False)
        if anchor is not None:
            yield anchor
