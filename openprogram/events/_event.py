"""The fields every trace event carries, and the data policy's hashes and sizes.

Events carry hashes and byte sizes of arguments, results and texts, never the
values themselves, unless the runtime was made with
``Runtime(trace_payloads=True)``: ``digest`` and ``size_bytes`` are how.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from typing import Any, ClassVar

__all__ = ["Event", "digest", "size_bytes"]


def digest(value: Any) -> str:
    """A short, stable hash of a JSON-able value (or a string), for the data policy.

    Args:
        value: A string (hashed as UTF-8) or anything ``json.dumps`` can encode
            (keys sorted; unknown objects by ``str``).
    """
    data = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    # surrogatepass: a lone surrogate in the program's own text must not break tracing
    return hashlib.blake2b(data.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


def size_bytes(text: str) -> int:
    """Size of ``text`` encoded as UTF-8."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


@dataclass(frozen=True, slots=True, kw_only=True)
class Event:
    """Fields every trace event carries; ``kind`` is the class name."""

    kind: ClassVar[str] = "Event"
    run_id: str
    """The run (one ``exec``) that emitted the event."""
    step_id: str
    """``"s0"`` before the first model call, ``"s<n>"`` for the n-th model call and its tools."""
    parent_run_id: str | None
    """The run whose tool call started this run, ``None`` for a top-level run."""
    at: float
    """Wall-clock time (``time.time()``) of the event."""
    replayed: bool = False
    """Whether it retells a step taken from the run's journal (a durable run run again)
    rather than one that happened now (docs/durable.md)."""

    def __init_subclass__(cls) -> None:
        # No super() call: dataclass(slots=True) re-creates each class, which breaks the
        # zero-argument super() cell; object.__init_subclass__ does nothing anyway.
        cls.kind = cls.__name__

    def to_dict(self) -> dict[str, Any]:
        """The event as a JSON-able dict, ``kind`` first, then the fields in declaration order."""
        return {"kind": self.kind, **asdict(self)}
