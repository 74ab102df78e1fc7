"""Structured-output options: ``response_format=`` normalised, and how the answer is obtained.

``output_schema`` turns a type (a pydantic model class, a dataclass, a
``TypedDict``, ``list[int]``, ``Literal[...]``, a union, ...: what a tool
parameter may be) or a JSON Schema dict into an ``OutputSchema`` (the schema,
how to validate it, how it travels); ``choose_strategy`` picks native,
submit-tool or prompt for a provider.
"""

from __future__ import annotations

import re
import sys
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, TypeGuard

from openprogram.exceptions import (
    InvalidSchemaError,
    UnsupportedStructuredOutputError,
    UserError,
    ValidationFailedError,
)
from openprogram.providers.base import ResponseFormat
from openprogram.schema import json_schema_violations
from openprogram.schema._literal import exact_model_validator
from openprogram.schema._strict import JSONViolations, validate_strict
from openprogram.schema._value import UnsupportedTypeError, ValueSchema, value_schema
from openprogram.structured._parse import parse_json_answer

if TYPE_CHECKING:  # pydantic proper is only needed once a caller hands in a model class
    import pydantic

__all__ = [
    "SUBMIT_TOOL_NAME",
    "OutputSchema",
    "Strategy",
    "StructuredFallback",
    "choose_strategy",
    "is_model_class",
    "is_type",
    "output_schema",
]

Strategy: TypeAlias = Literal["native", "tool", "prompt"]
"""How a structured answer is obtained from the provider."""

StructuredFallback: TypeAlias = Literal["tool", "prompt"] | None
"""What to use when the provider has no native structured output (``None``: nothing)."""

SUBMIT_TOOL_NAME = "submit_result"
"""Name of the hidden submit tool (suffixed when a caller's tool already has it)."""

_WRAP_KEY = "result"
_SCHEMA_NAME = re.compile(r"[^a-zA-Z0-9_-]")


