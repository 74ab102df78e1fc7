"""A module with its own Registry, for ``openprogram tools --registry``."""

from __future__ import annotations

from openprogram import Registry, function

TOOLS = Registry()
NOT_A_REGISTRY = 42


@function(registry=TOOLS)
def only_here(x: int) -> int:
    """A tool only this registry holds."""
    return x
