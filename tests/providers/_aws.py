"""Test-side encoder of AWS event-stream messages (checked against the published vectors)."""

from __future__ import annotations

import json
import struct
import zlib
from typing import Any


def header(name: str, value: str | int | bool | bytes) -> bytes:
    """One header: string (type 7), int32 (4), bool (0/1) or bytes (6)."""
    raw = name.encode()
    head = struct.pack(">B", len(raw)) + raw
    if isinstance(value, bool):
        return head + struct.pack(">B", 0 if value else 1)
    if isinstance(value, int):
        return head + struct.pack(">Bi", 4, value)
    data = value.encode() if isinstance(value, str) else value
    return head + struct.pack(">BH", 7 if isinstance(value, str) else 6, len(data)) + data


def message(headers: bytes, payload: bytes) -> bytes:
    """Frame headers and payload with both CRCs."""
    total = 12 + len(headers) + len(payload) + 4
    prelude = struct.pack(">II", total, len(headers))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    body = prelude + headers + payload
    return body + struct.pack(">I", zlib.crc32(body))


def event(event_type: str, payload: dict[str, Any]) -> bytes:
    """A ConverseStream event as Bedrock frames it."""
    headers = (
        header(":event-type", event_type)
        + header(":content-type", "application/json")
        + header(":message-type", "event")
    )
    return message(headers, json.dumps({**payload, "p": "abcdefgh"}).encode())


def exception(exception_type: str, text: str) -> bytes:
    """A modelled exception inside the stream."""
    headers = (
        header(":exception-type", exception_type)
        + header(":content-type", "application/json")
        + header(":message-type", "exception")
    )
    return message(headers, json.dumps({"message": text}).encode())
