"""What ``@function(...)`` and ``@agentic_function(...)`` return, for type checkers.

Python's typing can drop a *leading* parameter from a signature
(``Concatenate``) but not a trailing one, and the runtime parameter is usually
last (``def plan_trip(destination: str, runtime: Runtime) -> str``). So the
decorators are overloaded by arity: a function whose last of up to six
positional parameters takes a ``Runtime`` is seen without it (its other
parameters become positional-only for the checker); a leading runtime is
dropped with ``Concatenate``; any other function keeps its whole signature.
The overloads of the called forms live here; the bare forms repeat them on
the decorators themselves (a function's overloads cannot be shared).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Concatenate, Protocol, overload

from typing_extensions import ParamSpec, TypeVar

if TYPE_CHECKING:
    from openprogram.decorators import AgenticFunction
    from openprogram.runtime import Runtime
    from openprogram.tools import Tool

__all__ = ["AgenticDecorator", "ToolDecorator"]

_P = ParamSpec("_P")
_R = TypeVar("_R")
_A1 = TypeVar("_A1")
_A2 = TypeVar("_A2")
_A3 = TypeVar("_A3")
_A4 = TypeVar("_A4")
_A5 = TypeVar("_A5")

# Each overload set is ordered: a trailing runtime first (by arity), then a leading one, then
# the whole signature. A function matching an earlier form also matches the later ones, hence
# the overload-overlap ignores: the first match wins, which is the intent.


class ToolDecorator(Protocol):
    """``@function(...)``: applied to a function, gives its ``Tool``."""

    @overload
    def __call__(self, fn: Callable[[_A1, Runtime], _R], /) -> Tool[[_A1], _R]: ...
    @overload
    def __call__(self, fn: Callable[[_A1, _A2, Runtime], _R], /) -> Tool[[_A1, _A2], _R]: ...
    @overload
    def __call__(
        self, fn: Callable[[_A1, _A2, _A3, Runtime], _R], /
    ) -> Tool[[_A1, _A2, _A3], _R]: ...
    @overload
    def __call__(
        self, fn: Callable[[_A1, _A2, _A3, _A4, Runtime], _R], /
    ) -> Tool[[_A1, _A2, _A3, _A4], _R]: ...
    @overload
    def __call__(
        self, fn: Callable[[_A1, _A2, _A3, _A4, _A5, Runtime], _R], /
    ) -> Tool[[_A1, _A2, _A3, _A4, _A5], _R]: ...
    @overload
    def __call__(self, fn: Callable[Concatenate[Runtime, _P], _R], /) -> Tool[_P, _R]: ...
    @overload
    def __call__(self, fn: Callable[_P, _R], /) -> Tool[_P, _R]: ...
    def __call__(self, fn: Callable[..., Any], /) -> Tool[..., Any]: ...


class AgenticDecorator(Protocol):
    """``@agentic_function(...)``: applied to a function, gives its ``AgenticFunction``."""

    @overload
    def __call__(self, fn: Callable[[_A1, Runtime], _R], /) -> AgenticFunction[[_A1], _R]: ...
    @overload
    def __call__(
        self, fn: Callable[[_A1, _A2, Runtime], _R], /
    ) -> AgenticFunction[[_A1, _A2], _R]: ...
    @overload
    def __call__(
        self, fn: Callable[[_A1, _A2, _A3, Runtime], _R], /
    ) -> AgenticFunction[[_A1, _A2, _A3], _R]: ...
    @overload
    def __call__(
        self, fn: Callable[[_A1, _A2, _A3, _A4, Runtime], _R], /
    ) -> AgenticFunction[[_A1, _A2, _A3, _A4], _R]: ...
    @overload
    def __call__(
        self, fn: Callable[[_A1, _A2, _A3, _A4, _A5, Runtime], _R], /
    ) -> AgenticFunction[[_A1, _A2, _A3, _A4, _A5], _R]: ...
    @overload
    def __call__(
        self, fn: Callable[Concatenate[Runtime, _P], _R], /
    ) -> AgenticFunction[_P, _R]: ...
    @overload
    def __call__(self, fn: Callable[_P, _R], /) -> AgenticFunction[_P, _R]: ...
    def __call__(self, fn: Callable[..., Any], /) -> AgenticFunction[..., Any]: ...
