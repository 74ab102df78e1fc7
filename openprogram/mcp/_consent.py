"""Approval of served calls, asked of the MCP client's user through elicitation.

A served tool with ``requires_approval`` runs only when the client's user
accepts a form elicitation naming the call (an empty form: accepting it is
the approval; declining or dismissing it denies the call). The protocol
revision decides how the question travels:

- up to 2025-11-25, the server sends an ``elicitation/create`` request while
  the ``tools/call`` is in progress, and waits for the answer;
- from 2026-07-28, the ``tools/call`` is answered with an ``InputRequiredResult``
  carrying the question; the client asks its user and sends the call again
  with the answer and the ``request_state`` it was given. That state is an
  HMAC of the call under a key of this server, so an answer counts only for
  the call it was asked about, and only when this server asked.

A client that declares no form elicitation cannot be asked: such tools are
not listed to it (and a call of one is answered as for any name not served).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from collections.abc import Mapping
from typing import Any

from openprogram.mcp import _sdk
from openprogram.mcp._session import describe
from openprogram.tools import Tool

__all__ = ["APPROVAL_KEY", "Consent", "can_ask", "needs_approval"]

APPROVAL_KEY = "openprogram.approval"
"""Key of the approval question in an ``InputRequiredResult``'s ``input_requests``."""

_MODERN = "2026-07-28"
_MAX_ARGUMENTS_CHARS = 2000
_FORM: dict[str, Any] = {"type": "object", "properties": {}}
_ANSWERS = {
    "decline": "the user of the MCP client declined the call",
    "cancel": "the user of the MCP client dismissed the approval request",
}


def can_ask(ctx: Any) -> bool:
    """Whether the client of this request declared form elicitation (a bare one counts)."""
    capabilities = ctx.session.client_capabilities
    elicitation = capabilities.elicitation if capabilities is not None else None
    return elicitation is not None and (elicitation.form is not None or elicitation.url is None)


def needs_approval(tool: Tool, arguments: Mapping[str, Any]) -> bool | str:
    """The tool's ``requires_approval`` for these arguments; a rule that raises asks (fails closed).

    Returns:
        ``False``, ``True``, or a reason to show the user (truthy).
    """
    rule = tool.requires_approval
    if not callable(rule):
        return rule
    try:
        return rule(arguments)
    except Exception as exc:  # noqa: BLE001 - a raising rule asks rather than running unasked
        return f"its approval rule raised {type(exc).__name__}: {exc}"


class Consent:
    """Asks the client's user to approve calls; one per server (it holds the HMAC key)."""

    def __init__(self) -> None:
        self._key = os.urandom(32)

    async def decide(
        self, ctx: Any, params: Any, tool: Tool, arguments: Mapping[str, Any], why: bool | str
    ) -> Any:
        """``None`` (approved), a denial reason (``str``), or an ``InputRequiredResult`` to return.

        Args:
            ctx: The SDK's request context of the ``tools/call``.
            params: Its ``CallToolRequestParams``.
            tool: The tool called.
            arguments: The call's arguments.
            why: What ``needs_approval`` said (a string is shown to the user).
        """
        message = _question(tool, arguments, why)
        if _sdk.is_version_at_least(ctx.protocol_version or "", _MODERN):
            return self._round_trip(params, tool, arguments, message)
        try:
            answer = await ctx.session.elicit_form(
                message, _FORM, related_request_id=ctx.request_id
            )
        except Exception as exc:  # noqa: BLE001 - no answer is a denial (fail closed)
            return f"the MCP client could not be asked for approval ({describe(exc)})"
        return _verdict(answer)

    def _round_trip(
        self, params: Any, tool: Tool, arguments: Mapping[str, Any], message: str
    ) -> Any:
        token = self._token(tool.name, arguments)
        responses = params.input_responses or {}
        answer = responses.get(APPROVAL_KEY)
        if answer is not None and hmac.compare_digest(params.request_state or "", token):
            if isinstance(answer, _sdk.types.ElicitResult):
                return _verdict(answer)
            return "the MCP client answered the approval request with something else"
        question = _sdk.types.ElicitRequest(
            params=_sdk.types.ElicitRequestFormParams(message=message, requested_schema=_FORM)
        )
        return _sdk.types.InputRequiredResult(
            input_requests={APPROVAL_KEY: question}, request_state=token
        )

    def _token(self, name: str, arguments: Mapping[str, Any]) -> str:
        call = json.dumps([name, arguments], sort_keys=True, default=str).encode()
        return hmac.new(self._key, call, hashlib.sha256).hexdigest()


def _question(tool: Tool, arguments: Mapping[str, Any], why: bool | str) -> str:
    shown = json.dumps(dict(arguments), ensure_ascii=False, sort_keys=True, default=str)
    if len(shown) > _MAX_ARGUMENTS_CHARS:
        shown = f"{shown[:_MAX_ARGUMENTS_CHARS]}… ({len(shown)} characters)"
    reason = f" ({why})" if isinstance(why, str) else ""
    return (
        f"Allow the tool call {tool.name}{reason}?\nArguments: {shown}\n"
        "Accept to run it; decline to refuse it."
    )


def _verdict(answer: Any) -> str | None:
    if answer.action == "accept":
        return None
    return _ANSWERS.get(answer.action, f"the approval request was answered {answer.action!r}")
