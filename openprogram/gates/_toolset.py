"""L2b toolset: ``None`` offers all, ``"none"`` nothing, a name its members.

Membership is the tool's own ``toolset=`` declaration or a
``Registry.define_toolset`` definition. Whether the name is known at all is
checked once per resolution (``known_toolsets``), not per tool.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from openprogram.exceptions import UserError
from openprogram.gates._types import L2B_TOOLSET, PASS, GateInput, Rejection, Verdict
from openprogram.tools import Tool

__all__ = ["NO_TOOLS", "check_toolset_known", "known_toolsets", "toolset_gate"]

NO_TOOLS = "none"
"""The toolset that offers nothing (a pure reasoning call)."""


def toolset_gate(tool: Tool, given: GateInput) -> Verdict:
    """Reject tools outside the policy's toolset."""
    wanted = given.policy.toolset
    if wanted is None:
        return PASS
    if wanted == NO_TOOLS:
        return Rejection(L2B_TOOLSET, "toolset='none' offers no tools (a pure reasoning call)")
    if wanted in tool.toolset or tool.name in given.toolsets.get(wanted, ()):
        return PASS
    declared = f"its toolsets: {list(tool.toolset)}" if tool.toolset else "it declares no toolset"
    return Rejection(
        L2B_TOOLSET,
        f"{tool.name!r} is not a member of toolset {wanted!r} ({declared}); add it with "
        f"toolset={wanted!r} or Registry.define_toolset",
    )


def known_toolsets(tools: Iterable[Tool], defined: Mapping[str, Iterable[str]]) -> frozenset[str]:
    """Toolset names some tool declares (whatever its other flags) or a definition names."""
    names = {ts for tool in tools for ts in tool.toolset}
    names.update(defined)
    names.add(NO_TOOLS)
    return frozenset(names)


def check_toolset_known(wanted: str | None, known: frozenset[str]) -> None:
    """Raise ``UserError`` if ``wanted`` names no known toolset."""
    if wanted is None or wanted in known:
        return
    choices = ", ".join(repr(n) for n in sorted(known - {NO_TOOLS})) or "(none defined)"
    raise UserError(
        f"unknown toolset {wanted!r}: known toolsets are {choices}. Declare membership with "
        "toolset=... on a tool or Registry.define_toolset(name, names); use toolset=None for "
        "all tools or 'none' for no tools"
    )
