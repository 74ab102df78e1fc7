"""Validating what a model sent exactly as the JSON Schema it was shown reads it.

A model's tool-call arguments and structured answers are JSON. pydantic's
default (lax) mode would coerce them in ways the schema never offered —
``"yes"`` or ``1`` for a boolean, ``"1"`` or ``true`` for an integer, ``"1e3"``
for a number — so a model that ignores the schema is silently "corrected"
while one that sends ``42`` for a string is refused. Here the value is
validated as JSON in pydantic's *strict* mode instead: every JSON type must be
the one the schema names, while the types the schema writes as strings
(dates, times, UUIDs, paths, bytes, decimals, enums of strings) are still
read from strings, because in JSON that is what they are.

One difference from pydantic's strict mode remains, because JSON Schema
defines it so: an ``integer`` is any number with a zero fractional part, so
``3.0`` is accepted as ``3`` (``3.5`` is not).

pydantic matches a ``Literal`` or ``Enum`` by Python equality, where
``True == 1``; the validators handed in here are built with exact literals
(``_literal``), so JSON ``true`` never matches ``1``, nor ``1`` ``true``, at
any depth, inside the user's own models too.

pydantic merges repeated items of a ``set`` silently, while the schema says
``uniqueItems``: :func:`duplicate_check` reports them instead (for sets in
the signature and its lists, tuples, dicts and optionals; sets inside the
user's own models, dataclasses and TypedDicts follow pydantic).

A user's own before- or wrap-validator hands strict mode a Python value,
which it checks Python-side, where a date must already be a ``date``. What
such a validator returns in its JSON form (a date as a string, an array as a
list) is therefore judged again in lax mode; every other error stands.

Values that are not JSON data at all (a lone surrogate in a string, an
arbitrary object handed to ``run_tools``) are reported with their path.
"""

from __future__ import annotations

import json
import math
import types
import typing
from collections import abc
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar

from openprogram.schema._errors import format_path, pydantic_violations, real_path

if TYPE_CHECKING:
    from pydantic_core import ValidationError

__all__ = ["JSONViolations", "duplicate_check", "validate_strict"]

T = TypeVar("T")

_MAX_DEPTH = 200  # pydantic's JSON parser refuses deeper nesting
_MAX_PASSES = 4  # each pass turns every integral float an integer was refused for


class JSONViolations(ValueError):
    """The value does not fit; ``violations`` lists why, each as ``"path: message"``."""

    def __init__(self, violations: Sequence[str]) -> None:
        self.violations = list(violations)
        super().__init__("; ".join(self.violations))


def validate_strict(
    value: Any,
    validate_json: Callable[..., T],
    validate_python: Callable[..., T],
    allowed: Sequence[str] = (),
) -> T:
    """Validate ``value`` (decoded JSON) strictly, as JSON.

    Args:
        value: The decoded JSON value.
        validate_json: A pydantic validator's ``validate_json`` (takes ``strict=``).
        validate_python: The same validator's ``validate_python`` (takes ``strict=``),
            for values nested deeper than pydantic's JSON parser reads.
        allowed: The top-level names, for the "unexpected argument" hint.

    Raises:
        JSONViolations: Every problem as ``"path: message"``.
    """
    # pydantic_core loads when arguments are first validated, not at ``import openprogram``
    import pydantic_core  # noqa: PLC0415 - deferred for import cost
    from pydantic_core import ValidationError  # noqa: PLC0415 - deferred for import cost

    try:
        return validate_json(pydantic_core.to_json(value), strict=True)
    except (ValidationError, pydantic_core.PydanticSerializationError):
        pass  # the common case ends above; what follows finds out what was wrong
    deep = False
    for _ in range(_MAX_PASSES):
        try:
            if deep:
                return validate_python(value, strict=True)
            return _via_json(validate_json, value)
        except _TooDeep:
            # Python-side strict validation reads the value as it is; it only lacks the
            # string forms of dates and the like, which deep values seldom hold.
            if deep:
                raise JSONViolations(_too_deep(value)) from None
            deep = True
        except ValidationError as exc:
            patched = _integral_floats_as_ints(exc, value)
            if patched is None:
                errors = exc.errors(include_url=False)
                if not deep and any(_python_side(err) for err in errors):
                    return _lax(validate_json, value, errors, allowed)
                raise JSONViolations(pydantic_violations(errors, value, allowed)) from None
            value = patched
    raise JSONViolations(["(root): the value could not be validated; simplify it"])


