"""Ask the configured model command (`[llm] command`) one prompt; fail-open.

Rules:
- The command runs without a shell, in a session of its own (its own process group), with the
  prompt on stdin (UTF-8) and its answer read from stdout. Its stderr goes to the log (at most
  MAX_STDERR_BYTES of it, at debug level), never into an answer.
- At most MAX_RUNNING commands run at a time, daemon-wide; a prompt that waits for a turn
  spends its own timeout waiting.
- Past `timeout` seconds (waiting included) the whole process group is killed and reaped.
- The answer is what the command printed by the time it exited (stdout read to its end, or for
  EXIT_GRACE seconds after the exit when a child it left behind holds stdout open). When it
  has exited, or at its timeout, its whole process group is killed and reaped: a child it
  left running (in its group) never outlives the question.
- At most `answers.MAX_ANSWER_BYTES` of stdout are read: an answer longer than that is no
  answer, and the command is killed.
- Any failure (the command cannot start, exits non-zero, stalls, prints too much or text that is
  not UTF-8) is None: "no opinion". Nothing here raises to its caller but cancellation.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
from collections.abc import Sequence

import anyio
from anyio.abc import ByteReceiveStream, Process

from memd.core.llm.answers import MAX_ANSWER_BYTES

logger = logging.getLogger(__name__)

MAX_RUNNING = 2
"""How many model commands run at once, daemon-wide."""
MAX_STDERR_BYTES = 4096
EXIT_GRACE = 1.0
"""Seconds stdout is read after the command exits (a child it left may hold the pipe open)."""


class CommandModel:
    """Runs one configured command per prompt (see the module rules)."""

    def __init__(self, argv: Sequence[str], timeout: float) -> None:
        self.argv = tuple(argv)
        self.timeout = timeout
        self._limiter: anyio.CapacityLimiter | None = None

    def _turns(self) -> anyio.CapacityLimiter:
        if self._limiter is None:  # created in the event loop, on first use
            self._limiter = anyio.CapacityLimiter(MAX_RUNNING)
        return self._limiter

    def share_turns(self, other: CommandModel) -> None:
        """Take `other`'s limiter (a reloaded configuration keeps the daemon-wide bound)."""
        self._limiter = other._limiter

    async def ask(self, prompt: str) -> str | None:
        """Return the command's answer to `prompt`, or None (see the module rules)."""
        with anyio.move_on_after(self.timeout):
            async with self._turns():
                return await self._run(prompt)
        logger.info("llm_command gave no answer within %g s: no opinion", self.timeout)
        return None

    async def _run(self, prompt: str) -> str | None:
        try:
            process = await anyio.open_process(
                list(self.argv),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as exc:
            logger.warning("llm_command %s cannot start (%s): no opinion", self.argv[0], exc)
            return None
        try:
            return await _converse(process, prompt)
        finally:
            await _end(process)


async def _converse(process: Process, prompt: str) -> str | None:
    assert process.stdin is not None and process.stdout is not None
    stdout = process.stdout
    answer = bytearray()
    too_long = False
    read = anyio.Event()

    async def read_answer() -> None:
        nonlocal too_long
        too_long = await _read_bounded(stdout, answer)
        if too_long:
            _kill(process)
        read.set()

    async with anyio.create_task_group() as tasks:
        if process.stderr is not None:
            tasks.start_soon(_log_stderr, process.stderr)
        tasks.start_soon(read_answer)
        with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            await process.stdin.send(prompt.encode("utf-8", "replace"))
        with contextlib.suppress(OSError):
            await process.stdin.aclose()
        code = await process.wait()
        with anyio.move_on_after(EXIT_GRACE):
            await read.wait()
        _kill(process)  # a child it left behind goes with its group
        tasks.cancel_scope.cancel()  # stdout may still be held by one outside the group
    if too_long:
        logger.info("llm_command printed over %d bytes: no opinion", MAX_ANSWER_BYTES)
        return None
    if code != 0:
        logger.info("llm_command exited with status %d: no opinion", code)
        return None
    try:
        return answer.decode("utf-8")
    except UnicodeDecodeError:
        logger.info("llm_command printed text that is not UTF-8: no opinion")
        return None


async def _read_bounded(stream: ByteReceiveStream, into: bytearray) -> bool:
    """Read `stream` to its end into `into`; True if it holds more than MAX_ANSWER_BYTES."""
    with contextlib.suppress(anyio.EndOfStream, anyio.ClosedResourceError, OSError):
        while True:
            into.extend(await stream.receive())
            if len(into) > MAX_ANSWER_BYTES:
                return True
    return False


async def _log_stderr(stream: ByteReceiveStream) -> None:
    seen = bytearray()
    with contextlib.suppress(anyio.EndOfStream, anyio.ClosedResourceError, OSError):
        while True:
            chunk = await stream.receive()
            if len(seen) < MAX_STDERR_BYTES:
                seen.extend(chunk[: MAX_STDERR_BYTES - len(seen)])
    if seen:
        logger.debug("llm_command stderr: %s", seen.decode("utf-8", "replace").strip())


def _kill(process: Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


async def _end(process: Process) -> None:
    """Kill the command's process group (a child it left may outlive it), and reap it (even
    when cancelled)."""
    with anyio.CancelScope(shield=True):
        _kill(process)
        with anyio.move_on_after(5):
            await process.wait()
        for stream in (process.stdin, process.stdout, process.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    await stream.aclose()
