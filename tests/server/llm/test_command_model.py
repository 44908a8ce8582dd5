"""`CommandModel`'s bounds with real processes: an answer is stdout of a command that exits 0;
an oversize answer, a non-zero exit, text that is not UTF-8 or a missing program is None; a
command past its timeout is None and its whole process group is killed."""

from __future__ import annotations

import sys
from pathlib import Path

from memd.core.llm.answers import MAX_ANSWER_BYTES
from memd.server.llm.command_model import CommandModel
from tests.polling import until


def _python(code: str, timeout: float = 10.0) -> CommandModel:
    return CommandModel([sys.executable, "-c", code], timeout)


def _gone(pid: int) -> bool:
    """Whether `pid` no longer runs (gone, or a zombie nobody reaped yet)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rpartition(")")[2].split()[0] == "Z"


# A command that starts a grandchild in its own process group, writes both pids, and then does
# what its argument says: "stall" ignores SIGTERM and sleeps; "flood" prints past the bound
# and then sleeps.
FAMILY = """
import os, signal, subprocess, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
open(sys.argv[1], "w").write(f"{os.getpid()} {child.pid}")
if sys.argv[2] == "flood":
    sys.stdout.write("x" * (MAX + 100))
    sys.stdout.flush()
time.sleep(600)
"""


async def test_an_answer_is_the_commands_stdout_and_it_gets_the_prompt_on_stdin() -> None:
    model = _python("import sys; sys.stdout.write(sys.stdin.read().upper())")
    assert await model.ask("restates?") == "RESTATES?"


async def test_a_missing_program_is_no_answer(tmp_path: Path) -> None:
    assert await CommandModel([str(tmp_path / "no-such-model")], 5).ask("hello") is None


async def test_a_failing_command_or_one_printing_bytes_that_are_not_utf8_is_no_answer() -> None:
    assert await _python("import sys; print('{}'); sys.exit(3)").ask("x") is None
    assert await _python("import sys; sys.stdout.buffer.write(b'\\xff\\xfe')").ask("x") is None


async def test_an_answer_at_the_bound_is_kept_and_one_past_it_is_none() -> None:
    at_bound = _python(f"import sys; sys.stdout.write('x' * {MAX_ANSWER_BYTES})")
    assert await at_bound.ask("x") == "x" * MAX_ANSWER_BYTES
    past = _python(f"import sys; sys.stdout.write('x' * {MAX_ANSWER_BYTES + 1})")
    assert await past.ask("x") is None


async def test_a_command_flooding_stdout_is_killed_with_its_group_before_its_timeout(
    tmp_path: Path,
) -> None:
    pids = tmp_path / "pids"
    code = f"MAX = {MAX_ANSWER_BYTES}\n{FAMILY}"
    model = CommandModel([sys.executable, "-c", code, str(pids), "flood"], timeout=120)
    assert await model.ask("x") is None  # returns long before 120 s: the flood is the end
    for pid in map(int, pids.read_text().split()):
        await until(lambda pid=pid: _gone(pid))


async def test_a_command_ignoring_its_timeout_is_killed_with_its_whole_group(
    tmp_path: Path,
) -> None:
    pids = tmp_path / "pids"
    code = f"MAX = {MAX_ANSWER_BYTES}\n{FAMILY}"
    # Long enough for the command to start its grandchild even on a loaded machine.
    model = CommandModel([sys.executable, "-c", code, str(pids), "stall"], timeout=5)
    assert await model.ask("x") is None
    parent, grandchild = map(int, pids.read_text().split())
    await until(lambda: _gone(parent))
    await until(lambda: _gone(grandchild))  # in the command's group, so killed with it


async def test_a_command_that_answers_and_leaves_a_child_holding_stdout_is_answered(
    tmp_path: Path,
) -> None:
    """The answer printed before the exit counts, without waiting out the timeout for the
    child's end of the pipe, and the child (in the command's group) is killed."""
    pids = tmp_path / "pids"
    code = (
        "import subprocess, sys\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
        f"open({str(pids)!r}, 'w').write(str(child.pid))\n"
        "print('{\"proposals\": []}')\n"
    )
    model = _python(code, timeout=20)  # the child outlives it: waiting for it is no answer
    assert await model.ask("x") == '{"proposals": []}\n'
    await until(lambda: _gone(int(pids.read_text())))
