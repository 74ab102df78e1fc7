"""Incremental Server-Sent Events parser (the WHATWG HTML standard, section 9.2).

Bytes arrive in arbitrary pieces: a multi-byte UTF-8 character, a ``\\r\\n``
pair or a field name may be split across two reads. ``SSEDecoder.feed`` keeps
whatever is incomplete and returns only whole events, so callers never see a
fragment. Lines may end in ``\\r\\n``, ``\\n`` or ``\\r``; comment lines (``:``)
are skipped; several ``data:`` lines join with ``\\n``.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

from openprogram.exceptions import LLMError

__all__ = ["MAX_EVENT_CHARS", "SSEDecoder", "SSEEvent"]

MAX_EVENT_CHARS = 16 * 1024 * 1024
"""Largest SSE event accepted (its data lines, or one unfinished line); larger is an error.

Reply fragments are small; the largest legitimate events (a whole Responses
``response.completed``) hold one reply, far below this.
"""

_EOL = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True, slots=True)
class SSEEvent:
    """One dispatched event."""

    event: str
    """The ``event:`` field, ``"message"`` when absent."""
    data: str
    """The ``data:`` lines joined with ``\\n``."""
    id: str | None = None
    """The last event id seen, if any."""


class SSEDecoder:
    """Turns a byte stream into ``SSEEvent``s, whatever the chunk boundaries.

    Linear in the input: the unfinished line is kept as a list of pieces and
    joined once, when its line end arrives. One event (its lines, or a line
    that has not ended yet) may hold at most ``MAX_EVENT_CHARS`` characters.
    """

    def __init__(self) -> None:
        self._utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._pending: list[str] = []  # pieces of the line after the last line end
        self._pending_len = 0
        self._skip_lf = False  # the previous chunk ended in "\r": a leading "\n" belongs to it
        self._started = False
        self._data: list[str] = []
        self._size = 0  # characters of the event being collected
        self._event = ""
        self._last_id: str | None = None

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """Add bytes; return the events they complete.

        Raises:
            LLMError: An event grew past ``MAX_EVENT_CHARS``.
        """
        text = self._utf8.decode(chunk)
        return self._feed_text(text)

    def close(self) -> list[SSEEvent]:
        """End of stream: dispatch an event whose lines all arrived but whose blank line did not.

        The spec discards such an event; some OpenAI-compatible servers close
        the connection right after the last ``data:`` line, so a complete line
        is kept. A trailing partial line is still dropped: it was cut off.
        """
        events = self._feed_text(self._utf8.decode(b"", final=True))
        self._pending, self._pending_len = [], 0
        return events + self._dispatch()

    def _feed_text(self, text: str) -> list[SSEEvent]:
        if not self._started and text:
            self._started = True
            text = text.removeprefix("\ufeff")
        if self._skip_lf and text:
            self._skip_lf = False
            text = text.removeprefix("\n")
        events: list[SSEEvent] = []
        pos = 0
        while (m := _EOL.search(text, pos)) is not None:
            line = self._take_line(text[pos : m.start()])
            pos = m.end()
            if m.group() == "\r" and pos == len(text):
                self._skip_lf = True
            if line:
                self._field(line)
            else:
                events.extend(self._dispatch())
        if pos < len(text):
            self._pending.append(text[pos:])
            self._pending_len += len(text) - pos
            self._check(self._size + self._pending_len)
        return events

    def _take_line(self, tail: str) -> str:
        if not self._pending:
            return tail
        self._pending.append(tail)
        line = "".join(self._pending)
        self._pending, self._pending_len = [], 0
        return line

    def _check(self, size: int) -> None:
        if size > MAX_EVENT_CHARS:
            raise LLMError(
                f"a stream event is larger than {MAX_EVENT_CHARS:,} characters, the limit of "
                "one event: the server sent an event too big to be a reply fragment",
                reason="server",
                retryable=False,
            )

    def _field(self, line: str) -> None:
        if line.startswith(":"):
            return  # comment, e.g. a keep-alive ": ping"
        name, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._size += len(value) + 1
            self._check(self._size)
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id" and "\0" not in value:
            self._last_id = value
        # "retry" and unknown fields are ignored: reconnection is not used here.

    def _dispatch(self) -> list[SSEEvent]:
        data, event = self._data, self._event
        self._data, self._event, self._size = [], "", 0
        if not data:
            return []
        return [SSEEvent(event=event or "message", data="\n".join(data), id=self._last_id)]
