"""The values every gate layer shares: its input, its verdict and the layer names."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

from openprogram.tools import Tool

if TYPE_CHECKING:
    from openprogram.gates._policy import Policy

__all__ = [
    "L2B_TOOLSET",
    "L2_EXPOSE",
    "L3_CHANNEL",
    "L4_AVAILABILITY",
    "L5_VETO",
    "L6_DEFER",
    "LAYER_NAMES",
    "NOT_REGISTERED",
    "PASS",
    "Gate",
    "GateContext",
    "GateInput",
    "Rejection",
    "Verdict",
]

L2_EXPOSE = "L2 expose"
L2B_TOOLSET = "L2b toolset"
L3_CHANNEL = "L3 channel"
L4_AVAILABILITY = "L4 availability"
L5_VETO = "L5 veto"
L6_DEFER = "L6 defer"
NOT_REGISTERED = "registry"
"""``explain()`` of a name no tool has (``available_if`` may have kept it out at decoration: L1)."""

LAYER_NAMES = (L2_EXPOSE, L2B_TOOLSET, L3_CHANNEL, L4_AVAILABILITY, L5_VETO, L6_DEFER)
"""Every ``Rejection.layer`` ``resolve`` can report, in the table's numbering order."""


@dataclass(frozen=True, slots=True)
class Rejection:
    """Why a layer keeps a tool's schema away from the model.

    ``L6 defer`` is the one layer that does not hide a tool: its tools are
    listed in the catalog (``Resolution.deferred``) until loaded.
    """

    layer: str
    """The layer that decided, e.g. ``"L5 veto"`` (see ``LAYER_NAMES``)."""
    reason: str
    """What was wrong and how to change it, in words."""

    def __str__(self) -> str:
        return f"{self.layer}: {self.reason}"


@dataclass(frozen=True, slots=True)
class GateContext:
    """What a tool's ``can_use(ctx)`` predicate receives."""

    source: str | None
    """The channel the exec serves (``Policy.source``), e.g. ``"telegram"``; ``None`` if unset."""
    deps: Any = field(default=None, repr=False)
    """The user bundle given to ``Runtime(deps=...)`` (or ``resolve(deps=...)``)."""
    env: Mapping[str, str] = field(default_factory=dict, repr=False)
    """The environment ``requires_env`` reads (``os.environ`` unless ``env=`` was given)."""
    sources: tuple[str, ...] = ()
    """Every source the run came through, outermost first, ending with ``source``.

    An inner exec may serve another channel (``tools_source="internal"``), but
    the channels of the execs around it stay in force: a predicate written
    against a channel checks ``"public" in ctx.sources``, not ``ctx.source``.
    Left empty, it is ``(source,)`` (or ``()`` without a source).
    """

    def __post_init__(self) -> None:
        if not self.sources and self.source is not None:
            object.__setattr__(self, "sources", (self.source,))  # frozen: set once, here


@dataclass(frozen=True, slots=True)
class GateInput:
    """Everything a layer may look at besides the tool itself."""

    policy: Policy
    """The policy being applied."""
    context: GateContext
    """Source, deps and environment (also what ``can_use`` receives)."""
    toolsets: Mapping[str, frozenset[str]] = field(default_factory=dict)
    """Toolsets defined with ``Registry.define_toolset`` (name -> member names)."""


Verdict: TypeAlias = Rejection | None
"""A layer's answer: ``PASS`` (``None``) or a ``Rejection``."""

PASS: Verdict = None
"""The verdict of a layer that lets the tool through."""

Gate: TypeAlias = Callable[[Tool, GateInput], Verdict]
"""The one signature every layer has: ``(tool, gate_input) -> PASS | Rejection``."""
