"""Signatures and annotations, read and checked cheaply at decoration.

Decorating a function must cost microseconds, yet every problem of its
signature must surface right then. So this module reads parameters straight
from the code object when it can (``inspect.signature`` is several times
slower) and resolves string annotations with cached compiled code; ``_walk``
checks each annotation. Building validators and JSON Schemas waits for first
use.
"""

from __future__ import annotations

import functools
import inspect
import re
import sys
import types
import typing
from dataclasses import dataclass
from typing import Any, ForwardRef

from openprogram._tool_types import ToolContext

__all__ = [
    "EMPTY",
    "Param",
    "call_method",
    "caller_namespace",
    "globals_of",
    "is_tool_context",
    "read_params",
    "resolve",
]

EMPTY: Any = inspect.Parameter.empty
"""Marks a missing default or annotation."""

POSITIONAL_ONLY = inspect.Parameter.POSITIONAL_ONLY
POSITIONAL_OR_KEYWORD = inspect.Parameter.POSITIONAL_OR_KEYWORD
VAR_POSITIONAL = inspect.Parameter.VAR_POSITIONAL
KEYWORD_ONLY = inspect.Parameter.KEYWORD_ONLY
VAR_KEYWORD = inspect.Parameter.VAR_KEYWORD


@dataclass(slots=True)
class Param:
    """One parameter as declared."""

    name: str
    """Parameter name."""
    kind: inspect._ParameterKind
    """Positional-only, keyword-only, variadic, ..."""
    default: Any
    """Default value, or ``EMPTY``."""
    annotation: Any
    """Annotation as written (a string under postponed evaluation) or ``EMPTY``."""


def read_params(fn: Any) -> list[Param]:
    """The parameters of ``fn`` in signature order (a bound method's first one dropped).

    Raises:
        ValueError: ``fn`` has no readable signature (some builtins).
        TypeError: ``fn`` is not callable.
    """
    target, bound = (fn.__func__, True) if type(fn) is types.MethodType else (fn, False)
    if (
        type(target) is types.FunctionType
        and "__wrapped__" not in target.__dict__
        and "__signature__" not in target.__dict__
        and (not bound or target.__code__.co_argcount > 0)
    ):
        params = _params_from_code(target)
        return params[1:] if bound else params
    sig = inspect.signature(fn)
    return [Param(p.name, p.kind, p.default, p.annotation) for p in sig.parameters.values()]


def _params_from_code(f: types.FunctionType) -> list[Param]:
    # Same result as inspect.signature for a plain function, at a fraction of the cost.
    code = f.__code__
    names = code.co_varnames
    npos, nposonly, nkw = code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount
    defaults = f.__defaults__ or ()
    kwdefaults = f.__kwdefaults__ or {}
    ann = f.__annotations__
    first_default = npos - len(defaults)
    out: list[Param] = []
    for i in range(npos):
        name = names[i]
        kind = POSITIONAL_ONLY if i < nposonly else POSITIONAL_OR_KEYWORD
        default = defaults[i - first_default] if i >= first_default else EMPTY
        out.append(Param(name, kind, default, ann.get(name, EMPTY)))
    extra = npos + nkw
    if code.co_flags & inspect.CO_VARARGS:
        name = names[extra]
        out.append(Param(name, VAR_POSITIONAL, EMPTY, ann.get(name, EMPTY)))
        extra += 1
    for name in names[npos : npos + nkw]:
        out.append(Param(name, KEYWORD_ONLY, kwdefaults.get(name, EMPTY), ann.get(name, EMPTY)))
    if code.co_flags & inspect.CO_VARKEYWORDS:
        name = names[extra]
        out.append(Param(name, VAR_KEYWORD, EMPTY, ann.get(name, EMPTY)))
    return out


def globals_of(fn: Any) -> dict[str, Any]:
    """The namespace ``fn``'s string annotations are resolved in."""
    obj = fn
    for _ in range(16):  # unwrap methods, partials and functools.wraps layers
        if isinstance(obj, types.MethodType):
            obj = obj.__func__
        elif isinstance(obj, functools.partial):
            obj = obj.func
        elif "__wrapped__" in getattr(obj, "__dict__", {}):
            obj = obj.__wrapped__
        else:
            break
    found = getattr(obj, "__globals__", None)
    if found is None:
        found = getattr(call_method(obj), "__globals__", None)
    if found is None:
        module = sys.modules.get(getattr(obj, "__module__", None) or "")
        found = vars(module) if module is not None else {}
    return typing.cast(dict[str, Any], found)


def call_method(obj: Any) -> Any:
    """The ``__call__`` function of a callable object's class (``None`` if it has none)."""
    return getattr(type(obj), "__call__", None)  # noqa: B004 - the function itself is wanted


def caller_namespace() -> dict[str, Any]:
    """Locals of the nearest frame outside openprogram (where a decorated function was defined).

    Used only after a ``NameError``: a class defined inside a function (a test,
    say) is not in the module globals, but is in the decorating frame's locals.
    """
    frame = sys._getframe(1)
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if module != "openprogram" and not module.startswith("openprogram."):
            return dict(frame.f_locals)
        frame = frame.f_back  # type: ignore[assignment]
    return {}


_codes: dict[str, types.CodeType] = {}
_MAX_CODES = 4096


def resolve(annotation: Any, globalns: dict[str, Any], localns: dict[str, Any] | None) -> Any:
    """Evaluate a string annotation (``None`` becomes ``NoneType``).

    Raises:
        Exception: Whatever evaluating the annotation raised (``NameError`` most often).
    """
    for _ in range(3):  # quoted under `from __future__ import annotations` is a string twice
        if isinstance(annotation, ForwardRef):
            annotation = annotation.__forward_arg__
        if not isinstance(annotation, str):
            break
        code = _codes.get(annotation)
        if code is None:
            code = compile(annotation, "<annotation>", "eval")
            if len(_codes) < _MAX_CODES:
                _codes[annotation] = code
        # Evaluating the annotation's own source, as typing.get_type_hints does.
        annotation = eval(code, globalns, localns)
    if annotation is None:
        return types.NoneType
    if _has_forward_refs(annotation):
        holder = types.SimpleNamespace(__annotations__={"x": annotation})
        annotation = typing.get_type_hints(holder, globalns, localns, include_extras=True)["x"]
    return annotation


def _has_forward_refs(tp: Any) -> bool:
    args = getattr(tp, "__args__", None)
    if not args or typing.get_origin(tp) is typing.Literal:
        return False
    return any(isinstance(a, str | ForwardRef) or _has_forward_refs(a) for a in args)


_CONTEXT_STRING = re.compile(r"(?:[\w.]+\.)?ToolContext(?:\s*\|\s*None)?")


def is_tool_context(annotation: Any) -> bool:
    """Whether ``annotation`` is ``openprogram.tools.ToolContext`` (possibly ``| None``)."""
    if isinstance(annotation, str):
        return (
            "ToolContext" in annotation
            and _CONTEXT_STRING.fullmatch(annotation.strip()) is not None
        )
    origin = typing.get_origin(annotation)
    if origin is typing.Union or origin is types.UnionType:
        members = [a for a in typing.get_args(annotation) if a is not types.NoneType]
        return len(members) == 1 and is_tool_context(members[0])
    return annotation is ToolContext
