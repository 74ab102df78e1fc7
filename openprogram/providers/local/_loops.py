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
        if not all(flat[n - (k + 1) * period : n - k * period] == last for k in range(1, COPIES)):
            continue
        if not _short_repeat(last):  # a rule of 64 dashes is 4 "copies" of 16: honest text
            return where[_first_end(flat, period)]
    return None


def _short_repeat(passage: str) -> bool:
    """Whether ``passage`` is itself a shorter piece repeated (``"-" * 16``, ``"ab" * 8``)."""
    shortest = min(_MIN_PERIOD - 1, len(passage) // 2)  # at least two of the shorter piece
    return any(passage[p:] == passage[:-p] for p in range(1, shortest + 1))


def _first_end(flat: str, period: int) -> int:
    """Where the first copy of the run of ``period`` that ends ``flat`` ends.

    The copies counted back from the end start wherever the stream happened to
    be checked; the run really starts as far back as each character equals the
    one a period later, so the cut does not depend on how the answer was chunked.
    """
    first = len(flat) - period
    while first > 0 and flat[first - 1] == flat[first - 1 + period]:
        first -= 1
    # The text before the run may end like a copy ("Intro." and "- Take a walk."): those
    # characters join the run, so its first copy ends short of them. A cut inside a word
    # moves on over the punctuation that follows it (the "." of "walk.").
    end = first + period
    if flat[end - 1].isspace():
        return end
    limit = end + _MIN_PERIOD
    while end < limit and not (flat[end].isalnum() or flat[end].isspace() or flat[end] == "#"):
        end += 1
    return end