# In JSON mode these never fail for the input named: they only do when a before- or
# wrap-validator handed strict mode a Python value, which it then checks Python-side.
_PYTHON_SIDE = {
    "date_type": str,
    "datetime_type": str,
    "time_type": str,
    "time_delta_type": str,
    "bytes_type": str,
    "is_instance_of": str,
    "tuple_type": list,
    "set_type": list,
    "frozen_set_type": list,
}


def _python_side(err: Mapping[str, Any]) -> bool:
    kind = _PYTHON_SIDE.get(err["type"])
    return kind is not None and type(err.get("input")) is kind


def _lax(
    validate_json: Callable[..., T],
    value: Any,
    errors: Sequence[Mapping[str, Any]],
    allowed: Sequence[str],
) -> T:
    """Judge again, in lax mode, only what a user's validator handed strict mode Python-side.

    The other errors stand; where a before-validator returned the JSON form (a date
    as a string, an array as a list), lax mode reads it as JSON mode would have.
    """
    from pydantic_core import ValidationError  # noqa: PLC0415 - deferred for import cost

    real = [err for err in errors if not _python_side(err)]
    try:
        result = validate_json(_dumps(value), strict=False)
    except ValidationError as exc:
        again = {tuple(err["loc"]) for err in errors if _python_side(err)}
        real.extend(err for err in exc.errors(include_url=False) if tuple(err["loc"]) in again)
    else:
        if not real:
            return result
    raise JSONViolations(pydantic_violations(real, value, allowed))


def _via_json(validate_json: Callable[..., T], value: Any) -> T:
    from pydantic_core import ValidationError  # noqa: PLC0415 - deferred for import cost

    try:
        return validate_json(_dumps(value), strict=True)
    except ValidationError as exc:
        if any(err["type"] == "json_invalid" for err in exc.errors(include_url=False)):
            raise _TooDeep from None  # the only JSON we write that its parser refuses
        raise


class _TooDeep(Exception):
    """Nested deeper than pydantic's JSON parser reads."""


def _dumps(value: Any) -> bytes:
    import pydantic_core  # noqa: PLC0415 - deferred for import cost

    try:
        return pydantic_core.to_json(value)
    except pydantic_core.PydanticSerializationError:
        problems = _not_json(value, [])
        if not problems:
            raise _TooDeep from None
        raise JSONViolations(problems) from None


def _too_deep(value: Any) -> list[str]:
    """Where ``value`` nests deepest (what is left when every leaf is JSON)."""
    deepest: list[Any] = []
    stack: list[tuple[Any, list[Any]]] = [(value, [])]
    while stack:  # iterative: the value may nest deeper than Python's recursion limit
        node, path = stack.pop()
        if len(path) > len(deepest):
            deepest = path
        if isinstance(node, Mapping):
            stack.extend((item, [*path, key]) for key, item in node.items())
        elif isinstance(node, list | tuple):
            stack.extend((item, [*path, i]) for i, item in enumerate(node))
    return [
        f"{format_path(deepest[:1])}: nested {len(deepest)} levels deep; JSON values here "
        f"may nest at most {_MAX_DEPTH} levels"
    ]


def _not_json(value: Any, path: list[Any]) -> list[str]:
    """Where ``value`` is not JSON data, and why (only walked after serializing failed)."""
    if len(path) > _MAX_DEPTH:
        return []  # too deep to walk: _too_deep reports it
    if isinstance(value, Mapping):
        return [v for key, item in value.items() for v in _not_json(item, [*path, key])]
    if isinstance(value, list | tuple):
        return [v for i, item in enumerate(value) for v in _not_json(item, [*path, i])]
    import pydantic_core  # noqa: PLC0415 - deferred for import cost

    try:
        pydantic_core.to_json(value)
    except pydantic_core.PydanticSerializationError:
        where = format_path(path)
        if isinstance(value, str):
            return [f"{where}: the string holds a lone surrogate, which JSON text cannot carry"]
        return [f"{where}: expected JSON data, got a value of type {type(value).__name__!r}"]
    return []


