"""``derive_schema``: a function's signature, type hints and docstring, read at decoration.

Only cheap work happens here: the signature is read, each annotation resolved
and structurally checked, the docstring scanned, and every problem gathered
into one :class:`~openprogram.exceptions.SchemaError`. What costs more waits
in the returned :class:`~openprogram.schema.FunctionSchema` until first use.
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable, Mapping
from typing import Any

from openprogram._tool_types import TOOL_NAME_PATTERN
from openprogram.exceptions import SchemaError
from openprogram.schema import _docs, _signature
from openprogram.schema._function import FunctionSchema, unwrap, warn_no_description
from openprogram.schema._read import Reader, doc_problems, input_problems, override_problems

__all__ = ["derive_schema"]


def derive_schema(
    fn: Callable[..., Any],
    *,
    name: str | None = None,
    description: str | None = None,
    parameters: Mapping[str, Any] | None = None,
    input: Mapping[str, Mapping[str, Any]] | None = None,
) -> FunctionSchema:
    """Derive the schema of ``fn`` from its signature, type hints and docstring.

    Args:
        fn: A function, method, ``functools.partial`` or callable object.
        name: Tool name; defaults to ``fn.__name__``.
        description: Tool description; defaults to the docstring's summary and body.
        parameters: A hand-written JSON Schema object, used as given instead of the hints.
        input: Per-parameter ``{"description": str, "options": [...], "hidden": bool}``.

    Raises:
        SchemaError: Listing every problem of the signature, with ``fn``'s qualified name.
    """
    inner = unwrap(fn)
    qualname = _qualname(inner, fn)
    if not callable(fn):
        raise SchemaError(
            qualname, [f"{type(fn).__name__} object is not callable; decorate a function"]
        )
    try:
        params = _signature.read_params(fn)
    except (TypeError, ValueError) as exc:
        raise SchemaError(
            qualname,
            [f"its signature cannot be read ({exc}); wrap it in a def with typed parameters"],
        ) from None
    reader = Reader(fn, params, input or {}, override=parameters is not None)
    reader.read()
    doc = _doc_of(inner)
    override = dict(parameters) if parameters is not None else None
    problems = reader.problems
    problems.extend(input_problems(input, params))
    if override is None:
        problems.extend(doc_problems(doc, params))
    else:
        problems.extend(override_problems(override, params, reader))
    if problems:
        raise SchemaError(qualname, problems)
    tool_name = name if name is not None else _name_of(inner)
    blank = description is not None and not description.strip()
    if blank or (description is None and override is None and _docs.is_blank(doc)):
        # An invalid name is about to fail loudly in Tool anyway.
        if TOOL_NAME_PATTERN.match(tool_name):
            warn_no_description(qualname, tool_name, fn)
        description = tool_name
    return FunctionSchema(
        name=tool_name,
        qualname=qualname,
        is_async=_is_async(fn),
        visible=reader.visible,
        positions=reader.positions,
        doc=doc,
        description=description,
        override=override,
        runtime_param=reader.runtime_param,
        context_param=reader.context_param,
        self_param=reader.self_param,
    )


def _qualname(obj: Any, fn: Any) -> str:
    qual = getattr(obj, "__qualname__", None)
    if qual is None:
        return repr(fn)
    return f"{getattr(obj, '__module__', None) or '?'}.{qual}"


def _name_of(obj: Any) -> str:
    name = getattr(obj, "__name__", None)
    return name if isinstance(name, str) else type(obj).__name__


def _doc_of(obj: Any) -> str | None:
    if isinstance(obj, types.FunctionType | types.BuiltinFunctionType) or inspect.isclass(obj):
        return obj.__doc__
    doc = getattr(obj, "__doc__", None)
    if doc is None or doc is type(obj).__doc__:  # a callable object: its __call__ says what it does
        doc = getattr(_signature.call_method(obj), "__doc__", None) or doc
    return doc


def _is_async(fn: Any) -> bool:
    if inspect.iscoroutinefunction(fn):
        return True
    if not isinstance(fn, types.FunctionType | types.MethodType):
        return inspect.iscoroutinefunction(_signature.call_method(fn))
    return False
