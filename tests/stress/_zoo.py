"""A zoo of tools in every form ``exec(tools=...)`` accepts, and strategies for model garbage.

Every tool body records what it received in a shared ``Journal``, so a test can
check afterwards that nothing ran that should not have, and that what did run
got validated arguments. The strategies draw what a broken or hostile model
may emit: wrong types, missing and extra keys, huge strings, deep nesting,
NaN/Infinity, lone UTF-16 surrogates, dunder keys, malformed argument JSON,
duplicate and empty call ids, empty names, names differing only by case or by
Unicode look-alikes.
"""

from __future__ import annotations

import enum
import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import pydantic
from hypothesis import strategies as st
from typing_extensions import TypedDict

from openprogram import Tool, ToolCall, ToolContext, agentic_function, function
from openprogram.runtime import Runtime


class Journal:
    """What tool bodies received: ``(tool name, arguments)`` in execution order (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.entries: list[tuple[str, dict[str, Any]]] = []

    def add(self, name: str, arguments: Mapping[str, Any]) -> None:
        with self._lock:
            self.entries.append((name, dict(arguments)))

    def clear(self) -> None:
        with self._lock:
            self.entries.clear()

    def names(self) -> list[str]:
        with self._lock:
            return [name for name, _ in self.entries]


JOURNAL = Journal()


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Person(pydantic.BaseModel):
    name: str
    age: int


@dataclass
class Point:
    x: float
    y: float


class Options(TypedDict):
    verbose: bool
    level: int


@function(register_globally=False)
def scalars(s: str, i: int, f: float, b: bool, n: None = None) -> str:
    """Take one of each scalar type.

    Args:
        s: A string.
        i: An integer.
        f: A number.
        b: A flag.
        n: Always null.
    """
    JOURNAL.add("scalars", {"s": s, "i": i, "f": f, "b": b, "n": n})
    return f"{s}|{i}|{f}|{b}"


@function(register_globally=False)
def containers(
    items: list[int], tags: set[str], pair: tuple[int, ...], mapping: dict[str, float]
) -> str:
    """Take containers.

    Args:
        items: Integers.
        tags: Unique strings.
        pair: A tuple of integers.
        mapping: Numbers by name.
    """
    JOURNAL.add("containers", {"items": items, "tags": tags, "pair": pair, "mapping": mapping})
    return f"{len(items)} {len(tags)} {len(pair)} {len(mapping)}"


@function(register_globally=False)
def enums(unit: Literal["c", "f"], color: Color, note: str | None = None) -> str:
    """Take constrained values.

    Args:
        unit: Temperature unit.
        color: A color.
        note: Optional note.
    """
    JOURNAL.add("enums", {"unit": unit, "color": color, "note": note})
    return f"{unit} {color.value} {note}"


@function(register_globally=False)
def nested(person: Person, point: Point, options: Options) -> str:
    """Take nested objects.

    Args:
        person: Someone.
        point: A point.
        options: Settings.
    """
    JOURNAL.add("nested", {"person": person, "point": point, "options": options})
    return f"{person.name} {point.x} {options['level']}"


@function(register_globally=False)
async def async_echo(text: str, times: int = 1) -> str:
    """Echo text back, asynchronously.

    Args:
        text: What to echo.
        times: How often.
    """
    JOURNAL.add("async_echo", {"text": text, "times": times})
    return text * max(0, min(times, 3))


@function(register_globally=False)
def echo(text: str) -> str:
    """Echo text back (a tool result made of the model's own garbage).

    Args:
        text: What to echo.
    """
    JOURNAL.add("echo", {"text": text})
    return text


@function(register_globally=False)
def with_context(x: int, ctx: ToolContext) -> str:
    """Take a hidden context.

    Args:
        x: A number.
    """
    JOURNAL.add("with_context", {"x": x})
    return f"{ctx.tool_name}:{x}"


@agentic_function(register_globally=False)
def agent(task: str, runtime: Runtime) -> str:
    """An agentic function (answers without a nested exec, to stay fast).

    Args:
        task: What to do.
    """
    JOURNAL.add("agent", {"task": task})
    return f"did {task} with {type(runtime).__name__}"


def plain(a: int, b: int = 0) -> int:
    """Add two integers (a plain, undecorated callable)."""
    JOURNAL.add("plain", {"a": a, "b": b})
    return a + b


_SPEC_PARAMS = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "maxLength": 100},
        "limit": {"type": "integer", "minimum": 1, "maximum": 10},
        "filters": {
            "type": "object",
            "properties": {"lang": {"type": "string", "enum": ["en", "fr"]}},
            "additionalProperties": False,
        },
        "ids": {"type": "array", "items": {"type": "integer"}},
    },
    "required": ["query"],
    "additionalProperties": False,
}


def _spec_execute(args: dict[str, Any]) -> str:
    JOURNAL.add("spec_dict", args)
    return f"found {args['query']}"


SPEC_DICT = {
    "spec": {
        "name": "spec_dict",
        "description": "Search (a dict spec).",
        "parameters": _SPEC_PARAMS,
    },
    "execute": _spec_execute,
}


class SpecObject:
    """An object with ``.spec`` and an async ``.execute``."""

    spec: ClassVar[dict[str, Any]] = {
        "name": "spec_object",
        "description": "Look up a key (an object with spec and execute).",
        "parameters": {
            "type": "object",
            "properties": {"key": {"type": "string"}, "strict": {"type": "boolean"}},
            "required": ["key"],
            "additionalProperties": False,
        },
    }

    async def execute(self, args: dict[str, Any]) -> str:
        JOURNAL.add("spec_object", args)
        return f"value of {args['key']}"


def _lax_execute(args: dict[str, Any]) -> str:
    JOURNAL.add("lax", args)
    return json.dumps(args, default=str)[:500]


LAX = Tool(
    name="lax",
    description="Accepts any object (garbage reaches the body).",
    parameters={"type": "object"},
    execute=_lax_execute,
)

ZOO: dict[str, Any] = {
    "scalars": scalars,
    "containers": containers,
    "enums": enums,
    "nested": nested,
    "async_echo": async_echo,
    "echo": echo,
    "with_context": with_context,
    "agent": agent,
    "plain": plain,
    "spec_dict": SPEC_DICT,
    "spec_object": SpecObject(),
    "lax": LAX,
}
"""Tool name → the tool-like, one of each form ``exec(tools=...)`` accepts."""

VALID_ARGS: dict[str, dict[str, Any]] = {
    "scalars": {"s": "x", "i": 1, "f": 1.5, "b": True},
    "containers": {"items": [1, 2], "tags": ["a"], "pair": [1], "mapping": {"k": 1.0}},
    "enums": {"unit": "c", "color": "red"},
    "nested": {
        "person": {"name": "Ada", "age": 36},
        "point": {"x": 1.0, "y": 2.0},
        "options": {"verbose": False, "level": 2},
    },
    "async_echo": {"text": "hi"},
    "echo": {"text": "hi"},
    "with_context": {"x": 3},
    "agent": {"task": "plan"},
    "plain": {"a": 1, "b": 2},
    "spec_dict": {"query": "q", "limit": 3},
    "spec_object": {"key": "k"},
    "lax": {"anything": [1, {"goes": None}]},
}
"""Arguments each zoo tool accepts; mutated by the strategies."""


def forbidden_tool(name: str, journal: Journal) -> Tool:
    """A tool that must never run: registered or known, but never offered."""

    def run(args: dict[str, Any]) -> str:
        journal.add(name, args)
        return "FORBIDDEN TOOL RAN"

    return Tool(
        name=name, description="Must never run.", parameters={"type": "object"}, execute=run
    )


# -- strategies ------------------------------------------------------------------------------

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
def tool_calls(draw: st.DrawFn) -> ToolCall:
    """One call a broken model could send."""
    name = draw(names)
    error = draw(arguments_errors)
    args = {} if error else draw(arguments_for(name))
    return ToolCall(draw(call_ids), name, args, error)


batches = st.lists(tool_calls(), min_size=1, max_size=6)
"""One reply's worth of calls."""
menus = st.sets(st.sampled_from(sorted(ZOO)), min_size=1).map(sorted)
"""Which zoo tools an exec offers (the rest exist but are not offered)."""
