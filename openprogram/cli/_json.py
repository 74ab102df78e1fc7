"""JSON in and out of the command line: results made into JSON, arguments read with a limit.

A command's result becomes JSON by these rules (the same for every command):

- ``str``, ``int``, ``bool``, ``None`` and finite floats stay as they are;
  ``nan`` and the infinities become ``null`` (JSON has no such numbers; JavaScript's
  ``JSON.stringify`` and pydantic do the same);
- a pydantic model becomes its ``model_dump(mode="json")``, a dataclass instance
  an object of its fields, an ``Enum`` member its value;
- lists, tuples, sets and frozensets become arrays; mappings become objects whose
  keys are strings: ``int``/``float``/``bool``/``None`` keys are written the way
  ``json.dumps`` writes them (``1`` → ``"1"``, ``True`` → ``"true"``), any other
  key as ``str(key)`` (``(1, 2)`` → ``"(1, 2)"``);
- anything else becomes ``str(value)``.

A value that contains itself, or is nested deeper than ``MAX_JSON_DEPTH``
levels, has no JSON form: ``ResultNotJSONError`` says where. The same depth
limit applies to JSON values given as arguments (``json_depth`` measures them).
"""

from __future__ import annotations

import dataclasses
import enum
import json
import math
from collections.abc import Mapping
from typing import Any

from openprogram.exceptions import OpenProgramError

__all__ = ["MAX_JSON_DEPTH", "ResultNotJSONError", "dumps_result", "json_depth", "to_json_value"]

MAX_JSON_DEPTH = 500
"""Deepest nesting of arrays and objects the command reads or writes.

Python's own ``json.loads`` fails near 1,000 levels (its recursion limit), so
a deeper output could not be read back by a Python script anyway.
"""

_SCALAR_KEYS = (int, float, bool, type(None))


class ResultNotJSONError(OpenProgramError):
    """A result has no JSON form (it contains itself, or is nested too deeply): exit 1."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(
            f"the result has no JSON form: {path} {problem}; return data without cycles, "
            f"nested at most {MAX_JSON_DEPTH} levels deep, or run without --json to see it "
            "printed"
        )
        self.path = path
        """Where in the result the problem is, e.g. ``output[0].items``."""


def dumps_result(value: Any) -> str:
    """``value`` as one line of JSON, by the rules of the module docstring.

    Raises:
        ResultNotJSONError: ``value`` contains itself or is nested too deeply.
    """
    return json.dumps(to_json_value(value), allow_nan=False)


def to_json_value(value: Any, *, root: str = "") -> Any:
    """A structure of dicts with string keys, lists and JSON scalars standing for ``value``.

    ``root`` names ``value`` in error messages (``output[0].items``); by default the
    paths start at the top-level keys.

    Raises:
        ResultNotJSONError: ``value`` contains itself or is nested too deeply.
    """
    return _Converter(root).convert(value, 0)


def json_depth(value: Any) -> int:
    """How many levels of arrays and objects ``value`` (decoded JSON) nests (``1`` for ``[]``)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, depth + 1)
        stack.extend((child, depth + 1) for child in children)
    return deepest


class _Converter:
    """One conversion: the containers on the current path (for cycles) and the path itself."""

    def __init__(self, root: str) -> None:
        self._trail: list[str] = [root]
        self._open: set[int] = set()

    def convert(self, value: Any, depth: int) -> Any:
        # One frame per level (no comprehensions: each would add a frame on Python 3.11).
        if isinstance(value, bool | int | str) or value is None:
            return _plain_int(value)
        if isinstance(value, float):
            return value if math.isfinite(value) else None
        if isinstance(value, enum.Enum):
            return self.convert(value.value, depth)
        value = _unwrapped(value)
        if not isinstance(value, Mapping | list | tuple | set | frozenset):
            return _text(value)
        if depth >= MAX_JSON_DEPTH:
            raise ResultNotJSONError(self._path(), f"is nested deeper than {MAX_JSON_DEPTH} levels")
        if id(value) in self._open:
            raise ResultNotJSONError(self._path(), "is a value that contains it (a cycle)")
        self._open.add(id(value))
        try:
            if isinstance(value, Mapping):
                return self._mapping(value, depth)
            items: list[Any] = []
            for index, item in enumerate(value):
                self._trail.append(f"[{index}]")
                items.append(self.convert(item, depth + 1))
                self._trail.pop()
            return items
        finally:
            self._open.discard(id(value))

    def _mapping(self, value: Mapping[Any, Any], depth: int) -> dict[str, Any]:
        converted: dict[str, Any] = {}
        for key, item in value.items():
            name = _key(key)
            self._trail.append(f".{name}" if name.isidentifier() else f"[{name!r}]")
            converted[name] = self.convert(item, depth + 1)
            self._trail.pop()
        return converted

    def _path(self) -> str:
        trail = self._trail
        if len(trail) > 12:  # a very deep path: its two ends say enough
            trail = [*trail[:5], f"…{len(trail) - 8} levels…", *trail[-3:]]
        return "".join(trail).removeprefix(".") or "the value"


def _plain_int(value: Any) -> Any:
    # An int subclass (an IntFlag, say) is written as the number it is.
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else value


def _unwrapped(value: Any) -> Any:
    """A pydantic model's JSON dump, or a dataclass instance's fields; else ``value``."""
    dump = getattr(value, "model_dump", None)
    if callable(dump) and not isinstance(value, type):
        return dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    return value


def _key(key: Any) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, _SCALAR_KEYS):
        return json.dumps(key)  # 1 -> "1", True -> "true", None -> "null", 1.5 -> "1.5"
    return _text(key)


def _text(value: Any) -> str:
    try:
        return str(value)
    # A user's __str__ that raises must not cost the whole result: name the object instead.
    except Exception as exc:  # noqa: BLE001 - any error of a user's __str__
        return f"<{type(value).__name__} object: str() raised {type(exc).__name__}>"
