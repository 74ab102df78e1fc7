"""Stop an answer that has fallen into a verbatim loop.

Decoding greedily, a small model sometimes repeats one passage until the
context is full. llama.cpp's DRY sampler does not stop every such loop, so
the provider watches the streamed answer: when it ends in ``COPIES`` copies
of one passage (numbers aside, so "1. X", "2. X" count as copies), the reply
stops there, keeping the first copy.

A looping answer also repeats a long passage with other words between the
copies (each item of a list ending in the same sentences). When a passage of
``ECHO`` characters (numbers aside) comes the ``ECHOES``-th time, outside a
code block, the answer stops before the paragraph it started in.
(``bench/local-model/NOTES.md`` has the loops that chose these values.)
"""

from __future__ import annotations

import re

__all__ = ["COPIES", "ECHO", "ECHOES", "LoopWatch", "loop_cut", "whole_cut"]

COPIES = 4
"""Copies of one passage in a row that count as a loop."""
_MIN_PERIOD = 16
"""Shorter passages repeat in honest text (table rules, "- [ ] " lists)."""
_MAX_PERIOD = 800
_CHECK_EVERY = 32
"""Characters between checks: a check scans every period length."""
_NUMBER = re.compile(r"\d+")
ECHO = 150
"""Characters of one passage that, said again and again, make an echo (prose rarely repeats
150 characters word for word; a list whose items share a phrase does)."""
ECHOES = 3
"""The copy of such a passage that is cut, with what follows: the third (two may be a quote
and its use)."""
_FENCE = "```"


class LoopWatch:
    """Fed an answer as it streams; says where to cut it once it loops."""

    def __init__(self) -> None:
        self.text = ""
        self._checked = 0

    def feed(self, chunk: str) -> int | None:
        """Add ``chunk``; the length of text to keep if the answer now loops, else ``None``."""
        self.text += chunk
        return self._check(_CHECK_EVERY)

    def close(self) -> int | None:
        """The cut for the text fed since the last check, once no more comes."""
        return self._check(1)

    def _check(self, every: int) -> int | None:
        new = len(self.text) - self._checked
        if new < every:
            return None
        self._checked = len(self.text)
        return loop_cut(self.text, new)


def whole_cut(text: str) -> int | None:
    """The cut a ``LoopWatch`` fed ``text`` as a stream would make (a reply read in whole
    may have looped before its end, and must be cut where the streamed one is)."""
    watch = LoopWatch()
    for start in range(0, len(text), _CHECK_EVERY):
        cut = watch.feed(text[start : start + _CHECK_EVERY])
        if cut is not None:
            return cut
    return watch.close()


def loop_cut(text: str, new: int = 1) -> int | None:
    """The length of ``text`` to keep if it loops, else ``None``.

    It loops if it ends in ``COPIES`` copies of one passage, or if a passage of
    ``ECHO`` characters ending in its last ``new`` characters is there for the
    ``ECHOES``-th time (the first such end counts, so the cut does not depend on
    how often the stream is checked).
    """
    start = max(0, len(text) - _MAX_PERIOD * COPIES * 2)
    flat, where = _numbers_aside(text, start)
    n = len(flat)
    for period in range(_MIN_PERIOD, min(_MAX_PERIOD, n // COPIES) + 1):
        last = flat[n - period :]
        if not all(flat[n - (k + 1) * period : n - k * period] == last for k in range(1, COPIES)):
            continue
        if not _short_repeat(last):  # a rule of 64 dashes is 4 "copies" of 16: honest text
            return where[_first_end(flat, period)]
    if text.count(_FENCE) % 2 == 1:
        return None  # inside a code block, where code may repeat itself honestly
    for end in range(max(ECHO * ECHOES, n - new + 1), n + 1):
        echo = _echo_start(flat, end)
        if echo is not None:
            return where[echo]
    return None


def _numbers_aside(text: str, start: int) -> tuple[str, list[int]]:
    """``text[start:]`` with each number as "#", and each of its characters' index in text."""
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
    return "".join(norm), where


def _echo_start(flat: str, end: int) -> int | None:
    """Where to cut ``flat`` if the ``ECHO`` characters before ``end`` come for the
    ``ECHOES``-th time: before the paragraph (else the line) in which that copy began,
    so a list keeps its whole items."""
    tail = flat[end - ECHO : end]
    if _short_repeat(tail[: _MIN_PERIOD * 2]) or tail.isspace():
        return None  # a long rule or blank run: not a passage
    seen, before = [], end - ECHO
    for _ in range(ECHOES - 1):
        before = flat.rfind(tail, 0, before)
        if before < 0:
            return None
        seen.append(before)
    # The copy began where it stops matching the one before it.
    copy, earlier = end - ECHO, seen[0]
    while copy > seen[0] + ECHO and earlier > 0 and flat[copy - 1] == flat[earlier - 1]:
        copy, earlier = copy - 1, earlier - 1
    between = flat[seen[0] : copy]  # from inside the copy before, where no break is
    for mark in ("\n\n", "\n"):
        if mark in between:
            return seen[0] + between.rindex(mark)
    return copy


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
