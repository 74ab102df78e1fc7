"""``from_json_schema``: a Hypothesis strategy of valid JSON values for a JSON Schema.

The same walker as ``example_value`` (``testing/_json_values.py``), with every choice
made by a Hypothesis draw, so failing examples shrink toward the simplest
value (first branch, fewest items, smallest numbers).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any, NoReturn

from hypothesis import reject
from hypothesis import strategies as st
from pydantic_core import SchemaError, SchemaValidator, core_schema

from openprogram.testing._json_values import Walker

__all__ = ["from_json_schema"]

_MAX_EXTRA = 4
"""How many items or keys past the minimum an unbounded container may get."""


class _DrawChooser:
    """Answers the walker's choices with Hypothesis draws."""

    def __init__(self, draw: st.DrawFn) -> None:
        self._draw = draw

    def index(self, count: int) -> int:
        return self._draw(st.integers(0, count - 1))

    def boolean(self) -> bool:
        return self._draw(st.booleans())

    def size(self, low: int, high: int | None) -> int:
        return self._draw(st.integers(low, low + _MAX_EXTRA if high is None else high))

    def integer(self, low: int | None, high: int | None) -> int:
        return self._draw(st.integers(low, high))

    def number(
        self, low: float | None, high: float | None, open_low: bool, open_high: bool
    ) -> float:
        return self._draw(
            st.floats(
                low,
                high,
                exclude_min=open_low and low is not None,
                exclude_max=open_high and high is not None,
                allow_nan=False,
                allow_infinity=False,
            )
        )

    def text(self, low: int, high: int | None) -> str:
        return self._draw(st.text(min_size=low, max_size=low + 12 if high is None else high))

    def regex(self, pattern: str, low: int, high: int | None) -> str:
        # Python's `$` also matches before a final newline; pydantic's (Rust) and ECMA's do
        # not, so such strings would be rejected by the validators the values are meant for.
        newline_ok = "$" not in pattern
        # Python's and Rust's Unicode classes differ at the edges (`\w` takes some characters
        # only one of them calls a letter): a value must match in both.
        rust = _rust_matcher(pattern)

        def fits(s: str) -> bool:
            sized = low <= len(s) and (high is None or len(s) <= high)
            ends = newline_ok or not s.endswith("\n")
            return sized and ends and (rust is None or rust(s))

        return self._draw(st.from_regex(pattern).filter(fits))

    def give_up(self, reason: str) -> NoReturn:
        reject()  # this draw cannot become a valid value: Hypothesis tries another


@functools.lru_cache(maxsize=256)
def _rust_matcher(pattern: str) -> Callable[[str], bool] | None:
    """Whether a string matches ``pattern`` as pydantic checks it (``None``: it cannot)."""
    try:
        validator = SchemaValidator(core_schema.str_schema(pattern=pattern))
    except SchemaError:  # look-around and the like: only Python's re checks this pattern
        return None
    return validator.isinstance_python


def from_json_schema(
    schema: Mapping[str, Any] | bool, *, max_depth: int = 4
) -> st.SearchStrategy[Any]:
    """Valid JSON values for ``schema`` (draft 2020-12, as ``@function`` and pydantic emit).

    Covers what openprogram's schemas use: types (one or a list), ``enum``,
    ``const``, ``anyOf``/``oneOf``/``allOf``, local ``$ref`` (recursion ends
    past ``max_depth``), arrays, objects, numeric and string constraints,
    ``pattern`` and common ``format`` values. See ``example_value`` for one
    fixed value without Hypothesis.

    Args:
        schema: The JSON Schema.
        max_depth: Nesting beyond which optional parts are left out.

    Raises:
        UnsupportedSchemaError: At draw time, when the schema uses a keyword the
            generator does not cover (``not``, ``if``, ``patternProperties``, ...).

    Example:
        >>> from hypothesis import given
        >>> @given(from_json_schema({"type": "array", "items": {"type": "integer"}, "maxItems": 3}))
        ... def test_short_lists(value):
        ...     assert len(value) <= 3
        >>> test_short_lists()
    """
    if not isinstance(schema, Mapping | bool):
        raise TypeError(f"from_json_schema(schema=...) needs a JSON Schema, got {schema!r:.80}")

    @st.composite
    def values(draw: st.DrawFn) -> Any:
        return Walker(schema, _DrawChooser(draw), max_depth=max_depth).value()

    return values()
