"""A live, indented view of a run tree for terminals (and a JSON-lines twin for scripts)."""

from __future__ import annotations

import itertools
import json
import sys
import threading
import time
from collections.abc import Mapping
from typing import Any, TextIO

from openprogram.events import (
    AgentEnd,
    AgentInvoked,
    Event,
    ProviderError,
    ProviderRateLimited,
    ProviderRequestSent,
    ProviderResponseReceived,
    ToolCallCompleted,
    ToolCallFailed,
    ToolCallSkipped,
    ToolCallStarted,
)

__all__ = ["JsonLinesView", "TreeView", "summarize_arguments"]

_SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


def summarize_arguments(arguments: Mapping[str, Any] | None, limit: int = 60) -> str:
    """``city='Paris', units='celsius'``, cut to ``limit`` characters."""
    if not arguments:
        return ""
    text = ", ".join(f"{k}={v!r}" for k, v in arguments.items())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class TreeView:
    """Prints each exec, model call and tool call as an indented tree, as it happens.

    While a model call is pending and the output is a terminal, a spinner line
    shows how long the model has been thinking.
    """

    def __init__(self, out: TextIO | None = None, *, spinner: bool | None = None) -> None:
        self._out = out or sys.stdout
        self._spinner = self._out.isatty() if spinner is None else spinner
        self._depth: dict[str, int] = {}
        self._lock = threading.Lock()
        self._waiting_since: float | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __call__(self, event: Event) -> None:
        with self._lock:
            self._clear_spinner()
            line = self._line(event)
            if line is not None:
                indent = "  " * self._depth.get(event.run_id, 0)
                self._out.write(f"{indent}{line}\n")
                self._out.flush()
            if not isinstance(event, ProviderRequestSent):
                self._waiting_since = None
            elif self._waiting_since is None:
                # Requests in a row are one wait: a side request (the local model's probe)
                # and the reply's own, as in the reply line's latency.
                self._waiting_since = time.monotonic()

    def _line(self, event: Event) -> str | None:
        if isinstance(event, AgentInvoked):
            parent = self._depth.get(event.parent_run_id or "", -1)
            self._depth[event.run_id] = parent + 1
            model = event.model_id or event.provider_id
            return f"▶ exec [{model}]"
        if isinstance(event, ProviderResponseReceived):
            used_in, used_out = event.tokens.get("input", 0), event.tokens.get("output", 0)
            calls = f", {event.tool_calls} tool call(s)" if event.tool_calls else ""
            return (
                f"  · model replied in {event.latency_ms / 1000:.1f} s "
                f"({used_in} in / {used_out} out tokens{calls})"
            )
        if isinstance(event, ToolCallStarted):
            return f"  ⚙ {event.tool_name}({summarize_arguments(event.arguments)})"
        if isinstance(event, ToolCallCompleted):
            out = f": {_cut(event.output)}" if event.output else ""
            return f"  ✓ {event.tool_name} done in {event.duration_ms:.0f} ms{out}"
        if isinstance(event, ToolCallFailed):
            why = f": {_cut(event.error)}" if event.error else ""
            return f"  ✗ {event.tool_name} failed ({event.failure}){why}"
        if isinstance(event, ToolCallSkipped):
            return f"  ↷ {event.tool_name} skipped ({event.reason})"
        if isinstance(event, ProviderRateLimited):
            return f"  … rate limited, retrying in {event.retry_after_seconds:.1f} s"
        if isinstance(event, ProviderError):
            return _provider_error(event)
        if isinstance(event, AgentEnd):
            tokens = event.input_tokens + event.output_tokens
            return (
                f"■ done: {event.stop_reason}, {event.iterations} model call(s), "
                f"{event.duration_ms / 1000:.1f} s, {tokens} tokens"
            )
        return None

    # -- spinner -------------------------------------------------------------------------

    def __enter__(self) -> TreeView:
        if self._spinner:
            self._thread = threading.Thread(
                target=self._spin, name="openprogram-spinner", daemon=True
            )
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        with self._lock:
            self._clear_spinner()

    def _spin(self) -> None:
        for frame in itertools.cycle(_SPINNER):
            if self._stop.wait(0.1):
                return
            with self._lock:
                if self._waiting_since is not None:
                    waited = time.monotonic() - self._waiting_since
                    self._out.write(f"\r{frame} model is thinking… {waited:4.1f} s")
                    self._out.flush()

    def _clear_spinner(self) -> None:
        if self._spinner and self._waiting_since is not None:
            self._out.write("\r\033[K")


class JsonLinesView:
    """Writes every event as one JSON object per line (``--json``)."""

    def __init__(self, out: TextIO | None = None) -> None:
        self._out = out or sys.stderr
        self._lock = threading.Lock()

    def __call__(self, event: Event) -> None:
        self._write(json.dumps(event.to_dict(), default=str))

    def note(self, text: str) -> None:
        """A progress line (the local model starting) as ``{"kind": "Progress", ...}``."""
        self._write(json.dumps({"kind": "Progress", "message": text}))

    def _write(self, line: str) -> None:
        with self._lock:
            self._out.write(line + "\n")
            self._out.flush()


def _provider_error(event: ProviderError) -> str:
    """A failed attempt: a quiet line when the call is asked again, an alarm when it failed."""
    if event.retrying:
        # Routine on the local model (a reply that repeats a call, or is cut at the limit, is
        # asked again) and on a flaky server: the run goes on, so nothing here is alarming.
        return f"  ↻ asked again: {_cut(event.message, 110)}"
    return f"  ! provider error ({event.reason}): {_cut(event.message)}"


def _cut(text: str | None, limit: int = 90) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
