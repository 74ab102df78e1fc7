"""``@agentic_function`` and ``AgenticFunction``: a function whose body may run ``runtime.exec``.

The result is called like the original (sync or async, also as a method) and
is a tool too: ``.tool``, ``.spec`` and ``.execute``. A ``runtime`` parameter
the caller leaves out (or passes ``None``) is filled with the current runtime,
else the default one; while the body runs, the function is the current
agentic frame (its ``system`` prompt applies to the execs in it). ``.run`` and
``.arun`` call it as one run tree (``runtime.tree()``, asked of that runtime)
and return its output with the tree's record.
"""

from __future__ import annotations

import contextlib
import functools
import types
from collections.abc import Callable, Coroutine, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Concatenate, Generic, cast, overload

from typing_extensions import ParamSpec, TypeVar

from openprogram.context import (
    AgenticFrame,
    resolve_runtime,
    use_current_frame,
    use_current_runtime,
)
from openprogram.decorators._options import (
    AGENTIC_KEYS,
    SCHEMA_KEYS,
    AgenticOptions,
    available,
    check_options,
    check_target,
    pop_registry,
)
from openprogram.decorators._signatures import (
    AgenticDecorator,
    OptionalRuntime1,
    OptionalRuntime2,
    OptionalRuntime3,
    OptionalRuntime4,
    OptionalRuntime5,
)
from openprogram.exceptions import UserError
from openprogram.schema import FunctionSchema, derive_schema
from openprogram.tools import P, R, Tool, ToolContext, ToolResult

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from openprogram.runtime import Runtime, TreeResult

__all__ = ["AgenticFunction", "agentic_function"]

_P = ParamSpec("_P")
_R = TypeVar("_R")
_S = TypeVar("_S")
_A1 = TypeVar("_A1")
_A2 = TypeVar("_A2")
_A3 = TypeVar("_A3")
_A4 = TypeVar("_A4")
_A5 = TypeVar("_A5")


# Overloaded by arity like ``function`` (see openprogram.decorators._signatures).
@overload
def agentic_function(  # type: ignore[overload-overlap]
    fn: OptionalRuntime1[_P, _R], /, **options: Unpack[AgenticOptions]
) -> AgenticFunction[_P, _R]: ...
@overload
def agentic_function(
    fn: Callable[[_A1, Runtime], _R], /, **options: Unpack[AgenticOptions]
) -> AgenticFunction[[_A1], _R]: ...
@overload
def agentic_function(  # type: ignore[overload-overlap]
    fn: OptionalRuntime2[_P, _R], /, **options: Unpack[AgenticOptions]
) -> AgenticFunction[_P, _R]: ...
@overload
def agentic_function(
    fn: Callable[[_A1, _A2, Runtime], _R], /, **options: Unpack[AgenticOptions]
) -> AgenticFunction[[_A1, _A2], _R]: ...
@overload
def agentic_function(  # type: ignore[overload-overlap]
    fn: OptionalRuntime3[_P, _R], /, **options: Unpack[AgenticOptions]
) -> AgenticFunction[_P, _R]: ...
@overload
def agentic_function(
    fn: Callable[[_A1, _A2, _A3, Runtime], _R], /, **options: Unpack[AgenticOptions]
) -> AgenticFunction[[_A1, _A2, _A3], _R]: ...
@overload
def agentic_function(  # type: ignore[overload-overlap]
    fn: OptionalRuntime4[_P, _R], /, **options: Unpack[AgenticOptions]
) -> AgenticFunction[_P, _R]: ...
@overload
def agentic_function(
    fn: Callable[[_A1, _A2, _A3, _A4, Runtime], _R], /, **options: Unpack[AgenticOptions]
) -> AgenticFunction[[_A1, _A2, _A3, _A4], _R]: ...
@overload
def agentic_function(  # type: ignore[overload-overlap]
    fn: OptionalRuntime5[_P, _R], /, **options: Unpack[AgenticOptions]
) -> AgenticFunction[_P, _R]: ...
@overload
def agentic_function(
    fn: Callable[[_A1, _A2, _A3, _A4, _A5, Runtime], _R], /, **options: Unpack[AgenticOptions]
) -> AgenticFunction[[_A1, _A2, _A3, _A4, _A5], _R]: ...
@overload
def agentic_function(
    fn: Callable[_P, _R], /, **options: Unpack[AgenticOptions]
) -> AgenticFunction[_P, _R]: ...
@overload
def agentic_function(fn: None = None, /, **options: Unpack[AgenticOptions]) -> AgenticDecorator: ...
def agentic_function(
    fn: Callable[..., Any] | None = None, /, **options: Unpack[AgenticOptions]
) -> AgenticFunction[..., Any] | AgenticDecorator:
    """Make a function whose body may run ``runtime.exec``; it is a tool too.

    ``@agentic_function`` or ``@agentic_function(...)``. The result is called
    like the original (sync or async, also as a method); a ``runtime``
    parameter the caller leaves out (or passes ``None``) is filled with the
    current runtime, else the default one.

    Raises:
        SchemaError: The signature cannot become a tool (lists every problem).
        TypeError: An unknown option, or something other than a function to decorate.
        UserError: An invalid option value or a duplicate tool name in the registry.
    """
    check_options(options, AGENTIC_KEYS, "agentic_function")
    if fn is None:
        return cast(AgenticDecorator, lambda f: _make_agentic(f, dict(options)))
    return _make_agentic(fn, dict(options))