@dataclass(frozen=True, slots=True, kw_only=True)
class OutputSchema:
    """A normalised ``response_format``: the schema, how to validate, how it travels."""

    name: str
    """Short identifier for providers (letters, digits, ``_``, ``-``)."""
    schema: Mapping[str, Any]
    """The JSON Schema of the answer, as the caller gave it or pydantic derived it."""
    model: type[pydantic.BaseModel] | None = field(default=None, repr=False)
    """The pydantic model class validating the answer, if one was given."""
    value_type: ValueSchema | None = field(default=None, repr=False)
    """The type validating the answer, when another type than a model class was given."""

    @property
    def wrapped(self) -> bool:
        """Whether the answer travels as ``{"result": value}`` (its root is not an object).

        Providers and tool parameters need an object at the root; any other
        schema is wrapped on the wire and unwrapped before validation.
        """
        return self.schema.get("type") != "object"

    @property
    def wire_schema(self) -> dict[str, Any]:
        """The object schema sent to providers (native format or submit tool parameters)."""
        if not self.wrapped:
            return dict(self.schema)
        inner = dict(self.schema)
        # References like "#/$defs/X" resolve against the document root: keep them there.
        hoisted: dict[str, Any] = {
            k: inner.pop(k) for k in ("$schema", "$defs", "definitions") if k in inner
        }
        return {
            "type": "object",
            "properties": {_WRAP_KEY: inner},
            "required": [_WRAP_KEY],
            "additionalProperties": False,
            **hoisted,
        }

    def response_format(self) -> ResponseFormat:
        """The provider-neutral native structured-output request."""
        return ResponseFormat(name=self.name, schema=self.wire_schema)

    def unwrap(self, value: Any) -> Any:
        """Take the answer out of its ``{"result": ...}`` wrapper, if it travelled in one.

        A model that skipped the wrapper is not punished: a value that is not a
        one-key wrapper object is taken to be the answer itself.
        """
        if self.wrapped and isinstance(value, dict) and set(value) == {_WRAP_KEY}:
            return value[_WRAP_KEY]
        return value

    def validate(self, value: Any, *, raw: str | None = None) -> Any:
        """Validate a JSON value against the schema.

        Args:
            value: The decoded JSON answer (already unwrapped).
            raw: The answer as the model wrote it, kept on the error.

        Returns:
            A value of the type when a type was given (a model or dataclass instance,
            a ``list[int]``, ...), else ``value`` itself.

        Raises:
            ValidationFailedError: ``value`` does not conform; ``.violations`` lists why.
        """
        # JSON from a model, checked as the schema it was shown reads it (no lax coercions).
        allowed = list(self.schema.get("properties") or ())
        if self.model is not None:
            validator = exact_model_validator(self.model)
            try:
                return validate_strict(
                    value, validator.validate_json, validator.validate_python, allowed
                )
            except JSONViolations as exc:
                violations = exc.violations
        elif self.value_type is not None:
            try:
                return self.value_type.validate(value, allowed)
            except JSONViolations as exc:
                violations = exc.violations
        else:
            violations = json_schema_violations(dict(self.schema), value)
            if not violations:
                return value
        violations = [_as_field(v) for v in violations]
        raise ValidationFailedError(
            f"the answer does not match the {self.name!r} schema:\n"
            + "\n".join(f"  - {v}" for v in violations),
            violations=violations,
            raw=raw,
        )

    def parse(self, text: str) -> Any:
        """Decode and validate an answer written as text (native and prompt strategies).

        Raises:
            InvalidJSONError: No JSON value could be read from ``text``.
            ValidationFailedError: The JSON does not conform to the schema.
        """
        return self.validate(self.unwrap(parse_json_answer(text)), raw=text)

    def dump(self, value: Any) -> Any:
        """A validated answer back as plain Python data (a model or dataclass as a ``dict``)."""
        if self.model is not None:
            return value.model_dump()
        if self.value_type is not None:
            return self.value_type.dump(value)
        return value


def output_schema(response_format: Any, *, where: str = "response_format") -> OutputSchema:
    """Normalise ``response_format=`` into an ``OutputSchema``.

    Args:
        response_format: A type (a pydantic model class, dataclass, ``TypedDict``,
            ``list[int]``, ``Literal[...]``, a union, ...), a JSON Schema dict, or an
            ``OutputSchema``.
        where: How error messages name the value (e.g. ``"choices['x']"``).

    Raises:
        InvalidSchemaError: It is none of those, the type has no JSON Schema, or the
            dict is not a valid JSON Schema.
    """
    if isinstance(response_format, OutputSchema):
        return response_format
    if is_model_class(response_format):
        # Already imported: the caller's model class could not exist otherwise.
        from pydantic.errors import PydanticUserError  # noqa: PLC0415

        from openprogram.schema._generator import JsonSchemaGenerator  # noqa: PLC0415

        try:
            schema = response_format.model_json_schema(schema_generator=JsonSchemaGenerator)
        except PydanticUserError as exc:
            raise InvalidSchemaError(
                f"{where}: {response_format.__qualname__} has no JSON Schema: {exc}"
            ) from exc
        return OutputSchema(
            name=_schema_name(response_format.__name__), schema=schema, model=response_format
        )
    if isinstance(response_format, Mapping):
        schema = dict(response_format)
        _check_schema(schema, where)
        title = schema.get("title")
        return OutputSchema(
            name=_schema_name(title if isinstance(title, str) else "response"), schema=schema
        )
    if is_type(response_format):
        return _type_output(response_format, where)
    raise InvalidSchemaError(
        f"{where}={response_format!r:.80} is not usable: pass a type (a pydantic model, "
        "dataclass or TypedDict class, list[int], Literal[...], a union, ...: the answer comes "
        'back as a value of it) or a JSON Schema dict such as {"type": "object", ...}'
    )


