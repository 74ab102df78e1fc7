"""The data policy for validation failures: events describe them without the values.

A violation text is written for the model, which may see its own arguments,
and a few quote them: JSON Schema's own messages for hand-written schemas do
(``'abc' is too long``, ``-3 is less than the minimum of 0``). Events must not
carry argument values unless ``trace_payloads=True`` (docs/observability.md), so
``ToolInputValidationFailed`` gets the violations with every quoted argument
value replaced by ``<value>``.

Keys are payload too: the model chooses the keys of a ``dict[str, T]``
argument and the names of arguments the tool does not have. A violation
whose text contains such a key (any key of the arguments that the tool's
schema does not declare) is described by its kind alone (``<key>: expected
integer``); violations that name only declared parameters keep their path.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["MAX_LEAVES", "declared_names", "describe_violations", "without_values"]

MAX_LEAVES = 2_000
"""Arguments with more scalar values than this are described by paths only."""

_HIDDEN = "<value>"


def without_values(violations: Sequence[str], arguments: Any) -> str:
    """``"; "``-joined violations with the argument values they quote replaced.

    Args:
        violations: ``"path: message"`` lines.
        arguments: The arguments that failed validation.
    """
    text = "; ".join(violations)
    leaves = _leaves(arguments)
    if leaves is None:  # too many values to look for: keep only where the problems are
        return "; ".join(f"{v.split(': ', 1)[0]}: invalid" for v in violations)
    strings = sorted({repr(v) for v in leaves if isinstance(v, str)}, key=len, reverse=True)
    for quoted in strings:
        text = text.replace(quoted, _HIDDEN)
    numbers = {repr(v) for v in leaves if isinstance(v, int | float) and not isinstance(v, bool)}
    if numbers:
        alternatives = "|".join(re.escape(n) for n in sorted(numbers, key=len, reverse=True))
        # A number stands alone: not a digit run inside a word, a longer number or a path.
        text = re.sub(rf"(?<![\w.\[-])(?:{alternatives})(?![\w.\]])", _HIDDEN, text)
    return text


_KINDS = (
    ("missing required", "missing required value"),
    ("unexpected argument", "unexpected argument"),
    ("unexpected field", "unexpected field"),
    ("expected string", "expected string"),
    ("expected integer", "expected integer"),
    ("expected number", "expected number"),
    ("expected boolean", "expected boolean"),
    ("expected array", "expected array"),
    ("expected object", "expected object"),
    ("expected null", "expected null"),
)


def describe_violations(violations: Sequence[str], arguments: Any, declared: set[str]) -> str:
    """Violations for an event with payloads off: no argument values, no model-chosen keys.

    Args:
        violations: ``"path: message"`` lines.
        arguments: The arguments that failed validation.
        declared: Every property name the tool's schema declares (author-chosen).
    """
    keys = _keys(arguments)
    chosen = sorted(keys - declared, key=len, reverse=True) if keys is not None else []
    kept: list[str] = []
    for line in violations:
        if keys is None or any(key in line for key in chosen):
            kept.append(f"<key>: {_kind(line)}")  # a key is payload: say only what went wrong
        else:
            kept.append(without_values([line], arguments))
    return "; ".join(kept)


def declared_names(schema: Any) -> set[str]:
    """Every property name declared anywhere in a JSON Schema (nested, ``$defs`` included)."""
    names: set[str] = set()
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping):
            properties = node.get("properties")
            if isinstance(properties, Mapping):
                names.update(str(k) for k in properties)
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return names


def _kind(line: str) -> str:
    # A fixed vocabulary: nothing of the model's text can pass through.
    for needle, kind in _KINDS:
        if needle in line:
            return kind
    return "invalid value"


def _keys(arguments: Any) -> set[str] | None:
    """Every key in ``arguments``; ``None`` when there are too many to look for."""
    keys: set[str] = set()
    stack = [arguments]
    while stack:
        value = stack.pop()
        if isinstance(value, Mapping):
            keys.update(str(k) for k in value)
            stack.extend(value.values())
        elif isinstance(value, list | tuple):
            stack.extend(value)
        if len(keys) > MAX_LEAVES:
            return None
    return keys


def _leaves(arguments: Any) -> list[Any] | None:
    """Every scalar in ``arguments`` (iteratively: garbage may be deeply nested)."""
    out: list[Any] = []
    stack = [arguments]
    while stack:
        value = stack.pop()
        if isinstance(value, Mapping):
            stack.extend(value.values())
        elif isinstance(value, list | tuple):
            stack.extend(value)
        else:
            out.append(value)
            if len(out) > MAX_LEAVES:
                return None
    return out
