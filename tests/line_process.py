"""A child process whose printed lines a test reads as they come (the HackLM stand-ins)."""

from __future__ import annotations

import queue
import subprocess
import threading
import time
from collections.abc import Sequence
from pathlib import Path

WAIT = 30.0
"""The default upper bound of every wait for the process."""


class LineProcess:
    """`command` running, its stdout read line by line in a thread."""

    def __init__(
        self,
        command: Sequence[str],
        *,
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        self.name = Path(command[0]).name
        self.process = subprocess.Popen(
            list(command),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=cwd,
            env=env,
        )
        self._lines: queue.Queue[str] = queue.Queue()
        self._reader = threading.Thread(target=self._read_lines, daemon=True)
        self._reader.start()

    def _read_lines(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.put(line.rstrip("\n"))

    @property
    def pid(self) -> int:
        """The process's pid (the one in its lock record)."""
        return self.process.pid

    def read_line(self, timeout: float = WAIT) -> str:
        """The next line it printed; fails if none comes within `timeout` seconds."""
        try:
            return self._lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(
                f"{self.name} printed nothing in {timeout} s: {self.stderr()}"
            ) from None

    def wait_for(self, line: str, timeout: float = WAIT) -> list[str]:
        """Read printed lines until `line`; return the lines before it."""
        deadline = time.monotonic() + timeout
        before = []
        while (got := self.read_line(max(0.0, deadline - time.monotonic()))) != line:
            before.append(got)
        return before

    def lines_left(self, timeout: float = WAIT) -> list[str]:
        """Once it has exited: every line it printed that was not read yet (up to its last)."""
        assert self.process.poll() is not None, f"{self.name} still runs"
        self._reader.join(timeout)  # its stdout is closed: the reader reaches the end
        assert not self._reader.is_alive(), f"{self.name}'s output did not end in {timeout} s"
        lines = []
        while not self._lines.empty():
            lines.append(self._lines.get_nowait())
        return lines

    def finish(self, timeout: float = 2 * WAIT) -> int:
        """Wait for it to exit; return its exit code."""
        return self.process.wait(timeout=timeout)

    def stderr(self) -> str:
        """What it wrote to stderr (once it has exited)."""
        if self.process.poll() is None or self.process.stderr is None:
            return ""
        return self.process.stderr.read()

    def kill(self) -> None:
        """SIGKILL it if it still runs (teardown), and close its pipes."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=WAIT)
        for pipe in (self.process.stdout, self.process.stderr):
            if pipe is not None:
                pipe.close()
