"""A history as one wire can take it, wherever its messages came from.

Messages are provider-neutral, so a conversation made on one wire continues
on another. Three rules make any history sendable (``docs/providers.md``,
"History from another provider"):

1. A reply's ``provider_meta`` (signatures, item ids) goes back only to the
   wire that made it (``AssistantMessage.wire``; ``None`` means any wire).
   Without it, each wire drops what it cannot carry: thinking of another
   vendor (it is signed or encrypted for its maker), and on OpenAI Chat
   Completions any thinking at all.
2. A tool call no result answers is left out: a reply that was aborted, or the
   hidden call that carried a structured answer, never had its calls run, and
   every wire rejects a call without its result.
3. A tool result whose call is not before it is left out, for the same reason.

Replies this module returns keep everything else (text, calls, usage).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from openprogram.messages import AssistantContent, AssistantMessage, Message, ToolCall
from openprogram.messages import ToolResultMessage as Result

__all__ = ["sendable", "stamped"]


def stamped(message: AssistantMessage, wire: str) -> AssistantMessage:
    """``message`` marked as made by ``wire`` (so its ``provider_meta`` returns there only)."""
    return message if message.wire == wire else replace(message, wire=wire)


def sendable(messages: Sequence[Message], wire: str) -> tuple[Message, ...]:
    """``messages`` with the three rules of the module docstring applied for ``wire``."""
    answered = {m.call_id for m in messages if isinstance(m, Result)}
    called: set[str] = set()
    out: list[Message] = []
    for message in messages:
        if isinstance(message, AssistantMessage):
            reply = _reply_for(message, wire, answered)
            called.update(call.id for call in reply.tool_calls)
            out.append(reply)
        elif not isinstance(message, Result) or message.call_id in called:
            out.append(message)
    return tuple(out)


def _reply_for(message: AssistantMessage, wire: str, answered: set[str]) -> AssistantMessage:
    foreign = message.wire is not None and message.wire != wire
    if not foreign and all(c.id in answered for c in message.tool_calls):
        return message  # the common case: nothing to change, nothing copied
    content: list[AssistantContent] = []
    for block in message.content:
        if isinstance(block, ToolCall) and block.id not in answered:
            continue
        bare = foreign and block.provider_meta is not None
        content.append(replace(block, provider_meta=None) if bare else block)
    return replace(message, content=tuple(content), wire=None if foreign else message.wire)
