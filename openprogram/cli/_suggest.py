"""Did you mean …? The closest known names to a mistyped one."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = ["close_names", "did_you_mean"]


def close_names(word: str, known: Iterable[str]) -> list[str]:
    """The (at most three) known names closest to ``word``, closest first."""
    return difflib.get_close_matches(word, sorted(set(known)), n=3, cutoff=0.6)


def did_you_mean(word: str, known: Iterable[str]) -> str:
    """``"; did you mean 'plan_trip'?"`` for the known names closest to ``word``, else ``""``.

    Example:
        >>> did_you_mean("plan_trp", ["plan_trip", "get_weather"])
        "; did you mean 'plan_trip'?"
        >>> did_you_mean("xyz", ["plan_trip"])
        ''
    """
    close = close_names(word, known)
    if not close:
        return ""
    return "; did you mean " + " or ".join(repr(name) for name in close) + "?"
