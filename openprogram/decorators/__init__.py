"""``@function`` and ``@agentic_function``: decorate once, get a tool.

Both work bare and called, derive the schema once (cheaply: see
``openprogram.schema``), and register the tool into ``registry=`` or the
shared ``default_registry``. Their keyword options are declared once, in
:class:`ToolOptions` and :class:`AgenticOptions`, and checked at runtime too:
an unknown option is a ``TypeError``, never silently ignored.

Example:
    >>> from openprogram.registry import Registry
    >>> reg = Registry()
    >>> @function(registry=reg)
    ... def add(a: int, b: int) -> int:
    ...     '''Add two integers.'''
    ...     return a + b
    >>> add(1, 2), add.name, reg.names()
    (3, 'add', ['add'])
"""

from __future__ import annotations

from openprogram.decorators._agentic import AgenticFunction, agentic_function
from openprogram.decorators._function import function
from openprogram.decorators._options import AgenticOptions, ToolOptions
from openprogram.decorators._signatures import AgenticDecorator, ToolDecorator

__all__ = [
    "AgenticDecorator",
    "AgenticFunction",
    "AgenticOptions",
    "ToolDecorator",
    "ToolOptions",
    "agentic_function",
    "function",
]
