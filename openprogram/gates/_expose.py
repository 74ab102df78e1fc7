"""L2 expose: ``expose=False`` tools are callable from Python and never offered to a model."""

from __future__ import annotations

from openprogram.gates._types import L2_EXPOSE, PASS, GateInput, Rejection, Verdict
from openprogram.tools import Tool

__all__ = ["expose_gate"]


def expose_gate(tool: Tool, given: GateInput) -> Verdict:
    """Reject tools declared ``expose=False``."""
    if tool.expose:
        return PASS
    return Rejection(
        L2_EXPOSE,
        f"{tool.name!r} is declared expose=False: callable from Python only, never offered "
        "to a model (declare it expose=True to offer it)",
    )
