"""``FunctionSchema``: one function's model-facing surface and its argument validator.

What :func:`~openprogram.schema.derive_schema` returns. The pydantic
validator, the JSON Schema and the parsed descriptions are built on first use
and cached here, so decorating a thousand functions stays cheap.
"""

from __future__ import annotations

import sys
import types
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from openprogram.schema import _docs
from openprogram.schema._errors import json_schema_violations
from openprogram.schema._fast import NO_DEFAULT, FieldSpec, fast_json_schema
from openprogram.schema._literal import exact_validator
from openprogram.schema._read import Visible
from openprogram.schema._signature import EMPTY
from openprogram.schema._strict import JSONViolations, duplicate_check, validate_strict

if TYPE_CHECKING:
    from pydantic import TypeAdapter

__all__ = ["ArgumentsError", "FunctionSchema", "unwrap", "warn_no_description"]


class ArgumentsError(ValueError):
    """Arguments a model supplied do not fit the parameters.

    Attributes:
        violations: Every problem, each as ``"path: message"``.
    """

    def __init__(self, violations: Sequence[str]) -> None:
        self.violations = tuple(violations)
        super().__init__("; ".join(self.violations))


class _Lazy:
    """What is built on first use; shared by a schema and its bound-method copies."""

    __slots__ = (
        "adapter",
        "doc",
        "duplicates",
        "fields",
        "json",
        "validate_json",
        "validate_python",
    )

    def __init__(self) -> None:
        self.duplicates: Callable[[Mapping[str, Any]], list[str]] | None = None
        self.adapter: TypeAdapter[dict[str, Any]] | None = None
        self.validate_json: Callable[..., dict[str, Any]] | None = None
        self.validate_python: Callable[..., dict[str, Any]] | None = None
        self.json: dict[str, Any] | None = None
        self.doc: _docs.DocInfo | None = None
        self.fields: list[FieldSpec] | None = None


