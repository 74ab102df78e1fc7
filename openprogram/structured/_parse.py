"""Reading the JSON answer out of a model's final reply (prose, fences and all).

Shared by structured output (the answer is the reply's JSON value) and
decisions (the pick is the reply's last ``{"call": ...}`` object).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from openprogram.exceptions import InvalidJSONError

__all__ = ["iter_json_values", "parse_json_answer"]

_FENCE = re.compile(r"```[a-zA-Z0-9_-]*[ \t]*\n(.*?)```", re.DOTALL)


def parse_json_answer(text: str) -> Any:
    """Read the JSON answer in ``text``: the whole text, else a fenced block, else the last value.

    Raises:
        InvalidJSONError: No JSON value could be found; the message says why.
    """
    stripped = text.strip()
    if not stripped:
        raise InvalidJSONError("the answer is empty: expected a JSON value", raw=text)
    try:
        return _loads(stripped)
    except ValueError as exc:
        whole_error = exc
    for block in reversed(_FENCE.findall(text)):
        try:
            return _loads(block.strip())
        except ValueError:
            continue
    values = list(iter_json_values(text))
    if values:
        return values[-1]
    raise InvalidJSONError(
        f"the answer is not valid JSON ({whole_error}); answer with the JSON value only",
        raw=text,
    )


def iter_json_values(text: str, openers: str = "{[") -> Iterator[Any]:
    """Yield each top-level JSON object or array embedded in free text, in order.

    Scanning starts at every opener not inside a value already read, so prose,
    code fences and stray braces around the JSON are skipped.
    """
    decoder = json.JSONDecoder(parse_constant=_reject_constant)
    pos = 0
    while True:
        starts = [i for i in (text.find(c, pos) for c in openers) if i >= 0]
        if not starts:
            return
        start = min(starts)
        try:
            value, end = decoder.raw_decode(text, start)
        except ValueError:
            pos = start + 1
            continue
        yield value
        pos = end


def _loads(text: str) -> Any:
    return json.loads(text, parse_constant=_reject_constant)


def _reject_constant(name: str) -> Any:
    # NaN and Infinity are not JSON; accepting them would let non-JSON answers through.
    raise ValueError(f"{name} is not valid JSON")
