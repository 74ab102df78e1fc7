"""One value of any type the schema layer accepts: its JSON Schema and a strict validator.

A tool's arguments are an object of named values, each of a type its
signature names; a structured answer (``exec(response_format=list[int])``) is
one value of such a type. Both are read the same way: the structural walk of
``_signature`` says at once whether the type can be a JSON Schema, pydantic
builds the schema and the validator on first use, and validation reads the
value as JSON, strictly, as the schema it was shown says (``_strict``,
``_literal``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from openprogram.schema._literal import exact_validator
from openprogram.schema._strict import validate_strict
from openprogram.schema._walk import type_problems

if TYPE_CHECKING:
    from pydantic import TypeAdapter

__all__ = ["UnsupportedTypeError", "ValueSchema", "value_schema"]

_MAX_CACHED = 256


class UnsupportedTypeError(TypeError):
    """A type that cannot become a JSON Schema; ``problems`` says why, one line each."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = tuple(problems)
        super().__init__("; ".join(self.problems))


class ValueSchema:
    """The JSON Schema of one type, and the validator turning JSON values into it.

    Built through :func:`value_schema`, which checks the type first.
    """

    __slots__ = ("_adapter", "_json", "_lock", "_validate_json", "_validate_python", "annotation")

    def __init__(self, annotation: Any) -> None:
        self.annotation = annotation
        """The type, as given."""
        self._adapter: TypeAdapter[Any] | None = None
        self._json: dict[str, Any] | None = None
        self._validate_json: Callable[..., Any] | None = None
        self._validate_python: Callable[..., Any] | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"ValueSchema({self.annotation!r})"

    @property
    def json_schema(self) -> dict[str, Any]:
        """The JSON Schema of a value (built on first access, then cached)."""
        if self._json is None:
            from openprogram.schema._generator import JsonSchemaGenerator  # noqa: PLC0415 - lazy

            self._json = self._type_adapter().json_schema(schema_generator=JsonSchemaGenerator)
        return self._json

    def validate(self, value: Any, allowed: Sequence[str] = ()) -> Any:
        """``value`` (decoded JSON) as the type, read strictly as the JSON Schema says.

        Args:
            value: The JSON value.
            allowed: The top-level property names, for the "unexpected" hint.

        Raises:
            JSONViolations: Every problem, each as ``"path: message"``.
        """
        if self._validate_json is None or self._validate_python is None:
            adapter = self._type_adapter()
            validator = exact_validator(adapter.core_schema) or adapter.validator
            self._validate_python = validator.validate_python
            self._validate_json = validator.validate_json
        return validate_strict(value, self._validate_json, self._validate_python, allowed)

    def dump(self, value: Any) -> Any:
        """A validated value back as plain Python data (a dataclass as a ``dict``)."""
        return self._type_adapter().dump_python(value)

    def _type_adapter(self) -> TypeAdapter[Any]:
        if self._adapter is None:
            # Imported on first use: pydantic's schema machinery costs ~60 ms to import.
            from pydantic import TypeAdapter  # noqa: PLC0415

            with self._lock:
                if self._adapter is None:
                    self._adapter = TypeAdapter(self.annotation)
        return self._adapter


_cache: dict[Any, ValueSchema] = {}
_cache_lock = threading.Lock()


def value_schema(annotation: Any) -> ValueSchema:
    """The ``ValueSchema`` of ``annotation``.

    The same types as a tool parameter: scalars, ``list``/``tuple``/``set``,
    ``dict[str, T]``, ``Literal``, ``Enum``, unions, pydantic models,
    dataclasses, ``TypedDict`` classes, ``Annotated`` constraints, nested.
    Hashable types are cached, so asking again costs a lookup.

    Raises:
        UnsupportedTypeError: Listing every problem keeping it from a JSON Schema.
    """
    try:
        found = _cache.get(annotation)
    except TypeError:  # an unhashable annotation (metadata objects) is simply built anew
        found, hashable = None, False
    else:
        hashable = True
    if found is not None:
        return found
    problems = type_problems(annotation)
    if problems:
        raise UnsupportedTypeError(problems)
    made = ValueSchema(annotation)
    if hashable:
        with _cache_lock:
            if len(_cache) < _MAX_CACHED:
                made = _cache.setdefault(annotation, made)
    return made
