"""Normalising ``choices=``: every option form becomes one frozen ``Choice`` record.

A handler is a function (a ``Tool`` or agentic function too), a
``(function, "description")`` pair, a plain value, a ``(value, "description")``
pair, or a ``("description", schema)`` schema option; options come as a dict
``{name: handler}`` or a list whose names come from the handlers.
"""

from __future__ import annotations

import enum
import inspect
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from openprogram.exceptions import InvalidSchemaError, UserError
from openprogram.schema import FunctionSchema, derive_schema
from openprogram.structured._options import OutputSchema, is_type, output_schema
from openprogram.tools import Tool, to_tool

__all__ = ["Choice", "ChoiceKind", "normalize_choices"]

ChoiceKind: TypeAlias = Literal["function", "value", "schema"]
"""What picking an option does: run a function, return a value, or return fields."""

_NO_ARGS: Mapping[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}
_MAX_NAME = 128


@dataclass(frozen=True, slots=True, kw_only=True)
class Choice:
    """One option of a decision, normalised from whatever form it was given in."""

    name: str
    """What the model writes in ``"call"``."""
    description: str
    """One line telling the model what the option means (may be empty)."""
    kind: ChoiceKind
    """``"function"``, ``"value"`` or ``"schema"``."""
    parameters: Mapping[str, Any] = field(default_factory=lambda: dict(_NO_ARGS))
    """JSON Schema object of the option's ``"args"``."""
    value: Any = field(default=None, repr=False)
    """The value returned when a value option is picked."""
    fn: Callable[..., Any] | None = field(default=None, repr=False)
    """The plain function run when a function option is picked."""
    function_schema: FunctionSchema | None = field(default=None, repr=False)
    """Validates and converts the arguments of ``fn``."""
    tool: Tool | None = field(default=None, repr=False)
    """The tool run when the option was given as a ``Tool`` or agentic function."""
    output: OutputSchema | None = field(default=None, repr=False)
    """Validates the fields of a schema option."""


def normalize_choices(options: Any) -> tuple[Choice, ...]:
    """Normalise ``choices=``: a dict ``{name: handler}`` or a list of handlers.

    Raises:
        UserError: The options are empty, of no known form, or have clashing names.
        SchemaError: A function option's signature cannot become a schema.
    """
    entries: list[tuple[str | None, Any, str]]
    if isinstance(options, Mapping):
        entries = [(_key_name(k), h, f"choices[{k!r}]") for k, h in options.items()]
    elif isinstance(options, list | tuple):
        entries = [(None, h, f"choices[{i}]") for i, h in enumerate(options)]
    else:
        raise UserError(
            f"choices={options!r:.80} is not a set of options: pass a dict {{name: handler}} "
            "or a list of functions, values, (handler, 'description') or "
            "('description', schema)"
        )
    if not entries:
        raise UserError("choices= is empty: give at least one option to pick from")
    choices = tuple(_choice(name, handler, where) for name, handler, where in entries)
    _check_unique(choices)
    return choices


def _choice(name: str | None, handler: Any, where: str) -> Choice:
    if _is_schema_pair(handler):
        description, schema = handler
        return _schema_choice(name, schema, description, where)
    description = ""
    if isinstance(handler, tuple) and len(handler) == 2 and isinstance(handler[1], str):
        handler, description = handler
    if callable(handler) and not inspect.isclass(handler):
        return _function_choice(name, handler, description)
    return Choice(
        name=name if name is not None else _value_name(handler, where),
        description=_one_line(description),
        kind="value",
        value=handler,
    )


def _function_choice(name: str | None, fn: Callable[..., Any], description: str) -> Choice:
    if isinstance(fn, Tool) or hasattr(fn, "__openprogram_tool__") or hasattr(fn, "execute"):
        tool = to_tool(fn)
        return Choice(
            name=name or tool.name,
            description=_one_line(description or tool.description),
            kind="function",
            parameters=tool.parameters,
            tool=tool,
        )
    schema = derive_schema(fn)
    return Choice(
        name=name or schema.name,
        description=_one_line(description or schema.description),
        kind="function",
        parameters=schema.parameters,
        fn=fn,
        function_schema=schema,
    )


def _schema_choice(name: str | None, schema: Any, description: str, where: str) -> Choice:
    try:
        output = output_schema(schema, where=where)
    except InvalidSchemaError as exc:
        raise UserError(str(exc)) from exc
    if output.wrapped:
        raise UserError(
            f'{where}: a schema option needs an object schema ({{"type": "object", ...}}): '
            "its fields come back with the decision"
        )
    if "decision" in (output.schema.get("properties") or {}):
        raise UserError(
            f"{where}: a schema option cannot have a field named 'decision' (it is reserved)"
        )
    title = output.schema.get("title")
    if name is None and not isinstance(title, str):
        raise UserError(f"{where}: a schema option needs a name: give the options as a dict")
    return Choice(
        name=name if name is not None else str(title),
        description=_one_line(description),
        kind="schema",
        parameters=output.schema,
        output=output,
    )


def _is_schema_pair(handler: Any) -> bool:
    if not (isinstance(handler, tuple) and len(handler) == 2 and isinstance(handler[0], str)):
        return False
    return is_type(handler[1]) or isinstance(handler[1], Mapping)


def _value_name(value: Any, where: str) -> str:
    if isinstance(value, str):
        return _key_name(value)
    if isinstance(value, bool | int | float) or value is None:
        return json.dumps(value)
    if isinstance(value, enum.Enum):
        return value.name
    raise UserError(
        f"{where} ({value!r:.60}) has no name the model could write: give the options as a "
        "dict {name: value}"
    )


def _key_name(name: Any) -> str:
    if not isinstance(name, str) or not name.strip() or len(name) > _MAX_NAME or "\n" in name:
        raise UserError(
            f"option name {name!r:.80} is not usable: use a non-empty one-line string of at most "
            f"{_MAX_NAME} characters"
        )
    return name


def _check_unique(choices: tuple[Choice, ...]) -> None:
    names = [c.name for c in choices]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise UserError(
            f"choices= has options with the same name: {', '.join(map(repr, dupes))}; "
            "give the options as a dict to name them apart"
        )


def _one_line(text: str) -> str:
    first_paragraph = text.strip().split("\n\n", 1)[0]
    return " ".join(first_paragraph.split())
