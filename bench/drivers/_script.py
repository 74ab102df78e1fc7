"""The scripted-model vocabulary every driver speaks: calls, turns, scripts, menu size.

Kept inside the drivers package, which imports nothing else from ``bench/``,
so a driver loads both ways: as ``drivers.<name>_driver`` from the benchmark
scripts (``bench/`` on ``sys.path``) and as ``bench.drivers.<name>_driver``
from the repository root (tests, other tools).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Call", "Script", "Turn", "menu_bytes"]


@dataclass(frozen=True)
class Call:
    """One tool call a fake model makes."""

    name: str
    """Tool name."""
    args: dict[str, Any] = field(default_factory=dict)
    """Arguments, already parsed from JSON."""


Turn = str | tuple[Call, ...]
"""One model reply: a final text, or a batch of tool calls."""

Script = tuple[Turn, ...]
"""What a fake model replies, one turn per model request."""


def menu_bytes(specs: Sequence[Mapping[str, Any]]) -> int:
    """Size of a tool menu as JSON, in one provider-neutral shape.

    Args:
        specs: ``{"name", "description", "parameters"}`` per tool.
    """
    neutral = [{k: spec.get(k) for k in ("name", "description", "parameters")} for spec in specs]
    return len(json.dumps(neutral, separators=(",", ":")).encode())
