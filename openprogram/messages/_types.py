"""Provider-neutral conversation messages: the message and content classes.

Every provider maps these both ways; the runtime only ever sees them. All are
frozen dataclasses whose repr shows their fields. The system prompt is not a
message: it travels in ``ProviderRequest.system``.
"""

from __future__ import annotations

import base64
import mimetypes
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeAlias

__all__ = [
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
    "user_content",
]

StopReason: TypeAlias = Literal[
    "stop",  # the model finished its turn normally (text, or tool calls to run)
    "tool_calls",  # the model stopped to have tools run
    "length",  # the output token limit cut the reply
    "content_filter",  # the provider withheld (part of) the reply
    "refusal",  # the model refused
    "error",  # the provider call failed
    "aborted",  # the call was cancelled
]


@dataclass(frozen=True, slots=True)
class TextContent:
    """A block of text."""

    text: str
    """The text itself."""
    provider_meta: Mapping[str, Any] | None = field(default=None, repr=False, compare=False)
    """Opaque provider data to echo back on replay (e.g. a signature)."""


@dataclass(frozen=True, slots=True)
class ThinkingContent:
    """Reasoning the provider exposed; echoed back where the wire requires it."""

    text: str
    """The reasoning text (may be empty when the provider only sends a signature)."""
    provider_meta: Mapping[str, Any] | None = field(default=None, repr=False, compare=False)
    """Opaque provider data (e.g. Anthropic's thinking signature)."""


@dataclass(frozen=True, slots=True)
class ImageContent:
    """An image sent to the model, base64-encoded."""

    data: str
    """Base64 of the image bytes."""
    mime_type: str
    """e.g. ``"image/png"``."""

    @classmethod
    def from_path(cls, path: str | Path, mime_type: str | None = None) -> ImageContent:
        """Read an image file.

        Args:
            path: File to read.
            mime_type: Overrides the type guessed from the file name.
        """
        p = Path(path)
        mime = mime_type or mimetypes.guess_type(p.name)[0]
        if mime is None or not mime.startswith("image/"):
            raise ValueError(f"cannot tell the image type of {p}; pass mime_type='image/png' etc.")
        return cls(data=base64.b64encode(p.read_bytes()).decode("ascii"), mime_type=mime)


@dataclass(frozen=True, slots=True)
class ToolCall:
    """The model asks for one tool to run."""

    id: str
    """Call id, unique within the reply; the result answers it."""
    name: str
    """Tool name as the model wrote it."""
    arguments: Mapping[str, Any]
    """Parsed JSON arguments (empty when they could not be parsed)."""
    arguments_error: str | None = None
    """Why the raw arguments could not be parsed as a JSON object, if they could not."""
    provider_meta: Mapping[str, Any] | None = field(default=None, repr=False, compare=False)
    """Opaque provider data to echo back on replay (e.g. Gemini's thoughtSignature)."""


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts of one or more model calls."""

    input_tokens: int = 0
    """Prompt tokens, cached ones included."""
    output_tokens: int = 0
    """Generated tokens."""
    cached_tokens: int = 0
    """Prompt tokens served from the provider's cache."""

    @property
    def total_tokens(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cached_tokens=self.cached_tokens + other.cached_tokens,
        )


UserContent: TypeAlias = TextContent | ImageContent
AssistantContent: TypeAlias = TextContent | ThinkingContent | ToolCall


@dataclass(frozen=True, slots=True)
class UserMessage:
    """A user turn: plain text, or text and image blocks."""

    content: str | tuple[UserContent, ...]
    """The text, or the blocks in order."""

    def __post_init__(self) -> None:
        if not isinstance(self.content, str | tuple):
            object.__setattr__(self, "content", tuple(self.content))

    @property
    def text(self) -> str:
        """All text of the message joined."""
        if isinstance(self.content, str):
            return self.content
        return "".join(b.text for b in self.content if isinstance(b, TextContent))


@dataclass(frozen=True, slots=True)
class AssistantMessage:
    """One model reply: text and/or tool calls."""

    content: tuple[AssistantContent, ...]
    """Blocks in the order the model produced them."""
    stop_reason: StopReason = "stop"
    """Why the reply ended."""
    usage: Usage = field(default_factory=Usage)
    """Tokens this reply cost."""
    error: str | None = None
    """The failure text when ``stop_reason`` is ``"error"``."""
    model: str | None = None
    """The model that answered, as the provider reported it."""
    wire: str | None = field(default=None, repr=False, compare=False)
    """The wire format that produced the reply (e.g. ``"anthropic"``); its blocks'
    ``provider_meta`` is echoed back to that wire only (``None``: to any wire)."""

    def __post_init__(self) -> None:
        if not isinstance(self.content, tuple):
            object.__setattr__(self, "content", tuple(self.content))

    @property
    def text(self) -> str:
        """The reply's text blocks joined (thinking excluded)."""
        return "".join(b.text for b in self.content if isinstance(b, TextContent))

    @property
    def tool_calls(self) -> list[ToolCall]:
        """The tool calls, in order."""
        return [b for b in self.content if isinstance(b, ToolCall)]


@dataclass(frozen=True, slots=True)
class ToolResultMessage:
    """The result of one tool call, fed back to the model."""

    call_id: str
    """The ``ToolCall.id`` this answers."""
    tool_name: str
    """The tool that was called."""
    content: str
    """The text the model sees."""
    is_error: bool = False
    """Whether the call failed (the model should correct itself)."""

    @property
    def text(self) -> str:
        """The result as the model sees it: ``content`` (every message has ``.text``)."""
        return self.content


Message: TypeAlias = UserMessage | AssistantMessage | ToolResultMessage


def user_content(content: str | Sequence[Any] | UserMessage) -> UserMessage:
    """Normalize ``exec(content)`` into a ``UserMessage``.

    Accepts a string, a ``UserMessage``, or a list of blocks: ``TextContent``,
    ``ImageContent``, plain strings, ``{"type": "text", "text": ...}`` and
    ``{"type": "image", "path": ...}`` / ``{"type": "image", "data": ..., "mime_type": ...}``.

    Raises:
        TypeError: A block is of no known form (the message names it).
    """
    if isinstance(content, UserMessage):
        return content
    if isinstance(content, str):
        return UserMessage(content)
    return UserMessage(tuple(_block(b, i) for i, b in enumerate(_iter(content))))


def _iter(content: Iterable[Any]) -> Iterable[Any]:
    if isinstance(content, Mapping):
        raise TypeError("content must be a string or a list of blocks, not a dict")
    return content


def _block(block: Any, index: int) -> UserContent:
    if isinstance(block, TextContent | ImageContent):
        return block
    if isinstance(block, str):
        return TextContent(block)
    if isinstance(block, Mapping):
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            return TextContent(block["text"])
        if kind == "image" and "path" in block:
            return ImageContent.from_path(block["path"], block.get("mime_type"))
        if kind == "image" and "data" in block and "mime_type" in block:
            data = block["data"]
            if isinstance(data, bytes):
                data = base64.b64encode(data).decode("ascii")
            return ImageContent(data=data, mime_type=block["mime_type"])
    raise TypeError(
        f"content block {index} ({block!r:.80}) is not a known block: use a string, "
        '{"type": "text", "text": ...}, {"type": "image", "path": ...} or '
        '{"type": "image", "data": ..., "mime_type": ...}'
    )
