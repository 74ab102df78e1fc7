"""L5 veto: ``deny`` and ``disabled`` remove a name; ``allow``, when given, caps the names.

Deny wins over everything (law 2): nothing else can put a denied name back.
Names only: a toolset name in ``deny`` does not deny its members.
"""

from __future__ import annotations

from openprogram.gates._types import L5_VETO, PASS, GateInput, Rejection, Verdict
from openprogram.tools import Tool

__all__ = ["veto_gate"]


def veto_gate(tool: Tool, given: GateInput) -> Verdict:
    """Reject denied, disabled and (with an allow list) unlisted tools."""
    policy = given.policy
    if tool.name in policy.deny:
        return Rejection(L5_VETO, f"{tool.name!r} is in the policy's deny list")
    if tool.name in policy.disabled:
        return Rejection(L5_VETO, f"{tool.name!r} is disabled")
    if policy.allow is not None and tool.name not in policy.allow:
        return Rejection(
            L5_VETO,
            f"{tool.name!r} is not in the allow list ({len(policy.allow)} names); add it to allow",
        )
    return PASS
