"""A small GBNF reader for tests: does a grammar accept a whole string?

llama.cpp enforces the grammar the local provider sends; without running the
model, the tests check it here instead. Covered is the GBNF the provider
writes: one rule per line, string literals, character classes (ranges,
negation, escapes), rule references, groups, ``|``, and the ``* + ? {m} {m,}
{m,n}`` repetitions. Matching tries every alternative (a set of end positions
per step), which is plenty for the short replies the tests use.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

__all__ = ["accepts"]

_NAME = re.compile(r"[A-Za-z0-9_-]")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r"}


@dataclass(frozen=True)
class _Lit:
    text: str


@dataclass(frozen=True)
class _Class:
    negated: bool
    ranges: tuple[tuple[str, str], ...]

    def has(self, char: str) -> bool:
        inside = any(low <= char <= high for low, high in self.ranges)
        return inside != self.negated


@dataclass(frozen=True)
class _Ref:
    name: str


@dataclass(frozen=True)
class _Seq:
    items: tuple[_Node, ...]


@dataclass(frozen=True)
class _Alt:
    options: tuple[_Node, ...]


@dataclass(frozen=True)
class _Rep:
    item: _Node
    low: int
    high: int | None


_Node = _Lit | _Class | _Ref | _Seq | _Alt | _Rep


class _Parser:
    """Parses one rule body."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def _skip(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in " \t":
            self.pos += 1

    def _peek(self) -> str:
        self._skip()
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def _char(self) -> str:
        """One (possibly escaped) character of a literal or class."""
        char = self.text[self.pos]
        self.pos += 1
        if char != "\\":
            return char
        code = self.text[self.pos]
        self.pos += 1
        width = {"x": 2, "u": 4, "U": 8}.get(code)
        if width is not None:
            char = chr(int(self.text[self.pos : self.pos + width], 16))
            self.pos += width
            return char
        return _ESCAPES.get(code, code)

    def alternatives(self) -> _Node:
        options = [self._sequence()]
        while self._peek() == "|":
            self.pos += 1
            options.append(self._sequence())
        return options[0] if len(options) == 1 else _Alt(tuple(options))

    def _sequence(self) -> _Node:
        items: list[_Node] = []
        while self._peek() not in ("", "|", ")"):
            items.append(self._repeated(self._atom()))
        return _Seq(tuple(items))

    def _atom(self) -> _Node:
        head = self._peek()
        if head == "(":
            self.pos += 1
            inner = self.alternatives()
            assert self._peek() == ")", f"unclosed group in {self.text!r}"
            self.pos += 1
            return inner
        if head == '"':
            self.pos += 1
            chars = []
            while self.text[self.pos] != '"':
                chars.append(self._char())
            self.pos += 1
            return _Lit("".join(chars))
        if head == "[":
            return self._class()
        start = self.pos
        while self.pos < len(self.text) and _NAME.match(self.text[self.pos]):
            self.pos += 1
        assert self.pos > start, f"unexpected {self.text[start:]!r}"
        return _Ref(self.text[start : self.pos])

    def _class(self) -> _Class:
        self.pos += 1
        negated = self.text[self.pos] == "^"
        self.pos += negated
        ranges = []
        while self.text[self.pos] != "]":
            low = self._char()
            high = low
            if self.text[self.pos] == "-" and self.text[self.pos + 1] != "]":
                self.pos += 1
                high = self._char()
            ranges.append((low, high))
        self.pos += 1
        return _Class(negated, tuple(ranges))

    def _repeated(self, atom: _Node) -> _Node:
        if self.pos >= len(self.text):
            return atom
        mark = self.text[self.pos]  # no space: a repetition follows its atom directly
        bounds = {"*": (0, None), "+": (1, None), "?": (0, 1)}.get(mark)
        if bounds is not None:
            self.pos += 1
            return _Rep(atom, *bounds)
        if mark != "{":
            return atom
        end = self.text.index("}", self.pos)
        low, comma, high = self.text[self.pos + 1 : end].partition(",")
        self.pos = end + 1
        top = int(high) if high else (None if comma else int(low))
        return _Rep(atom, int(low), top)


def _rules(grammar: str) -> dict[str, _Node]:
    rules = {}
    for line in grammar.strip().splitlines():
        name, body = line.split(" ::= ", 1)
        parser = _Parser(body)
        rules[name.strip()] = parser.alternatives()
        assert parser._peek() == "", f"rule {name!r} has trailing text"
    return rules


def accepts(grammar: str, text: str) -> bool:
    """Whether ``grammar`` (its ``root`` rule) matches all of ``text``."""
    rules = _rules(grammar)

    @cache
    def ref(name: str, pos: int) -> frozenset[int]:
        return ends(rules[name], pos)

    def ends(node: _Node, pos: int) -> frozenset[int]:
        if isinstance(node, _Lit):
            return frozenset([pos + len(node.text)] if text.startswith(node.text, pos) else [])
        if isinstance(node, _Class):
            return frozenset([pos + 1] if pos < len(text) and node.has(text[pos]) else [])
        if isinstance(node, _Ref):
            return ref(node.name, pos)
        if isinstance(node, _Alt):
            return frozenset().union(*(ends(o, pos) for o in node.options))
        if isinstance(node, _Seq):
            here = frozenset([pos])
            for item in node.items:
                here = frozenset().union(*(ends(item, p) for p in here))
            return here
        return _repeat(node, pos)

    def _repeat(node: _Rep, pos: int) -> frozenset[int]:
        done, here, count = set(), frozenset([pos]), 0
        while here and (node.high is None or count < node.high):
            if count >= node.low:
                done |= here
            step = frozenset().union(*(ends(node.item, p) for p in here))
            here = step - done if node.high is None else step  # unbounded: no endless loop
            count += 1
        if count >= node.low:
            done |= here
        return frozenset(done)

    return len(text) in ref("root", 0)
