"""Valid integers, numbers and strings for a JSON Schema node, from a ``Chooser``'s choices.

The scalar half of the value walker (``_json_values``): bounds and
``multipleOf`` for numbers; length, ``pattern``, ``format`` and JSON content
(``contentMediaType``) for strings. Values are built to pass both validators
they meet: pydantic's for tool arguments and ``jsonschema`` for hand-written
schemas (so a multiple of ``0.1`` is one whose quotient is whole in floating
point, and text for ``bytes`` is ASCII, one byte per character).
"""

from __future__ import annotations

import json
import math
import re
import uuid
from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any, NoReturn, Protocol

from openprogram.testing._json_rules import FORMAT_VARIANTS, FORMATS, bounds, flat, within

__all__ = ["Chooser", "integer_value", "number_value", "string_value"]

_UUID_VERSIONS = {"uuid": 4, "uuid1": 1, "uuid3": 3, "uuid4": 4, "uuid5": 5}
_ASCII_TEXT = r"^[ -~]*$"
"""Printable ASCII: what a ``bytes`` schema's lengths count correctly (one byte each)."""
_MULTIPLE_TRIES = 40
_MAX_MULTIPLE = 10**6
"""How far a multiple goes from zero: pydantic's tolerance for ``multiple_of`` on floats
no longer covers rounding past about ``10**7``."""


class Chooser(Protocol):
    """Makes the walker's free choices; every answer must respect the bounds it is given."""

    def index(self, count: int) -> int:
        """One of ``0..count-1`` (0 is the simplest option)."""
        ...

    def boolean(self) -> bool:
        """Include an optional property, pick ``true``, ..."""
        ...

    def size(self, low: int, high: int | None) -> int:
        """A length in ``low..high`` (``None``: unbounded, keep it small)."""
        ...

    def integer(self, low: int | None, high: int | None) -> int:
        """An integer in ``low..high`` (inclusive; ``None``: unbounded)."""
        ...

    def number(
        self, low: float | None, high: float | None, open_low: bool, open_high: bool
    ) -> float:
        """A finite float within the bounds (``open_*``: the bound itself is excluded)."""
        ...

    def text(self, low: int, high: int | None) -> str:
        """A string of ``low..high`` characters."""
        ...

    def regex(self, pattern: str, low: int, high: int | None) -> str:
        """A string of ``low..high`` characters in which ``pattern`` is found."""
        ...

    def give_up(self, reason: str) -> NoReturn:
        """No value could be built on this path (e.g. too few unique items): must raise."""
        ...


def integer_value(node: Mapping[str, Any], choose: Chooser, where: str) -> int:
    """An integer within the node's bounds, a multiple of its ``multipleOf``."""
    low, high = bounds(node)
    lo = None if low is None else math.floor(low[0]) + 1 if low[1] else math.ceil(low[0])
    hi = None if high is None else math.ceil(high[0]) - 1 if high[1] else math.floor(high[0])
    step = node.get("multipleOf")
    if step is not None:
        if float(step) != int(step):
            return choose.give_up(f"{where}: integer multipleOf {step} is not whole")
        step = int(step)
        k_lo = None if lo is None else -(-lo // step)
        k_hi = None if hi is None else hi // step
        if k_lo is not None and k_hi is not None and k_lo > k_hi:
            return choose.give_up(f"{where}: no multiple of {step} in range")
        return int(choose.integer(k_lo, k_hi)) * step
    if lo is not None and hi is not None and lo > hi:
        return choose.give_up(f"{where}: empty integer range {lo}..{hi}")
    return int(choose.integer(lo, hi))


def number_value(node: Mapping[str, Any], choose: Chooser, where: str) -> float | int:
    """A number within the node's bounds, a multiple of its ``multipleOf``."""
    low, high = bounds(node)
    step = node.get("multipleOf")
    if step is None:
        return choose.number(*flat(low, high))
    k_lo = None if low is None else math.ceil(low[0] / step)
    k_hi = None if high is None else math.floor(high[0] / step)
    if k_lo is not None and k_hi is not None and k_lo > k_hi:
        return choose.give_up(f"{where}: no multiple of {step} in range")
    places = _places(step)
    far = max(1, int(_MAX_MULTIPLE / step))
    for _ in range(_MULTIPLE_TRIES):
        k = choose.integer(k_lo, k_hi)
        if k_hi is None:
            k = min(k, max(far, k_lo or 0))
        if k_lo is None:
            k = max(k, min(-far, k_hi or 0))
        # Rounded to the step's own places: 3 * 0.1 is written 0.3, not 0.30000000000000004.
        value: float | int = k * step if places == 0 else round(k * step, places)
        # jsonschema's test: the quotient must be whole in floating point.
        if within(value, *flat(low, high)) and (value / step) == int(value / step):
            return value
    return choose.give_up(f"{where}: no exact multiple of {step} found in range")


def _places(step: float | int) -> int:
    exponent = Decimal(repr(step)).as_tuple().exponent
    return -exponent if isinstance(exponent, int) and exponent < 0 else 0


def string_value(
    node: Mapping[str, Any], choose: Chooser, where: str, content: Callable[[Any], Any]
) -> str:
    """A string of the node's length, matching its ``pattern``, of its ``format``.

    Args:
        node: The schema node.
        choose: Makes the choices.
        where: The path, for messages.
        content: Builds a value for a ``contentSchema`` (JSON text of it is the string).
    """
    low = int(node.get("minLength", 0))
    high = node.get("maxLength")
    high = None if high is None else int(high)
    if high is not None and low > high:
        return str(choose.give_up(f"{where}: minLength > maxLength"))
    if node.get("contentMediaType") == "application/json" and "contentSchema" in node:
        text = json.dumps(content(node["contentSchema"]))
        if low <= len(text) and (high is None or len(text) <= high):
            return text
        return str(choose.give_up(f"{where}: the JSON content does not fit the length"))
    fmt = node.get("format")
    pattern = node.get("pattern")
    samples = _format_samples(fmt, choose)
    if pattern is not None:
        # A format's samples (and forms only a pattern may ask for) come first:
        # the pattern alone says too little to build, say, a valid date.
        samples = (*samples, *FORMAT_VARIANTS.get(str(fmt), ()))
        samples = tuple(s for s in samples if re.search(str(pattern), s))
    fits = [s for s in samples if low <= len(s) and (high is None or len(s) <= high)]
    if fits:
        return fits[choose.index(len(fits))]
    if pattern is not None:
        return choose.regex(str(pattern), low, high)
    if fmt == "binary":
        return choose.regex(_ASCII_TEXT, low, high)
    return choose.text(low, high)


def _format_samples(fmt: Any, choose: Chooser) -> tuple[str, ...]:
    version = _UUID_VERSIONS.get(str(fmt))
    if version is not None:
        return (str(uuid.UUID(int=choose.integer(0, 2**128 - 1), version=version)),)
    return FORMATS.get(str(fmt), ())
