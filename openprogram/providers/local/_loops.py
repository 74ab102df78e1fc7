"""Stop an answer that has fallen into a verbatim loop.

Decoding greedily, the 0.5B model sometimes repeats one passage until the
context is full: measured on the trip planner, "Paris: sunny, 21 C " 8,022
tokens long, 13 minutes on one core, then the next request failed for lack
of context. llama.cpp's DRY sampler did not stop it at a strength that keeps
other answers intact, so the provider watches the streamed answer instead:
when it ends in ``COPIES`` copies of one passage (numbers aside, so "1. X",
"2. X" count as copies), the reply stops there, keeping the first copy.
"""

from __future__ import annotations

import re

__all__ = ["COPIES", "LoopWatch"]

COPIES = 4
"""Copies of one passage in a row that count as a loop."""
_MIN_PERIOD = 16
"""Shorter passages repeat in honest text (table rules, "- [ ] " lists)."""
_MAX_PERIOD = 800
_CHECK_EVERY = 32
"""Characters between checks: a check scans every period length."""
_NUMBER = re.compile(r"\d+")


class LoopWatch:
    """Fed an answer as it streams; says where to cut it once it loops."""

    def __init__(self) -> None:
        self.text = ""
        self._checked = 0

    def feed(self, chunk: str) -> int | None:
        """Add ``chunk``; the length of text to keep if the answer now loops, else ``None``."""
        self.text += chunk
        if len(self.text) - self._checked < _CHECK_EVERY:
            return None
        self._checked = len(self.text)
        return loop_cut(self.text)


def loop_cut(text: str) -> int | None:
    """The length of ``text`` to keep if it ends in ``COPIES`` copies of one passage."""
    start = max(0, len(text) - _MAX_PERIOD * COPIES * 2)
    # The window with each number as "#", and each of its characters' index in text.
    norm: list[str] = []
    where: list[int] = []
    pos = start
    for match in _NUMBER.finditer(text, start):
        norm.append(text[pos : match.start()])
        where.extend(range(pos, match.start()))
        norm.append("#")
        where.append(match.start())
        pos = match.end()
    norm.append(text[pos:])
    where.extend(range(pos, len(text)))
    flat = "".join(norm)
    n = len(flat)
    for period in range(_MIN_PERIOD, min(_MAX_PERIOD, n // COPIES) + 1):
        last = flat[n - period :]
        if all(flat[n - (k + 1) * period : n - k * period] == last for k in range(1, COPIES)):
            copies = COPIES
            while flat[max(0, n - (copies + 1) * period) : n - copies * period] == last:
                copies += 1  # earlier copies of the same run
            return where[n - (copies - 1) * period]  # the end of the run's first copy
    return None
