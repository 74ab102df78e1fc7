"""The signatures type checkers see through the decorators: the runtime parameter hidden.

Callers leave the runtime parameter out, and it is usually last
(``def plan_trip(destination: str, runtime: Runtime) -> str``). Python's typing
can drop a leading parameter (``Concatenate``) but not a trailing one, so the
decorators are overloaded by arity, for up to five parameters before the
runtime. For each arity, first: a function that can be called without its
trailing runtime (the runtime has a default) keeps its whole signature, names
and defaults included; then: a function whose runtime is required is seen
without it (its other parameters become positional-only for the checker).
Any other function keeps its whole signature. A leading runtime stays visible
on purpose: positional arguments fill parameters in order, so a caller cannot
leave it out. The overloads of the called forms (``ToolDecorator`` and
``AgenticDecorator``, what ``@function(...)`` and ``@agentic_function(...)``
return) live here; the bare forms repeat them on the decorators (a function's
overloads cannot be shared).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, overload

from typing_extensions import ParamSpec, TypeVar

if TYPE_CHECKING:
    from openprogram.decorators._agentic import AgenticFunction
    from openprogram.runtime import Runtime
    from openprogram.tools import Tool

__all__ = [
    "AgenticDecorator",
    "OptionalRuntime1",
    "OptionalRuntime2",
    "OptionalRuntime3",
    "OptionalRuntime4",
    "OptionalRuntime5",
    "ToolDecorator",
]

_P = ParamSpec("_P")
_R = TypeVar("_R")
_R_co = TypeVar("_R_co", covariant=True)
_A1 = TypeVar("_A1")
_A2 = TypeVar("_A2")
_A3 = TypeVar("_A3")
_A4 = TypeVar("_A4")
_A5 = TypeVar("_A5")


# The OptionalRuntimeN protocols capture a whole signature (_P) of a function that is
# callable both with N positional arguments and with a Runtime after them: its trailing
# runtime may be left out, so its signature can stay as written.


class OptionalRuntime1(Protocol[_P, _R_co]):
    """A signature callable with 1 positional argument(s), with or without a ``Runtime`` after."""

    @overload
    def __call__(self, *args: _P.args, **kwargs: _P.kwargs) -> _R_co: ...
    @overload
    def __call__(self, a1: Any, runtime: Runtime, /) -> Any: ...
    @overload
    def __call__(self, a1: Any, /) -> Any: ...


class OptionalRuntime2(Protocol[_P, _R_co]):
    """A signature callable with 2 positional argument(s), with or without a ``Runtime`` after."""

    @overload
    def __call__(self, *args: _P.args, **kwargs: _P.kwargs) -> _R_co: ...
    @overload
    def __call__(self, a1: Any, a2: Any, runtime: Runtime, /) -> Any: ...
    @overload
    def __call__(self, a1: Any, a2: Any, /) -> Any: ...


class OptionalRuntime3(Protocol[_P, _R_co]):
    """A signature callable with 3 positional argument(s), with or without a ``Runtime`` after."""

    @overload
    def __call__(self, *args: _P.args, **kwargs: _P.kwargs) -> _R_co: ...
    @overload
    def __call__(self, a1: Any, a2: Any, a3: Any, runtime: Runtime, /) -> Any: ...
    @overload
    def __call__(self, a1: Any, a2: Any, a3: Any, /) -> Any: ...


class OptionalRuntime4(Protocol[_P, _R_co]):
    """A signature callable with 4 positional argument(s), with or without a ``Runtime`` after."""

    @overload
    def __call__(self, *args: _P.args, **kwargs: _P.kwargs) -> _R_co: ...
    @overload
    def __call__(self, a1: Any, a2: Any, a3: Any, a4: Any, runtime: Runtime, /) -> Any: ...
    @overload
    def __call__(self, a1: Any, a2: Any, a3: Any, a4: Any, /) -> Any: ...


class OptionalRuntime5(Protocol[_P, _R_co]):
    """A signature callable with 5 positional argument(s), with or without a ``Runtime`` after."""

    @overload
    def __call__(self, *args: _P.args, **kwargs: _P.kwargs) -> _R_co: ...
    @overload
    def __call__(self, a1: Any, a2: Any, a3: Any, a4: Any, a5: Any, runtime: Runtime, /) -> Any: ...
    @overload
    def __call__(self, a1: Any, a2: Any, a3: Any, a4: Any, a5: Any, /) -> Any: ...


# Each overload set is ordered by arity, an optional runtime before a required one, then the
# whole signature. A function matching an earlier form may match later ones too (hence the
# overload-overlap ignores): the first match wins, which is the intent.


class ToolDecorator(Protocol):
    """``@function(...)``: applied to a function, gives its ``Tool``."""

    @overload
    def __call__(  # type: ignore[overload-overlap]
        self, fn: OptionalRuntime1[_P, _R], /
    ) -> Tool[_P, _R]: ...
    @overload
    def __call__(self, fn: Callable[[_A1, Runtime], _R], /) -> Tool[[_A1], _R]: ...
    @overload
    def __call__(  # type: ignore[overload-overlap]
        self, fn: OptionalRuntime2[_P, _R], /
    ) -> Tool[_P, _R]: ...
    @overload
    def __call__(self, fn: Callable[[_A1, _A2, Runtime], _R], /) -> Tool[[_A1, _A2], _R]: ...
    @overload
    def __call__(  # type: ignore[overload-overlap]
        self, fn: OptionalRuntime3[_P, _R], /
    ) -> Tool[_P, _R]: ...
    @overload
    def __call__(
        self, fn: Callable[[_A1, _A2, _A3, Runtime], _R], /
    ) -> Tool[[_A1, _A2, _A3], _R]: ...
    @overload
    def __call__(  # type: ignore[overload-overlap]
        self, fn: OptionalRuntime4[_P, _R], /
    ) -> Tool[_P, _R]: ...
    @overload
    def __call__(
        self, fn: Callable[[_A1, _A2, _A3, _A4, Runtime], _R], /
    ) -> Tool[[_A1, _A2, _A3, _A4], _R]: ...
    @overload
    def __call__(  # type: ignore[overload-overlap]
        self, fn: OptionalRuntime5[_P, _R], /
    ) -> Tool[_P, _R]: ...
    @overload
    def __call__(
        self, fn: Callable[[_A1, _A2, _A3, _A4, _A5, Runtime], _R], /
    ) -> Tool[[_A1, _A2, _A3, _A4, _A5], _R]: ...
    @overload
    def __call__(self, fn: Callable[_P, _R], /) -> Tool[_P, _R]: ...
    def __call__(self, fn: Callable[..., Any], /) -> Tool[..., Any]: ...


class AgenticDecorator(Protocol):
    """``@agentic_function(...)``: applied to a function, gives its ``AgenticFunction``."""

    @overload
    def __call__(  # type: ignore[overload-overlap]
        self, fn: OptionalRuntime1[_P, _R], /
    ) -> AgenticFunction[_P, _R]: ...
    @overload
    def __call__(self, fn: Callable[[_A1, Runtime], _R], /) -> AgenticFunction[[_A1], _R]: ...
    @overload
    def __call__(  # type: ignore[overload-overlap]
        self, fn: OptionalRuntime2[_P, _R], /
    ) -> AgenticFunction[_P, _R]: ...
    @overload
    def __call__(
        self, fn: Callable[[_A1, _A2, Runtime], _R], /
    ) -> AgenticFunction[[_A1, _A2], _R]: ...
    @overload
    def __call__(  # type: ignore[overload-overlap]
        self, fn: OptionalRuntime3[_P, _R], /
    ) -> AgenticFunction[_P, _R]: ...
    @overload
    def __call__(
        self, fn: Callable[[_A1, _A2, _A3, Runtime], _R], /
    ) -> AgenticFunction[[_A1, _A2, _A3], _R]: ...
    @overload
    def __call__(  # type: ignore[overload-overlap]
        self, fn: OptionalRuntime4[_P, _R], /
    ) -> AgenticFunction[_P, _R]: ...
    @overload
    def __call__(
        self, fn: Callable[[_A1, _A2, _A3, _A4, Runtime], _R], /
    ) -> AgenticFunction[[_A1, _A2, _A3, _A4], _R]: ...
    @overload
    def __call__(  # type: ignore[overload-overlap]
        self, fn: OptionalRuntime5[_P, _R], /
    ) -> AgenticFunction[_P, _R]: ...
    @overload
    def __call__(
        self, fn: Callable[[_A1, _A2, _A3, _A4, _A5, Runtime], _R], /
    ) -> AgenticFunction[[_A1, _A2, _A3, _A4, _A5], _R]: ...
    @overload
    def __call__(self, fn: Callable[_P, _R], /) -> AgenticFunction[_P, _R]: ...
    def __call__(self, fn: Callable[..., Any], /) -> AgenticFunction[..., Any]: ...
