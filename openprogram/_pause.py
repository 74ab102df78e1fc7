"""Pauses for a person: the ``PAUSE`` verdict and the calls a paused run waits on.

The approval hook (``Runtime(approval=...)``) may return ``PAUSE`` instead of
``None`` (allow) or a reason (deny): the call is not run, the rest of its batch
finishes, and the outermost exec raises ``RunPaused`` listing each waiting call
as a ``PendingCall``. ``runtime.resume(run_id, approve=..., deny=...)`` goes
on later, in any process sharing the store (docs/durable.md).

Both live at the bottom of the import graph: ``openprogram.exceptions`` names
``PendingCall`` in ``RunPaused``, and a program defining an approval hook
imports ``PAUSE`` without loading the runtime.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

__all__ = ["PAUSE", "Pause", "PendingCall"]


class Pause(enum.Enum):
    """The type of ``PAUSE``: an approval verdict that is neither allow nor deny."""

    PAUSE = "PAUSE"

    def __repr__(self) -> str:
        return "PAUSE"


PAUSE: Final = Pause.PAUSE
"""Returned by an approval hook: do not run this call now; pause the run until a person decides."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PendingCall:
    """A call a paused run waits on: approve or deny it with ``runtime.resume``."""

    call_id: str
    """The model's ``ToolCall.id`` (what ``resume(approve=[...])`` names)."""
    path: str
    """Its position in the run tree, e.g. ``"1.0/0/2.1"`` (docs/durable.md, "Keys")."""
    tool_name: str
    """The tool the model called."""
    arguments: Mapping[str, Any]
    """The arguments the decision is bound to: a decision applies to these exactly."""
