"""The root exec of a durable run, written down so ``resume`` can run it again.

A run record holds the root exec's content (its user message) and its options
as JSON: tools by name (``resume`` finds them in the runtime's registry, or
takes ``tools=`` again), the plain options as they are, the budget's limits,
the history as ``dump_messages`` text, and what is code (a ``response_format``
class, the functions and classes of ``choices=``) by importable reference,
``"module:qualname"``, checked to name the very object given. What cannot be
written so (a class defined in a function, ``list[int]``, a lambda) makes the
record *unresumable*, with the reason: ``resume`` then says to run the same
exec again with the same ``run_id``, which needs no record.
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
import json
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from openprogram.budget import Budget
from openprogram.exceptions import UserError
from openprogram.messages import dump_messages, load_messages
from openprogram.runtime._options import ExecOptions
from openprogram.tools import Tool, to_tools

__all__ = ["options_from_record", "options_record"]

_PLAIN = (
    "toolset",
    "tools_source",
    "tool_choice",
    "parallel_tool_calls",
    "max_iterations",
    "structured_fallback",
    "timeout_s",
    "model",
    "on_max_iterations",
    "temperature",
    "max_tokens",
    "seed",
)


class _Unwritable(Exception):
    """A value with no JSON form nor importable name."""


def options_record(options: ExecOptions) -> str:
    """The root exec's options as JSON text (see the module docstring)."""
    data: dict[str, Any] = {name: getattr(options, name) for name in _PLAIN}
    unresumable: list[str] = []
    data["tools"] = None
    if options.tools is not None:
        try:
            data["tools"] = [tool.name for tool in to_tools(options.tools)]
        except TypeError as exc:
            unresumable.append(f"tools=: {exc}")
    for name in ("tools_allow", "tools_deny"):
        value = getattr(options, name)
        data[name] = None if value is None else sorted(value)
    data["budget"] = None if options.budget is None else dataclasses.asdict(options.budget)
    data["history"] = None if not options.history else dump_messages(options.history)
    for name in ("response_format", "choices"):
        try:
            data[name] = _written(getattr(options, name))
        except _Unwritable as exc:
            data[name] = None
            unresumable.append(f"{name}={getattr(options, name)!r:.80}: {exc}")
    if unresumable:
        data["unresumable"] = unresumable
    import pydantic_core  # noqa: PLC0415 - deferred for import cost (loaded by a tool's first call)

    try:
        return pydantic_core.to_json(data).decode()  # a few times faster than json.dumps
    except pydantic_core.PydanticSerializationError as exc:  # a value of no JSON form
        return json.dumps({"unresumable": [f"its options have no JSON form ({exc})"]})


def options_from_record(text: str, run_id: str, tools: Sequence[Any] | None) -> ExecOptions:
    """The options a run's root exec ran with, for ``resume`` (``tools`` replaces the names).

    Raises:
        UserError: The record cannot be run again from here (the message says why, and
            to run the same exec again with ``run_id=`` instead).
    """
    data = json.loads(text)
    if data.get("unresumable"):
        raise UserError(_cannot(run_id, "; ".join(data["unresumable"])))
    kwargs: dict[str, Any] = {name: data[name] for name in _PLAIN if name in data}
    kwargs["tool_choice"] = data.get("tool_choice", "auto")
    if isinstance(kwargs["tool_choice"], Mapping):
        kwargs["tool_choice"] = dict(kwargs["tool_choice"])
    for name in ("tools_allow", "tools_deny"):
        kwargs[name] = data.get(name)
    if data.get("budget") is not None:
        kwargs["budget"] = Budget(**data["budget"])
    if data.get("history") is not None:
        kwargs["history"] = load_messages(data["history"])
    try:
        for name in ("response_format", "choices"):
            kwargs[name] = _read(data.get(name))
    except (ImportError, AttributeError) as exc:
        raise UserError(_cannot(run_id, f"{exc}; import the module that defines it")) from None
    if tools is not None:
        kwargs["tools"] = list(tools)
    elif data.get("tools") is not None:
        kwargs["tools"] = data["tools"]  # names: found in the runtime's registry by the caller
    return ExecOptions.from_kwargs({**kwargs, "run_id": run_id})


def _cannot(run_id: str, why: str) -> str:
    return (
        f"resume({run_id!r}) cannot rebuild the run's root exec from its record: {why}. Run "
        f"the same exec again with run_id={run_id!r} in a process with the same program (its "
        "journal replays and it goes on from where it stopped)"
    )


# -- values: JSON as is, tuples tagged, code by reference ------------------------------------


def _written(value: Any) -> Any:
    if value is None or isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, list):
        return [_written(v) for v in value]
    if isinstance(value, tuple):
        return {"$tuple": [_written(v) for v in value]}
    if isinstance(value, Mapping):
        if not all(isinstance(k, str) for k in value):
            raise _Unwritable("a mapping with keys that are not strings")
        return {"$dict": {k: _written(v) for k, v in value.items()}}
    if isinstance(value, enum.Enum):
        return {"$enum": _reference(type(value)), "name": value.name}
    return {"$ref": _reference(value)}


def _reference(obj: Any) -> str:
    # A tool made by @function is named like the function it wraps (and replaces).
    named = obj.fn if isinstance(obj, Tool) and obj.fn is not None else obj
    module = getattr(named, "__module__", None)
    qualname = getattr(named, "__qualname__", None) or getattr(named, "__name__", None)
    if not isinstance(module, str) or not isinstance(qualname, str) or "<" in qualname:
        raise _Unwritable("it has no importable name (define it at module level)")
    try:
        found = _resolve(module, qualname, load=False)
    except (ImportError, AttributeError, KeyError):
        found = None
    if found is not obj:
        raise _Unwritable(f"{module}:{qualname} does not name it (define it at module level)")
    return f"{module}:{qualname}"


def _read(value: Any) -> Any:
    if isinstance(value, list):
        return [_read(v) for v in value]
    if not isinstance(value, dict):
        return value
    if "$tuple" in value:
        return tuple(_read(v) for v in value["$tuple"])
    if "$dict" in value:
        return {k: _read(v) for k, v in value["$dict"].items()}
    if "$enum" in value:
        return getattr(_resolve(*value["$enum"].split(":", 1)), value["name"])
    return _resolve(*value["$ref"].split(":", 1))


def _resolve(module: str, qualname: str, *, load: bool = True) -> Any:
    found: Any = importlib.import_module(module) if load else sys.modules[module]
    for part in qualname.split("."):
        found = getattr(found, part)
    return found
