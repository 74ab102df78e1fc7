"""Valid JSON values for a JSON Schema: one walker, two ways to make its choices.

``Walker`` reads a schema node and asks a ``Chooser`` for every free choice
(which ``anyOf`` branch, how many items, which number). ``SeededChooser``
answers from a ``random.Random`` (``example_value``, the schema-driven fake
provider: deterministic, no Hypothesis); the Hypothesis strategy answers with
draws, so its examples shrink. The walker only ever builds values the schema
allows, so neither side filters blindly.

Covered: ``type`` (one or a list), ``enum``, ``const``, ``anyOf``,
``oneOf`` (exactly one branch must match: checked), ``allOf`` (merged),
local ``$ref`` into ``$defs``/``definitions`` (recursion bounded by
``max_depth``), arrays (``items``, ``prefixItems``, ``minItems``,
``maxItems``, ``uniqueItems``), objects (``properties``, ``required``,
``additionalProperties``, ``propertyNames``, ``minProperties``,
``maxProperties``), numbers (``minimum``, ``maximum``, the exclusive forms,
``multipleOf``), strings (``minLength``, ``maxLength``, ``pattern``, common
``format`` values). A keyword that would constrain values but is not covered
(``not``, ``if``, ``patternProperties``, ``contains``, ...) raises
``UnsupportedSchemaError`` rather than risk an invalid value.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any, NoReturn

from openprogram.testing._json_rules import (
    UnsupportedSchemaError,
    canonical,
    inferred_types,
    merge,
    recursive,
    within,
)
from openprogram.testing._json_scalars import (
    Chooser,
    integer_value,
    number_value,
    string_value,
)
from openprogram.testing._regex import UnsupportedPatternError, sample_regex

__all__ = ["Chooser", "SeededChooser", "UnsupportedSchemaError", "Walker", "example_value"]

_UNSUPPORTED = (
    "not",
    "if",
    "then",
    "else",
    "contains",
    "patternProperties",
    "dependentSchemas",
    "dependentRequired",
    "dependencies",
    "unevaluatedProperties",
    "unevaluatedItems",
    "$dynamicRef",
    "$recursiveRef",
)
_HARD_DEPTH = 60
"""Nesting beyond which a schema that cannot end (a required recursive field) is an error."""


class SeededChooser:
    """Deterministic choices from ``random.Random(seed)``: small, readable values."""

    def __init__(self, seed: int = 0) -> None:
        self._rng = random.Random(seed)

    def index(self, count: int) -> int:
        return self._rng.randrange(count)

    def boolean(self) -> bool:
        return self._rng.random() < 0.5

    def size(self, low: int, high: int | None) -> int:
        return self._rng.randint(low, low + 2 if high is None else min(high, low + 2))

    def integer(self, low: int | None, high: int | None) -> int:
        if low is None:
            low = 0 if high is None else high - 100
        if high is None:
            high = low + 100
        return self._rng.randint(low, high)

    def number(
        self, low: float | None, high: float | None, open_low: bool, open_high: bool
    ) -> float:
        lo = low if low is not None else (high - 100.0 if high is not None else -10.0)
        hi = high if high is not None else lo + 100.0
        for _ in range(20):
            value = round(lo + (hi - lo) * self._rng.random(), 2)
            if within(value, low, high, open_low, open_high):
                return value
        value = (lo + hi) / 2
        if within(value, low, high, open_low, open_high):
            return value
        return self.give_up(f"no number found between {low} and {high}")

    def text(self, low: int, high: int | None) -> str:
        word = self._rng.choice(("example", "alpha", "bravo", "Paris", "note", "x"))
        top = low + 8 if high is None else high
        length = max(low, min(top, len(word)))
        return (word * (length // len(word) + 1))[:length]

    def regex(self, pattern: str, low: int, high: int | None) -> str:
        try:
            return sample_regex(pattern, self._rng, min_length=low, max_length=high)
        except UnsupportedPatternError as exc:
            raise UnsupportedSchemaError(f"pattern: {exc}") from exc

    def give_up(self, reason: str) -> NoReturn:
        raise UnsupportedSchemaError(f"cannot build a valid value: {reason}")


def example_value(schema: Mapping[str, Any] | bool, *, seed: int = 0, max_depth: int = 4) -> Any:
    """One valid JSON value for ``schema``, the same for the same ``seed``.

    Needs no Hypothesis (``openprogram.testing.strategies.from_json_schema``
    draws many values, with shrinking, from the same walker).

    Args:
        schema: A JSON Schema (draft 2020-12, as ``@function`` and pydantic produce).
        seed: Picks among the valid values.
        max_depth: Nesting beyond which optional parts are left out, so
            recursive schemas end.

    Raises:
        UnsupportedSchemaError: The schema uses a keyword the generator does not
            cover, or admits no value it can build.

    Example:
        >>> example_value({"type": "integer", "minimum": 5, "maximum": 5})
        5
        >>> example_value({"enum": ["red"]})
        'red'
    """
    return Walker(schema, SeededChooser(seed), max_depth=max_depth).value()


class Walker:
    """Builds one value for a schema, asking ``chooser`` for every free choice."""

    def __init__(
        self, schema: Mapping[str, Any] | bool, chooser: Chooser, *, max_depth: int = 4
    ) -> None:
        self._root = schema
        self._choose = chooser
        self._max_depth = max_depth
        self._validator: Any = None

    def value(self) -> Any:
        """A valid value for the whole schema."""
        return self._value(self._root, 0, "$")

    # -- dispatch -------------------------------------------------------------------------

    def _value(self, node: Mapping[str, Any] | bool, depth: int, where: str) -> Any:
        if depth > _HARD_DEPTH:
            raise UnsupportedSchemaError(f"{where}: the schema nests without end (recursion)")
        if node is True:
            node = {}
        if node is False or not isinstance(node, Mapping):
            raise UnsupportedSchemaError(f"{where}: the schema admits no value ({node!r})")
        node = self._flatten(node, where)
        for key in _UNSUPPORTED:
            if key in node:
                raise UnsupportedSchemaError(
                    f"{where}: keyword {key!r} is not supported by the value generator"
                )
        if "const" in node:
            return node["const"]
        if "enum" in node:
            return self._enum(node, where)
        if "anyOf" in node or "oneOf" in node:
            return self._branch(node, depth, where)
        kind = self._type(node, depth)
        return self._typed(kind, node, depth, where)

    def _flatten(self, node: Mapping[str, Any], where: str) -> Mapping[str, Any]:
        """Resolve ``$ref`` and merge ``allOf`` (siblings of ``$ref`` apply too)."""
        seen = 0
        while "$ref" in node or "allOf" in node:
            seen += 1
            if seen > _HARD_DEPTH:
                raise UnsupportedSchemaError(f"{where}: $ref/allOf chain does not end")
            if "$ref" in node:
                rest = {k: v for k, v in node.items() if k != "$ref"}
                node = merge(self._resolve(node["$ref"], where), rest, where)
            else:
                parts = [self._flatten(p, where) for p in node["allOf"] if p is not True]
                rest = {k: v for k, v in node.items() if k != "allOf"}
                for part in parts:
                    rest = merge(rest, part, where)
                node = rest
        return node

    def _resolve(self, ref: str, where: str) -> Mapping[str, Any]:
        if not isinstance(ref, str) or not ref.startswith("#"):
            raise UnsupportedSchemaError(
                f"{where}: only local $ref ('#/...') is supported: {ref!r}"
            )
        target: Any = self._root
        for raw in filter(None, ref[1:].split("/")):
            part = raw.replace("~1", "/").replace("~0", "~")
            if not isinstance(target, Mapping) or part not in target:
                raise UnsupportedSchemaError(f"{where}: $ref {ref!r} points nowhere")
            target = target[part]
        if target is True:
            return {}
        if not isinstance(target, Mapping):
            raise UnsupportedSchemaError(f"{where}: $ref {ref!r} is not a schema")
        return target

    def _type(self, node: Mapping[str, Any], depth: int) -> str:
        declared = node.get("type")
        kinds = [declared] if isinstance(declared, str) else list(declared or ())
        if not kinds:
            kinds = inferred_types(node)
        if depth >= self._max_depth and len(kinds) > 1:
            leaves = [k for k in kinds if k not in ("array", "object")]
            kinds = leaves or kinds
        return str(kinds[self._choose.index(len(kinds))])

    def _typed(self, kind: str, node: Mapping[str, Any], depth: int, where: str) -> Any:
        if kind == "null":
            return None
        if kind == "boolean":
            return self._choose.boolean()
        if kind == "integer":
            return integer_value(node, self._choose, where)
        if kind == "number":
            return number_value(node, self._choose, where)
        if kind == "string":
            return string_value(
                node, self._choose, where, lambda sub: self._value(sub, depth + 1, where)
            )
        if kind == "array":
            return self._array(node, depth, where)
        if kind == "object":
            return self._object(node, depth, where)
        raise UnsupportedSchemaError(f"{where}: unknown type {kind!r}")

    # -- choices among given values -------------------------------------------------------

    def _enum(self, node: Mapping[str, Any], where: str) -> Any:
        rest = {k: v for k, v in node.items() if k != "enum"}
        options = [v for v in node["enum"] if self._valid(v, rest)]
        if not options:
            return self._choose.give_up(f"{where}: no enum value fits the other keywords")
        return options[self._choose.index(len(options))]

    def _branch(self, node: Mapping[str, Any], depth: int, where: str) -> Any:
        key = "oneOf" if "oneOf" in node else "anyOf"
        rest = {k: v for k, v in node.items() if k not in ("anyOf", "oneOf")}
        branches = [
            merge(self._flatten(b if isinstance(b, Mapping) else {}, where), rest, where)
            for b in node[key]
            if b is not False
        ]
        if depth >= self._max_depth:
            ending = [b for b in branches if not recursive(b)]
            branches = ending or branches
        order = list(range(len(branches)))
        first = self._choose.index(len(branches))
        for i in order[first:] + order[:first]:
            value = self._value(branches[i], depth + 1, f"{where}.{key}[{i}]")
            if key == "anyOf" or self._only_one(value, node[key]):
                return value
        return self._choose.give_up(f"{where}: no oneOf branch gave a value matching only it")

    def _only_one(self, value: Any, branches: Sequence[Any]) -> bool:
        return sum(self._valid(value, b) for b in branches) == 1

    def _valid(self, value: Any, node: Mapping[str, Any] | bool) -> bool:
        if self._validator is None:
            import jsonschema  # type: ignore[import-untyped, unused-ignore]  # noqa: PLC0415 - only enum/oneOf need it

            self._validator = jsonschema.Draft202012Validator
        defs = self._root if isinstance(self._root, Mapping) else {}
        probe: Any = node
        if isinstance(node, Mapping):
            probe = {**node, **{k: defs[k] for k in ("$defs", "definitions") if k in defs}}
        return bool(self._validator(probe).is_valid(value))

    # -- containers -------------------------------------------------------------------------

    def _array(self, node: Mapping[str, Any], depth: int, where: str) -> list[Any]:
        prefix = list(node.get("prefixItems", ()))
        items = node.get("items", True)
        low = int(node.get("minItems", 0))
        high = node.get("maxItems")
        high = None if high is None else int(high)
        if items is False:
            high = len(prefix) if high is None else min(high, len(prefix))
        size = low if depth >= self._max_depth else self._choose.size(low, high)
        unique = bool(node.get("uniqueItems"))
        out: list[Any] = []
        seen: set[str] = set()
        misses = 0
        while len(out) < size:
            schema = prefix[len(out)] if len(out) < len(prefix) else items
            item = self._value(schema, depth + 1, f"{where}[{len(out)}]")
            key = canonical(item) if unique else ""
            if unique and key in seen:
                misses += 1
                if misses > 20:
                    if len(out) >= low:
                        break
                    return list(self._choose.give_up(f"{where}: too few distinct items"))
                continue
            seen.add(key)
            out.append(item)
        return out

    def _object(self, node: Mapping[str, Any], depth: int, where: str) -> dict[str, Any]:
        props: Mapping[str, Any] = node.get("properties", {})
        required = [k for k in node.get("required", ()) if isinstance(k, str)]
        extra = node.get("additionalProperties", True)
        out: dict[str, Any] = {}
        for name, schema in props.items():
            wanted = name in required or (depth < self._max_depth and self._choose.boolean())
            if wanted:
                out[name] = self._value(schema, depth + 1, f"{where}.{name}")
        for name in required:
            if name not in out:  # required without a declared schema: anything goes
                out[name] = self._value(extra if extra is not False else {}, depth + 1, where)
        self._extras(node, out, depth, where)
        return out

    def _extras(self, node: Mapping[str, Any], out: dict[str, Any], depth: int, where: str) -> None:
        """Keys beyond ``properties``: for a map schema, and up to ``minProperties``."""
        extra = node.get("additionalProperties", True)
        low = int(node.get("minProperties", 0))
        high = node.get("maxProperties")
        if high is not None and len(out) > int(high):
            self._choose.give_up(f"{where}: more required properties than maxProperties")
        if extra is False:
            if len(out) < low:
                self._choose.give_up(f"{where}: minProperties needs keys that are not allowed")
            return
        room = None if high is None else int(high) - len(out)
        wanted = max(0, low - len(out))
        if isinstance(extra, Mapping) and depth < self._max_depth:
            wanted = max(wanted, self._choose.size(0, room))
        names: Mapping[str, Any] = {"type": "string", **node.get("propertyNames", {})}
        props = node.get("properties", {})
        misses = 0
        while wanted > 0:
            key = self._value(names, depth + 1, f"{where}.propertyNames")
            if key in out or key in props:
                misses += 1
                if misses > 20:
                    self._choose.give_up(f"{where}: too few distinct property names")
                continue
            out[key] = self._value(extra, depth + 1, f"{where}.{key}")
            wanted -= 1
