"""The MCP client's own model as memd's second opinion (issue 34), driven as in test_mcp.py: a
real `memd mcp` subprocess, a real daemon, and the SDK's own client, whose `sampling_callback`
acts as the model. Its verdicts change what a store does; a model that stalls, fails or answers
garbage leaves every store exactly as without a model; a client that does not offer sampling,
or a bridge with sampling off, is never asked; gap analysis and reviewSession put proposals in
the review inbox."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client import ClientRequestContext
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import CreateMessageRequestParams, CreateMessageResult, ImageContent, TextContent

from tests.conftest import DaemonProcess
from tests.e2e.test_mcp import call, fails

Answer = Callable[[str], Awaitable[Any]]

FIRST = "Use tabs for indentation in Python files."
SIMILAR = "Indent Python files with tabs."
"""The write decision stores SIMILAR beside FIRST (it names FIRST as `matched`): a model is
asked whether it restates FIRST."""


class Model:
    """The client's model: each prompt goes to `answer`; every prompt asked is kept."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.prompts: list[str] = []

    async def __call__(
        self, context: ClientRequestContext, params: CreateMessageRequestParams
    ) -> CreateMessageResult:
        block = params.messages[0].content
        assert isinstance(block, TextContent)
        self.prompts.append(block.text)
        reply = await self.answer(block.text)
        if isinstance(reply, CreateMessageResult):
            return reply
        return CreateMessageResult(
            role="assistant", model="scripted", content=TextContent(type="text", text=reply)
        )


@pytest.fixture
def env(short_tmp: Path) -> dict[str, str]:
    """Private home, state, config and runtime directories for the bridge (as test_mcp.py's)."""
    return {
        "HOME": str(short_tmp / "home"),
        "XDG_STATE_HOME": str(short_tmp / "state"),
        "XDG_CONFIG_HOME": str(short_tmp / "config"),
        "XDG_RUNTIME_DIR": str(short_tmp / "run"),
        "MEMD_LOG_LEVEL": "INFO",
        **{name: os.environ[name] for name in ("PYTHONPATH",) if name in os.environ},
    }


def says(text: str) -> Answer:
    async def answer(prompt: str) -> str:
        return text

    return answer


def config(short_tmp: Path, **llm: Any) -> None:
    """memd's config file for the bridge: an `[llm]` table of `llm`."""
    path = short_tmp / "config" / "memd" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [f"{key} = {json.dumps(value)}" for key, value in llm.items()]
    path.write_text("[llm]\n" + "\n".join(lines) + "\n")


@contextlib.asynccontextmanager
async def sampled_bridge(
    short_tmp: Path,
    env: dict[str, str],
    daemon: DaemonProcess,
    ws: Path,
    model: Model | None,
    mode: str = "legacy",
) -> AsyncIterator[Client]:
    """`memd mcp` for `ws`, its client offering sampling through `model` (None: it does not),
    on a handshake-era connection ("legacy"; "auto": 2026-07-28, where a server cannot ask)."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memd", "mcp", "--socket", str(daemon.socket_path), "--workspace", str(ws)],
        env=env,
    )
    with (short_tmp / "bridge.log").open("a") as errlog:
        transport = stdio_client(params, errlog=errlog)
        async with Client(transport, mode=mode, sampling_callback=model) as client:
            yield client


def workspace_at(short_tmp: Path, name: str) -> Path:
    path = short_tmp / name
    path.mkdir()
    return path


async def similar_pair(client: Client) -> dict[str, Any]:
    """Store FIRST, then SIMILAR (the store a model is asked about); SIMILAR's result."""
    await call(client, "storeMemory", category="Preference", content=FIRST)
    said, result = await call(client, "storeMemory", category="Preference", content=SIMILAR)
    result["said"] = said
    return result


def preferences(ws: Path) -> str:
    return (ws / ".memory" / "preferences.md").read_text()


