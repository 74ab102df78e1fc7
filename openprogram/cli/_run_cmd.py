"""``openprogram run`` and ``openprogram demo``: run an agentic function, show its tree.

Without ``--json`` the run tree is printed live (``TreeView``) and the result
follows. With ``--json`` every event is one JSON line on stderr and stdout
gets one JSON object (stable; keys are only ever added)::

    {"output": <the return value, JSON-encoded; pydantic models and dataclasses as objects>,
     "result": <the same value (its first name, kept for scripts written against it)>,
     "model": "local:qwen2.5-coder-0.5b", "seconds": 12.3,
     "stop_reason": "stop", "model_calls": 4, "tool_calls": 2,
     "input_tokens": 1234, "output_tokens": 56}

``stop_reason`` is the outermost run's; counts and tokens add up the whole tree.
Events carry argument and result values only with ``--trace-payloads``.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable
from typing import Any

from openprogram.cli._model import model_label
from openprogram.cli._tree import JsonLinesView, TreeView
from openprogram.events import AgentEnd, Event, ProviderResponseReceived, ToolCallStarted
from openprogram.providers import Provider
from openprogram.providers.local._embedded import progress_to
from openprogram.runtime import Runtime

__all__ = ["execute", "jsonable"]


class _Totals:
    """Adds up the whole run tree from its events (observers may run on worker threads)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.model_calls = 0
        self.tool_calls = 0
        self.input_tokens = 0
        self.output_tokens = 0
        self.stop_reason: str | None = None

    def __call__(self, event: Event) -> None:
        with self._lock:
            if isinstance(event, ProviderResponseReceived):
                self.model_calls += 1
            elif isinstance(event, ToolCallStarted):
                self.tool_calls += 1
            elif isinstance(event, AgentEnd):
                self.input_tokens += event.input_tokens
                self.output_tokens += event.output_tokens
                if event.parent_run_id is None:
                    self.stop_reason = event.stop_reason


def execute(
    model: str | Provider,
    body: Callable[[Runtime], Any],
    *,
    as_json: bool,
    trace_payloads: bool,
) -> dict[str, Any]:
    """Run ``body`` on a runtime for ``model``, showing events; return the summary.

    Without ``as_json`` the result is printed after the live tree (whose lines show
    arguments and results: it is the user's own terminal). With it, events go to
    stderr as JSON lines carrying argument and result values only if
    ``trace_payloads``; the caller prints the summary.
    """
    view: Any = JsonLinesView() if as_json else TreeView()
    totals = _Totals()
    payloads = trace_payloads or not as_json
    runtime = Runtime(model, observers=[view, totals], trace_payloads=payloads)
    started = time.monotonic()
    if isinstance(view, TreeView):
        with view:
            result = body(runtime)
    else:
        with progress_to(view.note):  # stderr stays JSON lines only
            result = body(runtime)
    elapsed = time.monotonic() - started
    if not as_json:
        print(f"\nresult ({elapsed:.1f} s):\n{result}")
    return {
        "output": result,
        "result": result,
        "model": model_label(model),
        "seconds": round(elapsed, 3),
        "stop_reason": totals.stop_reason,
        "model_calls": totals.model_calls,
        "tool_calls": totals.tool_calls,
        "input_tokens": totals.input_tokens,
        "output_tokens": totals.output_tokens,
    }


def jsonable(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    if callable(dump):  # a pydantic model, e.g. from response_format=
        return dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    return str(value)
