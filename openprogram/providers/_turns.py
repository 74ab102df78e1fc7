"""The history as role turns, for the wires that reject two turns of one role in a row.

Anthropic Messages, Gemini ``contents`` and Bedrock Converse take the history
as alternating user and assistant (Gemini: ``model``) turns, each a list of
blocks. openprogram's history is a list of messages, where tool results are
messages of their own and a steering message may follow them: every run of
same-role messages becomes one turn, each wire supplying how a message becomes
blocks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from openprogram.messages import AssistantMessage, Message, ToolResultMessage, UserMessage

__all__ = ["merged_turns"]

Block = dict[str, Any]


def merged_turns(
    messages: Sequence[Message],
    *,
    user: Callable[[UserMessage], list[Block]],
    tool_result: Callable[[ToolResultMessage], Block],
    assistant: Callable[[AssistantMessage], list[Block]],
    assistant_role: str = "assistant",
    blocks_key: str = "content",
) -> list[dict[str, Any]]:
    """One ``{"role": ..., blocks_key: [...]}`` turn per run of same-role messages.

    A tool result is a block of a user turn. A message that maps to no block
    (a reply cut off before any text) is left out, so the turns around it may merge.

    Args:
        messages: The history, oldest first.
        user: A user message's blocks.
        tool_result: A tool result's block.
        assistant: An assistant message's blocks.
        assistant_role: The wire's name for the model's role (Gemini: ``"model"``).
        blocks_key: The wire's name for a turn's blocks (Gemini: ``"parts"``).
    """
    out: list[dict[str, Any]] = []
    for message in messages:
        role: str
        if isinstance(message, UserMessage):
            role, blocks = "user", user(message)
        elif isinstance(message, ToolResultMessage):
            role, blocks = "user", [tool_result(message)]
        else:
            role, blocks = assistant_role, assistant(message)
        if not blocks:
            continue
        if out and out[-1]["role"] == role:
            out[-1][blocks_key].extend(blocks)
        else:
            out.append({"role": role, blocks_key: blocks})
    return out