async def test_a_distinct_verdict_stores_and_a_restates_verdict_updates(
    daemon: DaemonProcess, short_tmp: Path, env: dict[str, str]
) -> None:
    config(short_tmp, sampling=True, timeout=5)
    distinct = Model(says('{"restates": null, "reason": "It narrows the rule."}'))
    ws = workspace_at(short_tmp, "distinct")
    async with sampled_bridge(short_tmp, env, daemon, ws, distinct) as c:
        result = await similar_pair(c)
    assert len(distinct.prompts) == 1  # FIRST had nothing similar: not asked
    assert FIRST in distinct.prompts[0] and SIMILAR in distinct.prompts[0]
    assert result["action"] == "stored"
    assert result["llm"]["consulted"] is True
    assert result["llm"]["verdict"] == "distinct"
    assert "It narrows the rule." in result["said"]
    assert SIMILAR in preferences(ws)

    restates = Model(says('Sure. ```{"restates": 1, "reason": "Same rule."}```'))
    ws = workspace_at(short_tmp, "restates")
    async with sampled_bridge(short_tmp, env, daemon, ws, restates) as c:
        result = await similar_pair(c)
    assert result["llm"]["verdict"] == "restates"
    assert result["llm"]["source"] == "sampling"
    assert result["action"] == "updated"  # a model's "restates" is never a skip
    assert "Same rule." in result["said"]
    entries = [line for line in preferences(ws).splitlines() if line.startswith("- ")]
    assert len(entries) == 1 and entries[0].endswith(SIMILAR)  # FIRST's entry, now reworded


async def stalls(prompt: str) -> str:
    await anyio.Event().wait()  # never set: the model never answers
    raise AssertionError("unreachable")


async def raises(prompt: str) -> str:
    raise RuntimeError("the model is down")


async def image(prompt: str) -> CreateMessageResult:
    return CreateMessageResult(
        role="assistant",
        model="scripted",
        content=ImageContent(type="image", data="AAAA", mime_type="image/png"),
    )


@pytest.mark.parametrize(
    "answer",
    [stalls, raises, says("Yes, I think it does."), says('{"restates": 7}'), image],
    ids=["stalls", "raises", "prose", "out-of-range", "image"],
)
async def test_a_model_that_stalls_fails_or_answers_garbage_leaves_the_store_as_without_one(
    daemon: DaemonProcess, short_tmp: Path, env: dict[str, str], answer: Answer
) -> None:
    config(short_tmp, sampling=True, timeout=1)
    model = Model(answer)
    ws = workspace_at(short_tmp, "asked")
    async with sampled_bridge(short_tmp, env, daemon, ws, model) as c:
        result = await similar_pair(c)
        # The bridge goes on answering after the stall or the failure.
        _, after = await call(c, "storeMemory", category="Decision", content="Ship on Fridays.")
    assert len(model.prompts) == 1
    plain = workspace_at(short_tmp, "plain")
    async with sampled_bridge(short_tmp, env, daemon, plain, None) as c:
        without = await similar_pair(c)
    assert result["action"] == without["action"] == "stored"
    assert result["slug"] == without["slug"]
    assert preferences(ws) == preferences(plain)
    assert after["action"] == "stored"
    assert without.get("llm") is None  # no model was consulted there
    if result.get("llm") is not None:
        assert result["llm"].get("verdict", "no_opinion") == "no_opinion"  # a default: omitted


async def test_a_client_without_sampling_or_a_bridge_with_sampling_off_is_never_asked(
    daemon: DaemonProcess, short_tmp: Path, env: dict[str, str]
) -> None:
    config(short_tmp, sampling=True)
    async with sampled_bridge(short_tmp, env, daemon, workspace_at(short_tmp, "a"), None) as c:
        result = await similar_pair(c)  # the SDK would answer "Sampling not supported"
    assert result["action"] == "stored"
    assert result.get("llm") is None

    config(short_tmp, sampling=True, gap_every=1)
    model = Model(says('{"restates": 1, "reason": "Same."}'))
    ws = workspace_at(short_tmp, "modern")
    async with sampled_bridge(short_tmp, env, daemon, ws, model, mode="auto") as c:
        result = await similar_pair(c)  # 2026-07-28: the server cannot ask mid-call
    assert model.prompts == []
    assert result["action"] == "stored"

    config(short_tmp, sampling=False, gap_every=1)
    model = Model(says('{"restates": 1, "reason": "Same."}'))
    async with sampled_bridge(short_tmp, env, daemon, workspace_at(short_tmp, "b"), model) as c:
        result = await similar_pair(c)
        await call(c, "storeMemory", category="Quirk", content="CI is slow.", conversation="hi")
    assert model.prompts == []
    assert result["action"] == "stored"


