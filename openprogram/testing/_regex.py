"""Strings that match a regular expression, drawn with a seeded ``random.Random``.

Used by ``example_value`` for a JSON Schema ``pattern`` without needing
Hypothesis. It walks the pattern's parse tree (the stdlib's own parser, so
the syntax is exactly Python's): literals, classes, categories, groups,
alternation, repeats and back-references. Look-arounds are not supported.
A JSON Schema ``pattern`` matches anywhere in the string (``re.search``), so
a string matching the whole pattern is always valid.
"""

from __future__ import annotations

import importlib
import random
import re
from typing import Any

# The stdlib's own regex parser (private, stable since 3.11, untyped): exactly Python's syntax.
_parser: Any = importlib.import_module("re._parser")
C: Any = importlib.import_module("re._constants")

__all__ = ["UnsupportedPatternError", "sample_regex"]

_WORD = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"
_PRINTABLE = _WORD + " -.,:;!?/@#"
_CATEGORIES = {
    C.CATEGORY_DIGIT: "0123456789",
    C.CATEGORY_NOT_DIGIT: "abcxyzAB_ -",
    C.CATEGORY_SPACE: " ",
    C.CATEGORY_NOT_SPACE: "abcxyz019_",
    C.CATEGORY_WORD: "abcxyzAB019_",
    C.CATEGORY_NOT_WORD: " -.,:!",
}
_EXTRA_REPEATS = 3
"""How far past its minimum a repeat may go (``+`` and ``*`` stay short)."""


class UnsupportedPatternError(ValueError):
    """The pattern uses a construct the sampler cannot produce strings for."""


def sample_regex(
    pattern: str, rng: random.Random, *, min_length: int = 0, max_length: int | None = None
) -> str:
    """A string of ``min_length..max_length`` characters in which ``pattern`` is found.

    Raises:
        UnsupportedPatternError: The pattern uses look-arounds or another unsupported
            construct, or no string within the length bounds was found.
    """
    try:
        tree = _parser.parse(pattern)
    except re.error as exc:
        raise UnsupportedPatternError(f"pattern {pattern!r} is not a valid regex: {exc}") from exc
    compiled = re.compile(pattern)
    for attempt in range(40):
        text = _emit(tree, rng, {}, spare=attempt // 4)
        for candidate in _padded(text, min_length):
            ok_max = max_length is None or len(candidate) <= max_length
            if len(candidate) >= min_length and ok_max and compiled.search(candidate):
                return candidate
    raise UnsupportedPatternError(
        f"no string of {min_length}..{max_length if max_length is not None else 'any'} "
        f"characters matching {pattern!r} was found"
    )


def _padded(text: str, min_length: int) -> list[str]:
    """``text``, and when too short, copies padded after or before it (unanchored patterns)."""
    missing = min_length - len(text)
    if missing <= 0:
        return [text]
    return [text, text + "x" * missing, "x" * missing + text]


def _emit(tree: Any, rng: random.Random, groups: dict[int, str], spare: int) -> str:
    return "".join(_node(op, arg, rng, groups, spare) for op, arg in tree)


def _node(op: Any, arg: Any, rng: random.Random, groups: dict[int, str], spare: int) -> str:
    if op is C.LITERAL:
        return chr(arg)
    if op is C.NOT_LITERAL:
        return rng.choice([c for c in _WORD if ord(c) != arg])
    if op is C.ANY:
        return rng.choice(_WORD)
    if op is C.IN:
        return _from_class(arg, rng)
    if op is C.CATEGORY:
        return rng.choice(_CATEGORIES[arg])
    if op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
        low, high, sub = arg
        top = low + _EXTRA_REPEATS + spare
        count = rng.randint(low, top if high is C.MAXREPEAT else max(low, min(high, top)))
        return "".join(_emit(sub, rng, groups, spare) for _ in range(count))
    if op is C.SUBPATTERN:
        group, _add, _del, sub = arg
        text = _emit(sub, rng, groups, spare)
        if group is not None:
            groups[group] = text
        return text
    if op is C.ATOMIC_GROUP:
        return _emit(arg, rng, groups, spare)
    if op is C.BRANCH:
        return _emit(rng.choice(arg[1]), rng, groups, spare)
    if op is C.GROUPREF:
        return groups.get(arg, "")
    if op is C.AT:
        return ""  # anchors and word boundaries take no characters
    raise UnsupportedPatternError(f"regex construct {op} is not supported by the sampler")


def _from_class(items: Any, rng: random.Random) -> str:
    negate = bool(items) and items[0][0] is C.NEGATE
    members = items[1:] if negate else items
    if negate:
        pool = [c for c in _PRINTABLE if not any(_member(op, arg, c) for op, arg in members)]
        if not pool:
            raise UnsupportedPatternError("a negated character class excludes every sample")
        return rng.choice(pool)
    op, arg = rng.choice(members)
    if op is C.LITERAL:
        return chr(arg)
    if op is C.RANGE:
        return chr(rng.randint(arg[0], arg[1]))
    if op is C.CATEGORY:
        return rng.choice(_CATEGORIES[arg])
    raise UnsupportedPatternError(f"character class item {op} is not supported by the sampler")


def _member(op: Any, arg: Any, char: str) -> bool:
    if op is C.LITERAL:
        return bool(ord(char) == arg)
    if op is C.RANGE:
        return bool(arg[0] <= ord(char) <= arg[1])
    if op is C.CATEGORY:
        return char in _CATEGORIES[arg] or _category_match(arg, char)
    return False


def _category_match(category: Any, char: str) -> bool:
    probes = {
        C.CATEGORY_DIGIT: r"\d",
        C.CATEGORY_NOT_DIGIT: r"\D",
        C.CATEGORY_SPACE: r"\s",
        C.CATEGORY_NOT_SPACE: r"\S",
        C.CATEGORY_WORD: r"\w",
        C.CATEGORY_NOT_WORD: r"\W",
    }
    return bool(re.fullmatch(probes[category], char))
