"""A model's second opinion with a real daemon and `llm_command` pointing at a scripted model
(`tests/e2e/llm_script_model.py`): a "restates" verdict turns a store into the update the write
decision makes for a reworded entry (never a skip), "distinct" leaves it stored, and a model
that stalls, fails or prints garbage leaves every store exactly as without a model, within the
timeout. Security text is not
sent unless allowed; gap analysis and `reflect` queue proposals in the review inbox."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from memd_client import Client, protocol as p
from memd_client._calls import Call
from memd_client.errors import InvalidParams
from tests.conftest import DaemonProcess, start_daemon
from tests.polling_sync import wait_until

SCRIPT = Path(__file__).with_name("llm_script_model.py")
OLD = "Use pnpm for installing packages."
SAYS_LESS = "Packages are installed with pnpm."
OLD_DEPLOY = "Deploy the web app from the main branch only."
REWORDED = "Web app deploys must come from main."


class Model:
    def __init__(self, directory: Path) -> None:
        self.mode = directory / "mode"
        self.record = directory / "prompts.txt"
        self.set("distinct")

    def set(self, mode: str) -> None:
        self.mode.write_text(mode)

    def prompts(self) -> list[str]:
        if not self.record.exists():
            return []
        return [text for text in self.record.read_text().split("\n\x00\n") if text.strip()]


@pytest.fixture
def model(short_tmp: Path) -> Model:
    return Model(short_tmp)


def _serve(short_tmp: Path, model: Model, **llm: object) -> DaemonProcess:
    command = [sys.executable, str(SCRIPT), str(model.mode), str(model.record)]
    lines = [f"command = {json.dumps(command)}", "timeout = 1"]
    lines += [f"{key} = {json.dumps(value)}" for key, value in llm.items()]
    config = short_tmp / "config.toml"
    config.write_text("semantic = false\n[llm]\n" + "\n".join(lines) + "\n")
    return start_daemon(short_tmp, "--config", str(config))


@pytest.fixture
def served(short_tmp: Path, model: Model) -> Iterator[DaemonProcess]:
    daemon = _serve(short_tmp, model, gap_every=2)
    try:
        yield daemon
    finally:
        assert daemon.stop() == 0, daemon.stderr()


def _store(
    client: Client, workspace: Path, category: str, content: str, **extra: object
) -> p.StoreResult:
    """A store with the wire seam's field the client methods do not take (`llm`: a verdict the
    MCP bridge's sampling got), as an agent's."""
    params = p.StoreParams(workspace=str(workspace), category=category, content=content, **extra)  # type: ignore[arg-type]
    result: p.StoreResult = client.call(Call("store", params, p.StoreResult))
    return result


def _entries(path: Path) -> list[str]:
    return [line for line in path.read_text().splitlines() if line.startswith("- [")]


def test_a_restates_verdict_turns_a_store_into_an_update_never_a_skip(
    served: DaemonProcess, model: Model, workspace: Path
) -> None:
    with Client(served.socket_path, workspace=workspace) as client:
        client.store(category="Decision", content=OLD)
        client.store(category="Decision", content=OLD_DEPLOY)
        model.set("restates")
        says_less = client.store(category="Decision", content=SAYS_LESS)
        assert says_less.action == "updated" and says_less.content == SAYS_LESS
        assert says_less.llm is not None and says_less.llm.verdict == "restates"
        assert says_less.llm.consulted and says_less.llm.source == "command"
        assert says_less.llm.restates is not None and "A model judged" in says_less.message
        updated = client.store(category="Decision", content=REWORDED)
        assert updated.action == "updated" and updated.content == REWORDED
        assert updated.matched is not None and updated.matched.content == OLD_DEPLOY
    decisions = (workspace / ".memory" / "decisions.md").read_text()
    assert SAYS_LESS in decisions and REWORDED in decisions and OLD not in decisions
    archive = (workspace / ".memory" / "archive.md").read_text()
    assert OLD in archive and OLD_DEPLOY in archive
    assert any("New memory:" in prompt and SAYS_LESS in prompt for prompt in model.prompts())


@pytest.mark.parametrize("mode", ["distinct", "stall", "fail", "garbage"])
def test_any_other_answer_leaves_the_store_as_without_a_model(
    served: DaemonProcess, model: Model, workspace: Path, mode: str
) -> None:
    with Client(served.socket_path, workspace=workspace) as client:
        client.store(category="Decision", content=OLD)
        model.set(mode)
        result = client.store(category="Decision", content=SAYS_LESS)
        assert result.action == "stored"  # as the write decision alone stores it
        assert result.llm is not None and result.llm.consulted
        assert result.llm.verdict == ("distinct" if mode == "distinct" else "no_opinion")
        unrelated = client.store(category="Decision", content="Log in UTC.")
        assert unrelated.action == "stored" and unrelated.llm is None  # nothing to ask about
    assert len(_entries(workspace / ".memory" / "decisions.md")) == 3


def test_security_text_is_not_sent_unless_allowed(short_tmp: Path, model: Model) -> None:
    secret_rule = "Rotate the deploy keys every 90 days."
    for allowed in (False, True):
        project = short_tmp / f"project-{allowed}"
        project.mkdir()
        daemon = _serve(short_tmp, model, send_security=allowed)
        try:
            with Client(daemon.socket_path, workspace=project) as client:
                client.store(category="Security", content=secret_rule, origin="user")
                model.set("restates")
                result = client.store(
                    category="Security",
                    content="Deploy keys get rotated every 90 days.",
                    origin="user",
                )
                assert result.llm is not None and result.llm.consulted is allowed
                assert (result.action == "stored") is not allowed
        finally:
            assert daemon.stop() == 0
        sent = any("deploy keys" in prompt.lower() for prompt in model.prompts())
        assert sent is allowed


def test_gap_analysis_queues_proposals_after_the_nth_store(
    served: DaemonProcess, model: Model, workspace: Path
) -> None:
    conversation = "user: the VPN keeps dropping my ssh session when I idle"
    with Client(served.socket_path, workspace=workspace) as client:
        client.store(
            category="Quirk", content="The CI runner has no IPv6.", conversation=conversation
        )
        assert client.inbox().entries == []
        client.store(category="Decision", content="Log in UTC.", conversation=conversation)
        wait_until(lambda: client.inbox().entries)
        (entry,) = client.inbox().entries
        assert entry.category == "Quirk" and "VPN" in entry.content
        assert "gap" in entry.reason
    gap_prompts = [prompt for prompt in model.prompts() if "Conversation excerpt" in prompt]
    assert len(gap_prompts) == 1 and "CI runner has no IPv6" in gap_prompts[0]


def test_memd_reflect_queues_proposals(
    served: DaemonProcess, model: Model, workspace: Path, short_tmp: Path
) -> None:
    transcript = short_tmp / "session.txt"
    transcript.write_text("user: ssh to staging over the VPN dies after a few idle minutes\n")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "memd",
            "reflect",
            str(transcript),
            "--socket",
            str(served.socket_path),
        ],
        cwd=workspace,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "1 queued" in done.stdout
    with Client(served.socket_path, workspace=workspace) as client:
        (entry,) = client.inbox().entries
        assert "session" in entry.reason


def test_reflect_without_a_model_says_how_to_configure_one(
    daemon: DaemonProcess, workspace: Path
) -> None:
    with Client(daemon.socket_path, workspace=workspace) as client:
        with pytest.raises(InvalidParams, match=r"\[llm\] command"):
            client.reflect("user: hello")
        stored = client.store(category="Decision", content=OLD)
        assert stored.llm is None


def test_a_callers_own_verdict_is_applied_without_asking(
    served: DaemonProcess, model: Model, workspace: Path
) -> None:
    with Client(served.socket_path, workspace=workspace) as client:
        first = client.store(category="Decision", content=OLD)
        model.set("fail")
        verdict = p.LlmOpinion(verdict="restates", restates=first.slug, reason="sampled")
        result = _store(client, workspace, "Decision", SAYS_LESS, llm=verdict)
        assert result.action == "updated" and result.content == SAYS_LESS
        assert result.llm is not None and result.llm.source == "sampling"
    assert not any("New memory:" in prompt for prompt in model.prompts())
