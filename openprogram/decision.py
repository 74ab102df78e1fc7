"""Next-step decisions: the model's closing reply picks one option.

``runtime.exec(prompt, choices=options)`` lets the model work first (tools as
usual); its final reply must end with ``{"call": name, "args": {...}}``
naming one option. ``make(prompt, options)`` is the same without the work
phase. Options come as a dict ``{name: handler}`` or a list; a handler is

- a function (a ``Tool`` or ``@agentic_function`` too): its arguments schema
  comes from the same generator as tools, the runtime is injected, and its
  return value is the result;
- a ``(function, "description")`` pair;
- a plain value, returned as is, or a ``(value, "description")`` pair;
- a ``("description", schema)`` pair, where ``schema`` is a JSON Schema object
  or a pydantic model class: the result is ``{"decision": name, **fields}``.

A bad pick (none found, unknown option, invalid arguments) gets one re-ask
that says exactly what was wrong; a second bad pick raises ``DecisionError``.

For type checkers, ``exec(choices=...)``, ``make`` and ``async_make`` type the
answer by the options' form: what the functions return, the values' type
(either, for functions mixed with values), ``dict[str, Any]`` for schema
options, ``object`` for other mixes (the order of the forms and the limits:
``openprogram/structured/_pick_types.py``).
"""

from __future__ import annotations

from openprogram.structured._choices import Choice, ChoiceKind
from openprogram.structured._decision import (
    DecisionMenu,
    DecisionTurns,
    Picked,
    PickError,
    Reask,
)
from openprogram.structured._make import async_make, make

__all__ = [
    "Choice",
    "ChoiceKind",
    "DecisionMenu",
    "DecisionTurns",
    "PickError",
    "Picked",
    "Reask",
    "async_make",
    "make",
]
