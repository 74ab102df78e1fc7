"""The recording file: its format and version, the replies as JSON, written atomically."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from openprogram.messages import (
    AssistantContent,
    AssistantMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    Usage,
)

__all__ = ["FORMAT", "VERSION", "load", "message_from_json", "message_to_json", "write_atomically"]

FORMAT = "openprogram.recording"
"""The ``"format"`` field of every recording file."""
VERSION = 1
"""The ``"version"`` of recording this code writes and reads."""


def message_to_json(message: AssistantMessage) -> dict[str, Any]:
    """An ``AssistantMessage`` as plain JSON (provider data kept for faithful replay)."""
    blocks: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, ToolCall):
            item: dict[str, Any] = {
                "type": "tool_call",
                "id": block.id,
                "name": block.name,
                "arguments": dict(block.arguments),
            }
            if block.arguments_error is not None:
                item["arguments_error"] = block.arguments_error
        else:
            kind = "thinking" if isinstance(block, ThinkingContent) else "text"
            item = {"type": kind, "text": block.text}
        if block.provider_meta:
            item["provider_meta"] = dict(block.provider_meta)
        blocks.append(item)
    usage = message.usage
    return {
        "content": blocks,
        "stop_reason": message.stop_reason,
        "error": message.error,
        "model": message.model,
        "usage": {
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
            "cached_tokens": usage.cached_tokens,
        },
    }


def message_from_json(data: Mapping[str, Any]) -> AssistantMessage:
    """The inverse of ``message_to_json``."""
    blocks: list[AssistantContent] = []
    for item in data.get("content") or []:
        meta = item.get("provider_meta")
        if item["type"] == "tool_call":
            blocks.append(
                ToolCall(
                    item["id"],
                    item["name"],
                    item.get("arguments") or {},
                    item.get("arguments_error"),
                    provider_meta=meta,
                )
            )
        elif item["type"] == "thinking":
            blocks.append(ThinkingContent(item.get("text") or "", provider_meta=meta))
        else:
            blocks.append(TextContent(item.get("text") or "", provider_meta=meta))
    return AssistantMessage(
        tuple(blocks),
        stop_reason=data.get("stop_reason") or "stop",
        usage=Usage(**(data.get("usage") or {})),
        error=data.get("error"),
        model=data.get("model"),
    )


def write_atomically(path: Path, document: Mapping[str, Any]) -> None:
    """Write ``document`` to ``path`` as JSON, replacing the file only once it is complete."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(document, out, ensure_ascii=False, indent=1, default=str)
            out.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load(path: Path) -> dict[str, Any]:
    """The recording at ``path``.

    Raises:
        FileNotFoundError: There is no file at ``path``.
        ValueError: The file is not a recording, or of another version.
    """
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FileNotFoundError(
            f"no recording at {path}: make one with openprogram.testing.record(provider, path)"
        ) from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise ValueError(f'{path} is not an openprogram recording (no "format": {FORMAT!r})')
    if document.get("version") != VERSION:
        raise ValueError(
            f"{path} has recording version {document.get('version')!r}; "
            f"this openprogram reads version {VERSION}: record it again"
        )
    return document