def _make_agentic(fn: Callable[..., Any], options: dict[str, Any]) -> AgenticFunction[..., Any]:
    check_target(fn, "agentic_function")
    if not available(options.pop("available_if", True), fn):
        return fn  # type: ignore[return-value] # L1: the undecorated function, by contract
    registry = pop_registry(options)
    system = options.pop("system", None)
    if system is not None and not isinstance(system, str):
        raise UserError(f"system= must be a string (a system prompt), got {type(system).__name__}")
    if not options.pop("as_tool", True):
        if options.get("expose", False):
            raise UserError("as_tool=False and expose=True contradict each other; drop one")
        options["expose"], registry = False, None
    schema_options = {k: options.pop(k) for k in (*SCHEMA_KEYS, "input") if k in options}
    schema = derive_schema(fn, **schema_options)
    agentic: AgenticFunction[..., Any] = AgenticFunction(
        fn, schema=schema, system=system, tool_options=options
    )
    if registry is not None and schema.self_param is None:
        # A method's tool needs an instance: its bound copies are tools, the class attribute is not.
        registry.register(agentic.tool)
    return agentic


class AgenticFunction(Generic[P, R]):
    """A function whose body may run ``runtime.exec``; callable as before, and a tool.

    For type checkers ``AgenticFunction[P, R]`` has the wrapped function's
    parameters minus the runtime one (which callers leave out) and its return type.

    Attributes:
        tool: The ``Tool`` (``kind="agentic"``) a model calls it through.
        system: System prompt its body's ``exec`` calls use unless they pass their own.
    """

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        schema: FunctionSchema,
        system: str | None,
        tool_options: Mapping[str, Any],
    ) -> None:
        functools.update_wrapper(self, fn)
        self._fn = fn
        self._schema = schema
        self._tool_options = dict(tool_options)
        self._frame = AgenticFrame(name=schema.name, system=system)
        self._attr: str | None = None
        self.system = system
        self.tool: Tool[P, R] = Tool(
            name=schema.name, fn=self, schema=schema, kind="agentic", **tool_options
        )

    def __repr__(self) -> str:
        return f"<agentic_function {self._schema.qualname}>"

    # -- the tool surface --------------------------------------------------------------------

    @property
    def spec(self) -> dict[str, Any]:
        """``{"name", "description", "parameters"}`` of its tool."""
        return self.tool.spec

    @property
    def __openprogram_tool__(self) -> Tool:
        """How ``openprogram.tools.to_tool`` recognises it."""
        return self.tool

    async def execute(
        self, args: Mapping[str, Any], context: ToolContext | None = None
    ) -> ToolResult:
        """Validate ``args`` and run it as a tool; never raises for tool-side failures."""
        return await self.tool.execute(args, context)

    # -- calling -----------------------------------------------------------------------------

    @overload
    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R: ...
    @overload
    def __call__(self, *args: Any, runtime: Runtime | None, **kwargs: Any) -> R: ...
    def __call__(self, *args: Any, **kwargs: Any) -> R:
        """Call the function; a missing or ``None`` ``runtime`` is filled in.

        Type checkers see the signature without the runtime parameter, and
        accept an explicit ``runtime=`` keyword (its other arguments unchecked).
        """
        if self._schema.is_async:
            return cast(R, self._acall(args, kwargs))  # R is the coroutine type
        args, runtime = self._with_runtime(args, kwargs)
        with self._scope(runtime):
            return cast(R, self._fn(*args, **kwargs))

    async def _acall(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        # The runtime is resolved when the coroutine runs, in the awaiting task's context.
        args, runtime = self._with_runtime(args, kwargs)
        with self._scope(runtime):
            return await self._fn(*args, **kwargs)

    # -- calling with a record ----------------------------------------------------------------

    # The overloads type the output as the call's: an async function's is what it returns.
    @overload
    def run(
        self: AgenticFunction[_P, Coroutine[Any, Any, _R]], *args: _P.args, **kwargs: _P.kwargs
    ) -> TreeResult[_R]: ...
    @overload
    def run(
        self: AgenticFunction[_P, _R], *args: _P.args, **kwargs: _P.kwargs
    ) -> TreeResult[_R]: ...
    @overload
    def run(
        self: AgenticFunction[..., Coroutine[Any, Any, _R]],
        *args: Any,
        runtime: Runtime | None,
        **kwargs: Any,
    ) -> TreeResult[_R]: ...
    @overload
    def run(
        self: AgenticFunction[..., _R], *args: Any, runtime: Runtime | None, **kwargs: Any
    ) -> TreeResult[_R]: ...
    def run(self, *args: Any, **kwargs: Any) -> TreeResult[Any]:
        """Call it as one run tree: its output with the record of the execs its body ran.

        The same call as ``self(*args, **kwargs)`` (an async function is run to
        completion), inside ``runtime.tree()`` of the runtime it uses: its execs
        share one budget, and the returned ``TreeResult`` holds ``output``, each
        exec's ``RunResult`` (``runs``), the usage and the events
        (docs/trees.md). Inside another tree it is a node of it.

        Example:
            >>> from openprogram import Runtime, agentic_function
            >>> from openprogram.testing import ScriptedProvider
            >>> @agentic_function(register_globally=False)
            ... def greet(name: str, runtime: Runtime) -> str:
            ...     "Greet someone."
            ...     return runtime.exec(f"Greet {name}.", tools=[])
            >>> with Runtime(ScriptedProvider(["Hello, Ann!"])):
            ...     result = greet.run("Ann")
            >>> result.output, result.runs[0].iterations
            ('Hello, Ann!', 1)
        """
        return cast("TreeResult[Any]", self._tree(args, kwargs).call(self, *args, **kwargs))

    @overload
    async def arun(
        self: AgenticFunction[_P, Coroutine[Any, Any, _R]], *args: _P.args, **kwargs: _P.kwargs
    ) -> TreeResult[_R]: ...
    @overload
    async def arun(
        self: AgenticFunction[_P, _R], *args: _P.args, **kwargs: _P.kwargs
    ) -> TreeResult[_R]: ...
    @overload
    async def arun(
        self: AgenticFunction[..., Coroutine[Any, Any, _R]],
        *args: Any,
        runtime: Runtime | None,
        **kwargs: Any,
    ) -> TreeResult[_R]: ...
    @overload
    async def arun(
        self: AgenticFunction[..., _R], *args: Any, runtime: Runtime | None, **kwargs: Any
    ) -> TreeResult[_R]: ...
    async def arun(self, *args: Any, **kwargs: Any) -> TreeResult[Any]:
        """``run`` for async code: a sync function's body runs on a worker thread, so
        ``asyncio.gather`` of several ``arun`` calls runs them at once."""
        tree = self._tree(args, kwargs)
        return cast("TreeResult[Any]", await tree.acall(self, *args, **kwargs))

    def _tree(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """A new tree of the runtime this call uses (explicit, current, else default)."""
        param = self._schema.runtime_param
        explicit = None
        if param is not None:
            index = self._schema.positional_index(param)
            explicit = args[index] if index < len(args) else kwargs.get(param)
        return resolve_runtime(explicit).tree()

    def _with_runtime(
        self, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[tuple[Any, ...], Any]:
        """Fill the runtime parameter in place; return the args and the runtime (or ``_NONE``)."""
        param = self._schema.runtime_param
        if param is None:
            return args, _NONE
        index = self._schema.positional_index(param)
        if index < len(args):
            runtime = resolve_runtime(args[index])
            return (*args[:index], runtime, *args[index + 1 :]), runtime
        runtime = resolve_runtime(kwargs.get(param))
        kwargs[param] = runtime
        return args, runtime

    @contextmanager
    def _scope(self, runtime: Any) -> Iterator[None]:
        with use_current_frame(self._frame):
            if runtime is _NONE or runtime is None:
                yield
            else:
                with use_current_runtime(runtime):
                    yield

    # -- methods -----------------------------------------------------------------------------

    def __set_name__(self, owner: type, name: str) -> None:
        self._attr = name

    @overload
    def __get__(self, obj: None, objtype: type | None = None) -> AgenticFunction[P, R]: ...
    @overload
    def __get__(
        self: AgenticFunction[Concatenate[_S, _P], _R], obj: _S, objtype: type | None = None
    ) -> AgenticFunction[_P, _R]: ...
    def __get__(self, obj: Any, objtype: type | None = None) -> AgenticFunction[..., Any]:
        if obj is None:
            return self
        bound: AgenticFunction[..., Any] = AgenticFunction(
            types.MethodType(self._fn, obj),
            schema=self._schema.bound(),
            system=self.system,
            tool_options=self._tool_options,
        )
        if self._attr is not None:
            # Cache on the instance (a non-data descriptor: the instance dict wins next time);
            # an instance without __dict__ (slots) binds afresh on each access.
            with contextlib.suppress(TypeError):
                vars(obj)[self._attr] = bound
        return bound


_NONE: Any = object()
"""No runtime parameter at all (distinct from a runtime that resolved to ``None``)."""
