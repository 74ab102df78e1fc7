"""``@function``: make a plain function a tool, bare, called, or as ``function(fn, ...)``."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast, overload

from typing_extensions import ParamSpec, TypeVar

from openprogram.decorators._options import (
    SCHEMA_KEYS,
    TOOL_KEYS,
    ToolOptions,
    available,
    check_options,
    check_target,
    pop_registry,
)
from openprogram.decorators._signatures import (
    OptionalRuntime1,
    OptionalRuntime2,
    OptionalRuntime3,
    OptionalRuntime4,
    OptionalRuntime5,
    ToolDecorator,
)
from openprogram.exceptions import SchemaError
from openprogram.schema import derive_schema
from openprogram.tools import Tool

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from openprogram.runtime import Runtime

__all__ = ["function"]

_P = ParamSpec("_P")
_R = TypeVar("_R")
_A1 = TypeVar("_A1")
_A2 = TypeVar("_A2")
_A3 = TypeVar("_A3")
_A4 = TypeVar("_A4")
_A5 = TypeVar("_A5")


# The overloads by arity hide a required trailing ``runtime: Runtime`` from callers (see
# openprogram.decorators._signatures for why and in what order); the first match wins.
@overload
def function(  # type: ignore[overload-overlap]
    fn: OptionalRuntime1[_P, _R], /, **options: Unpack[ToolOptions]
) -> Tool[_P, _R]: ...
@overload
def function(
    fn: Callable[[_A1, Runtime], _R], /, **options: Unpack[ToolOptions]
) -> Tool[[_A1], _R]: ...
@overload
def function(  # type: ignore[overload-overlap]
    fn: OptionalRuntime2[_P, _R], /, **options: Unpack[ToolOptions]
) -> Tool[_P, _R]: ...
@overload
def function(
    fn: Callable[[_A1, _A2, Runtime], _R], /, **options: Unpack[ToolOptions]
) -> Tool[[_A1, _A2], _R]: ...
@overload
def function(  # type: ignore[overload-overlap]
    fn: OptionalRuntime3[_P, _R], /, **options: Unpack[ToolOptions]
) -> Tool[_P, _R]: ...
@overload
def function(
    fn: Callable[[_A1, _A2, _A3, Runtime], _R], /, **options: Unpack[ToolOptions]
) -> Tool[[_A1, _A2, _A3], _R]: ...
@overload
def function(  # type: ignore[overload-overlap]
    fn: OptionalRuntime4[_P, _R], /, **options: Unpack[ToolOptions]
) -> Tool[_P, _R]: ...
@overload
def function(
    fn: Callable[[_A1, _A2, _A3, _A4, Runtime], _R], /, **options: Unpack[ToolOptions]
) -> Tool[[_A1, _A2, _A3, _A4], _R]: ...
@overload
def function(  # type: ignore[overload-overlap]
    fn: OptionalRuntime5[_P, _R], /, **options: Unpack[ToolOptions]
) -> Tool[_P, _R]: ...
@overload
def function(
    fn: Callable[[_A1, _A2, _A3, _A4, _A5, Runtime], _R], /, **options: Unpack[ToolOptions]
) -> Tool[[_A1, _A2, _A3, _A4, _A5], _R]: ...
@overload
def function(fn: Callable[_P, _R], /, **options: Unpack[ToolOptions]) -> Tool[_P, _R]: ...
@overload
def function(fn: None = None, /, **options: Unpack[ToolOptions]) -> ToolDecorator: ...
def function(
    fn: Callable[..., Any] | None = None, /, **options: Unpack[ToolOptions]
) -> Tool[..., Any] | ToolDecorator:
    """Make a plain function a tool: ``@function``, ``@function(...)`` or ``function(fn, ...)``.

    The returned ``Tool`` stays directly callable like the function. When
    ``available_if`` is falsy (or raises), the function itself is returned,
    undecorated and unregistered.

    Raises:
        SchemaError: The signature cannot become a tool (lists every problem).
        TypeError: An unknown option, or something other than a function to decorate.
        UserError: An invalid option value or a duplicate tool name in the registry.
    """
    check_options(options, TOOL_KEYS, "function")
    if fn is None:
        return cast(ToolDecorator, lambda f: _make_function(f, dict(options)))
    return _make_function(fn, dict(options))


def _make_function(fn: Callable[..., Any], options: dict[str, Any]) -> Tool[..., Any]:
    check_target(fn, "function")
    if not available(options.pop("available_if", True), fn):
        return fn  # type: ignore[return-value] # L1: the undecorated function, by contract
    registry = pop_registry(options)
    schema = derive_schema(fn, **{k: options.pop(k) for k in SCHEMA_KEYS if k in options})
    if schema.self_param is not None:
        raise SchemaError(
            schema.qualname,
            [
                f"@function cannot wrap a method: its first parameter {schema.self_param!r} "
                "can never be supplied by a model; decorate it with @agentic_function, "
                "or make a tool of the bound method: function(obj.method)"
            ],
        )
    tool = Tool(name=schema.name, fn=fn, schema=schema, **options)
    if registry is not None:
        registry.register(tool)
    return tool
