"""L6 defer: a deferred tool is listed in the catalog, its schema sent only once loaded.

It does not hide the tool; ``resolve`` routes its rejection to
``Resolution.deferred``, and ``tool_search`` adds the name to ``Policy.loaded``.
"""

from __future__ import annotations

from openprogram.gates._types import L6_DEFER, PASS, GateInput, Rejection, Verdict
from openprogram.tools import Tool

__all__ = ["defer_gate"]


def defer_gate(tool: Tool, given: GateInput) -> Verdict:
    """Demote deferred tools that are not loaded yet to the catalog."""
    if not tool.defer or tool.name in given.policy.loaded:
        return PASS
    return Rejection(
        L6_DEFER,
        f"{tool.name!r} is deferred: listed by name in the catalog until tool_search loads it",
    )
