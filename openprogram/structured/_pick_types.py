"""The forms of ``choices=`` as types, so the overloads of ``exec`` and ``make`` type the answer.

What a decision returns depends on the form of its options
(``openprogram.decision``); the overloads try these forms in order, and the
first that fits every option gives the answer's type:

1. classes, bare or ``(cls, "description")``: the class picked, ``type[Cls]``
   (a class is a value option, never called);
2. functions returning an awaitable (``async def``, async tools and agentic
   functions): what it resolves to;
3. functions, tools and agentic functions, bare or described: their return
   type (the join of them all, e.g. ``object``, when they differ);
4. ``("description", schema)`` options: ``dict[str, Any]``;
5. ``(value, "description")`` pairs, then bare values: the values' type, for
   values of ``OptionValue`` types;
6. functions (async ones first, then the others) mixed with such values, each
   bare or described: what the functions return or the values' type, so
   ``[refund, "wait"]`` with ``refund`` returning ``str`` gives ``str``;
7. anything else (schema options or classes among other forms, values of
   other types): ``object``;
8. a prebuilt ``DecisionMenu``: ``Any`` (its options' types are gone).

Limits. Options written in the call are typed item by item; a list first
bound to a name without a type is joined there (two signatures make
``list[function]``), so its answer is ``object`` (a tuple keeps each item's
type). An option whose type holds ``Any`` (a function returning
``dict[str, Any]``, ``Callable[..., str]``) makes mypy answer ``Any``, its rule
for overloaded calls. Where the type cannot follow the runtime: a class
given among functions that return its instances is typed as an instance; a
tool whose body returns a ``ToolResult`` answers with the result's ``.value``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from enum import Enum
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar

if TYPE_CHECKING:
    from _typeshed import DataclassInstance
    from pydantic import BaseModel

__all__ = [
    "AsyncFunctionOptions",
    "AsyncFunctionOrValueOptions",
    "ClassOptions",
    "Cls",
    "DescribedValueOptions",
    "FunctionOptions",
    "FunctionOrValueOptions",
    "MixedOptions",
    "OptionValue",
    "Returned",
    "SchemaOptions",
    "Unjoined",
    "Value",
    "ValueOptions",
]

OptionValue: TypeAlias = (
    "str | bytes | int | float | complex | Enum | list[Any] | dict[Any, Any] | set[Any]"
    " | frozenset[Any] | BaseModel | DataclassInstance | None"
)
"""Values whose type a value option's answer keeps: no tuple (a pair), no callable (a function)."""

Returned = TypeVar("Returned")
"""What the picked function returns (or its awaitable resolves to)."""
Cls = TypeVar("Cls")
"""The class given as a value option."""
Value = TypeVar("Value", bound=OptionValue)
"""The type of the value options."""
_H = TypeVar("_H")
_V = TypeVar("_V", bound=OptionValue)

Unjoined: TypeAlias = "tuple[Unjoined]"
"""No value has this type (it nests forever); it is in the overloads for mypy's sake.

mypy infers ``[refund, reply]`` as ``list[function]`` (the join of two
signatures), losing both return types, unless the parameter's type holds a
recursive alias: then it infers the union of the items and each keeps its
return type. So every ``choices`` parameter is ``<form> | Unjoined``, with
``Unjoined`` written at its top level (mypy does not look inside aliases).
"""

_Each: TypeAlias = "Sequence[_H] | Mapping[str, _H]"
_Described: TypeAlias = "Sequence[_H | tuple[_H, str]] | Mapping[str, _H | tuple[_H, str]]"

ClassOptions: TypeAlias = "_Described[type[_H]]"
"""Classes as value options, in a list or a dict, each bare or ``(cls, "description")``."""
AsyncFunctionOptions: TypeAlias = "_Described[Callable[..., Awaitable[_H]]]"
"""Functions whose result is awaited (``async def``, async tools), bare or described."""
FunctionOptions: TypeAlias = "_Described[Callable[..., _H]]"
"""Functions, tools and agentic functions, bare or ``(function, "description")``."""
SchemaOptions: TypeAlias = (
    "_Each[tuple[str, type[BaseModel] | type[DataclassInstance] | Mapping[str, Any]]]"
)
"""``("description", schema)`` options: the answer is ``{"decision": name, **fields}``."""
DescribedValueOptions: TypeAlias = "_Each[tuple[_H, str]]"
"""``(value, "description")`` pairs."""
ValueOptions: TypeAlias = "_Each[_H]"
"""Bare values."""
AsyncFunctionOrValueOptions: TypeAlias = "_Described[Callable[..., Awaitable[_H]] | _V]"
"""Functions whose result is awaited, and values, each bare or described."""
FunctionOrValueOptions: TypeAlias = "_Described[Callable[..., _H] | _V]"
"""Functions and values, each bare or described: the answer is ``Returned | Value``."""
MixedOptions: TypeAlias = "_Each[object]"
"""Any list or dict of options: what the more precise forms do not cover."""
