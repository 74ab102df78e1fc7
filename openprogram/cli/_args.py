"""``openprogram run``'s arguments: command-line words, checked by the function's own schema.

Words are positional values or ``key=value``; positional ones fill the
parameters in order (the injected runtime and ``ToolContext`` excluded).
Each value is read against its parameter's schema: JSON (``3``, ``true``,
``[1, 2]``, ``{"a": 1}``) where the parameter takes such a value, the plain
word where it takes a string (so ``42`` stays ``"42"`` for ``destination:
str``, and ``Rome`` needs no quotes). Then the tool's own validator checks
everything, exactly as it checks a model's arguments, so a bad value gets the
``path: message`` line the model would get. A JSON value nested deeper than
``MAX_JSON_DEPTH`` levels is refused as a usage error (exit 2).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from openprogram.cli._json import MAX_JSON_DEPTH, json_depth
from openprogram.exceptions import ConfigurationError
from openprogram.schema import ArgumentsError
from openprogram.structured._render import render_params
from openprogram.tools import Tool, to_tool

__all__ = ["ArgumentsUsageError", "bind_arguments", "parse_arguments"]

_JSON_TYPES = {
    dict: "object",
    list: "array",
    str: "string",
    bool: "boolean",
    int: "integer",
    float: "number",
    type(None): "null",
}


class ArgumentsUsageError(ConfigurationError):
    """The command-line arguments do not fit the function (exit 2)."""


def parse_arguments(raw: Sequence[str]) -> tuple[list[str], dict[str, str]]:
    """Split ``["Rome", "days=3"]`` into positional words and keyword words (still text).

    Raises:
        ArgumentsUsageError: A keyword is given twice.
    """
    positional: list[str] = []
    keywords: dict[str, str] = {}
    for item in raw:
        key, sep, value = item.partition("=")
        if sep and key.isidentifier():
            if key in keywords:
                raise ArgumentsUsageError(f"argument {key}= is given twice")
            keywords[key] = value
        else:
            positional.append(item)
    return positional, keywords


def bind_arguments(
    target: Any, name: str, positional: Sequence[str], keywords: Mapping[str, str]
) -> tuple[Callable[..., Any], dict[str, Any]]:
    """The callable to run and its validated keyword arguments.

    Raises:
        ArgumentsUsageError: Too many positional values, a name given twice, or values
            the function's schema rejects (every ``path: message`` listed).
    """
    tool = to_tool(target)
    params: Mapping[str, Any] = tool.parameters.get("properties", {})
    order = list(params)
    if len(positional) > len(order):
        raise ArgumentsUsageError(
            f"run {name}: {len(positional)} positional values given, but it takes "
            f"{len(order)} ({_signature(tool)})"
        )
    words = dict(zip(order, positional, strict=False))
    for key, value in keywords.items():
        if key in words:
            raise ArgumentsUsageError(f"run {name}: {key} is given both by position and as {key}=")
        words[key] = value
    args = {key: _read(name, key, text, params.get(key)) for key, text in words.items()}
    try:
        validated = tool.validate(args)
    except RecursionError as exc:  # pydantic validating a value nested almost too deep
        raise _too_deep(name, "an argument") from exc
    except ArgumentsError as exc:
        lines = "\n".join(f"  {v}" for v in exc.violations)
        raise ArgumentsUsageError(
            f"run {name}: invalid arguments:\n{lines}\nit takes {_signature(tool)}; pass values "
            "as positional words or key=value (JSON values where the parameter is not a string)"
        ) from exc
    # An agentic function fills its runtime itself; so does a Tool (for a plain function too).
    agentic = getattr(target, "__openprogram_tool__", None) is not None
    runner: Callable[..., Any] = target if agentic else tool
    return runner, validated


def _read(name: str, key: str, text: str, schema: Any) -> Any:
    """The value a word stands for, given its parameter's schema (see the module docstring).

    Raises:
        ArgumentsUsageError: The word is JSON nested too deeply for a parameter that
            does not take it as a string.
    """
    kinds = _admitted(schema)
    try:
        decoded = json.loads(text)
    except RecursionError as exc:  # json.loads recurses once per level of nesting
        if "string" in kinds:
            return text
        raise _too_deep(name, key) from exc
    except ValueError:
        return text
    if isinstance(decoded, str):
        return decoded  # quoted on purpose: '"42"'
    kind = _JSON_TYPES[type(decoded)]
    fits = kind in kinds or (kind == "integer" and "number" in kinds)
    if not fits and "string" in kinds:
        return text
    if json_depth(decoded) > MAX_JSON_DEPTH:
        raise _too_deep(name, key)
    return decoded


def _too_deep(name: str, key: str) -> ArgumentsUsageError:
    return ArgumentsUsageError(
        f"run {name}: {key} is JSON nested more than {MAX_JSON_DEPTH} levels deep, more "
        f"than the command reads; pass a value nested at most {MAX_JSON_DEPTH} levels"
    )


def _admitted(schema: Any) -> set[str]:
    """JSON types a parameter schema admits (``{"any"}`` when it does not say)."""
    if not isinstance(schema, Mapping):
        return {"any"}
    kinds: set[str] = set()
    declared = schema.get("type")
    if isinstance(declared, str):
        kinds.add(declared)
    elif isinstance(declared, list):
        kinds.update(str(k) for k in declared)
    values = [*schema.get("enum", ()), *([schema["const"]] if "const" in schema else [])]
    kinds.update(_JSON_TYPES.get(type(value), "any") for value in values)
    for branch in (*schema.get("anyOf", ()), *schema.get("oneOf", ())):
        kinds |= _admitted(branch)
    if "$ref" in schema or not kinds:
        kinds.add("any")
    return kinds


def _signature(tool: Tool) -> str:
    signature, _notes = render_params(tool.parameters)
    return f"{tool.name}({signature})"  # "?" marks optional parameters
