"""One check for keyword options taken as ``**options`` (decorators, ``exec``, ``batch.map``).

Options declared once in a TypedDict arrive as a plain mapping at run time;
an unknown key must fail loudly, never be accepted and ignored.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Mapping
from typing import Any

__all__ = ["reject_unknown"]


def reject_unknown(options: Mapping[str, Any], allowed: Collection[str], where: str) -> None:
    """Raise ``TypeError`` naming the first unknown key, a close match, and every known one.

    Args:
        options: The keywords received.
        allowed: The keywords accepted.
        where: The callable's name for the message, e.g. ``"exec"``.
    """
    for key in options:
        if key not in allowed:
            close = difflib.get_close_matches(key, allowed, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise TypeError(
                f"{where}() got an unknown option {key!r}{hint} "
                f"(options: {', '.join(sorted(allowed))})"
            )
