"""Regenerate docs/walkthrough.md: a new user's first hour with memd, run end to end.

`make walkthrough` runs this file (`python docs/walkthrough.py`; `--check` compares with the
committed walkthrough.md instead of writing it, exit 1 on a difference). It needs git, make,
python3 and npx (for the MCP Inspector step, which npx fetches on its first run), and takes
a few minutes: most of it is pip installing memd into the fresh clone.

What it does, as a new user would with the README as the only guide:

- clones this repository's committed HEAD (uncommitted changes are not in the walkthrough) into
  a new temp directory under /tmp, and creates a new git repository beside it, the project;
- runs `make serve` in the clone in the background and waits for its `serving` line;
- runs every command of the walkthrough as typed, with bash, from the directory the previous
  command left (a `cd` carries over), with the clone's `.venv/bin` first on PATH (as after
  `source .venv/bin/activate`), and records what it printed, stdout and stderr together;
- sends SIGINT to `make serve`'s process group (Ctrl-C) and records the daemon's last lines.

Nothing of the caller's memd reaches it: `MEMD_*` variables are dropped, and every XDG
directory is a private one inside the temp directory (`XDG_RUNTIME_DIR` too, so the daemon's
default socket is private and short). pip keeps the caller's own configuration (its package
mirrors) and cache: `PIP_CONFIG_FILE` and `PIP_CACHE_DIR` point where they were before the XDG
directories moved. `COLUMNS=80` fixes argparse's wrapping; `PYTHONUNBUFFERED=1` keeps a
command's stdout and stderr lines in the order they were written, as a terminal shows them.
`npm_config_yes=true` answers npx's "Ok to proceed?" for the Inspector, as a user at a terminal
does (without a terminal npx cancels instead of asking).
Make's own variables (`MAKEFLAGS`, `MAKELEVEL`) are dropped so `make serve` runs as a top-level
make.

The outputs are pasted as they came except for these normalisations (`normalise`), which
remove only what changes from run to run or from machine to machine:

- the temp directory is shown as /home/me, and its `run` directory (`XDG_RUNTIME_DIR`) as
  /run/user/1000;
- a log line's timestamp is shown as `2026-11-24 12:00:00,000`, and the dates of the run
  (archive lines) as 2026-11-24;
- the daemon's pid is shown as 4242 (`memd[4242]` in its log, `pid 4242` in `memd status`), and
  its uptime (`up N s`) as `up 1 s`;
- pip's "WARNING: Location '...' is ignored" lines (this machine's pip mirrors) are dropped, and
  the progress lines of the one pip install shown without `--quiet` are replaced by a single
  bracketed line; its "Installing collected packages" and "Successfully installed" lines stay;
- npm's notices (lines starting `npm warn` or `npm notice`: npx fetching the Inspector) are
  dropped;
- spaces at the end of a line, and blank lines at the end of an output, are dropped.

The document is `DOCUMENT`: prose and console blocks in order. `render` turns it and one
output per command into walkthrough.md; `parse` reads the outputs back out of a walkthrough.md,
so `render(DOCUMENT, parse(text)) == text` holds exactly when the prose and the commands there
are this file's (tests/test_walkthrough.py checks that, and reruns the second terminal's
commands against a real daemon to check their outputs).

Size: over 400 lines because the walkthrough's prose and commands live here (`DOCUMENT`, about
230 lines); the runner and the renderer are the rest.
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent
WALKTHROUGH = REPOSITORY / "docs" / "walkthrough.md"
SHOWN_HOME = "/home/me"
SHOWN_RUNTIME_DIR = "/run/user/1000"
SHOWN_DATE = "2026-11-24"
SHOWN_TIME = "12:00:00,000"
SHOWN_PID = "4242"
SERVE_TIMEOUT = 900.0
"""Seconds `make serve` may take to install memd into the clone and start serving."""
COMMAND_TIMEOUT = 600.0


@dataclass(frozen=True)
class Command:
    """One command of a console block, as the reader types it (paths as shown: /home/me/...).

    `kind` is "shell" (run with bash, waited for), "serve" (started in the background; its
    output is everything up to its `serving` line) or "stop" (Ctrl-C to the "serve" command;
    no `$` line, its output is the daemon's last lines). `runs` is what actually runs when it
    differs from `text` (the clone's source). `shows_exit` adds `[exit N]` after the output.
    `install_dependent` marks an output that depends on the installed extras (the smoke test,
    run from the test environment, leaves it out); `pip_progress` marks the pip install shown
    without `--quiet`.
    """

    text: str
    kind: str = "shell"
    runs: str | None = None
    shows_exit: bool = False
    install_dependent: bool = False
    pip_progress: bool = False


@dataclass(frozen=True)
class Console:
    """A ```console block; `second_terminal` marks the blocks the smoke test reruns."""

    commands: tuple[Command, ...]
    second_terminal: bool = False


@dataclass(frozen=True)
class Prose:
    text: str


def memd(text: str, *, install_dependent: bool = False) -> Command:
    """A memd command: its exit status is part of what it shows."""
    return Command(text, shows_exit=True, install_dependent=install_dependent)


PIP_PROGRESS = (
    '[pip\'s progress lines left out: "Looking in indexes", then "Requirement already '
    'satisfied" for memd-daemon and each of its dependencies, and "Collecting" / '
    '"Downloading" or "Using cached" for the SDK\'s]'
)
INSPECTOR = (
    "npx @modelcontextprotocol/inspector --cli memd mcp --method tools/call"
    " --tool-name storeMemory --tool-arg category=decision"
    ' --tool-arg content="Deploy to staging before production."'
)

INTRO = """\
# A new user's first hour, run end to end

Everything below is run by [walkthrough.py](walkthrough.py) (`make walkthrough` regenerates
this page) from a fresh clone of this repository, as a new user would with the README as the
only guide, and each command's output is pasted as it came. The script gives the run a home of
its own: the clone is `/home/me/memd`, the project is a new git repository, `/home/me/shop`,
the XDG directories are under `/home/me`, and `XDG_RUNTIME_DIR` is `/run/user/1000`, so the
daemon's default socket is `/run/user/1000/memd/memd.sock`. Those paths stand for the script's
temp directory. The only other changes to the outputs: log timestamps, the run's date, the
daemon's pid and uptime are shown as fixed values; this machine's pip warnings about its
package mirrors (`WARNING: Location 'file:///...' is ignored`), npm's notices and one pip
install's progress lines are left out. `[exit N]`, printed after a memd command, is its exit
status. The second terminal's commands run right after the daemon is ready."""

DOCUMENT: tuple[Prose | Console, ...] = (
    Prose(INTRO),
    Prose("## 1. Start the daemon (first terminal)"),
    Console(
        (
            Command(
                "git clone <this repository> memd && cd memd",
                runs=f"git clone {REPOSITORY} memd && cd memd",
            ),
            Command("make serve", kind="serve"),
        )
    ),
    Prose(
        """\
The WARNING says that finding memories by meaning is off: `make serve` installs memd without
the semantic extra, and `make semantic` adds it ([semantic search](semantic.md#how-it-behaves)).
The README's Quick start says how long the first run takes."""
    ),
    Prose("## 2. Store, update and query (second terminal)"),
    Prose("In a new repository, with `memd` meaning `/home/me/memd/.venv/bin/memd`:"),
    Console(
        (
            Command("mkdir /home/me/shop && cd /home/me/shop && git init -q"),
            memd('memd store -c Decision "Take the lock before writing any memory file."'),
            memd('memd store -c Decision "Never take the lock before writing any memory file."'),
            memd(
                'memd store -c Security "The prod DB password is Sup3rS3cret!2024, use it for'
                ' migrations."'
            ),
            memd(
                'memd store -c Security "Never put database passwords in memory files; they'
                ' live in the vault."'
            ),
            memd('memd store -c Preference "Use tabs for indentation in Go files."'),
            memd('memd store -c Preference "Use tabs for indentation."'),
            memd(
                'memd store -c Quirk "The CI runner has no network except the package registries."'
            ),
            memd("memd query lock writing"),
            memd("memd list"),
            memd("memd get take-lock-writing-memory"),
        ),
        second_terminal=True,
    ),
    Prose(
        """\
The wider rule "Use tabs for indentation." is kept beside the Go-only one: it is not a shorter
form of it."""
    ),
    Prose("## 3. Mistakes"),
    Console(
        (
            memd("memd get"),
            memd("memd stroe x"),
            memd("memd delete -c Decision no-such-slug"),
            memd("memd --json serve"),
        ),
        second_terminal=True,
    ),
    Prose("Each error is on stderr; stdout stays empty."),
    Prose("## 4. The state of the workspace and the daemon"),
    Console(
        (
            memd("memd stats", install_dependent=True),
            memd("memd status", install_dependent=True),
        ),
        second_terminal=True,
    ),
    Prose(
        """\
Both say that semantic search is off here, for the reason the daemon's WARNING gave at the
start."""
    ),
    Prose("## 5. Cleanup after a hand edit"),
    Prose(
        "A copy of each preference appended by hand, one with a slug of its own and one without:"
    ),
    Console(
        (
            Command(
                'printf -- "- [tabs] Use tabs for indentation.\\n- Use tabs for indentation in'
                ' Go files.\\n" >> .memory/preferences.md'
            ),
            memd("memd cleanup"),
            memd("memd cleanup --apply"),
            Command("cat .memory/archive.md"),
        ),
        second_terminal=True,
    ),
    Prose("Each copy folds into its twin; the wider rule and the Go-only rule both stay."),
    Prose("## 6. A prompt block and rule-based capture"),
    Console(
        (
            memd("memd context deploy the migrations"),
            memd('memd extract "Actually, we deploy with Helm. Never commit .env files."'),
        ),
        second_terminal=True,
    ),
    Prose("## 7. An MCP client nobody here wrote"),
    Prose("The official MCP Inspector's command line, first before the `mcp` extra is installed:"),
    Console((Command(INSPECTOR),)),
    Prose("Then the command it names, and the same call again:"),
    Console(
        (
            Command(
                "/home/me/memd/.venv/bin/python -m pip install 'memd-daemon[mcp]'",
                pip_progress=True,
            ),
            Command(INSPECTOR),
        )
    ),
    Prose(
        """\
(The category was given as `decision`; any case is taken. Line 7, not 6: HackLM's format puts
a blank line before each appended entry.)"""
    ),
    Prose("## 8. Installed outside the checkout"),
    Console(
        (
            Command("cd /home/me/memd && make dist"),
            Command("ls dist"),
            Command(
                "cd /home/me && python3 -m venv memd-env && memd-env/bin/python -m pip install"
                " -q --find-links memd/dist 'memd-daemon[mcp]'"
            ),
            Command("cd shop && /home/me/memd-env/bin/memd --version"),
            memd("/home/me/memd-env/bin/memd query staging"),
        )
    ),
    Prose(
        """\
The README's other two routes, `pipx install --pip-args=--find-links=dist 'memd-daemon[mcp]'`
and `uv tool install --find-links dist 'memd-daemon[mcp]'`, take the same wheels; this script
does not run them."""
    ),
    Prose("## 9. Stopping"),
    Prose(
        """\
Ctrl-C in the first terminal (the script sends SIGINT to `make serve`'s process group); the
daemon's last lines:"""
    ),
    Console((Command("", kind="stop"),)),
)


def commands(document: Iterable[Prose | Console]) -> list[Command]:
    """Every command of `document`, in order: one output each for `render`."""
    return [c for part in document if isinstance(part, Console) for c in part.commands]


def render(document: Iterable[Prose | Console], outputs: Sequence[str]) -> str:
    """walkthrough.md: the prose as written, each command after `$ `, then its output."""
    pending = iter(outputs)
    blocks: list[str] = []
    for part in document:
        if isinstance(part, Prose):
            blocks.append(part.text)
            continue
        lines = ["```console"]
        for command in part.commands:
            if command.text:
                lines.append(f"$ {command.text}")
            output = next(pending)
            if output:
                lines.append(output)
        lines.append("```")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"


def parse(text: str) -> list[str]:
    """The outputs in a walkthrough.md, one per command, in order (`render`'s inverse).

    In a console block a line starting `$ ` is a command; the lines up to the next one are its
    output. Lines before a block's first `$ ` are the output of a command shown without a
    `$` line (the "stop" one), and only counted when there is no `$` line at all.
    """
    outputs: list[str] = []
    block: list[str] | None = None
    for line in text.splitlines():
        if block is None:
            block = [] if line == "```console" else None
        elif line == "```":
            outputs.extend(_outputs_of_block(block))
            block = None
        else:
            block.append(line)
    return outputs


def _outputs_of_block(lines: list[str]) -> list[str]:
    starts = [i for i, line in enumerate(lines) if line.startswith("$ ")]
    if not starts:
        return ["\n".join(lines)]
    ends = [*starts[1:], len(lines)]
    return ["\n".join(lines[start + 1 : end]) for start, end in zip(starts, ends, strict=True)]


@dataclass(frozen=True)
class Shown:
    """What `normalise` replaces: the temp root, the daemon's pid, the dates of the run."""

    root: Path
    pid: str | None
    dates: tuple[str, ...]


LOG_TIME = re.compile(r"^(\d{4}-\d\d-\d\d) \d\d:\d\d:\d\d,\d{3} ", re.MULTILINE)
PIP_MIRROR_WARNING = re.compile(r"^WARNING: Location '[^']*' is ignored: .*$\n?", re.MULTILINE)
NPM_NOTICE = re.compile(r"^npm (warn|notice)\b.*$\n?", re.MULTILINE)
UPTIME = re.compile(r"\bup \d+ s\b")


def normalise(output: str, shown: Shown, *, pip_progress: bool = False) -> str:
    """`output` with only what varies between runs replaced (the module docstring lists it)."""
    output = PIP_MIRROR_WARNING.sub("", output)
    output = NPM_NOTICE.sub("", output)
    if pip_progress:
        output = _without_pip_progress(output)
    for root in dict.fromkeys((str(shown.root), os.path.realpath(shown.root))):
        output = output.replace(f"{root}/run", SHOWN_RUNTIME_DIR).replace(root, SHOWN_HOME)
    output = LOG_TIME.sub(f"{SHOWN_DATE} {SHOWN_TIME} ", output)
    for day in shown.dates:
        output = output.replace(day, SHOWN_DATE)
    if shown.pid is not None:
        output = output.replace(f"memd[{shown.pid}]", f"memd[{SHOWN_PID}]")
        output = re.sub(rf"\bpid {shown.pid}\b", f"pid {SHOWN_PID}", output)
    output = UPTIME.sub("up 1 s", output)
    lines = [line.rstrip() for line in output.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


def _without_pip_progress(output: str) -> str:
    kept = [PIP_PROGRESS]
    for line in output.splitlines():
        if line.startswith(("Installing collected packages", "Successfully installed")):
            kept += [line, ""]
    return "\n".join(kept)


def private_environment(root: Path, base: Mapping[str, str], *, memd_bin: Path) -> dict[str, str]:
    """The environment the walkthrough runs in: the caller's, without their memd and XDG
    settings or make's variables, with XDG directories inside `root` (see the docstring) and
    `memd_bin` (the directory of the `memd` to run) first on PATH."""
    home = Path(base.get("HOME", str(Path.home())))
    dropped = {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "COLUMNS", "LINES", "MFLAGS"}
    dropped |= {"MAKEFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "PIP_CONFIG_FILE", "PIP_CACHE_DIR"}
    environ = {
        name: value
        for name, value in base.items()
        if not name.startswith(("MEMD_", "XDG_")) and name not in dropped
    }
    pip_config = Path(base.get("XDG_CONFIG_HOME") or home / ".config") / "pip" / "pip.conf"
    if "PIP_CONFIG_FILE" in base:
        environ["PIP_CONFIG_FILE"] = base["PIP_CONFIG_FILE"]
    elif pip_config.is_file():
        environ["PIP_CONFIG_FILE"] = str(pip_config)
    pip_cache = Path(base.get("XDG_CACHE_HOME") or home / ".cache") / "pip"
    environ["PIP_CACHE_DIR"] = base.get("PIP_CACHE_DIR", str(pip_cache))
    runtime = root / "run"
    runtime.mkdir(mode=0o700, exist_ok=True)
    environ |= {
        "XDG_RUNTIME_DIR": str(runtime),
        "XDG_CONFIG_HOME": str(root / ".config"),
        "XDG_CACHE_HOME": str(root / ".cache"),
        "XDG_DATA_HOME": str(root / ".local" / "share"),
        "XDG_STATE_HOME": str(root / ".local" / "state"),
        "PATH": os.pathsep.join((str(memd_bin), base.get("PATH", os.defpath))),
        "COLUMNS": "80",
        "PYTHONUNBUFFERED": "1",
        "npm_config_yes": "true",
    }
    return environ


class Session:
    """A shell session in the temp root: runs commands as typed, keeps the directory a `cd`
    leaves, and one background `make serve`."""

    def __init__(self, root: Path, environ: dict[str, str]) -> None:
        self.root, self.environ, self.cwd = root, environ, root
        self.serve: subprocess.Popen[bytes] | None = None
        self.serve_log = root / "serve.log"
        self.pid: str | None = None

    def real(self, text: str) -> str:
        """A command as shown, with its paths made the temp root's."""
        return text.replace(SHOWN_RUNTIME_DIR, str(self.root / "run")).replace(
            SHOWN_HOME, str(self.root)
        )

    def run(self, command: Command) -> str:
        """Run `command`; what it printed, not yet normalised (with `[exit N]` if it shows it)."""
        if command.kind == "serve":
            return self.start_serving(self.real(command.runs or command.text))
        if command.kind == "stop":
            return self.stop_serving()
        cwd_file = self.root / ".cwd"
        script = (
            f'{self.real(command.runs or command.text)}\n__rc=$?; pwd > "{cwd_file}"; exit $__rc'
        )
        done = subprocess.run(
            ["bash", "-c", script],
            cwd=self.cwd,
            env=self.environ,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            timeout=COMMAND_TIMEOUT,
            check=False,
        )
        if cwd_file.exists():
            self.cwd = Path(cwd_file.read_text().strip())
            cwd_file.unlink()
        output = done.stdout.decode(errors="replace")
        if command.shows_exit:
            output = f"{output.rstrip()}\n[exit {done.returncode}]".lstrip("\n")
        return output

    def start_serving(self, command: str) -> str:
        """Start `command` (`make serve`) in its own process group; its output up to the line
        saying the daemon serves."""
        with self.serve_log.open("wb") as log:
            self.serve = subprocess.Popen(
                ["bash", "-c", f"exec {command}"],
                cwd=self.cwd,
                env=self.environ,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + SERVE_TIMEOUT
        while (served := _through_serving_line(self.serve_log)) is None:
            if self.serve.poll() is not None or time.monotonic() > deadline:
                log_text = self.serve_log.read_text(errors="replace")
                raise RuntimeError(f"`{command}` did not start serving; its output:\n{log_text}")
            time.sleep(0.1)
        if match := re.search(r"memd\[(\d+)\] INFO memd\.server\.daemon: memd ", served):
            self.pid = match[1]
        return served

    def stop_serving(self) -> str:
        """Ctrl-C to `make serve`'s process group; the log from `received SIGINT` on."""
        assert self.serve is not None, "the walkthrough stops a `make serve` it started"
        os.killpg(self.serve.pid, signal.SIGINT)
        self.serve.wait(timeout=60)
        self.serve = None
        log_text = self.serve_log.read_text(errors="replace")
        start = log_text.rfind("\n", 0, log_text.find("received SIGINT")) + 1
        return log_text[start:]

    def close(self) -> None:
        """Stop a `make serve` still running (after a failed step), by its process group."""
        if self.serve is not None and self.serve.poll() is None:
            os.killpg(self.serve.pid, signal.SIGTERM)
            self.serve.wait(timeout=60)


def _through_serving_line(log: Path) -> str | None:
    text = log.read_text(errors="replace")
    match = re.search(r"^.* serving on .*\n", text, re.MULTILINE)
    return None if match is None else text[: match.end()]


def run_walkthrough(document: Sequence[Prose | Console]) -> list[str]:
    """Run every command of `document` in a fresh temp root; their normalised outputs."""
    for tool in ("git", "make", "python3", "npx"):
        if shutil.which(tool) is None:
            raise SystemExit(f"The walkthrough needs {tool} on PATH; install it and run again.")
    root = Path(tempfile.mkdtemp(prefix="mw-", dir="/tmp"))
    clone_bin = root / "memd" / ".venv" / "bin"
    session = Session(root, private_environment(root, os.environ, memd_bin=clone_bin))
    first_day = date.today().isoformat()
    raw: list[tuple[Command, str]] = []
    try:
        for command in commands(document):
            print(f"$ {command.text or '(Ctrl-C)'}", file=sys.stderr, flush=True)
            raw.append((command, session.run(command)))
    finally:
        session.close()
        shutil.rmtree(root, ignore_errors=True)
    days = tuple(dict.fromkeys((first_day, date.today().isoformat())))
    varying = Shown(root, session.pid, days)
    return [normalise(out, varying, pip_progress=c.pip_progress) for c, out in raw]


def second_terminal(document: Iterable[Prose | Console]) -> Iterator[tuple[int, Command]]:
    """The commands the smoke test reruns, with their positions among all the commands."""
    position = 0
    for part in document:
        if isinstance(part, Console):
            for command in part.commands:
                if part.second_terminal:
                    yield position, command
                position += 1


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--check", action="store_true", help="compare with walkthrough.md instead of writing it"
    )
    args = parser.parse_args(argv)
    dirty = subprocess.run(
        ["git", "-C", str(REPOSITORY), "status", "--porcelain", "--untracked-files=no"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    if dirty:
        print(
            "Note: uncommitted changes are not in the clone the walkthrough runs.", file=sys.stderr
        )
    text = render(DOCUMENT, run_walkthrough(DOCUMENT))
    if not args.check:
        WALKTHROUGH.write_text(text, encoding="utf-8")
        print(f"Wrote {WALKTHROUGH}.", file=sys.stderr)
        return 0
    old = WALKTHROUGH.read_text(encoding="utf-8")
    diff = difflib.unified_diff(
        old.splitlines(), text.splitlines(), "committed", "run", lineterm=""
    )
    print("\n".join(diff))
    return int(old != text)


if __name__ == "__main__":
    sys.exit(main())
