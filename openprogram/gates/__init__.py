"""Gating: which tools an exec offers the model, which it only lists, and why the rest are hidden.

Layers (see ``docs/gates.md``), each a pure function ``(tool, GateInput) -> PASS | Rejection``
in its own module; their evaluation order and its reasons live in ``_layers``:

==================  ===========================================  ================
layer               rule                                         default
==================  ===========================================  ================
L1 available_if     decided at decoration                        registers
L2 expose           ``expose=False`` never offered               exposed
L2b toolset         ``None`` all, ``"none"`` nothing, a name     all
L3 channel          ``source in tool.unsafe_in`` hidden          nothing hidden
L4 availability     ``check_fn``, ``requires_env``, ``can_use``  applied
L5 veto             ``deny``/``disabled`` remove, ``allow`` caps nothing vetoed
L6 defer            catalog only until loaded                    eager
==================  ===========================================  ================

``resolve(tools, policy)`` applies them all; ``explain(name, policy)`` says
which layer hides one tool; ``search_tools`` and ``catalog_text`` serve deferred
loading (the runtime's ``tool_search`` tool).
"""

from __future__ import annotations

from openprogram.gates._layers import LAYERS
from openprogram.gates._policy import Policy
from openprogram.gates._resolve import Resolution, explain, resolve
from openprogram.gates._search import (
    SELECT_PREFIX,
    TOOL_SEARCH_NAME,
    catalog_text,
    search_tools,
)
from openprogram.gates._toolset import NO_TOOLS
from openprogram.gates._types import (
    L2_EXPOSE,
    L2B_TOOLSET,
    L3_CHANNEL,
    L4_AVAILABILITY,
    L5_VETO,
    L6_DEFER,
    LAYER_NAMES,
    NOT_REGISTERED,
    PASS,
    Gate,
    GateContext,
    GateInput,
    Rejection,
    Verdict,
)

__all__ = [
    "L2B_TOOLSET",
    "L2_EXPOSE",
    "L3_CHANNEL",
    "L4_AVAILABILITY",
    "L5_VETO",
    "L6_DEFER",
    "LAYERS",
    "LAYER_NAMES",
    "NOT_REGISTERED",
    "NO_TOOLS",
    "PASS",
    "SELECT_PREFIX",
    "TOOL_SEARCH_NAME",
    "Gate",
    "GateContext",
    "GateInput",
    "Policy",
    "Rejection",
    "Resolution",
    "Verdict",
    "catalog_text",
    "explain",
    "resolve",
    "search_tools",
]
