"""A module that registers a tool in the default registry and also keeps a Registry."""

from __future__ import annotations

from openprogram import Registry, function

EXTRA = Registry()


@function
def mixed_default_tool(x: int) -> int:
    """A tool in the default registry.

    Args:
        x: A number.
    """
    return x


@function(registry=EXTRA)
def mixed_extra_tool(x: int) -> int:
    """A tool only EXTRA holds.

    Args:
        x: A number.
    """
    return x
