"""Observers: plain callables receiving each event; one that raises never breaks a run."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any, TypeAlias

from openprogram.events._event import Event

__all__ = ["Observer", "notify"]

logger = logging.getLogger("openprogram")

Observer: TypeAlias = Callable[[Event], object]
"""Receives every event; may be called from worker threads."""


def notify(observers: Iterable[Callable[[Any], object]], event: Any) -> None:
    """Call every observer with ``event``; one that raises is logged and ignored.

    Args:
        observers: The callables to notify.
        event: The event (or stream event) to hand them.
    """
    for observer in observers:
        try:
            observer(event)
        except Exception:  # an observer is user code: its failure is logged, the run goes on
            logger.exception(
                "openprogram observer %r raised on %s; the event was dropped for it",
                observer,
                getattr(event, "kind", type(event).__name__),
            )
