"""Tool-call ids unique in a run: each result answers its call by id."""

from __future__ import annotations

import os
from dataclasses import replace

from openprogram.messages import AssistantMessage, ToolCall

__all__ = ["unique_call_ids"]


def unique_call_ids(reply: AssistantMessage, used: set[str]) -> AssistantMessage:
    """``reply`` with every tool-call id unique in the run (empty or reused ones replaced).

    Each result answers its call by id, and vendors reject a conversation whose
    ids repeat; some servers number calls afresh in every reply, or send none.
    """
    if not reply.tool_calls:
        return reply
    content = tuple(_unique(b, used) if isinstance(b, ToolCall) else b for b in reply.content)
    return reply if content == reply.content else replace(reply, content=content)


def _unique(call: ToolCall, used: set[str]) -> ToolCall:
    if not call.id or call.id in used:
        while (fresh := f"call_{os.urandom(6).hex()}") in used:
            pass  # 48 random bits: a clash is all but impossible, but never reuse an id
        call = replace(call, id=fresh)
    used.add(call.id)
    return call
