"""``Literal`` and ``Enum`` values matched by JSON type, as the schema's ``enum`` reads them.

pydantic matches a literal by Python equality, where ``True == 1`` and
``False == 0``: even in strict mode JSON ``true`` passes for ``Literal[1, 2]``
(and ``1`` for ``Literal[True]``), while the schema the model was shown
(``{"enum": [1, 2], "type": "integer"}``) refuses it; the same holds for an
``IntEnum``. It also compares an ``Enum`` member in a ``Literal`` with the
member itself, so the ``"dark"`` its schema (``{"const": "dark"}``) asks for
is refused.

:func:`exact_literals` rebuilds a pydantic core schema with every literal and
enum that holds numbers or Enum members (string ones are matched exactly by
pydantic already) replaced by a lookup by JSON type and value, wherever it sits (optionals,
unions, lists, tuples, sets, dict values, and the fields of the user's own
models, dataclasses and TypedDicts). An enum with its own ``_missing_`` (a
``Flag``, a user's fallback) keeps pydantic's lookup, which calls it. Only
validation uses the rebuilt schema; the JSON Schema comes from the original.
``1.0`` still matches ``1``: JSON Schema compares numbers by value.
"""

from __future__ import annotations

import enum
import threading
import weakref
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic_core import SchemaValidator

__all__ = ["exact_literals", "exact_model_validator", "exact_validator"]

_building = threading.Lock()
_ENUM_MISSING = enum.Enum._missing_.__func__  # type: ignore[attr-defined]

# Keys whose values are data (defaults, the literal's own values) or not validation
# schemas at all (serialization, JSON Schema hooks): never rewritten.
_NOT_SCHEMA = frozenset(
    {"metadata", "serialization", "default", "expected", "members", "custom_error_context"}
)


def exact_validator(schema: Any, config: Any = None) -> SchemaValidator | None:
    """A validator for ``schema`` matching literals by JSON type, or ``None`` if it has none.

    Args:
        schema: A pydantic core schema (a ``TypeAdapter``'s or a model's).
        config: The core config it was built with, if any.
    """
    if not isinstance(schema, dict):
        return None  # not built yet (a forward reference); pydantic's own validator stands
    rebuilt: list[type] = []
    exact = exact_literals(schema, rebuilt)
    if exact is schema:
        return None
    # pydantic_core loads when a validator is built, not at ``import openprogram``
    from pydantic_core import SchemaValidator  # noqa: PLC0415 - deferred for import cost

    with _building:
        # pydantic-core reuses a complete model's (or pydantic dataclass's) own validator
        # for its node, which would bring the inexact literals back: for the moment the
        # validator is built, the classes whose fields changed are marked incomplete.
        marked = [c for c in rebuilt if c.__dict__.get("__pydantic_complete__") is True]
        for cls in marked:
            type.__setattr__(cls, "__pydantic_complete__", False)
        try:
            return SchemaValidator(exact, config)
        finally:
            for cls in marked:
                type.__setattr__(cls, "__pydantic_complete__", True)


_by_model: weakref.WeakKeyDictionary[type, SchemaValidator | None] = weakref.WeakKeyDictionary()


def exact_model_validator(model: Any) -> Any:
    """What validates answers for a pydantic model class: its own validator, literals made exact.

    Returns:
        An object with ``validate_json`` and ``validate_python`` (taking ``strict=``),
        built once per class.
    """
    try:
        found = _by_model[model]
    except KeyError:
        schema = model.__pydantic_core_schema__
        if not isinstance(schema, dict):
            return model.__pydantic_validator__  # not complete yet: pydantic rebuilds it on use
        found = _by_model[model] = exact_validator(schema, _config(schema))
    return found if found is not None else model.__pydantic_validator__


def _config(schema: dict[str, Any]) -> Any:
    # A model's core schema carries its config (inside "definitions" when it nests models).
    top = schema.get("schema", {}) if schema.get("type") == "definitions" else schema
    return top.get("config") if isinstance(top, dict) else None


def exact_literals(node: Any, rebuilt: list[type]) -> Any:
    """``node`` with each literal and enum schema replaced; ``node`` itself when it holds none.

    The classes of the model and dataclass nodes that changed are added to ``rebuilt``.
    """
    if isinstance(node, list):
        items = [exact_literals(item, rebuilt) for item in node]
        return node if all(a is b for a, b in zip(items, node, strict=True)) else items
    if not isinstance(node, dict):
        return node
    if node.get("type") == "literal" and "expected" in node:
        if not _inexact(node["expected"]):
            return node  # strings and None: pydantic's own lookup is exact, and faster
        return _exact(node, node["expected"], "literal_error")
    if node.get("type") == "enum" and _plain_lookup(node.get("cls")):
        if not _inexact([_json(member) for member in node["members"]]):
            return node
        return _exact(node, node["members"], "enum")
    changed = {
        key: new
        for key, value in node.items()
        if key not in _NOT_SCHEMA and (new := exact_literals(value, rebuilt)) is not value
    }
    if not changed:
        return node
    if node.get("type") in ("model", "dataclass") and isinstance(node.get("cls"), type):
        rebuilt.append(node["cls"])
    return {**node, **changed}


def _exact(node: dict[str, Any], expected: Sequence[Any], error: str) -> dict[str, Any]:
    members = {_key(value): value for value in reversed(expected)}  # the first one wins
    shown = _either([_json(value) for value in expected])
    check = _matcher(members, shown, error)
    from pydantic_core import core_schema  # noqa: PLC0415 - deferred for import cost

    replaced: dict[str, Any] = dict(core_schema.no_info_plain_validator_function(check))
    if "ref" in node:  # a named literal may be referred to from elsewhere
        replaced["ref"] = node["ref"]
    return replaced


def _inexact(values: Sequence[Any]) -> bool:
    """Whether pydantic's lookup may match a value of another JSON type among ``values``:
    a number (Python counts ``True`` as ``1``) or an Enum member in a Literal (compared
    with the member, not with the value the schema shows)."""
    return any(isinstance(v, int | float | enum.Enum) for v in values)


def _plain_lookup(cls: Any) -> bool:
    # An enum with its own _missing_ (a Flag, a user's fallback) finds members its own way.
    missing = getattr(getattr(cls, "_missing_", None), "__func__", None)
    return missing is _ENUM_MISSING


def _matcher(members: dict[tuple[str, Any], Any], shown: str, error: str) -> Callable[[Any], Any]:
    from pydantic_core import PydanticCustomError  # noqa: PLC0415 - deferred for import cost

    def check(value: Any) -> Any:
        try:
            return members[_key(value)]
        except (KeyError, TypeError):  # TypeError: an array or object, never a literal
            raise PydanticCustomError(
                error, "Input should be {expected}", {"expected": shown}
            ) from None

    return check


def _json(value: Any) -> Any:
    # An Enum member in a Literal is written to the model as its value.
    return value.value if isinstance(value, enum.Enum) else value


def _key(value: Any) -> tuple[str, Any]:
    """The value with its JSON type: ``true`` and ``1`` differ, ``1`` and ``1.0`` do not."""
    value = _json(value)
    if isinstance(value, bool) or value is None:
        return ("literal", value)
    if isinstance(value, int | float):
        return ("number", value)
    return (type(value).__name__, value)


def _either(values: list[Any]) -> str:
    # As pydantic words a literal error: "1 or 2", "'a', 'b' or 'c'".
    shown = [repr(v) for v in values]
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} or {shown[-1]}"
