"""``openprogram run`` and ``openprogram demo``: run an agentic function, show its tree.

Without ``--json`` the run tree is printed live (``TreeView``) and the result
follows. With ``--json`` every event is one JSON line on stderr and stdout
gets one JSON object (stable; keys are only ever added)::

    {"result": <the return value, JSON-encoded; pydantic models and dataclasses as objects>,
     "model": "local:qwen2.5-coder-0.5b", "seconds": 12.3,
     "stop_reason": "stop", "model_calls": 4, "tool_calls": 2,
     "input_tokens": 1234, "output_tokens": 56}

``stop_reason`` is the outermost run's; counts and tokens add up the whole tree.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from openprogram.cli._model import model_label
from openprogram.cli._tree import JsonLinesView, TreeView
from openprogram.events import AgentEnd, Event, ProviderResponseReceived, ToolCallStarted
from openprogram.exceptions import ConfigurationError
from openprogram.providers import Provider
from openprogram.runtime import Runtime

__all__ = ["bind_arguments", "execute", "parse_arguments"]


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


def execute(model: str | Provider, as_json: bool, body: Callable[[Runtime], Any]) -> int:
    """Run ``body`` on a runtime for ``model``, showing events; print the result; return 0."""
    view: Any = JsonLinesView() if as_json else TreeView()
    totals = _Totals()
    runtime = Runtime(model, observers=[view, totals], trace_payloads=True)
    started = time.monotonic()
    if isinstance(view, TreeView):
        with view:
            result = body(runtime)
    else:
        result = body(runtime)
    elapsed = time.monotonic() - started
    if not as_json:
        print(f"\nresult ({elapsed:.1f} s):\n{result}")
        return 0
    summary = {
        "result": result,
        "model": model_label(model),
        "seconds": round(elapsed, 3),
        "stop_reason": totals.stop_reason,
        "model_calls": totals.model_calls,
        "tool_calls": totals.tool_calls,
        "input_tokens": totals.input_tokens,
        "output_tokens": totals.output_tokens,
    }
    print(json.dumps(summary, default=_jsonable))
    return 0


def _jsonable(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    if callable(dump):  # a pydantic model, e.g. from response_format=
        return dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    return str(value)


def parse_arguments(raw: Sequence[str]) -> tuple[list[Any], dict[str, Any]]:
    """``["Rome", "days=3"]`` -> ``(["Rome"], {"days": 3})``; values are JSON when they parse."""
    positional: list[Any] = []
    keywords: dict[str, Any] = {}
    for item in raw:
        key, sep, value = item.partition("=")
        if sep and key.isidentifier():
            if key in keywords:
                raise ConfigurationError(f"argument {key}= is given twice")
            keywords[key] = _value(value)
        else:
            positional.append(_value(item))
    return positional, keywords


def _signature(target: Callable[..., Any]) -> inspect.Signature:
    try:
        # evaluated annotations read `days: int`, not `days: 'int'`, in the error message
        return inspect.signature(target, eval_str=True)
    except NameError:  # an annotation that only resolves under TYPE_CHECKING
        return inspect.signature(target)


def _value(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text  # not JSON: a plain string, so `Rome` needs no quotes


def bind_arguments(
    target: Callable[..., Any], name: str, positional: list[Any], keywords: dict[str, Any]
) -> None:
    """Check the arguments fit ``target``'s signature before any model is called.

    Raises:
        ConfigurationError: They do not; the message shows the expected signature.
    """
    try:
        signature = _signature(target)
    except (TypeError, ValueError):
        return  # builtins and some callables have no signature to check; the call will tell
    # The runtime is supplied by the CLI, never by the command line.
    params = [p for p in signature.parameters.values() if p.name != "runtime"]
    shown = signature.replace(parameters=params, return_annotation=inspect.Signature.empty)
    try:
        shown.bind(*positional, **keywords)
    except TypeError as exc:
        raise ConfigurationError(
            f"run {name}: {exc}; it takes {shown} — pass values as positional words "
            "or key=value (JSON values accepted, e.g. days=3)"
        ) from exc