async def inbox_entries(client: Client, count: int) -> list[dict[str, Any]]:
    """The inbox once it holds `count` entries (gap analysis runs after a store's reply)."""
    with anyio.fail_after(20):
        while True:
            _, inbox = await call(client, "reviewInbox")
            if len(inbox["entries"]) >= count:
                return list(inbox["entries"])
            await anyio.sleep(0.05)  # polling the inbox, not waiting for a time


async def test_gap_analysis_proposes_into_the_inbox_after_every_nth_store_with_an_excerpt(
    daemon: DaemonProcess, short_tmp: Path, env: dict[str, str]
) -> None:
    config(short_tmp, sampling=True, gap_every=2, timeout=5)
    proposal = "Run the migrations before the tests."

    async def answer(prompt: str) -> str:
        assert "Conversation excerpt" in prompt
        unknown = {"category": "Nope", "content": "x"}  # no such category: left out
        return json.dumps({"memories": [{"category": "quirk", "content": proposal}, unknown]})

    model = Model(answer)
    ws = workspace_at(short_tmp, "gap")
    talk = "User: the tests fail unless you run the migrations first.\nAgent: noted."
    async with sampled_bridge(short_tmp, env, daemon, ws, model) as c:
        await call(c, "storeMemory", category="Decision", content="Use Postgres 16.")
        await call(c, "storeMemory", category="Decision", content="Ship weekly.", conversation=talk)
        assert model.prompts == []  # one store with an excerpt: not due yet
        await call(c, "storeMemory", category="Quirk", content="CI runs on ARM.", conversation=talk)
        entries = await inbox_entries(c, 1)
    assert len(model.prompts) == 1
    gap_prompt = model.prompts[0]
    assert talk.splitlines()[0] in gap_prompt
    assert "Use Postgres 16." in gap_prompt and "CI runs on ARM." in gap_prompt  # recent stores
    assert [(e["category"], e["content"]) for e in entries] == [("Quirk", proposal)]
    assert proposal not in (ws / ".memory" / "quirks.md").read_text()  # proposed, not stored


async def test_review_session_queues_what_the_clients_model_proposes(
    daemon: DaemonProcess, short_tmp: Path, env: dict[str, str]
) -> None:
    config(short_tmp, sampling=True, timeout=5)
    model = Model(
        says(
            json.dumps(
                {
                    "memories": [
                        {"category": "Preference", "content": "Name tests after behaviour."},
                        {"category": "Decision", "content": "Keep the API versioned."},
                    ]
                }
            )
        )
    )
    ws = workspace_at(short_tmp, "session")
    async with sampled_bridge(short_tmp, env, daemon, ws, model) as c:
        said, result = await call(c, "reviewSession", transcript="User: name tests well.\n...")
        _, inbox = await call(c, "reviewInbox")
    assert "Transcript excerpt" in model.prompts[0]
    assert result["llm"]["consulted"] is True
    assert [o["action"] for o in result["proposed"]["outcomes"]] == ["queued", "queued"]
    assert {e["content"] for e in inbox["entries"]} == {
        "Name tests after behaviour.",
        "Keep the API versioned.",
    }
    assert "memd review" in said and "Name tests after behaviour." in said


async def test_review_session_without_sampling_relays_the_daemons_reflect(
    daemon: DaemonProcess, short_tmp: Path, env: dict[str, str]
) -> None:
    config(short_tmp, sampling=True)
    ws = workspace_at(short_tmp, "no-model")
    async with sampled_bridge(short_tmp, env, daemon, ws, None) as c:  # no sampling offered
        said = await fails(c, "reviewSession", transcript="User: always run make lint.")
    # The daemon has no [llm] command either: its sentence says how to set a model up.
    assert "[llm]" in said and "command" in said
    assert "workspace" in said  # then the workspace used, as every tool error
