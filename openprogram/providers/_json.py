"""Reading JSON that came off the wire, written by a server or by the model.

``json.loads`` alone lets three kinds of garbage through or blows up on them:

- nesting deeper than the interpreter's recursion limit raises
  ``RecursionError`` (not a ``ValueError``), which no caller expects;
- a ``\\ud800``-style escape decodes to a lone UTF-16 surrogate, which no
  later step can encode as UTF-8, so the next request (and any event hashing
  the text) would fail;
- ``NaN``/``Infinity`` are not JSON (RFC 8259); in a tool call's arguments
  they would be replayed verbatim into requests that vendors reject.

``loads`` turns the first into a ``ValueError``, replaces lone surrogates with
U+FFFD, and optionally refuses the non-numbers.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["loads", "without_lone_surrogates"]


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def loads(data: str | bytes, *, finite: bool = False) -> Any:
    """Parse ``data`` as JSON; see the module docstring.

    Args:
        data: The JSON text.
        finite: Refuse ``NaN``, ``Infinity`` and ``-Infinity``.

    Raises:
        ValueError: ``data`` is not JSON, is nested too deeply, or (``finite``) holds
            a non-number.
    """
    try:
        value = json.loads(data, parse_constant=_no_constant if finite else None)
    except RecursionError:
        raise ValueError("the JSON is nested too deeply to read") from None
    # Lone surrogates only come from \u escapes: skip the walk when there are none.
    escaped = b"\\u" in data if isinstance(data, bytes) else "\\u" in data
    return _clean(value) if escaped else value


def without_lone_surrogates(text: str) -> str:
    """``text`` with each lone UTF-16 surrogate replaced by U+FFFD (pairs are joined)."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def _clean(value: Any) -> Any:
    if isinstance(value, str):
        return without_lone_surrogates(value)
    if isinstance(value, list):
        return [_clean(item) for item in value]
    if isinstance(value, dict):
        return {without_lone_surrogates(k): _clean(v) for k, v in value.items()}
    return value