def is_type(obj: Any) -> bool:
    """Whether ``obj`` is a class or a typing form (``list[int]``, ``Literal``, ``A | B``)."""
    return (
        isinstance(obj, type)
        or typing.get_origin(obj) is not None
        or isinstance(obj, typing.NewType)
    )


def _type_output(tp: Any, where: str) -> OutputSchema:
    try:
        value_type = value_schema(tp)
    except UnsupportedTypeError as exc:
        problems = "; ".join(exc.problems)
        raise InvalidSchemaError(
            f"{where}={_type_name(tp)} has no JSON Schema: {problems}"
        ) from exc
    # Imported here: pydantic is about to be needed anyway, to build the schema.
    from pydantic.errors import PydanticUserError  # noqa: PLC0415
    from pydantic_core import SchemaError  # noqa: PLC0415

    try:
        schema = value_type.json_schema
    except (PydanticUserError, SchemaError) as exc:  # what the structural walk could not see
        reason = str(exc).strip().split("\n", 1)[0]
        raise InvalidSchemaError(f"{where}={_type_name(tp)} has no JSON Schema: {reason}") from exc
    name = tp.__name__ if isinstance(tp, type) else "response"
    return OutputSchema(name=_schema_name(name), schema=schema, value_type=value_type)


def _type_name(tp: Any) -> str:
    if isinstance(tp, type) and typing.get_origin(tp) is None:
        return tp.__qualname__
    return repr(tp).replace("typing.", "")


def choose_strategy(provider: Any, fallback: StructuredFallback = "tool") -> Strategy:
    """Pick how to obtain structured output from ``provider``.

    Args:
        provider: The provider; its ``native_structured_output`` flag is read.
        fallback: What to use without native support: ``"tool"`` (a hidden submit
            tool), ``"prompt"`` (instructions in the prompt) or ``None`` (nothing).

    Raises:
        UserError: ``fallback`` is not one of those values.
        UnsupportedStructuredOutputError: No native support and ``fallback`` is ``None``.
    """
    if fallback not in ("tool", "prompt", None):
        raise UserError(
            f"structured_fallback={fallback!r} is not supported: use 'tool' (default, a hidden "
            "submit tool), 'prompt' (instructions in the prompt) or None (native only)"
        )
    if getattr(provider, "native_structured_output", False) is True:
        return "native"
    if fallback is None:
        name = getattr(provider, "name", type(provider).__name__)
        raise UnsupportedStructuredOutputError(
            f"provider {name!r} has no native structured output and structured_fallback=None "
            "allows no fallback; pass structured_fallback='tool' or 'prompt'"
        )
    return fallback


def is_model_class(obj: Any) -> TypeGuard[type[pydantic.BaseModel]]:
    """Whether ``obj`` is a pydantic model class (without importing pydantic to find out)."""
    module = sys.modules.get("pydantic")
    return module is not None and isinstance(obj, type) and issubclass(obj, module.BaseModel)


def _as_field(violation: str) -> str:
    # The shared validators speak of tool "arguments"; an answer's top-level keys are fields.
    return violation.replace(": missing required argument", ": missing required field").replace(
        ": unexpected argument", ": unexpected field"
    )


def _check_schema(schema: dict[str, Any], where: str) -> None:
    # Imported here: jsonschema costs ~70 ms to import and only dict schemas need it.
    import jsonschema  # type: ignore[import-untyped, unused-ignore]  # noqa: PLC0415 - no stubs

    validator = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        validator.check_schema(schema)
    except jsonschema.SchemaError as exc:
        path = "/".join(str(p) for p in exc.absolute_path) or "(root)"
        raise InvalidSchemaError(
            f"{where}: not a valid JSON Schema at {path}: {exc.message}"
        ) from exc


def _schema_name(name: str) -> str:
    return _SCHEMA_NAME.sub("_", name)[:64] or "response"
