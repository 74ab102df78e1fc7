"""The order of the layers — written down here and nowhere else.

The set of offered tools does not depend on this order (law 1: every layer
must pass), so the order only decides two things: which reason a hidden
tool reports, and what runs at all. Hence:

1. **Pure metadata layers first** — L2 expose, L2b toolset, L3 channel, L5
   veto, then the ``requires_env`` half of L4. They read only the tool, the
   policy and which environment variables are set, so ``resolve`` caches
   their verdicts per (registry version, policy, environment facts).
2. **L5 veto before L4** — a denied or disabled tool's own predicates never
   run: user code is not called for tools the policy already removed, and the
   reason reported for a denied tool is the denial (deny wins, law 2).
3. **L4's predicates last among the hiding layers** — ``check_fn()`` and
   ``can_use(ctx)`` are user code that may be slow, may raise and may change
   their answer, so they run on every resolution, and only for the few tools
   still in contention.
4. **L6 defer at the very end** — it does not hide a tool, it demotes a tool
   that passed everything else to the catalog; ``tool_search`` can therefore
   only ever find tools the policy allows.

(L1 ``available_if`` is decided at decoration: a tool that fails it is never
registered, so no layer here sees it.)
"""

from __future__ import annotations

from openprogram.gates._availability import availability_gate, env_gate, predicate_gate
from openprogram.gates._channel import channel_gate
from openprogram.gates._defer import defer_gate
from openprogram.gates._expose import expose_gate
from openprogram.gates._toolset import toolset_gate
from openprogram.gates._types import (
    L2_EXPOSE,
    L2B_TOOLSET,
    L3_CHANNEL,
    L4_AVAILABILITY,
    L5_VETO,
    L6_DEFER,
    Gate,
)
from openprogram.gates._veto import veto_gate

__all__ = ["CACHED_GATES", "DEFER_GATE", "LAYERS", "LIVE_GATE"]

LAYERS: tuple[tuple[str, Gate], ...] = (
    (L2_EXPOSE, expose_gate),
    (L2B_TOOLSET, toolset_gate),
    (L3_CHANNEL, channel_gate),
    (L5_VETO, veto_gate),
    (L4_AVAILABILITY, availability_gate),
    (L6_DEFER, defer_gate),
)
"""Every layer in evaluation order; the first rejection is the one reported."""

# The same sequence split where caching stops: LAYERS == CACHED_GATES + LIVE_GATE + DEFER_GATE.
CACHED_GATES: tuple[Gate, ...] = (expose_gate, toolset_gate, channel_gate, veto_gate, env_gate)
"""Pure layers (and L4's environment half): cached per registry version, policy and env facts."""
LIVE_GATE: Gate = predicate_gate
"""L4's predicates: re-run on every resolution."""
DEFER_GATE: Gate = defer_gate
"""L6: decides offered vs catalog among the tools that passed everything else."""
