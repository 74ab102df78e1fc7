"""The data policy for validation failures: events describe them without the values.

A violation text is written for the model, which may see its own arguments,
and a few quote them: JSON Schema's own messages for hand-written schemas do
(``'abc' is too long``, ``-3 is less than the minimum of 0``). Events must not
carry argument values unless ``trace_payloads=True`` (ARCHITECTURE §9), so
``ToolInputValidationFailed`` gets the violations with every quoted argument
value replaced by ``<value>``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["MAX_LEAVES", "without_values"]

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
