"""A stand-in for HackLM Memory's writer, in Python, for memd's race tests.

It does what HackLM's `markdownStore.ts` and `crossProcessLock.ts` do (research notes:
/work/shared/research/hacklm-spec.md), step by step and with the same weaknesses, so a test can
replay each race at its worst moment:

- §1.3 bootstrap: `activate()` is `ensureMemoryFiles` (activation headers), `ensure_memory_dir()`
  is `ensureMemoryDir` (run before every append and upsert): create the directory, sweep a stale
  lock (§5.5), then for each missing category file an exists-check followed by a plain,
  non-exclusive write. No lock is taken for any of it.
- §5 lock: exclusive create (`wx`) of `.memory/.lock`, then one write of
  `{"pid":<pid>,"ts":<ms>}`; 20 attempts; on "already exists" read and parse the lock
  (unparsable: null, never stale), delete it if stale (`now - ts > 10000`, or `kill(pid, 0)`
  fails, EPERM included) and retry at once, else sleep `50 * (attempt + 1)` ms; after 20
  attempts `LockError` with HackLM's exact message. Release deletes `.lock` whatever it now is
  (HackLM does not check that it is still its own). The lock is never refreshed, however long
  it is held. Inside it, an in-process queue per file (a `threading.Lock` per path).
- §1.4 append: `\\n- <content>\\n` appended (nothing read).
- §1.6 delete: under the lock, read, strip and collapse as for an upsert, drop the first line
  whose trimmed text is exactly `- [slug] content` (or `- content`), write the text back
  (truncate and write). Returns True if a line was dropped. HackLM's store tool updates an entry
  this way too: a delete of the old text, then an append of the new.
- §1.5 upsert: read (missing: empty), strip `## YYYY-MM-DD` lines and collapse 3+ newlines, drop
  the first line whose trimmed form starts with `- [slug]` and a whitespace; if one was dropped,
  write the text back (truncate and write, not atomic); then append `\\n- [slug] <content>\\n`.
  Returns "updated" or "inserted".

In-process use (a test thread runs the writer; the test pauses it with hooks)::

    points = Pauses("locked")             # or any of POINTS; several at once are fine
    writer = HackLMWriter(memory_dir, hook=points)
    thread = threading.Thread(target=writer.upsert, args=("Decision", "db", "Use Postgres."))
    thread.start()
    points.wait_reached("locked")        # the writer holds .memory/.lock now
    ...                                  # race memd against it here
    points.release("locked")             # let it go on
    thread.join()

`hook` is any callable `hook(point, detail)`; it runs in the writer's thread at these POINTS:
- "bootstrap-checked": a category file was found missing, before its header is written
  (`detail` is the file's path); the §1.3 check-then-create window.
- "locked": the lock was just taken, before the critical section (`detail`: the lock path).
- "upsert-read": an upsert has read the file and not yet written it (`detail`: the path); the
  window in which a write by someone else is lost when HackLM writes.
- "upsert-written": an upsert that found its slug has written the file without that line and
  not yet appended the new one (`detail`: the path): the old entry is gone, the new not there.
- "delete-read": a delete has read the file and not yet written it back (`detail`: the path).
- "waiting": the lock was found held and not stale; the writer backs off (`detail`: the record).
`hold` (seconds) keeps the lock that long after "locked", without refreshing it, as a slow
HackLM would.

As a subprocess (a "paused holder" a test can SIGSTOP / SIGCONT)::

    python -m tests.hacklm_standin MEMORY_DIR upsert CATEGORY SLUG CONTENT [options]
    python -m tests.hacklm_standin MEMORY_DIR append CATEGORY CONTENT [options]
    python -m tests.hacklm_standin MEMORY_DIR hold [options]       # take the lock, write nothing

It prints each point it reaches on a line of its own (`locked`, `upsert-read`, ...; flushed),
then `done <result>` and exits 0; on `LockError` it prints `lock-error <message>` and exits 3.
Options: `--hold SECONDS` (hold the lock that long), `--stop-at POINT` (print the point, then
stop itself with SIGSTOP there: the test resumes it with SIGCONT; `stopped_at` below waits until
the kernel shows it stopped), `--count N` (do it N times, for sustained writing), `--pause S`
(wait S seconds between two of them, as a user between two stores).
SIGTERM ends sustained writing after the write under way (`done` is printed, exit 0): a test
that is through with a writer stops it with `Subprocess.stop`, never with SIGKILL, which can land
between an upsert's truncate and its write and leave the file empty (HackLM crashing mid-write, a
loss no memd test is about).
`Subprocess` wraps such a process for tests.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from tests.line_process import LineProcess

MAX_RETRIES = 20
RETRY_BASE_MS = 50
STALE_MS = 10_000
LOCK_FILE = ".lock"
POINTS = ("bootstrap-checked", "locked", "upsert-read", "upsert-written", "delete-read", "waiting")

FILES = {
    "Instruction": "instructions.md",
    "Quirk": "quirks.md",
    "Preference": "preferences.md",
    "Decision": "decisions.md",
    "Security": "security.md",
}
ACTIVATION_HEADERS = {  # §1.3 (1), ensureMemoryFiles, exact
    "Instruction": "# Instructions\n\nHow Copilot should behave in this project.\n\n",
    "Quirk": "# Quirks\n\nProject-specific weirdness — the non-obvious stuff.\n\n",
    "Preference": "# Preferences\n\nStyle, tone, and design choices for this project.\n\n",
    "Decision": "# Decisions\n\nArchitectural commitments made in this project.\n\n",
    "Security": "# Security\n\nRules that must NEVER be broken. Always read this file.\n\n",
}

Hook = Callable[[str, str], None]
_DATE_HEADER = re.compile(r"## \d{4}-\d{2}-\d{2}")
_QUEUES: dict[str, threading.Lock] = {}
_QUEUES_GUARD = threading.Lock()


class LockError(Exception):
    """HackLM gave up on the lock after MAX_RETRIES attempts."""


def store_header(category: str) -> str:
    """The header `ensureMemoryDir` writes to a missing file (§1.3 (2)), exact."""
    return f"# {category}\n\nMemories stored by HackLM Memory.\n\n"


def _no_hook(point: str, detail: str) -> None:
    """The default hook: nothing."""


def read_lock(lock_path: str) -> object:
    """The parsed lock record, or None if it is missing, unreadable or not JSON (§5.3 step 3)."""
    try:
        with open(lock_path, encoding="utf-8") as handle:
            return json.loads(handle.read())
    except (OSError, ValueError):
        return None


def is_stale(content: object, *, now_ms: int | None = None) -> bool:
    """HackLM's `isStale` (§5.4) on a non-null record: ts over 10 s old, or `kill(pid, 0)`
    throws (ESRCH, EPERM, or a pid that is not a number)."""
    now = int(time.time() * 1000) if now_ms is None else now_ms
    record = content if isinstance(content, dict) else {}
    ts = record.get("ts")
    if isinstance(ts, int | float) and not isinstance(ts, bool) and now - ts > STALE_MS:
        return True
    pid = record.get("pid")
    if not isinstance(pid, int) or isinstance(pid, bool):
        return True
    try:
        os.kill(pid, 0)
    except (OSError, OverflowError, ValueError):
        return True
    return False


class HackLMWriter:
    """HackLM's writer for one `.memory` directory (see the module docstring)."""

    def __init__(self, memory_dir: str | Path, *, hook: Hook = _no_hook, hold: float = 0.0):
        self.memory_dir = str(memory_dir)
        self.lock_path = os.path.join(self.memory_dir, LOCK_FILE)
        self.hook = hook
        self.hold = hold

    # ---- §1.3 bootstrap

    def activate(self) -> None:
        """`ensureMemoryFiles` at activation: write each missing file's activation header."""
        os.makedirs(self.memory_dir, exist_ok=True)
        for category, header in ACTIVATION_HEADERS.items():
            self._create_if_missing(os.path.join(self.memory_dir, FILES[category]), header)

    def ensure_memory_dir(self) -> None:
        """`ensureMemoryDir`, before every append and upsert: mkdir -p, the stale-lock sweep,
        then each missing file's header (exists-check, then a plain write)."""
        os.makedirs(self.memory_dir, exist_ok=True)
        content = read_lock(self.lock_path)
        if content is not None and is_stale(content):
            with contextlib.suppress(OSError):
                os.unlink(self.lock_path)
        for category, name in FILES.items():
            self._create_if_missing(os.path.join(self.memory_dir, name), store_header(category))

    def _create_if_missing(self, path: str, text: str) -> None:
        if os.path.exists(path):
            return
        self.hook("bootstrap-checked", path)
        with open(path, "w", encoding="utf-8") as handle:  # not exclusive: HackLM's `writeFile`
            handle.write(text)

    # ---- §5 lock

    def acquire(self) -> None:
        """Take `.memory/.lock` as HackLM does (§5.3).

        Raises:
            LockError: still held (and not stale) after MAX_RETRIES attempts.
            OSError: anything but "already exists" (a missing directory, permissions).
        """
        for attempt in range(MAX_RETRIES):
            try:
                fd = os.open(self.lock_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            except FileExistsError:
                pass
            else:
                try:
                    record = {"pid": os.getpid(), "ts": int(time.time() * 1000)}
                    os.write(fd, json.dumps(record, separators=(",", ":")).encode())
                finally:
                    os.close(fd)
                return
            content = read_lock(self.lock_path)
            if content is not None and is_stale(content):
                with contextlib.suppress(OSError):
                    os.unlink(self.lock_path)
                continue
            self.hook("waiting", json.dumps(content))
            time.sleep(RETRY_BASE_MS * (attempt + 1) / 1000)
        raise LockError(
            f"[crossProcessLock] Could not acquire lock after {MAX_RETRIES} retries: "
            f"{self.lock_path}"
        )

    def release(self) -> None:
        """Delete `.memory/.lock`, whatever it is now, ignoring errors (HackLM's release)."""
        with contextlib.suppress(OSError):
            os.unlink(self.lock_path)

    def with_lock(self, path: str, work: Callable[[], str]) -> str:
        """Run `work` under the directory lock, then the file's in-process queue (§5.1)."""
        self.acquire()
        try:
            self.hook("locked", self.lock_path)
            if self.hold > 0:
                time.sleep(self.hold)
            with _queue_for(path):
                return work()
        finally:
            self.release()

    # ---- §1.4, §1.5 writes

    def append(self, category: str, content: str) -> str:
        """Append an entry without a slug (§1.4); returns "appended"."""
        path = self._path(category)
        self.ensure_memory_dir()

        def work() -> str:
            with open(path, "a", encoding="utf-8") as handle:
                handle.write(f"\n- {content.strip()}\n")
            return "appended"

        return self.with_lock(path, work)

    def upsert(self, category: str, slug: str, content: str) -> str:
        """Insert or replace the entry `slug` (§1.5); returns "updated" or "inserted"."""
        path = self._path(category)
        self.ensure_memory_dir()

        def work() -> str:
            try:
                with open(path, encoding="utf-8", newline="") as handle:
                    text = handle.read()
            except FileNotFoundError:
                text = ""
            self.hook("upsert-read", path)
            lines = strip_date_headers(text).split("\n")
            pattern = re.compile(r"- \[" + re.escape(slug) + r"\]\s")
            found = next((n for n, line in enumerate(lines) if pattern.match(line.strip())), None)
            if found is not None:
                del lines[found]
                with open(path, "w", encoding="utf-8", newline="") as handle:
                    handle.write("\n".join(lines))
                self.hook("upsert-written", path)
            with open(path, "a", encoding="utf-8", newline="") as handle:
                handle.write(f"\n- [{slug}] {content.strip()}\n")
            return "updated" if found is not None else "inserted"

        return self.with_lock(path, work)

    def delete(self, category: str, content: str, slug: str | None = None) -> bool:
        """Delete the first line that is exactly this entry (§1.6); return whether one was."""
        path = self._path(category)
        target = "- " + (f"[{slug}] " if slug else "") + content.strip()

        def work() -> str:
            try:
                with open(path, encoding="utf-8", newline="") as handle:
                    text = handle.read()
            except OSError:
                return "false"
            self.hook("delete-read", path)
            lines = strip_date_headers(text).split("\n")
            found = next((n for n, line in enumerate(lines) if line.strip() == target), None)
            if found is None:
                return "false"
            del lines[found]
            with open(path, "w", encoding="utf-8", newline="") as handle:
                handle.write("\n".join(lines))
            return "true"

        return self.with_lock(path, work) == "true"

    def _path(self, category: str) -> str:
        if category not in FILES:
            raise ValueError(
                f"Unknown category: {category}. Valid: Instruction, Quirk, Preference, "
                "Decision, Security"
            )
        return os.path.join(self.memory_dir, FILES[category])


def strip_date_headers(text: str) -> str:
    """Drop legacy `## YYYY-MM-DD` lines and collapse runs of 3+ newlines to 2 (§1.5 step 2)."""
    kept = "\n".join(line for line in text.split("\n") if not _DATE_HEADER.match(line))
    return re.sub(r"\n{3,}", "\n\n", kept)


def _queue_for(path: str) -> threading.Lock:
    with _QUEUES_GUARD:
        return _QUEUES.setdefault(path, threading.Lock())


class Pauses:
    """A hook that stops the writer's thread at the given points until the test releases them.

    Each point pauses once (the first time it is reached); other points pass through.
    """

    def __init__(self, *points: str) -> None:
        unknown = set(points) - set(POINTS)
        if unknown:
            raise ValueError(f"unknown points {sorted(unknown)}; choose from {POINTS}")
        self._reached = {point: threading.Event() for point in points}
        self._go = {point: threading.Event() for point in points}
        self.details: dict[str, str] = {}

    def __call__(self, point: str, detail: str) -> None:
        reached = self._reached.get(point)
        if reached is None or reached.is_set():
            return
        self.details[point] = detail
        reached.set()
        if not self._go[point].wait(timeout=120):
            raise TimeoutError(f"the test never released the stand-in at {point!r}")

    def wait_reached(self, point: str, timeout: float = 30.0) -> str:
        """Wait until the writer is paused at `point`; return that point's detail."""
        if not self._reached[point].wait(timeout):
            raise AssertionError(f"the HackLM stand-in did not reach {point!r} in {timeout} s")
        return self.details[point]

    def release(self, point: str) -> None:
        """Let the writer go on from `point`."""
        self._go[point].set()

    def release_all(self) -> None:
        """Let the writer go on from every point (for teardown)."""
        for go in self._go.values():
            go.set()


# ---------------------------------------------------------------------------- as a subprocess


class Subprocess(LineProcess):
    """`python -m tests.hacklm_standin ...` running; its printed lines are read as they come."""

    def __init__(self, memory_dir: str | Path, *args: str, env: dict[str, str] | None = None):
        root = Path(__file__).resolve().parent.parent
        command = [sys.executable, "-m", "tests.hacklm_standin", str(memory_dir), *args]
        super().__init__(command, cwd=root, env=env)

    def stopped_at(self, point: str, timeout: float = 30.0) -> None:
        """Wait until it printed `point` and the kernel shows it stopped (after `--stop-at`)."""
        self.wait_for(point, timeout)
        deadline = time.monotonic() + timeout
        while _state(self.pid) != "T":
            assert time.monotonic() < deadline, f"the stand-in did not stop at {point!r}"
            time.sleep(0.005)

    def resume(self) -> None:
        """SIGCONT: let a stopped stand-in go on."""
        os.kill(self.pid, signal.SIGCONT)

    def stop(self, timeout: float = 30.0) -> list[str]:
        """SIGTERM: let it finish the write under way and exit (see the module docstring);
        return the lines it printed since the last read, its last line (`done ...` or
        `lock-error ...`) included. Fails if it has not exited within `timeout` seconds, or
        died of a signal. (SIGCONT follows: one stopped at a point takes the SIGTERM as it
        goes on.)"""
        if self.process.poll() is None:  # not gone already (a `lock-error`)
            self.process.send_signal(signal.SIGTERM)
            self.process.send_signal(signal.SIGCONT)
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(
                f"the stand-in (pid {self.pid}) did not stop within {timeout} s of SIGTERM"
            ) from None
        code = self.process.returncode
        assert code >= 0, f"the stand-in (pid {self.pid}) was killed by signal {-code}"
        return self.lines_left()


def _state(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            fields = handle.read().rpartition(")")[2].split()
    except OSError:
        return ""
    return fields[0] if fields else ""


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def _printing_hook(stop_at: str | None) -> Hook:
    def hook(point: str, detail: str) -> None:
        _say(point)
        if point == stop_at:
            os.kill(os.getpid(), signal.SIGSTOP)

    return hook


def main(argv: Sequence[str] | None = None) -> int:
    """Run the stand-in as a command (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m tests.hacklm_standin")
    parser.add_argument("memory_dir")
    parser.add_argument("action", choices=["append", "upsert", "hold"])
    parser.add_argument("args", nargs="*")
    parser.add_argument("--hold", type=float, default=0.0)
    parser.add_argument("--stop-at", choices=POINTS)
    parser.add_argument("--count", type=int, default=1)
    parser.add_argument("--pause", type=float, default=0.0)
    options = parser.parse_args(argv)
    writer = HackLMWriter(
        options.memory_dir, hook=_printing_hook(options.stop_at), hold=options.hold
    )
    stopping = threading.Event()
    signal.signal(signal.SIGTERM, lambda signum, frame: stopping.set())  # see the docstring
    result = ""
    try:
        for number in range(options.count):
            if number and options.pause:
                time.sleep(options.pause)  # HackLM between two stores: others get a turn
            if stopping.is_set():
                break
            if options.action == "append":
                category, content = options.args
                result = writer.append(category, content)
            elif options.action == "upsert":
                category, slug, content = options.args
                result = writer.upsert(category, slug, content)
            else:
                result = writer.with_lock(writer.lock_path, lambda: "held")
    except LockError as exc:
        _say(f"lock-error {exc}")
        return 3
    _say(f"done {result}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
