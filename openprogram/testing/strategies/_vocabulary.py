"""The vocabulary every strategy draws from, so drawn policies mention drawn tools."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import strategies as st

__all__ = ["DEFAULT_ENV_VARS", "DEFAULT_NAMES", "DEFAULT_SOURCES", "DEFAULT_TOOLSETS", "subsets"]

DEFAULT_NAMES = (
    "search",
    "fetch",
    "shell",
    "read_file",
    "send_mail",
    "calendar",
    "deploy",
    "notes",
)
"""Tool names drawn when none are given."""
DEFAULT_TOOLSETS = ("web", "files", "ops")
"""Toolset names drawn when none are given."""
DEFAULT_SOURCES = ("cli", "web", "chat")
"""Channel sources drawn when none are given."""
DEFAULT_ENV_VARS = ("OPENPROGRAM_TEST_KEY_A", "OPENPROGRAM_TEST_KEY_B")
"""Environment variables ``requires_env`` draws from and ``environments`` sets."""


def subsets(
    items: Sequence[str], max_size: int | None = None
) -> st.SearchStrategy[tuple[str, ...]]:
    """Tuples of distinct items of ``items`` (at most ``max_size``); ``()`` when there are none."""
    if not items:
        return st.just(())
    return st.lists(st.sampled_from(items), unique=True, max_size=max_size).map(tuple)
