"""Coercion of tool-like values (what ``tools=[...]`` accepts) into ``Tool`` objects.

A ``Tool`` is taken as it is; an agentic function gives its own; a
``{"spec", "execute"}`` dict or an object with ``.spec`` and ``.execute`` is
wrapped; any other callable is derived with ``Tool.from_function`` once and
cached while it lives.
"""

from __future__ import annotations

import contextlib
import inspect
import weakref
from collections.abc import Mapping, Sequence
from typing import Any

from openprogram.tools._tool import Tool, ToolLike

__all__ = ["to_tool", "to_tools"]

_coerced: weakref.WeakKeyDictionary[Any, Tool] = weakref.WeakKeyDictionary()


def to_tool(obj: ToolLike, *, index: int | None = None) -> Tool:
    """Coerce one tool-like value into a ``Tool``.

    Raises:
        TypeError: ``obj`` is of no tool-like form (the message names it).
    """
    if isinstance(obj, Tool):
        return obj
    inner = getattr(obj, "__openprogram_tool__", None)
    if isinstance(inner, Tool):
        return inner
    if isinstance(obj, Mapping) and "spec" in obj and "execute" in obj:
        return _from_spec(obj["spec"], obj["execute"], where=_where(obj, index))
    if hasattr(obj, "spec") and hasattr(obj, "execute") and not inspect.isclass(obj):
        return _from_spec(obj.spec, obj.execute, where=_where(obj, index))
    if callable(obj) and not inspect.isclass(obj):
        try:
            cached = _coerced.get(obj)
        except TypeError:  # unhashable callables are derived afresh each time
            cached = None
        if cached is not None:
            return cached
        tool = Tool.from_function(obj)
        with contextlib.suppress(TypeError):  # not weak-referenceable: fine, just not cached
            _coerced[obj] = tool
        return tool
    raise TypeError(
        f"{_where(obj, index)} is not a tool: pass a Tool, an @agentic_function, a plain "
        'function, a {"spec": {...}, "execute": f} dict, or an object with .spec and .execute'
    )


def to_tools(objs: Sequence[ToolLike]) -> list[Tool]:
    """Coerce a ``tools=[...]`` list, naming the position of a bad entry."""
    if isinstance(objs, str | bytes | Mapping):
        raise TypeError(f"tools= must be a list of tools, got {type(objs).__name__}")
    return [to_tool(obj, index=i) for i, obj in enumerate(objs)]


def _from_spec(spec: Any, execute: Any, *, where: str) -> Tool:
    if not isinstance(spec, Mapping) or not isinstance(spec.get("name"), str):
        raise TypeError(f"{where}: spec must be a dict with a string 'name'")
    if not callable(execute):
        raise TypeError(f"{where}: execute must be callable")
    params = spec.get("parameters") or spec.get("input_schema")
    if params is not None and not isinstance(params, Mapping):
        raise TypeError(f"{where}: spec 'parameters' must be a JSON Schema object")
    return Tool(
        name=spec["name"],
        description=str(spec.get("description") or spec["name"]),
        parameters=params or {"type": "object", "properties": {}},
        execute=execute,
    )


def _where(obj: Any, index: int | None) -> str:
    pos = f"tools[{index}]" if index is not None else "tool"
    return f"{pos} ({obj!r:.60})"
