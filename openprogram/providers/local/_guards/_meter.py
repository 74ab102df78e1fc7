"""What a streamed reply has cost so far, for a reply the provider stops reading early.

The provider closes a streamed reply before its end when it only repeats calls
(``_turn``) or loops (``_loops``); the server's usage comes in the last chunk,
so it never arrives. Asked for it (``timings_per_token``), llama.cpp sends
``timings`` with every streamed token instead: ``prompt_n`` prompt tokens
computed and ``cache_n`` taken from its cache (their sum is the prompt), and
``predicted_n`` tokens generated so far; the last ones read are the reply's
figures. A server that sends none leaves the content chunks to count: llama.cpp
sends one per generated token (none for a token whose text it holds back, such
as half a UTF-8 character), and the prompt is then measured by the provider
(``LocalWire.prompt_usage``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from openprogram.messages import Usage

__all__ = ["Meter", "timings_usage"]


class Meter:
    """Fed a streamed reply's chunks by the stream parser; read when the reply is cut short.

    One per request (``LocalRequest.meter``); each attempt's parser starts it afresh.
    """

    def __init__(self) -> None:
        self.timings: Mapping[str, Any] | None = None
        """The last ``timings`` the server sent, if any."""
        self.chunks = 0
        """Chunks that carried reply text."""
        self.prompt_unknown = False
        """Set when a reply was cut short with no ``timings``: its prompt must be measured."""
        self.live = False
        """Whether the reply is streamed (a stream parser feeds the meter); a reply that
        is not streamed arrives whole, usage included, so it need not be metered."""

    def restart(self) -> None:
        """A new streamed attempt: nothing read yet."""
        self.timings, self.chunks, self.prompt_unknown, self.live = None, 0, False, True

    def so_far(self) -> Usage:
        """The tokens of the reply read so far, which the provider stops reading now.

        From the server's ``timings`` when it sent them; else the text chunks
        counted as output, and ``prompt_unknown`` set (the input is then 0 until
        the provider has measured it).
        """
        usage = timings_usage(self.timings) if self.timings is not None else None
        if usage is not None:
            return usage
        self.prompt_unknown = True
        return Usage(output_tokens=self.chunks)


def timings_usage(timings: Mapping[str, Any]) -> Usage | None:
    """llama.cpp's ``timings`` as ``Usage``, or ``None`` if they are not counts."""
    try:
        cached = int(timings["cache_n"])
        prompt = int(timings["prompt_n"]) + cached
        output = int(timings["predicted_n"])
        return Usage(input_tokens=prompt, output_tokens=output, cached_tokens=cached)
    except (KeyError, TypeError, ValueError):
        return None  # partial or odd timings: counting chunks is better than made-up figures