class FunctionSchema:
    """The model-facing surface of one Python function, and its argument validator.

    Attributes:
        name: Tool name (``fn.__name__`` unless given).
        qualname: ``module.qualname`` of the function, for messages.
        is_async: Whether calling the function returns a coroutine.
        runtime_param: Name of the hidden ``runtime`` parameter, if any.
        context_param: Name of the hidden ``ToolContext`` parameter, if any.
        self_param: ``"self"`` or ``"cls"`` when the first parameter is one (a method
            not bound yet), else ``None``.
    """

    __slots__ = (
        "_allowed",
        "_description",
        "_doc",
        "_lazy",
        "_names",
        "_override",
        "_positions",
        "_visible",
        "context_param",
        "is_async",
        "name",
        "qualname",
        "runtime_param",
        "self_param",
    )

    def __init__(
        self,
        *,
        name: str,
        qualname: str,
        is_async: bool,
        visible: list[Visible],
        positions: dict[str, int],
        doc: str | None,
        description: str | None,
        override: dict[str, Any] | None,
        runtime_param: str | None,
        context_param: str | None,
        self_param: str | None = None,
    ) -> None:
        self.name = name
        self.qualname = qualname
        self.is_async = is_async
        self.runtime_param = runtime_param
        self.context_param = context_param
        self.self_param = self_param
        self._visible = visible
        self._allowed = frozenset(v.name for v in visible)
        self._names = [v.name for v in visible]
        self._positions = positions
        self._doc = doc
        self._description = description
        self._override = override
        self._lazy = _Lazy()

    def __repr__(self) -> str:
        return f"FunctionSchema({self.name!r}, params={[v.name for v in self._visible]})"

    @property
    def description(self) -> str:
        """Docstring summary and long description (the function name when there is none)."""
        if self._description is None:
            text = self._docinfo().description
            if not text:  # only with parameters=: derive_schema warned about the others
                warn_no_description(self.qualname, self.name, None)
                text = self.name
            self._description = text
        return self._description

    @property
    def parameters(self) -> dict[str, Any]:
        """The JSON Schema object of the arguments (built on first access, then cached)."""
        if self._override is not None:
            return self._override
        lazy = self._lazy
        if lazy.json is None:
            fields = self._fields()
            lazy.json = fast_json_schema(fields)
            if lazy.json is None:
                from openprogram.schema._build import build_json_schema  # noqa: PLC0415 - lazy

                lazy.json = build_json_schema(self._adapter(), fields)
        return lazy.json

    def validate(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """Check model-supplied ``args``; return keyword arguments for the function.

        ``args`` is JSON data (a model's arguments, decoded) and is checked as the
        JSON Schema in :attr:`parameters` reads it, without pydantic's lax coercions
        (see ``docs/concepts.md``, "What the model may send"). Nested models,
        dataclasses, enums, dates and the like come back instantiated; arguments the
        model omitted are left out, so the function's own defaults apply.

        Raises:
            ArgumentsError: Listing every violation as ``"path: message"``.
        """
        if self._override is not None:
            violations = json_schema_violations(self._override, args)
            if violations:
                raise ArgumentsError(violations)
            return dict(args)
        lazy = self._lazy
        if lazy.validate_json is None or lazy.validate_python is None:
            self._build_validator()
        assert lazy.validate_json is not None
        assert lazy.validate_python is not None
        mapping = type(args) is dict or isinstance(args, Mapping)
        # Unknown top-level keys are checked here rather than with extra="forbid", which
        # pydantic would also apply to nested dataclasses and TypedDicts without saying
        # so in their JSON Schema.
        extra = [] if not mapping or args.keys() <= self._allowed else _extra(args, self._visible)
        repeated = lazy.duplicates(args) if lazy.duplicates is not None and mapping else []
        try:
            # JSON from a model, validated as the JSON Schema it was shown reads it.
            kwargs = validate_strict(args, lazy.validate_json, lazy.validate_python, self._names)
        except JSONViolations as exc:
            raise ArgumentsError([*exc.violations, *repeated, *extra]) from None
        if repeated or extra:
            raise ArgumentsError([*repeated, *extra])
        return kwargs

    def positional_index(self, param: str) -> int:
        """Position of ``param`` among the positional parameters (``sys.maxsize`` if none)."""
        return self._positions.get(param, sys.maxsize)

    def bound(self) -> FunctionSchema:
        """The same schema for the function bound to an instance (first parameter consumed)."""
        copy = object.__new__(FunctionSchema)
        for slot in FunctionSchema.__slots__:
            object.__setattr__(copy, slot, getattr(self, slot))
        copy._positions = {k: i - 1 for k, i in self._positions.items() if i > 0}
        copy.self_param = None
        return copy

    # -- lazy builders ------------------------------------------------------------------

    def _docinfo(self) -> _docs.DocInfo:
        if self._lazy.doc is None:
            self._lazy.doc = _docs.parse(self._doc)
        return self._lazy.doc

    def _fields(self) -> list[FieldSpec]:
        lazy = self._lazy
        if lazy.fields is None:
            docs = self._docinfo().params
            lazy.fields = [
                FieldSpec(
                    name=v.name,
                    annotation=v.annotation,
                    default=NO_DEFAULT if v.default is EMPTY else v.default,
                    doc=docs.get(v.name),
                    override=v.description,
                    options=v.options,
                )
                for v in self._visible
            ]
        return lazy.fields

    def _build_validator(self) -> None:
        lazy = self._lazy
        lazy.duplicates = duplicate_check({v.name: v.annotation for v in self._visible})
        adapter = self._adapter()
        # The arguments TypedDict has no config of its own: the core schema says it all.
        validator = exact_validator(adapter.core_schema) or adapter.validator
        lazy.validate_python = validator.validate_python
        lazy.validate_json = validator.validate_json

    def _adapter(self) -> TypeAdapter[dict[str, Any]]:
        lazy = self._lazy
        if lazy.adapter is None:
            # Imported on first use: pydantic's schema machinery costs ~60 ms to import.
            from openprogram.schema._build import build_adapter  # noqa: PLC0415

            lazy.adapter = build_adapter(self.name, self._fields())
        return lazy.adapter


def _extra(args: Mapping[str, Any], visible: list[Visible]) -> list[str]:
    allowed = {v.name for v in visible}
    names = ", ".join(v.name for v in visible) or "none"
    return [f"{k}: unexpected argument (allowed: {names})" for k in args if k not in allowed]


def unwrap(fn: Any) -> Any:
    """The function behind a bound method or ``functools.partial``."""
    if type(fn) is types.FunctionType:
        return fn
    for _ in range(16):
        inner = getattr(fn, "func", None) if hasattr(fn, "keywords") else None
        inner = inner or getattr(fn, "__func__", None)
        if inner is None:
            return fn
        fn = inner
    return fn


def warn_no_description(qualname: str, name: str, fn: Any) -> None:
    message = (
        f"{qualname} has no description (empty docstring); the tool is described to the model "
        f"as {name!r}. Add a docstring or pass description=..."
    )
    code = getattr(unwrap(fn), "__code__", None)
    if isinstance(code, types.CodeType):
        # Point at the function definition, wherever the decorator was applied from.
        warnings.warn_explicit(message, UserWarning, code.co_filename, code.co_firstlineno)
    else:
        warnings.warn(message, UserWarning, stacklevel=4)
