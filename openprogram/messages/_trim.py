"""``trim_history``: the newest part of a long conversation that fits, cut where it is safe.

A cut may only fall before a ``UserMessage`` whose suffix answers no tool call
made before it: a tool result is never sent without the call it answers, and
every wire accepts a history that opens with a user turn. Within those cut
points the newest suffix that fits both limits is kept; when not even the
last exchange fits, the history is empty (the new content is still sent).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from openprogram.exceptions import UserError
from openprogram.messages._types import (
    AssistantMessage,
    ImageContent,
    Message,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

__all__ = ["IMAGE_CHARS", "trim_history"]

IMAGE_CHARS = 4_000
"""What one image counts as against ``max_chars`` (about a thousand tokens on most wires)."""


def trim_history(
    messages: Sequence[Message],
    *,
    max_messages: int | None = None,
    max_chars: int | None = None,
) -> tuple[Message, ...]:
    """The newest messages within both limits, cut only before a user turn.

    Args:
        messages: The conversation, oldest first.
        max_messages: Keep at most this many messages (``None``: no limit).
        max_chars: Keep at most this many characters of text, tool arguments and
            results (an image counts as ``IMAGE_CHARS``; ``None``: no limit).

    Returns:
        A suffix of ``messages`` that starts with a ``UserMessage`` and holds every
        tool call whose result it holds (all of it, when it fits and opens with a user turn).

    Raises:
        UserError: A limit is not an int >= 1.

    Example:
        >>> from openprogram.messages import AssistantMessage, TextContent, UserMessage
        >>> chat = [UserMessage("Hi"), AssistantMessage((TextContent("Hello!"),)),
        ...         UserMessage("Bye"), AssistantMessage((TextContent("Bye!"),))]
        >>> kept = trim_history(chat, max_messages=3)  # a cut never splits an exchange
        >>> [m.text for m in kept]
        ['Bye', 'Bye!']
    """
    for name, limit in (("max_messages", max_messages), ("max_chars", max_chars)):
        if limit is not None and (type(limit) is not int or limit < 1):
            raise UserError(f"trim_history({name}={limit!r}): use an int >= 1, or None")
    cut = len(messages)
    size = 0
    unanswered: set[str] = set()  # results seen (walking back) whose call is not seen yet
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        size += len(message.content) if isinstance(message, ToolResultMessage) else _size(message)
        if max_messages is not None and len(messages) - index > max_messages:
            break
        if max_chars is not None and size > max_chars:
            break
        if isinstance(message, ToolResultMessage):
            unanswered.add(message.call_id)
        elif isinstance(message, UserMessage):
            if not unanswered:
                cut = index  # a user turn, and every result after it has its call after it
        elif unanswered:
            unanswered.difference_update(b.id for b in message.content if isinstance(b, ToolCall))
    return tuple(messages[cut:])


def _size(message: UserMessage | AssistantMessage) -> int:
    """Characters a message puts in a request (roughly: what its tokens grow with)."""
    content = message.content
    if isinstance(content, str):
        return len(content)
    total = 0
    for block in content:
        if isinstance(block, ToolCall):
            total += len(block.name) + len(json.dumps(dict(block.arguments), default=str))
        elif isinstance(block, ImageContent):
            total += IMAGE_CHARS
        else:
            total += len(block.text)
    return total
