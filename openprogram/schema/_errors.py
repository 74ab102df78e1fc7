"""Validation failures as ``"path: message"`` lines a model can act on.

Two sources speak the same dialect: pydantic (function tools, validated with
their own types) and ``jsonschema`` (hand-written specs). Paths join object
keys with ``.`` and list positions with ``[i]``; ``(root)`` is the arguments
object itself. Messages are short and fixed (``expected string``,
``missing required argument``, ``unexpected argument (allowed: a, b)``) so a
model sees the same words whichever validator ran.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from openprogram.exceptions import UserError

if TYPE_CHECKING:  # both libraries are imported lazily (import-time budget)
    from pydantic import ValidationError

# jsonschema ships no type stubs: its validator and error objects are typed loosely here.
Validator = Any
JSONSchemaError = Any

__all__ = ["format_path", "json_schema_violations", "pydantic_violations", "real_path"]

_EXPECTED = {
    "string_type": "string",
    "string_sub_type": "string",
    "bytes_type": "string",
    "int_type": "integer",
    "int_parsing": "integer",
    "float_type": "number",
    "float_parsing": "number",
    "decimal_type": "number",
    "decimal_parsing": "number",
    "bool_type": "boolean",
    "bool_parsing": "boolean",
    "none_required": "null",
    "list_type": "array",
    "tuple_type": "array",
    "set_type": "array",
    "frozen_set_type": "array",
    "dict_type": "object",
    "model_type": "object",
    "model_attributes_type": "object",
    "dataclass_type": "object",
    "dataclass_exact_type": "object",
}
_JSON_TYPES = {
    "string": "string",
    "integer": "integer",
    "number": "number",
    "boolean": "boolean",
    "null": "null",
    "array": "array",
    "object": "object",
}
_PREFIXES = ("Value error, ", "Assertion failed, ")


def format_path(path: Sequence[Any]) -> str:
    """``["stops", 2, "city"]`` -> ``"stops[2].city"``; ``[]`` -> ``"(root)"``."""
    out = ""
    for seg in path:
        if isinstance(seg, int):
            out += f"[{seg}]"
        else:
            out += f".{seg}" if out else str(seg)
    return out or "(root)"


def _missing(path: Sequence[Any]) -> str:
    return "missing required argument" if len(path) == 1 else "missing required field"


def _unexpected(path: Sequence[Any], allowed: Sequence[str]) -> str:
    if len(path) == 1:
        return f"unexpected argument (allowed: {', '.join(allowed) or 'none'})"
    return "unexpected field"


def _either(values: Sequence[Any]) -> str:
    reprs = [repr(v) for v in values]
    return reprs[0] if len(reprs) == 1 else f"{', '.join(reprs[:-1])} or {reprs[-1]}"


# -- pydantic ------------------------------------------------------------------------------


def pydantic_violations(
    exc: ValidationError | Sequence[Mapping[str, Any]], args: Any, allowed: Sequence[str]
) -> list[str]:
    """Every error of ``exc`` as ``"path: message"``, union alternatives merged.

    Args:
        exc: The validation error pydantic raised for ``args``, or some of its errors.
        args: The arguments that were validated (used to tell real path segments
            from the tags pydantic adds for union members).
        allowed: The argument names, for the "unexpected argument" hint.
    """
    plain: list[tuple[int, str]] = []
    unions: dict[tuple[Any, ...], list[tuple[list[Any], str]]] = {}
    errors = exc if isinstance(exc, Sequence) else exc.errors(include_url=False)
    for order, err in enumerate(errors):
        path, union_at = real_path(err["loc"], args, err["type"])
        message = _message(err, path, allowed)
        if union_at is None:
            plain.append((order, f"{format_path(path)}: {message}"))
        else:
            key = tuple(path[:union_at])
            if key not in unions:
                plain.append((order, ""))  # placeholder keeps the union where it first failed
            unions.setdefault(key, []).append((path, message))
    merged = iter(_merge_union(list(key), items) for key, items in unions.items())
    out: list[str] = []
    for _order, text in plain:
        for line in [text] if text else next(merged):
            if line not in out:
                out.append(line)
    return out


def real_path(loc: Sequence[Any], args: Any, err_type: str) -> tuple[list[Any], int | None]:
    """The keys and indices of ``loc`` that exist in ``args``; where a union tag was, if any."""
    # pydantic puts a tag naming the member (e.g. "int", "Address") into `loc` for every
    # union member it tried; the input tells real keys and indices from those tags.
    value, path, union_at = args, [], None
    for i, seg in enumerate(loc):
        last = i == len(loc) - 1
        if isinstance(value, Mapping) and (seg in value or (last and err_type == "missing")):
            path.append(seg)
            value = value.get(seg)
        elif isinstance(value, list | tuple) and isinstance(seg, int) and 0 <= seg < len(value):
            path.append(seg)
            value = value[seg]
        elif union_at is None:
            union_at = len(path)
    return path, union_at


def _message(err: Mapping[str, Any], path: Sequence[Any], allowed: Sequence[str]) -> str:
    kind = err["type"]
    if kind in _EXPECTED:
        return f"expected {_EXPECTED[kind]}"
    if kind == "missing":
        return _missing(path)
    if kind == "extra_forbidden":
        return _unexpected(path, allowed)
    if kind in ("literal_error", "enum"):
        return f"expected {err.get('ctx', {}).get('expected', 'one of the allowed values')}"
    if kind == "int_from_float":
        return "expected integer, got a number with a fractional part"
    msg = str(err["msg"])
    for prefix in _PREFIXES:
        msg = msg.removeprefix(prefix)
    if msg.startswith("Input should be "):
        msg = "must be " + msg.removeprefix("Input should be ")
    return msg


def _merge_union(prefix: list[Any], items: list[tuple[list[Any], str]]) -> list[str]:
    # A member that failed deeper (inside an object the model clearly meant) is the
    # useful report; when every member failed at the top, say what would have fitted.
    deeper = [(p, m) for p, m in items if len(p) > len(prefix)]
    if deeper:
        return [f"{format_path(p)}: {m}" for p, m in deeper]
    expected = [m.removeprefix("expected ") for _, m in items if m.startswith("expected ")]
    others = [m for _, m in items if not m.startswith("expected ")]
    parts = []
    if expected:
        parts.append("expected " + " or ".join(dict.fromkeys(expected)))
    parts.extend(dict.fromkeys(others))
    return [f"{format_path(prefix)}: {'; '.join(parts)}"]


# -- jsonschema ----------------------------------------------------------------------------

_validators: dict[int, tuple[Mapping[str, Any], Validator]] = {}
_MAX_VALIDATORS = 512


def json_schema_violations(schema: Mapping[str, Any], value: Any) -> list[str]:
    """Validate ``value`` against an arbitrary JSON Schema; every violation as ``"path: message"``.

    Compiled validators are cached by schema identity (a tool keeps its schema).

    Raises:
        UserError: ``schema`` itself is not a valid JSON Schema.
    """
    validator = _validator_for(schema)
    allowed = list(schema.get("properties", {})) if isinstance(schema, Mapping) else []
    out: list[str] = []
    errors = sorted(validator.iter_errors(value), key=lambda e: [str(s) for s in e.absolute_path])
    for err in errors:
        for line in _jsonschema_lines(err, allowed):
            if line not in out:
                out.append(line)
    return out


def _validator_for(schema: Mapping[str, Any]) -> Validator:
    cached = _validators.get(id(schema))
    if cached is not None and cached[0] is schema:
        return cached[1]
    # Imported here: jsonschema costs ~70 ms to import and only hand-written specs need it.
    import jsonschema  # type: ignore[import-untyped, unused-ignore]  # noqa: PLC0415 - no stubs

    cls = jsonschema.validators.validator_for(schema)
    try:
        cls.check_schema(dict(schema))
    except jsonschema.SchemaError as exc:
        where = format_path(list(exc.absolute_path))
        raise UserError(
            f"invalid JSON Schema at {where}: {exc.message}; fix the schema given as "
            "parameters= (or the spec's 'parameters')"
        ) from None
    validator: Validator = cls(schema)
    if len(_validators) >= _MAX_VALIDATORS:
        _validators.clear()
    _validators[id(schema)] = (schema, validator)
    return validator


def _jsonschema_lines(err: JSONSchemaError, allowed: Sequence[str]) -> Iterable[str]:
    path = list(err.absolute_path)
    kind = err.validator
    if kind == "required" and isinstance(err.instance, Mapping):
        missing = [r for r in err.validator_value if r not in err.instance]
        return [f"{format_path([*path, m])}: {_missing([*path, m])}" for m in missing]
    if kind == "additionalProperties" and isinstance(err.instance, Mapping):
        known = err.schema.get("properties", {}) if isinstance(err.schema, Mapping) else {}
        extras = [k for k in err.instance if k not in known]
        return [f"{format_path([*path, k])}: {_unexpected([*path, k], allowed)}" for k in extras]
    return [f"{format_path(path)}: {_jsonschema_message(err)}"]


def _jsonschema_message(err: JSONSchemaError) -> str:
    kind, expected = err.validator, err.validator_value
    if kind == "type":
        names = [expected] if isinstance(expected, str) else list(expected)
        return "expected " + " or ".join(_JSON_TYPES.get(n, n) for n in names)
    if kind == "enum":
        return f"expected {_either(list(expected))}"
    if kind == "const":
        return f"expected {expected!r}"
    if kind in ("anyOf", "oneOf") and err.context:
        subs = [e for e in err.context if not e.relative_path]
        if subs and all(e.validator == "type" for e in subs):
            names = [n for e in subs for n in _type_names(e.validator_value)]
            return "expected " + " or ".join(dict.fromkeys(names))
    return str(err.message)


def _type_names(value: Any) -> list[str]:
    names = [value] if isinstance(value, str) else list(value)
    return [_JSON_TYPES.get(n, n) for n in names]
