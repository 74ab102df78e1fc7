"""Provider-neutral conversation messages, their JSON form, and history trimming.

Every provider maps the message classes both ways; the runtime only ever sees
them. ``dump_messages``/``load_messages`` write and read them as versioned
JSON text, losslessly; ``trim_history`` keeps the newest part of a long
conversation that fits, never splitting a tool call from its result.
"""

from __future__ import annotations

from openprogram.messages._json import MESSAGES_VERSION, dump_messages, load_messages
from openprogram.messages._trim import IMAGE_CHARS, trim_history
from openprogram.messages._types import (
    AssistantContent,
    AssistantMessage,
    ImageContent,
    Message,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserContent,
    UserMessage,
    user_content,
)

__all__ = [
    "IMAGE_CHARS",
    "MESSAGES_VERSION",
    "AssistantContent",
    "AssistantMessage",
    "ImageContent",
    "Message",
    "StopReason",
    "TextContent",
    "ThinkingContent",
    "ToolCall",
    "ToolResultMessage",
    "Usage",
    "UserContent",
    "UserMessage",
    "dump_messages",
    "load_messages",
    "trim_history",
    "user_content",
]
