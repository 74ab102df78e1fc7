"""Hypothesis strategies for what a broken or hostile model emits as tool calls.

Wrong types, missing and extra keys, 1 MB strings, nesting thousands deep,
NaN/Infinity, lone UTF-16 surrogates, dunder keys, malformed argument JSON,
duplicate and empty call ids, empty names, names differing only by case or by
Unicode look-alikes; aimed at the tools of ``_zoo``.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from openprogram import ToolCall

from ._zoo import VALID_ARGS, ZOO

LONE_SURROGATES = ["\ud800", "\udbff", "\udc00", "\udfff", "\udc80"]
DUNDER_KEYS = [
    "__class__",
    "__init__",
    "__dict__",
    "__proto__",
    "constructor",
    "self",
    "runtime",
    "ctx",
    "",
    " ",
    "\x00",
    "$ref",
    "a.b",
]


class Huge(str):
    """A 1 MB string whose repr stays short (hypothesis prints failing examples)."""

    def __repr__(self) -> str:
        return f"Huge(len={len(self)})"


class Deep(list):  # type: ignore[type-arg]
    """A deeply nested list whose repr stays short (a plain one overflows ``repr``)."""

    def __repr__(self) -> str:
        return f"Deep(depth={_depth(self)})"


def _depth(value: Any) -> int:
    depth = 0
    while isinstance(value, list | dict) and value:
        value = value[0] if isinstance(value, list) else next(iter(value.values()))
        depth += 1
    return depth


HUGE = Huge("x" * 1_000_000)
LOOKALIKES = {"a": "а", "e": "е", "o": "о", "c": "с", "p": "р", "i": "і", "s": "ѕ", "x": "х"}


def deep(depth: int, leaf: Any = 0, *, as_dict: bool = False) -> Deep:
    """A value nested ``depth`` levels deep (lists, or dicts when ``as_dict``) in a ``Deep``."""
    value = leaf
    for _ in range(depth - 1):
        value = {"k": value} if as_dict else [value]
    return Deep([value])


def _with_surrogate(text: str, surrogate: str, at: int) -> str:
    at = min(at, len(text))
    return text[:at] + surrogate + text[at:]


short_strings = st.one_of(
    st.text(max_size=30),
    st.builds(
        _with_surrogate, st.text(max_size=10), st.sampled_from(LONE_SURROGATES), st.integers(0, 10)
    ),
    st.sampled_from(["", " ", "\x00", "null", "NaN", "{", "'; DROP TABLE x; --"]),
)
strings = st.one_of(short_strings, st.just(HUGE))
scalars_st = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=-(2**200), max_value=2**200),
    st.floats(allow_nan=True, allow_infinity=True),
    strings,
)
keys = st.one_of(st.sampled_from(DUNDER_KEYS), short_strings)
json_values = st.recursive(
    scalars_st,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=4)),
    max_leaves=12,
)
garbage_values = st.one_of(
    json_values,
    st.builds(deep, st.integers(50, 5000), as_dict=st.booleans()),
)


@st.composite
def arguments_for(draw: st.DrawFn, name: str) -> Any:
    """Arguments for a call to ``name``: valid ones, mutated ones, or pure garbage."""
    base = dict(VALID_ARGS.get(name, {}))
    mode = draw(st.sampled_from(["valid", "mutated", "mutated", "garbage", "not_an_object"]))
    if mode == "valid":
        return base
    if mode == "not_an_object":
        return draw(st.one_of(st.lists(scalars_st, max_size=3), strings, st.integers()))
    if mode == "garbage":
        return draw(st.dictionaries(keys, garbage_values, max_size=5))
    for key in draw(st.lists(st.sampled_from(sorted(base) or ["_"]), max_size=2, unique=True)):
        base.pop(key, None)  # missing keys
    for key in sorted(base):
        if draw(st.booleans()):
            base[key] = draw(garbage_values)  # wrong types
    base.update(draw(st.dictionaries(keys, garbage_values, max_size=3)))  # extra keys
    return base


def _lookalike(name: str) -> str:
    for latin, other in LOOKALIKES.items():
        if latin in name:
            return name.replace(latin, other, 1)
    return name + "\u200b"  # a zero-width space: looks the same, is not the same


names = st.one_of(
    st.sampled_from(sorted(ZOO)),
    st.sampled_from(sorted(ZOO)).map(str.upper),
    st.sampled_from(sorted(ZOO)).map(str.title),
    st.sampled_from(sorted(ZOO)).map(_lookalike),
    st.sampled_from(sorted(ZOO)).map(lambda n: f" {n}"),
    st.sampled_from(["", " ", "\x00", "tool_search", "forbidden", "FORBIDDEN", "fоrbidden"]),
    st.text(max_size=12),
)
call_ids = st.one_of(st.sampled_from(["call_1", "call_1", "dup", ""]), st.text(max_size=6))
arguments_errors = st.one_of(
    st.none(), st.none(), st.sampled_from(["the arguments are not valid JSON (Expecting value)"])
)


@st.composite
def tool_calls(draw: st.DrawFn, menu: list[str]) -> ToolCall:
    """One call a broken model could send; two in three name a tool on ``menu``."""
    name = draw(st.sampled_from(menu) if draw(st.integers(0, 2)) else names)
    error = draw(arguments_errors)
    args = {} if error else draw(arguments_for(name))
    return ToolCall(draw(call_ids), name, args, error)


menus = st.sets(st.sampled_from(sorted(ZOO)), min_size=1).map(sorted)
"""Which zoo tools an exec offers (the rest exist but are not offered)."""


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[list[str], list[ToolCall]]:
    """A menu, and one reply's worth of calls (1-6) against it."""
    menu = draw(menus)
    return menu, draw(st.lists(tool_calls(menu), min_size=1, max_size=6))
