"""The MCP client's own model, asked through MCP sampling (`sampling/createMessage`): memd's
second opinion when `memd mcp` runs under a client that offers it (issue 34).

Rules:
- Off unless memd's config says `[llm] sampling = true` (read once, as the bridge starts;
  `memd.config.LlmSettings`).
- Asked only when the client declared the `sampling` capability on a handshake-era connection
  (protocol 2025-11-25 or older): there the server may send the client a request while a tool
  call runs. Under 2026-07-28 sampling is deprecated and a server asks only by ending the call
  with "input required"; memd does not, so such a client has no model here.
- One question is one `sampling/createMessage`: the prompt (from `memd.core.llm.prompts`) as the
  only user message, at most MAX_TOKENS tokens back, within `[llm] timeout` seconds. An error,
  a refusal, a timeout or an answer that is not text is None ("no opinion"); `ask` never raises
  (a cancellation of the caller still propagates).
- The client's model already sees the conversation, Security entries included, so prompts for
  it are built with `may_send(..., external=False)`: nothing is left out for privacy.
"""

from __future__ import annotations

import logging
from typing import Any

import anyio

logger = logging.getLogger("memd.mcp")

MAX_TOKENS = 600
"""The most tokens a sampled answer may have: the answers are one small JSON object."""
HANDSHAKE_ERA_LAST = "2025-11-25"
"""The newest protocol version in which a server sends the client requests mid-call."""


def offers_sampling(ctx: Any) -> bool:
    """Whether the client of this call's context (`mcp.server.mcpserver.Context`) declared
    sampling on a connection where the server may ask it mid-call (see the module rules)."""
    from mcp_types.version import is_version_at_least

    capabilities = getattr(ctx, "client_capabilities", None)
    if capabilities is None or getattr(capabilities, "sampling", None) is None:
        return False
    version = getattr(ctx, "protocol_version", None)
    if not isinstance(version, str):
        return False
    return version == HANDSHAKE_ERA_LAST or not is_version_at_least(version, HANDSHAKE_ERA_LAST)


class SamplingModel:
    """The client's model, reached through one MCP session (`ctx.session` of a tool call)."""

    def __init__(self, session: Any, timeout: float, related_request_id: str | None) -> None:
        self.session = session
        self.timeout = timeout
        self.related_request_id = related_request_id
        """The tool call a question belongs to (None: asked after the call's reply, on the
        connection's own channel)."""

    async def ask(self, prompt: str) -> str | None:
        """The model's text answer to `prompt`, or None (see the module rules)."""
        from mcp.shared.message import ServerMessageMetadata
        from mcp.types import (
            CreateMessageRequest,
            CreateMessageRequestParams,
            CreateMessageResult,
            SamplingMessage,
            TextContent,
        )

        message = SamplingMessage(role="user", content=TextContent(type="text", text=prompt))
        request = CreateMessageRequest(
            params=CreateMessageRequestParams(
                messages=[message],
                max_tokens=MAX_TOKENS,
                temperature=0.0,
            )
        )
        metadata = (
            ServerMessageMetadata(related_request_id=self.related_request_id)
            if self.related_request_id is not None
            else None
        )
        result: CreateMessageResult | None = None
        with anyio.move_on_after(self.timeout) as scope:
            try:
                result = await self.session.send_request(
                    request,
                    CreateMessageResult,
                    request_read_timeout_seconds=self.timeout,
                    metadata=metadata,
                )
            except anyio.get_cancelled_exc_class():
                raise
            except Exception as exc:  # a refusal, an error answer, a broken connection
                logger.info("the client's model gave no answer (%s); no opinion", exc)
                return None
        if scope.cancelled_caught or result is None:
            logger.info("the client's model did not answer within %gs; no opinion", self.timeout)
            return None
        if not isinstance(result.content, TextContent):
            logger.info("the client's model answered with no text; no opinion")
            return None
        return result.content.text
