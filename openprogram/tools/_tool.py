"""``Tool``, the one unit every layer handles.

A ``Tool`` couples a model-facing surface (name, description, JSON Schema
parameters) with a way to run it (a Python function, or an ``execute``
callable for hand-written specs) and the metadata the gates read.
``await tool.execute(args)`` validates, runs and never raises for tool-side
failures: bad arguments, exceptions and timeouts come back as
``ToolResult(is_error=True)`` with a text the model can act on.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Generic, Literal, TypeAlias, cast

from typing_extensions import ParamSpec, TypeVar

from openprogram._tool_types import (
    TOOL_NAME_PATTERN,
    ToolContext,
    ToolResult,
    takes_context,
    truncate,
)
from openprogram.context import resolve_runtime, use_current_frame
from openprogram.exceptions import UserError
from openprogram.schema import ArgumentsError, FunctionSchema, derive_schema, json_schema_violations

__all__ = [
    "DEFAULT_MAX_RESULT_CHARS",
    "ApprovalRule",
    "P",
    "R",
    "Tool",
    "ToolEffect",
    "ToolKind",
    "ToolLike",
]

DEFAULT_MAX_RESULT_CHARS = 30_000

ToolKind: TypeAlias = Literal["function", "agentic"]
ToolEffect: TypeAlias = Literal["idempotent", "side_effect"]
"""What running a call again after an unknown outcome may do (docs/durable.md, "Effects")."""
ApprovalRule: TypeAlias = bool | Callable[[Mapping[str, Any]], "bool | str"]
ToolLike: TypeAlias = Any
"""A ``Tool``, an agentic function, a plain callable, a ``{"spec", "execute"}`` dict,
or an object with ``.spec`` and ``.execute``."""


ExecuteFn: TypeAlias = Callable[..., Any]

P = ParamSpec("P", default=...)
"""The parameters of the wrapped function as its Python callers see them."""
R = TypeVar("R", default=Any)
"""What calling the wrapped function returns (the coroutine, for ``async def``)."""


class Tool(Generic[P, R]):
    """A named, described, gated callable the model can pick.

    Construct with keyword arguments (see ``docs/design.md``), or get one from
    ``@function``, ``Tool.from_function`` or ``to_tool``. ``parameters`` and
    ``description`` of function tools are derived lazily on first access.

    For type checkers ``Tool[P, R]`` carries the wrapped function's parameters
    and return type, so calling a tool is checked like calling the function; a
    bare ``Tool`` (a hand-written spec, a registry's contents) is
    ``Tool[..., Any]``.
    """

    __slots__ = (
        "__weakref__",
        "_cache",
        "_description",
        "_execute",
        "_parameters",
        "_schema",
        "cache",
        "cache_ttl",
        "can_use",
        "check_fn",
        "defer",
        "effect",
        "expose",
        "fn",
        "kind",
        "label",
        "max_result_chars",
        "name",
        "origin",
        "parallel_safe",
        "requires_approval",
        "requires_env",
        "summary",
        "timeout",
        "toolset",
        "unsafe_in",
    )

    def __init__(
        self,
        *,
        name: str,
        description: str | None = None,
        parameters: Mapping[str, Any] | None = None,
        fn: Callable[P, R] | None = None,
        kind: ToolKind = "function",
        expose: bool = True,
        toolset: str | Sequence[str] = (),
        unsafe_in: str | Sequence[str] = (),
        check_fn: Callable[[], bool] | None = None,
        requires_env: str | Sequence[str] = (),
        can_use: Callable[[Any], bool] | None = None,
        defer: bool = False,
        requires_approval: ApprovalRule = False,
        parallel_safe: bool = True,
        timeout: float | None = None,
        max_result_chars: int = DEFAULT_MAX_RESULT_CHARS,
        label: str | None = None,
        cache: bool = False,
        cache_ttl: float | None = None,
        summary: str | None = None,
        effect: ToolEffect = "idempotent",
        origin: str | None = None,
        schema: FunctionSchema | None = None,
        execute: ExecuteFn | None = None,
    ) -> None:
        if not isinstance(name, str) or not TOOL_NAME_PATTERN.match(name):
            raise UserError(
                f"invalid tool name {name!r}: providers accept 1-64 characters of "
                "letters, digits, '_' and '-' (^[a-zA-Z0-9_-]{1,64}$); pass name=... to choose one"
            )
        if fn is None and execute is None and schema is None:
            raise UserError(f"tool {name!r} has nothing to run: give fn=, execute= or schema=")
        if timeout is not None and timeout <= 0:
            raise UserError(f"tool {name!r}: timeout must be > 0 seconds, got {timeout!r}")
        if effect not in ("idempotent", "side_effect"):
            raise UserError(
                f"tool {name!r}: effect={effect!r} is not an effect: use 'idempotent' (run it "
                "again after a crash; the default) or 'side_effect' (never run it twice)"
            )
        if max_result_chars < 200:
            raise UserError(
                f"tool {name!r}: max_result_chars must be >= 200, got {max_result_chars}"
            )
        self.name = name
        self._description = description
        self._parameters = dict(parameters) if parameters is not None else None
        self._schema = schema
        self._execute = execute
        self.fn = fn
        self.kind: ToolKind = kind
        self.expose = expose
        self.toolset = _names(toolset)
        self.unsafe_in = _names(unsafe_in)
        self.check_fn = check_fn
        self.requires_env = _names(requires_env)
        self.can_use = can_use
        self.defer = defer
        self.requires_approval: ApprovalRule = requires_approval
        self.parallel_safe = parallel_safe
        self.timeout = timeout
        self.max_result_chars = max_result_chars
        self.label = label
        self.cache = cache
        self.cache_ttl = cache_ttl
        self.summary = summary
        self.effect: ToolEffect = effect
        self.origin = origin or _origin_of(fn)
        self._cache: dict[str, tuple[float, ToolResult]] | None = {} if cache else None

    # -- model-facing surface -------------------------------------------------------------

    @property
    def description(self) -> str:
        """Model-facing description (derived from the docstring for function tools)."""
        if self._description is None:
            self._description = self._schema.description if self._schema else self.name
        return self._description

    @property
    def parameters(self) -> dict[str, Any]:
        """JSON Schema object of the arguments."""
        if self._parameters is None:
            if self._schema is None:
                self._parameters = {
                    "type": "object",
                    "properties": {},
                    "additionalProperties": False,
                }
            else:
                self._parameters = self._schema.parameters
        return self._parameters

    @property
    def spec(self) -> dict[str, Any]:
        """``{"name", "description", "parameters"}``, provider-neutral."""
        return {"name": self.name, "description": self.description, "parameters": self.parameters}

    @property
    def one_liner(self) -> str:
        """Name and first description line, for catalogs of deferred tools."""
        text = self.summary or self.description.strip().split("\n", 1)[0]
        return f"{self.name}: {text}" if text else self.name

    @property
    def reads_context(self) -> bool:
        """Whether its body is given the call's ``ToolContext`` (a ``ToolContext`` parameter,
        or an ``execute`` callable taking the context): it may read ``idempotency_key``."""
        if self._schema is not None and self._execute is None:
            return self._schema.context_param is not None
        return self._execute is not None and takes_context(self._execute)

    @property
    def is_loaded(self) -> bool:
        """Whether the tool is importable and ready (lazy cards override this)."""
        return True

    def load(self) -> Tool:
        """The runnable tool (lazy cards import their target here)."""
        return self

    def __repr__(self) -> str:
        flags = [f"kind={self.kind!r}"]
        for field_name in ("toolset", "unsafe_in", "requires_env"):
            if value := getattr(self, field_name):
                flags.append(f"{field_name}={value!r}")
        for field_name in ("check_fn", "can_use"):
            if (value := getattr(self, field_name)) is not None:
                flags.append(f"{field_name}={getattr(value, '__name__', value)!r}")
        if not self.expose:
            flags.append("expose=False")
        if self.defer:
            flags.append("defer=True")
        if self.requires_approval:
            flags.append("requires_approval=True")
        return f"Tool({self.name!r}, {', '.join(flags)})"

    # -- running ---------------------------------------------------------------------------

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        """Call the underlying function directly, like plain Python.

        A ``runtime`` parameter left out or ``None`` is filled with the current
        runtime (type checkers see the signature without it; use ``with runtime:``
        to choose one).
        """
        if self.fn is None:
            raise TypeError(
                f"tool {self.name!r} wraps no Python function; use await tool.execute(args)"
            )
        param = self._schema.runtime_param if self._schema is not None else None
        if param is not None:
            assert self._schema is not None
            # "Missing or None" is filled, whether the runtime is passed by position or name.
            index = self._schema.positional_index(param)
            if index < len(args):
                if args[index] is None:
                    filled = (*args[:index], resolve_runtime(), *args[index + 1 :])
                    return cast("Callable[..., R]", self.fn)(*filled, **kwargs)
            elif kwargs.get(param) is None:
                kwargs[param] = resolve_runtime()
        return self.fn(*args, **kwargs)

    async def execute(
        self, args: Mapping[str, Any], context: ToolContext | None = None
    ) -> ToolResult:
        """Validate ``args``, run the tool and return its result; never raises for tool failures.

        Args:
            args: The arguments the model supplied (a JSON object).
            context: Call context; a fresh one is made when omitted.
        """
        # The body runner needs asyncio (and with it ssl and socket): it loads on the first
        # call of a tool, not at ``import openprogram``.
        from openprogram import _tool_body  # noqa: PLC0415 - deferred for import cost

        context = context if context is not None else ToolContext(tool_name=self.name)
        key = self._cache_key(args)
        if key is not None and (hit := self._cache_get(key)) is not None:
            return hit
        try:
            validated = self._validate(args)
        except ArgumentsError as exc:  # only the model's arguments, never the body's errors
            return ToolResult(
                content=self._invalid_args_text(exc.violations),
                is_error=True,
                error_kind="invalid_arguments",
                violations=tuple(exc.violations),
            )
        except Exception as exc:  # noqa: BLE001 - a broken schema/validator fails this call, not the run
            return _tool_body.failed(self, exc)
        # A tool body is not part of the agentic function whose model called it: execs in
        # it (and in threads it starts) get no agentic system prompt, unless the tool is an
        # agentic function itself, whose call sets its own frame.
        with use_current_frame(None):
            if self._schema is not None and self._execute is None:
                result = await _tool_body.run_function(self, self._schema, validated, context)
            else:
                result = await _tool_body.run_execute(self, self._execute, validated, context)
        if key is not None:
            self._cache_put(key, result)
        return result

    def validate(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """Check ``args`` as if a model sent them; return what the body would receive.

        The same validator ``execute`` uses (the command line checks its arguments
        with it too).

        Raises:
            ArgumentsError: Every problem, each as ``"path: message"``.
        """
        return self._validate(args)

    def _validate(self, args: Mapping[str, Any]) -> dict[str, Any]:
        if not isinstance(args, Mapping):
            kind = type(args).__name__
            raise ArgumentsError([f"(root): expected a JSON object of arguments, got {kind}"])
        if self._schema is not None and self._execute is None:
            return self._schema.validate(args)
        violations = json_schema_violations(self.parameters, dict(args))
        if violations:
            raise ArgumentsError(violations)
        return dict(args)

    def _invalid_args_text(self, violations: Sequence[str]) -> str:
        lines = "\n".join(f"- {v}" for v in violations)
        text = (
            f"Invalid arguments for tool {self.name!r}:\n{lines}\n"
            f"Call {self.name!r} again with arguments that match its parameters schema."
        )
        return truncate(text, self.max_result_chars)

    # -- result cache (cache=True) ---------------------------------------------------------

    def _cache_key(self, args: Mapping[str, Any]) -> str | None:
        if self._cache is None or not isinstance(args, Mapping):
            return None
        try:
            return json.dumps(args, sort_keys=True, default=str)
        except (TypeError, ValueError, RecursionError):  # unencodable arguments: not cached
            return None

    def _cache_get(self, key: str) -> ToolResult | None:
        assert self._cache is not None
        entry = self._cache.get(key)
        if entry is None:
            return None
        stamp, result = entry
        if self.cache_ttl is not None and time.monotonic() - stamp > self.cache_ttl:
            del self._cache[key]
            return None
        return result

    def _cache_put(self, key: str, result: ToolResult) -> None:
        assert self._cache is not None
        if not result.is_error:
            self._cache[key] = (time.monotonic(), result)

    @classmethod
    def from_function(cls, fn: Callable[P, R], **options: Any) -> Tool[P, R]:
        """Make a tool of a plain function, deriving its schema from hints and docstring.

        Args:
            fn: The function.
            **options: Any ``Tool`` field (``name``, ``description``, ``parameters`` and
                ``input`` shape the schema).
        """
        schema = derive_schema(
            fn,
            name=options.pop("name", None),
            description=options.pop("description", None),
            parameters=options.pop("parameters", None),
            input=options.pop("input", None),
        )
        return cls(name=schema.name, fn=fn, schema=schema, **options)


def _names(value: str | Sequence[str]) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    return tuple(value)


def _origin_of(fn: Callable[..., Any] | None) -> str | None:
    if fn is None:
        return None
    module = getattr(fn, "__module__", None) or "?"
    qualname = getattr(fn, "__qualname__", None) or repr(fn)
    return f"{module}.{qualname}"
