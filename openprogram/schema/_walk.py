"""Whether a type can become a JSON Schema and a validator, checked cheaply at decoration.

A structural walk over the types the schema generator supports: scalars,
containers, ``Literal``, ``Enum``, unions, ``Annotated`` (with its patterns
checked as pydantic will compile them), and the fields of pydantic models,
dataclasses and ``TypedDict`` classes. Only a class the walk cannot classify
is handed to pydantic, once per class.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import sys
import types
import typing
import weakref
from collections import abc
from typing import Any, ForwardRef

from openprogram.schema._signature import resolve

__all__ = ["type_problems"]

_MAX_CACHED = 4096

_SCALARS = frozenset({str, int, float, bool, types.NoneType})
_KNOWN_CLASSES = frozenset(
    {
        bytes,
        datetime.datetime,
        datetime.date,
        datetime.time,
        datetime.timedelta,
        list,
        dict,
        set,
        frozenset,
        tuple,
    }
)
# Known by name, so that checking an annotation never imports the module that defines it.
_KNOWN_NAMES = frozenset(
    {"uuid.UUID", "decimal.Decimal", "pathlib.Path", "pathlib.PurePath", "pathlib.PosixPath"}
)
_ARRAYS = frozenset(
    {list, set, frozenset, abc.Sequence, abc.MutableSequence, abc.Set, abc.MutableSet}
)
_MAPPINGS = frozenset({dict, abc.Mapping, abc.MutableMapping})
_UNIONS = (typing.Union, types.UnionType)
_WRAPPERS = frozenset({typing.Required, typing.NotRequired, typing.Annotated})
_LITERAL_VALUES = (str, int, bool, types.NoneType, enum.Enum)
_JSON_SCALARS = (str, int, float, bool, types.NoneType)

_class_problems: weakref.WeakKeyDictionary[type, tuple[str, ...]] = weakref.WeakKeyDictionary()
_fallback_problems: dict[Any, str | None] = {}


def type_problems(tp: Any) -> list[str]:
    """What keeps ``tp`` from becoming a JSON Schema and a validator (empty when fine)."""
    problems: list[str] = []
    _walk(tp, problems, set())
    return problems


def _walk(tp: Any, problems: list[str], seen: set[type]) -> None:
    if tp in _SCALARS or tp is Any or tp is object or tp in _KNOWN_CLASSES:
        return
    origin = typing.get_origin(tp)
    if origin is not None:
        _walk_generic(tp, origin, problems, seen)
    elif isinstance(tp, type):
        _walk_class(tp, problems, seen)
    elif isinstance(tp, typing.NewType):
        _walk(tp.__supertype__, problems, seen)
    elif isinstance(tp, str | ForwardRef):
        problems.append(f"unresolved forward reference {tp!r}")
    elif isinstance(tp, typing.TypeVar):
        problems.append(f"type variable {tp} cannot be given a JSON Schema; use a concrete type")
    else:
        _fallback(tp, problems)


def _walk_generic(tp: Any, origin: Any, problems: list[str], seen: set[type]) -> None:
    args = typing.get_args(tp)
    if origin in _WRAPPERS:
        _walk(args[0], problems, seen)
        if origin is typing.Annotated:
            problems.extend(_pattern_problems(args[1:]))
    elif origin in _UNIONS or origin in _ARRAYS or origin is tuple:
        for arg in args:
            if arg is not Ellipsis:  # tuple[T, ...]
                _walk(arg, problems, seen)
    elif origin is typing.Literal:
        bad = [a for a in args if not isinstance(a, _LITERAL_VALUES)]
        if bad:
            problems.append(
                f"Literal values must be str, int, bool, None or Enum members, got {bad!r}"
            )
    elif origin in _MAPPINGS:
        if args:
            _check_key(args[0], problems)
            _walk(args[1], problems, seen)
    else:
        _fallback(tp, problems)


def _pattern_problems(metadata: tuple[Any, ...]) -> list[str]:
    """Why a ``pattern`` among ``Annotated`` metadata cannot be checked, if it cannot.

    pydantic compiles a pattern given as a string with its Rust regex engine,
    and only when the validator is first built: a look-around would surface
    then, as pydantic's own error, long after decoration.
    """
    found: list[str] = []
    for item in metadata:
        # Field(pattern=...) keeps it in .metadata; StringConstraints has it itself.
        for holder in (item, *getattr(item, "metadata", ())):
            pattern = getattr(holder, "pattern", None)
            if isinstance(pattern, str):
                problem = _rust_regex_problem(pattern)
                if problem is not None:
                    found.append(problem)
    return found


_regex_problems: dict[str, str | None] = {}


def _rust_regex_problem(pattern: str) -> str | None:
    if pattern in _regex_problems:
        return _regex_problems[pattern]
    import pydantic_core  # noqa: PLC0415 - deferred for import cost

    problem: str | None = None
    try:
        pydantic_core.SchemaValidator(pydantic_core.core_schema.str_schema(pattern=pattern))
    except pydantic_core.SchemaError as exc:
        reason = str(exc).strip().rsplit("\n", 1)[-1].removeprefix("error: ")
        problem = (
            f"pattern {pattern!r} cannot be checked: {reason}. pydantic checks a pattern given "
            "as a string with its Rust regex engine, which has no look-around (?=, ?!, ?<=, ?<!) "
            "and no back-references; rewrite the pattern without them, or pass it compiled, "
            "pattern=re.compile(r'...'), to have it checked with Python's re"
        )
    if len(_regex_problems) < _MAX_CACHED:
        _regex_problems[pattern] = problem
    return problem


def _check_key(key: Any, problems: list[str]) -> None:
    # JSON object keys are strings: any other key type would make the schema lie.
    base = typing.get_args(key)[0] if typing.get_origin(key) is typing.Annotated else key
    if base is str or base is Any:
        return
    if typing.get_origin(base) is typing.Literal and all(
        isinstance(a, str) for a in typing.get_args(base)
    ):
        return
    if (
        isinstance(base, type)
        and issubclass(base, enum.Enum)
        and all(isinstance(m.value, str) for m in base)
    ):
        return
    problems.append(
        f"dict keys must be strings (JSON object keys are strings), got {_type_name(key)}; "
        "use dict[str, ...]"
    )


def _walk_class(cls: type, problems: list[str], seen: set[type]) -> None:
    if f"{cls.__module__}.{cls.__qualname__}" in _KNOWN_NAMES:
        return
    if issubclass(cls, enum.Enum):
        bad = [m.name for m in cls if not isinstance(m.value, _JSON_SCALARS)]
        if bad:
            problems.append(f"Enum {cls.__name__} has non-JSON values for members {bad}")
        return
    if cls in seen:  # recursive structure: its fields are being checked further up
        return
    cached = _class_problems.get(cls)
    if cached is None and cls.__dict__.get("__pydantic_complete__") is False:
        cached = (
            f"pydantic model {cls.__name__} is not fully defined (a forward reference is "
            f"unresolved); define the missing types, then call {cls.__name__}.model_rebuild()",
        )
    if cached is None and _is_stdlib_typeddict_before_312(cls):
        cached = (
            f"TypedDict {cls.__name__} comes from typing, which pydantic cannot validate on "
            "Python < 3.12; import TypedDict from typing_extensions instead",
        )
    if cached is None:
        fields = _fields_of(cls)
        if fields is None:
            _fallback(cls, problems)
            return
        seen.add(cls)
        found: list[str] = []
        for name, annotation in fields:
            found.extend(
                f"field {cls.__name__}.{name}: {p}" for p in _field_problems(annotation, cls, seen)
            )
        seen.discard(cls)
        cached = tuple(found)
        _class_problems[cls] = cached
    problems.extend(cached)


def _field_problems(annotation: Any, owner: type, seen: set[type]) -> list[str]:
    try:
        module = sys.modules.get(owner.__module__)
        tp = resolve(annotation, vars(module) if module else {}, dict(vars(owner)))
    except Exception as exc:  # noqa: BLE001 - evaluating user code may raise anything: report it
        return [f"cannot resolve annotation {annotation!r}: {type(exc).__name__}: {exc}"]
    found: list[str] = []
    _walk(tp, found, seen)
    return found


def _fields_of(cls: type) -> list[tuple[str, Any]] | None:
    """(name, annotation) of a pydantic model, dataclass or TypedDict; else ``None``."""
    model_fields = cls.__dict__.get("__pydantic_fields__") if "pydantic" in sys.modules else None
    if model_fields is not None:
        return [(name, info.annotation) for name, info in model_fields.items()]
    if dataclasses.is_dataclass(cls):
        return [(f.name, f.type) for f in dataclasses.fields(cls) if f.init]
    if typing.is_typeddict(cls) or _is_typing_extensions_typeddict(cls):
        return list(cls.__annotations__.items())
    return None


def _is_stdlib_typeddict_before_312(cls: type) -> bool:
    return (
        sys.version_info < (3, 12)
        and typing.is_typeddict(cls)
        and type(cls).__module__ == "typing"  # typing_extensions' TypedDicts have their own meta
    )


def _is_typing_extensions_typeddict(cls: type) -> bool:
    te = sys.modules.get("typing_extensions")
    return te is not None and bool(te.is_typeddict(cls))


def _fallback(tp: Any, problems: list[str]) -> None:
    """Ask pydantic (once per type) about a type the walk cannot classify."""
    try:
        problem = _fallback_problems.get(tp, "")
        hashable = True
    except TypeError:  # unhashable annotation objects are simply not cached
        problem, hashable = "", False
    if problem == "":
        problem = _pydantic_problem(tp)
        if hashable and len(_fallback_problems) < _MAX_CACHED:
            _fallback_problems[tp] = problem
    if problem is not None:
        problems.append(problem)


def _pydantic_problem(tp: Any) -> str | None:
    # Imported here: pydantic's schema machinery costs ~60 ms to import and most
    # signatures never get this far (see the module docstring).
    from pydantic import TypeAdapter  # noqa: PLC0415

    try:
        TypeAdapter(tp).json_schema()
    except Exception as exc:  # noqa: BLE001 - pydantic's refusal, whatever its type, is what we report
        reason = str(exc).strip().split("\n", 1)[0].split(". ", 1)[0]
        return (
            f"unsupported annotation {_type_name(tp)} ({reason}); use a JSON-compatible type: "
            "str, int, float, bool, None, list, dict[str, ...], Literal, Enum, a pydantic model, "
            "dataclass or TypedDict"
        )
    return None


def _type_name(tp: Any) -> str:
    if isinstance(tp, type):
        return (
            tp.__qualname__ if tp.__module__ == "builtins" else f"{tp.__module__}.{tp.__qualname__}"
        )
    return repr(tp)
