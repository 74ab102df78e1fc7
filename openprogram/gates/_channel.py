"""L3 channel: a tool is hidden where the exec's source is in its ``unsafe_in``.

Sources accumulate through nesting (``Policy.narrow``), so a tool unsafe in
the outer channel stays hidden in every exec below it.
"""

from __future__ import annotations

from openprogram.gates._types import L3_CHANNEL, PASS, GateInput, Rejection, Verdict
from openprogram.tools import Tool

__all__ = ["channel_gate"]


def channel_gate(tool: Tool, given: GateInput) -> Verdict:
    """Reject tools declared unsafe in a source in force."""
    if not tool.unsafe_in:
        return PASS
    hit = sorted(given.policy.sources.intersection(tool.unsafe_in))
    if not hit:
        return PASS
    return Rejection(
        L3_CHANNEL,
        f"{tool.name!r} is declared unsafe_in {list(tool.unsafe_in)} and this exec serves "
        f"source {hit[0]!r}",
    )
