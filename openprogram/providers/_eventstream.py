"""Decoder for AWS's binary ``application/vnd.amazon.eventstream`` framing.

Each message (Smithy "Amazon Event Stream Specification")::

    total length (u32) | headers length (u32) | prelude CRC32 (u32)
    headers | payload | message CRC32 (u32)

all big-endian; the prelude CRC covers the first 8 bytes, the message CRC
everything before it. A header is a 1-byte name length, the name, a 1-byte
value type and the value. Bedrock's ConverseStream sends one JSON payload per
message, with ``:message-type``/``:event-type`` headers saying what it is.
"""

from __future__ import annotations

import struct
import uuid
import zlib
from dataclasses import dataclass, field
from typing import TypeAlias

__all__ = ["EventStreamDecoder", "EventStreamError", "EventStreamMessage", "HeaderValue"]

HeaderValue: TypeAlias = bool | int | bytes | str | uuid.UUID

_PRELUDE = 12
_MIN_MESSAGE = 16
_MAX_MESSAGE = 24 * 1024 * 1024  # the spec caps payloads at 16 MiB and headers at 128 KiB


class EventStreamError(ValueError):
    """The byte stream is not valid event-stream framing (bad length or checksum)."""


@dataclass(frozen=True, slots=True)
class EventStreamMessage:
    """One decoded message."""

    headers: dict[str, HeaderValue] = field(default_factory=dict)
    """Header name to value."""
    payload: bytes = b""
    """The message body."""


class EventStreamDecoder:
    """Turns bytes into ``EventStreamMessage``s, whatever the chunk boundaries."""

    def __init__(self) -> None:
        self._buf = bytearray()

    @property
    def pending(self) -> int:
        """Bytes received that do not yet form a whole message."""
        return len(self._buf)

    def feed(self, chunk: bytes) -> list[EventStreamMessage]:
        """Add bytes; return the messages they complete.

        Raises:
            EventStreamError: A length or checksum does not match.
        """
        self._buf += chunk
        out: list[EventStreamMessage] = []
        while len(self._buf) >= _PRELUDE:
            total, headers_len, prelude_crc = struct.unpack_from(">III", self._buf)
            if zlib.crc32(self._buf[:8]) != prelude_crc:
                raise EventStreamError("event-stream prelude checksum mismatch")
            if not _MIN_MESSAGE <= total <= _MAX_MESSAGE or headers_len > total - _MIN_MESSAGE:
                raise EventStreamError(
                    f"event-stream message has impossible lengths "
                    f"(total {total}, headers {headers_len})"
                )
            if len(self._buf) < total:
                break
            frame = bytes(self._buf[:total])
            del self._buf[:total]
            (message_crc,) = struct.unpack_from(">I", frame, total - 4)
            if zlib.crc32(frame[: total - 4]) != message_crc:
                raise EventStreamError("event-stream message checksum mismatch")
            headers = _headers(frame[_PRELUDE : _PRELUDE + headers_len])
            out.append(EventStreamMessage(headers, frame[_PRELUDE + headers_len : total - 4]))
        return out

    def close(self) -> list[EventStreamMessage]:
        """End of stream: a partial message left over is dropped (the reply is cut)."""
        self._buf.clear()
        return []


def _headers(raw: bytes) -> dict[str, HeaderValue]:
    headers: dict[str, HeaderValue] = {}
    pos = 0
    try:
        while pos < len(raw):
            name_len = raw[pos]
            name = raw[pos + 1 : pos + 1 + name_len].decode("utf-8")
            pos += 1 + name_len
            kind = raw[pos]
            pos += 1
            headers[name], pos = _value(raw, pos, kind)
    except (IndexError, struct.error, UnicodeDecodeError) as exc:
        raise EventStreamError(f"event-stream headers are malformed: {exc}") from exc
    return headers


_FIXED = {2: ">b", 3: ">h", 4: ">i", 5: ">q", 8: ">q"}


def _value(raw: bytes, pos: int, kind: int) -> tuple[HeaderValue, int]:
    if kind in (0, 1):
        return kind == 0, pos
    if kind in _FIXED:
        fmt = _FIXED[kind]
        (number,) = struct.unpack_from(fmt, raw, pos)
        return int(number), pos + struct.calcsize(fmt)
    if kind in (6, 7):
        (length,) = struct.unpack_from(">H", raw, pos)
        data = raw[pos + 2 : pos + 2 + length]
        if len(data) != length:
            raise EventStreamError("event-stream header value is truncated")
        return (data.decode("utf-8") if kind == 7 else bytes(data)), pos + 2 + length
    if kind == 9:
        data = raw[pos : pos + 16]
        if len(data) != 16:
            raise EventStreamError("event-stream uuid header is truncated")
        return uuid.UUID(bytes=bytes(data)), pos + 16
    raise EventStreamError(f"event-stream header has unknown value type {kind}")
