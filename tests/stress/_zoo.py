"""A zoo of tools in every form ``exec(tools=...)`` accepts (strategies: ``_garbage``).

Every tool body records what it received in a shared ``Journal``, so a test can
check afterwards that nothing ran that should not have, and that what did run
got validated arguments.
"""

from __future__ import annotations

import enum
import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import pydantic
from typing_extensions import TypedDict  # pydantic needs this one on Python < 3.12

from openprogram import Tool, ToolContext, agentic_function, function
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