def _integral_floats_as_ints(exc: ValidationError, value: Any) -> Any:
    """``value`` with each ``3.0`` an integer was refused for turned into ``3``, or ``None``."""
    patched, changed = value, False
    for err in exc.errors(include_url=False):
        found = err.get("input")
        if err["type"] != "int_type" or not isinstance(found, float):
            continue
        if not (math.isfinite(found) and found.is_integer()):
            continue
        path, _ = real_path(err["loc"], patched, err["type"])
        current = _get(patched, path)
        if isinstance(current, float) and current == found:
            patched, changed = _set(patched, path, int(found)), True
    return patched if changed else None


def _get(value: Any, path: list[Any]) -> Any:
    for seg in path:
        value = value[seg]
    return value


def _set(value: Any, path: list[Any], new: Any) -> Any:
    """A copy of ``value`` with ``new`` at ``path`` (only the containers on the path copied)."""
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, Mapping):
        return {**value, head: _set(value[head], rest, new)}
    items = list(value)
    items[head] = _set(items[head], rest, new)
    return items


# -- uniqueItems -----------------------------------------------------------------------------

Check: TypeAlias = Callable[[Any, list[Any]], list[str]]

_SETS = frozenset({set, frozenset, abc.Set, abc.MutableSet})
_ARRAYS = frozenset({list, abc.Sequence, abc.MutableSequence})
_MAPPINGS = frozenset({dict, abc.Mapping, abc.MutableMapping})
_UNIONS = (typing.Union, types.UnionType)


def duplicate_check(
    annotations: Mapping[str, Any],
) -> Callable[[Mapping[str, Any]], list[str]] | None:
    """A check reporting repeated items of the sets in these parameters' values.

    Args:
        annotations: Each parameter's annotation, by name.

    Returns:
        The check, or ``None`` when no parameter holds a set.
    """
    checks = {name: c for name, tp in annotations.items() if (c := _check_for(tp)) is not None}
    if not checks:
        return None

    def check(args: Mapping[str, Any]) -> list[str]:
        found: list[str] = []
        for name, one in checks.items():
            if name in args:
                found.extend(one(args[name], [name]))
        return found

    return check


def _check_for(tp: Any) -> Check | None:
    """How to find repeated set items in a value of ``tp`` (``None``: it holds no set)."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if tp in _SETS or origin in _SETS:
        return _unique
    if origin is typing.Annotated:
        return _check_for(args[0])
    if origin in _UNIONS:
        members = [a for a in args if a is not types.NoneType]
        # `T | None`: check as T. A set among other types is left to pydantic.
        return _check_for(members[0]) if len(members) == 1 else None
    if origin in _ARRAYS or (origin is tuple and len(args) == 2 and args[1] is Ellipsis):
        inner = _check_for(args[0]) if args else None
        return None if inner is None else _each(inner)
    if origin is tuple:
        inners = [_check_for(a) for a in args]
        return None if all(c is None for c in inners) else _positions(inners)
    if origin in _MAPPINGS and len(args) == 2:
        inner = _check_for(args[1])
        return None if inner is None else _values(inner)
    return None


def _unique(value: Any, path: list[Any]) -> list[str]:
    if not isinstance(value, list | tuple):
        return []  # not an array: the validator says so
    seen: set[Any] = set()
    for item in value:
        key = _json_identity(item)
        if key in seen:
            where = format_path(path)
            return [f"{where}: items must be unique, but {item!r} appears more than once"]
        seen.add(key)
    return []


def _json_identity(item: Any) -> Any:
    # JSON equality: 1 and 1.0 are the same number, true is not 1.
    if isinstance(item, bool) or item is None:
        return ("literal", item)
    if isinstance(item, int | float):
        return ("number", item)
    if isinstance(item, str):
        return ("string", item)
    return ("json", json.dumps(item, sort_keys=True, default=repr))


def _each(inner: Check) -> Check:
    def check(value: Any, path: list[Any]) -> list[str]:
        if not isinstance(value, list | tuple):
            return []
        return [v for i, item in enumerate(value) for v in inner(item, [*path, i])]

    return check


def _positions(inners: list[Check | None]) -> Check:
    def check(value: Any, path: list[Any]) -> list[str]:
        if not isinstance(value, list | tuple):
            return []
        pairs = zip(inners, value, strict=False)
        return [v for i, (c, item) in enumerate(pairs) if c for v in c(item, [*path, i])]

    return check


def _values(inner: Check) -> Check:
    def check(value: Any, path: list[Any]) -> list[str]:
        if not isinstance(value, Mapping):
            return []
        return [v for key, item in value.items() for v in inner(item, [*path, key])]

    return check
